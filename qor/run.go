package qor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
)

// The budgets every block is held to (DESIGN.md, "Hardware that closes timing").
const (
	BudgetFO4       = 40
	BudgetLUTLevels = 8
	BudgetICE40MHz  = 100
)

// BlockDesign is one block's generated design and the units of it to measure.
type BlockDesign struct {
	Block  string
	Design *gen.Design
	Dir    string   // the directory the design was written to (its rtl/ below)
	Units  []string // module names
	Config config.Config
}

// UnitOf describes module name of a written design as a Unit.
func UnitOf(d *gen.Design, dir, name string, c config.Config) (Unit, error) {
	m, ok := d.Descriptions[name]
	if !ok {
		return Unit{}, fmt.Errorf("qor: design %s has no module %s", d.Top, name)
	}
	var tables []hdl.Table
	for _, n := range d.Modules {
		tables = append(tables, d.Descriptions[n].Tables...)
	}
	bits := 0
	for _, mi := range d.Memories.Under(name) {
		bits += mi.Bits
	}
	return Unit{Module: m, Files: d.RTLFiles(dir), Tables: tables, MemoryBits: bits, Digest: d.SubtreeDigest(name),
		Config: c}, nil
}

// Options configure a QoR run.
type Options struct {
	Targets []Target
	WorkDir string
	Jobs    int // units measured at once (each tool is single-threaded)
	Model   MacroModel
	Part    Part
	Board   string
	// DepthOnly makes the xcup target measure LUT depth only, not resources (the fast gate).
	DepthOnly bool
	// Candidates returns a unit at other configurations for the iCE40 fit search (nil: none);
	// it is called only for a unit that does not fit at its own.
	Candidates func(block, unit string) ([]Candidate, error)
	Progress   io.Writer // one line per finished measurement
	Log        io.Writer // tool command lines (-v)
}

// UnitReport is every target's figures of one unit.
type UnitReport struct {
	Unit       string            `json:"unit"`
	Block      string            `json:"block"`
	Config     string            `json:"config"`
	MemoryBits int               `json:"memory_bits"`
	MacroBits  int               `json:"macro_bits"`
	ASIC       *ASICResult       `json:"asic,omitempty"`
	XCUP       *XCUPResult       `json:"xcup,omitempty"`
	ICE40      *ICE40Result      `json:"ice40,omitempty"`
	Errors     map[string]string `json:"errors,omitempty"` // target -> error
}

// Report is the result of mrgen qor.
type Report struct {
	Config          string       `json:"config"`
	ConfigHash      string       `json:"config_hash"`
	Command         string       `json:"command,omitempty"` // the mrgen command that measured it
	Targets         []Target     `json:"targets"`
	BudgetFO4       int          `json:"budget_fo4"`
	BudgetLUTLevels int          `json:"budget_lut_levels"`
	BudgetICE40MHz  int          `json:"budget_ice40_mhz"`
	FO4NS           float64      `json:"fo4_ns"`
	Units           []UnitReport `json:"units"`
	Seconds         float64      `json:"seconds"`
}

// Unit returns the report of the named unit.
func (r *Report) Unit(name string) (*UnitReport, bool) {
	for i := range r.Units {
		if r.Units[i].Unit == name {
			return &r.Units[i], true
		}
	}
	return nil, false
}

// targetCost weighs a target's run time per byte of RTL (measured on nic_top: the xcup depth
// and resource runs together take about twice the ASIC flow's time).
var targetCost = map[Target]float64{ASIC: 1, XCUP: 2, ICE40: 1}

