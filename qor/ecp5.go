package qor

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mrgen/mrgen/fpga"
)

// ECP5DeviceFit is a unit's share of one device: the largest of its resource shares.
type ECP5DeviceFit struct {
	Device string  `json:"device"`
	Share  float64 `json:"share"` // largest of LUTs, FFs, EBR and multipliers over the device's
	Fits   bool    `json:"fits"`  // Share within FitFraction
}

// ECP5Result is the ECP5 view of one unit: synth_ecp5's resource counts, whole (the unit and
// everything below it, memories inferred as EBR or distributed RAM), and its share of each
// device of the family. It is synthesis only: no place and route, no timing.
type ECP5Result struct {
	Unit   string `json:"unit"`
	LUTs   int    `json:"luts"` // LUT4 positions (fpga.Board.Count's rule)
	FFs    int    `json:"ffs"`
	EBR    int    `json:"ebr"` // 18-kbit block RAMs (DP16KD, PDPW16KD)
	Mult18 int    `json:"mult18"`
	// Devices is the unit's share of every device of the family, smallest first.
	Devices []ECP5DeviceFit `json:"devices"`
	// Smallest is the smallest device the unit fits in FitFraction of; "" when none.
	Smallest string            `json:"smallest"`
	Cells    map[string]int    `json:"cells"`
	Seconds  float64           `json:"seconds"`
	Logs     map[string]string `json:"logs"`
}

// ecp5Counts reduces synth_ecp5's cell counts to the resources a device has: LUT4 positions,
// flip-flops and block RAMs by fpga's one rule for ECP5 netlists (Board.Count), and the 18x18
// multipliers.
func ecp5Counts(cells map[string]int) (luts, ffs, ebr, mult int) {
	r := fpga.Board{Family: fpga.ECP5}.Count(cells)
	return r.LUTs, r.FFs, r.RAMs, cells["MULT18X18D"]
}

// ecp5Fit is the unit's share of every ECP5 device (fpga.ECP5Devices) and the smallest it
// fits in.
func ecp5Fit(luts, ffs, ebr, mult int) ([]ECP5DeviceFit, string) {
	var out []ECP5DeviceFit
	smallest := ""
	for _, d := range fpga.ECP5Devices() {
		c := d.Capacity
		share := max(float64(luts)/float64(c.LUTs), float64(ffs)/float64(c.FFs),
			float64(ebr)/float64(c.RAMs), float64(mult)/float64(d.Mult18))
		f := ECP5DeviceFit{Device: d.Name, Share: math.Round(share*1000) / 1000, Fits: share <= FitFraction}
		if f.Fits && smallest == "" {
			smallest = d.Name
		}
		out = append(out, f)
	}
	return out, smallest
}

// RunECP5 synthesizes the unit whole with synth_ecp5 and reports its resources and fit.
func RunECP5(ctx context.Context, u Unit, dir string, log io.Writer) (*ECP5Result, error) {
	start := time.Now()
	yosys, dir, log, err := yosysRun(dir, log)
	if err != nil {
		return nil, err
	}
	files, err := absAll(u.Files)
	if err != nil {
		return nil, err
	}
	top := u.Name()
	p := func(n string) string { return filepath.Join(dir, n) }
	logs := map[string]string{"script": p("ecp5.ys"), "log": p("ecp5.log"), "stat": p("ecp5-stat.txt")}
	script := strings.Join([]string{yosysRead(files), "hierarchy -check -top " + top,
		"synth_ecp5 -top " + top, "tee -q -o " + logs["stat"] + " stat"}, "\n") + "\n"
	if err := os.WriteFile(logs["script"], []byte(script), 0o644); err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	if _, err := runTool(ctx, log, dir, logs["log"], yosys, "-q", "-s", logs["script"]); err != nil {
		return nil, err
	}
	stat, err := os.ReadFile(logs["stat"])
	if err != nil {
		return nil, fmt.Errorf("qor: %s: reading the ECP5 statistics: %w", top, err)
	}
	r := &ECP5Result{Unit: top, Cells: parseStatCells(string(stat)), Logs: logs}
	if len(r.Cells) == 0 {
		return nil, fmt.Errorf("qor: %s: synth_ecp5 reported no cells (see %s)", top, logs["stat"])
	}
	r.LUTs, r.FFs, r.EBR, r.Mult18 = ecp5Counts(r.Cells)
	r.Devices, r.Smallest = ecp5Fit(r.LUTs, r.FFs, r.EBR, r.Mult18)
	r.Seconds = round1(time.Since(start).Seconds())
	return r, nil
}

// Summary is one line: the counts and the smallest device the unit fits in.
func (r *ECP5Result) Summary() string {
	where := "fits no ECP5 in " + fmt.Sprintf("%.0f%%", FitFraction*100)
	if r.Smallest != "" {
		where = "smallest device " + r.Smallest
	}
	return fmt.Sprintf("%d LUT4s, %d FFs, %d EBR, %d MULT18: %s", r.LUTs, r.FFs, r.EBR, r.Mult18, where)
}
