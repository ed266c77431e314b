package fpga

import (
	"fmt"
	"sort"
	"strings"
)

// Family is an FPGA family with its own synthesis command and primitive cell names.
type Family string

// Families mrgen synthesizes for.
const (
	ICE40 Family = "ice40"
	ECP5  Family = "ecp5"
)

// Board is a synthesis target: a device, its package and how to build for it.
type Board struct {
	Name    string `json:"name"`    // e.g. ice40-hx8k
	Family  Family `json:"family"`  // ice40 or ecp5
	Device  string `json:"device"`  // e.g. hx8k
	Package string `json:"package"` // e.g. ct256
	// Nextpnr holds the nextpnr-ice40 device arguments; empty means no place-and-route exists
	// for this board here, so Synth reports cell counts only and no Fmax.
	Nextpnr []string `json:"nextpnr,omitempty"`
	// Capacity is the device's size in the units Result counts (LUT4s, flip-flops, block RAMs).
	Capacity Resources `json:"capacity"`
	Note     string    `json:"note,omitempty"`
}

// PlaceAndRoute reports whether the board has a place-and-route flow, and so an Fmax.
func (b Board) PlaceAndRoute() bool { return len(b.Nextpnr) > 0 }

// SynthCommand is the Yosys synthesis command for the board's family.
func (b Board) SynthCommand() string {
	if b.Family == ECP5 {
		return "synth_ecp5"
	}
	return "synth_ice40"
}

// Count turns a synthesized netlist's cell counts into LUTs, FFs and RAMs.
//
// iCE40: LUTs are SB_LUT4 cells (an SB_CARRY shares its logic cell with a LUT and is not
// counted), FFs are all SB_DFF* variants, RAMs are SB_RAM40_4K* block RAMs.
//
// ECP5: LUTs are LUT4 cells plus two per CCU2C (a carry cell is two LUT4s of one slice) plus four
// per TRELLIS_DPR16X4 (a 16x4 distributed RAM occupies the four LUT4s of two slices); PFUMX and
// L6MUX21 combine LUT outputs and use no LUT. FFs are TRELLIS_FF; RAMs are DP16KD/PDPW16KD.
func (b Board) Count(cells map[string]int) Resources {
	var r Resources
	for typ, n := range cells {
		switch b.Family {
		case ECP5:
			switch {
			case typ == "LUT4":
				r.LUTs += n
			case typ == "CCU2C":
				r.LUTs += 2 * n
			case typ == "TRELLIS_DPR16X4":
				r.LUTs += 4 * n
			case typ == "TRELLIS_FF":
				r.FFs += n
			case typ == "DP16KD" || typ == "PDPW16KD":
				r.RAMs += n
			}
		default:
			switch {
			case typ == "SB_LUT4":
				r.LUTs += n
			case strings.HasPrefix(typ, "SB_DFF"):
				r.FFs += n
			case strings.HasPrefix(typ, "SB_RAM40_4K"):
				r.RAMs += n
			}
		}
	}
	return r
}

// ECP5Device is one Lattice ECP5 device: its logic in the units Count reports (LUT4s, one
// flip-flop per LUT4, 18-kbit EBR) and its 18x18 multipliers.
type ECP5Device struct {
	Name     string
	Capacity Resources
	Mult18   int
}

// The ECP5 family from the 25F up, smallest first (Lattice's ECP5 family data sheet,
// FPGA-DS-02012). The LFE5UM and LFE5UM5G devices have the fabric of the LFE5U of their size.
var ecp5Devices = []ECP5Device{
	{Name: "LFE5U-25F", Capacity: Resources{LUTs: 24288, FFs: 24288, RAMs: 56}, Mult18: 28},
	{Name: "LFE5U-45F", Capacity: Resources{LUTs: 43848, FFs: 43848, RAMs: 108}, Mult18: 72},
	{Name: "LFE5U-85F", Capacity: Resources{LUTs: 83640, FFs: 83640, RAMs: 208}, Mult18: 156},
}

// ECP5Devices lists the ECP5 devices, smallest first.
func ECP5Devices() []ECP5Device { return append([]ECP5Device(nil), ecp5Devices...) }

var boards = []Board{
	{
		Name: "ice40-hx8k", Family: ICE40, Device: "hx8k", Package: "ct256",
		Nextpnr:  []string{"--hx8k", "--package", "ct256"},
		Capacity: Resources{LUTs: 7680, FFs: 7680, RAMs: 32},
	},
	{
		Name: "ice40-up5k", Family: ICE40, Device: "up5k", Package: "sg48",
		Nextpnr:  []string{"--up5k", "--package", "sg48"},
		Capacity: Resources{LUTs: 5280, FFs: 5280, RAMs: 30},
	},
	{
		Name: "ecp5-45k", Family: ECP5, Device: "lfe5u-45f", Package: "CABGA381",
		Capacity: ecp5Devices[1].Capacity, // LFE5U-45F
		Note: "synthesis only: no ECP5 place-and-route (nextpnr-ecp5/prjtrellis) is available, " +
			"so Fmax is not measured (fmax_mhz 0)",
	},
}

// Boards lists every known board, sorted by name.
func Boards() []Board {
	out := make([]Board, len(boards))
	for i, b := range boards {
		b.Nextpnr = append([]string(nil), b.Nextpnr...)
		out[i] = b
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// BoardNames lists the names of every known board, sorted.
func BoardNames() []string {
	bs := Boards()
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}

// LookupBoard returns the named board or an error that lists the valid names.
func LookupBoard(name string) (Board, error) {
	for _, b := range Boards() {
		if b.Name == name {
			return b, nil
		}
	}
	return Board{}, fmt.Errorf("fpga: unknown board %q (valid: %s)", name, strings.Join(BoardNames(), ", "))
}