// Run measures every unit of the blocks on every target, Jobs measurements at a time. A unit that
// appears in several blocks is measured once, in the first. It returns the report and, when
// any measurement failed, an error naming them (the report holds what was measured).
func Run(ctx context.Context, opt Options, blocks []BlockDesign) (*Report, error) {
	start := time.Now()
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	if len(blocks) == 0 {
		return nil, errors.New("qor: no blocks to measure")
	}
	c := blocks[0].Config
	rep := &Report{Config: c.Name, ConfigHash: c.Hash(), Targets: opt.Targets, BudgetFO4: BudgetFO4,
		BudgetLUTLevels: BudgetLUTLevels, BudgetICE40MHz: BudgetICE40MHz, FO4NS: FO4NS}
	type job struct {
		idx    int
		bd     BlockDesign
		unit   Unit
		target Target
		cost   float64
	}
	var jobs []job
	seen := map[string]bool{}
	for _, bd := range blocks {
		for _, name := range bd.Units {
			if seen[name] {
				continue
			}
			seen[name] = true
			u, err := UnitOf(bd.Design, bd.Dir, name, bd.Config)
			if err != nil {
				return nil, err
			}
			ur := UnitReport{Unit: name, Block: bd.Block, Config: bd.Config.Name}
			for _, m := range bd.Design.Memories.Under(name) {
				ur.MemoryBits += m.Bits
				if m.Implementation == "macro" {
					ur.MacroBits += m.Bits
				}
			}
			rep.Units = append(rep.Units, ur)
			size := float64(bd.Design.SubtreeBytes(name))
			for _, tg := range opt.Targets {
				jobs = append(jobs, job{idx: len(rep.Units) - 1, bd: bd, unit: u, target: tg, cost: size * targetCost[tg]})
			}
		}
	}
	// One job per unit and target, the largest first, so that the last to finish is a small one.
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].cost > jobs[j].cost })
	var mu sync.Mutex
	var failed []string
	work := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < opt.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				line, err := measure(ctx, opt, j.bd.Block, j.unit, j.target, &mu, &rep.Units[j.idx])
				mu.Lock()
				if err != nil {
					if rep.Units[j.idx].Errors == nil {
						rep.Units[j.idx].Errors = map[string]string{}
					}
					rep.Units[j.idx].Errors[string(j.target)] = err.Error()
					failed = append(failed, j.unit.Name()+"/"+string(j.target))
					line = "FAILED: " + err.Error()
				}
				fmt.Fprintf(opt.Progress, "qor: %-18s %-5s %s (%.0f s)\n", j.unit.Name(), j.target, line, time.Since(t0).Seconds())
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	rep.Seconds = round1(time.Since(start).Seconds())
	if ctx.Err() != nil {
		return rep, fmt.Errorf("qor: %w", ctx.Err())
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return rep, fmt.Errorf("qor: %d measurement(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return rep, nil
}

// measure runs one target on one unit and stores the result; it returns the progress line.
func measure(ctx context.Context, opt Options, block string, u Unit, tg Target, mu *sync.Mutex, ur *UnitReport) (string, error) {
	dir := filepath.Join(opt.WorkDir, u.Name(), string(tg))
	switch tg {
	case ASIC:
		r, err := RunASIC(ctx, u, dir, opt.Model, opt.Log)
		if err != nil {
			return "", err
		}
		mu.Lock()
		ur.ASIC = r
		mu.Unlock()
		return fmt.Sprintf("%.2f ns, %.0f FO4, %d levels: %s -> %s", r.CriticalNS, r.CriticalFO4, r.Levels, r.Start, r.End), nil
	case XCUP:
		r, err := RunXCUP(ctx, u, dir, opt.Part, !opt.DepthOnly, opt.Log)
		if err != nil {
			return "", err
		}
		mu.Lock()
		ur.XCUP = r
		mu.Unlock()
		if opt.DepthOnly {
			return fmt.Sprintf("%d LUT6 levels", r.LUTLevels), nil
		}
		return fmt.Sprintf("%d LUT6 levels, %d LUTs, %d FFs, %d RAMB36, %d URAM", r.LUTLevels, r.LUTs, r.FFs, r.RAMB36, r.URAM), nil
	case ICE40:
		var cands func() ([]Candidate, error)
		if opt.Candidates != nil {
			cands = func() ([]Candidate, error) { return opt.Candidates(block, u.Name()) }
		}
		r, err := RunICE40(ctx, u, dir, opt.Board, cands, opt.Log)
		if err != nil {
			return "", err
		}
		mu.Lock()
		ur.ICE40 = r
		mu.Unlock()
		return r.Summary(), nil
	}
	return "", fmt.Errorf("qor: unknown target %q", tg)
}

// Summary is one line: Fmax and counts, or what does not fit and the configuration that does.
func (r *ICE40Result) Summary() string {
	switch {
	case r.Result == nil && r.Fit != nil:
		return fmt.Sprintf("%s; at %s: %.1f MHz, %d LUTs", r.Note, r.FitConfig, r.Fit.FmaxMHz, r.Fit.LUTs)
	case r.Result == nil:
		return r.Note
	case r.Fits:
		return fmt.Sprintf("%.1f MHz, %d LUTs, %d FFs, %d RAMs", r.Result.FmaxMHz, r.Result.LUTs, r.Result.FFs, r.Result.RAMs)
	case r.Fit != nil:
		return fmt.Sprintf("%s; at %s: %.1f MHz, %d LUTs", r.Result.DoesNotFit(), r.FitConfig, r.Fit.FmaxMHz, r.Fit.LUTs)
	}
	return r.Result.DoesNotFit() + "; " + r.Note
}
