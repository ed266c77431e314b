package qor

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/mrgen/mrgen/fpga"
)

// FitFraction is the share of an iCE40 device a configuration may fill to be reported as
// fitting: place-and-route of a fuller device stops being representative of the block.
const FitFraction = 0.8

// Candidate is the unit at another configuration, for the iCE40 fit search.
type Candidate struct {
	Config string
	Unit   Unit
}

// ICE40Result is the iCE40 view of one unit: synthesis and place-and-route at the configuration
// asked for, and, when it does not fit, the largest candidate configuration that fits in
// FitFraction of the device, placed and routed.
type ICE40Result struct {
	Unit   string       `json:"unit"`
	Board  string       `json:"board"`
	Result *fpga.Result `json:"result"` // at the configuration asked for
	// Fits: it placed and routed in FitFraction of the device (the criterion: a fuller
	// device's routing says more about the device than about the block). Share is how full.
	Fits  bool    `json:"fits"`
	Share float64 `json:"share,omitempty"`
	// FitConfig and Fit: the largest candidate that fits in FitFraction of the device.
	FitConfig  string         `json:"fit_config,omitempty"`
	Fit        *fpga.Result   `json:"fit,omitempty"`
	Candidates []CandidateFit `json:"candidates,omitempty"`
	// CoarseBits is the asked-for configuration's coarse size (CoarseBits), when the fit
	// search compared the candidates with it.
	CoarseBits int     `json:"coarse_bits,omitempty"`
	Note       string  `json:"note,omitempty"`
	Seconds    float64 `json:"seconds"`
}

// CandidateFit is one candidate's synthesis counts (block and wrapper) and how full of the
// device it packs.
type CandidateFit struct {
	Config     string  `json:"config"`
	CoarseBits int     `json:"coarse_bits,omitempty"` // the order of the search (CoarseBits)
	LUTs       int     `json:"luts"`
	FFs        int     `json:"ffs"`
	RAMs       int     `json:"rams"`
	Share      float64 `json:"share"`          // the fullest of its packed logic cells and RAMs
	Fits       bool    `json:"fits"`           // within FitFraction of the device
	Note       string  `json:"note,omitempty"` // why it was not synthesized
}

// packedKinds are the iCE40 cells a design fills the device with, as nextpnr counts them after
// packing (a logic cell holds one LUT and one flip-flop, which do not always pair up).
var packedKinds = []string{"ICESTORM_LC", "ICESTORM_RAM"}

// RunICE40 synthesizes, places and routes the unit on board (the fpga flow and its wrapper).
// When it does not fit, cands gives the unit at the other configurations (asked for only then);
// with cands nil there is no fit search and the result is the unit's own configuration's.
func RunICE40(ctx context.Context, u Unit, dir, board string, cands func() ([]Candidate, error),
	log io.Writer) (*ICE40Result, error) {
	start := time.Now()
	b, err := fpga.LookupBoard(board)
	if err != nil {
		return nil, err
	}
	r := &ICE40Result{Unit: u.Name(), Board: b.Name}
	if u.Module.Clock == "" {
		r.Note = "combinational: measured inside the blocks that use it (the board wrapper needs a clock)"
		return r, nil
	}
	synth := func(v Unit, sub string, packOnly bool) (*fpga.Result, error) {
		return fpga.Synth(ctx, fpga.SynthRequest{Board: b.Name, Module: v.Module, Files: v.Files,
			TargetMHz: v.Config.TargetClockMHz, WorkDir: filepath.Join(dir, sub), Seed: 1, PackOnly: packOnly,
			Wrapper: fpga.WrapperOptions{Version: "qor", Command: "mrgen qor --target ice40",
				ConfigHash: v.Config.Hash(), RegisteredOutputs: true}}, log)
	}
	// A lower bound of what a design needs: its memory bits, in block RAM or flip-flops. A design
	// above it cannot fit and is not synthesized (the NIC's would take minutes).
	ramBits := 4096 * b.Capacity.RAMs
	tooBig := func(v Unit) string {
		if v.MemoryBits > ramBits+b.Capacity.FFs {
			return fmt.Sprintf("not synthesized: its %d memory bits exceed the device's %d block RAM bits and %d flip-flops",
				v.MemoryBits, ramBits, b.Capacity.FFs)
		}
		return ""
	}
	// A part that does not fit makes its parent not fit; a part that fits at no candidate, its
	// parent at none (each candidate of the parent holds the part at that configuration).
	for _, pt := range u.Parts {
		pr := pt.ICE40
		if pr == nil || pt.Module.Clock == "" || pr.Fits {
			continue
		}
		r.Note = fmt.Sprintf("not synthesized: its part %s does not fit (%s)", pt.Name, pr.overWhat())
		if pr.Fit == nil || cands == nil {
			if cands != nil {
				r.Note += fmt.Sprintf("; no candidate configuration fits: %s fits at none", pt.Name)
			}
			r.Seconds = round1(time.Since(start).Seconds())
			return r, nil
		}
	}
	if why := tooBig(u); r.Note != "" || why != "" {
		if r.Note == "" {
			r.Note = why
		}
	} else {
		if r.Result, err = synth(u, "default", false); err != nil {
			return nil, err
		}
		if r.Result.OverCapacity == "" {
			r.Share, r.Fits = packedFit(r.Result)
		}
		if r.Fits {
			r.Seconds = round1(time.Since(start).Seconds())
			return r, nil
		}
	}
	if cands == nil { // no fit search asked for: the unit at its own configuration only
		r.Seconds = round1(time.Since(start).Seconds())
		return r, nil
	}
	candidates, err := cands()
	if err != nil {
		return nil, err
	}
	if err := r.fitSearch(ctx, u, candidates, dir, b.Capacity, tooBig, synth, log); err != nil {
		return nil, err
	}
	if r.Fit == nil {
		r.Note = strings.TrimPrefix(r.Note+"; ", "; ") +
			fmt.Sprintf("no candidate configuration fits in %.0f%% of the %s", 100*FitFraction, b.Device)
	}
	r.Seconds = round1(time.Since(start).Seconds())
	return r, nil
}

// packedFit is a placed result's packed share of the device (rounded to 0.1%) and whether that
// is within FitFraction (judged before rounding).
func packedFit(res *fpga.Result) (float64, bool) {
	share := fpga.Share(res.Utilization, packedKinds...)
	return math.Round(share*1000) / 1000, share <= FitFraction
}

// overWhat says why the unit does not fit at the configuration asked for.
func (r *ICE40Result) overWhat() string {
	if r.Result != nil && r.Result.OverCapacity != "" {
		return r.Result.OverCapacity
	}
	if r.Result != nil && r.Share > FitFraction {
		return fmt.Sprintf("placed at %.0f%% of the device, over %.0f%%", 100*r.Share, 100*FitFraction)
	}
	return strings.SplitN(r.Note, ";", 2)[0]
}
