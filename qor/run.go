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
	// Whole measures every unit whole, none composed of the units below it (compose.go).
	Whole bool
	// Candidates returns a unit at other configurations for the iCE40 fit search (nil: none);
	// it is called only for a unit that does not fit at its own.
	Candidates func(block, unit string) ([]Candidate, error)
	Results    io.Writer             // one line per finished measurement
	Progress   func(done, total int) // called as each measurement finishes
	Log        io.Writer             // tool command lines (-v)
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
	ECP5       *ECP5Result       `json:"ecp5,omitempty"`
	Errors     map[string]string `json:"errors,omitempty"` // target -> error
}

// Report is the result of mrgen qor.
type Report struct {
	Config          string       `json:"config"`
	ConfigHash      string       `json:"config_hash"`
	Command         string       `json:"command,omitempty"` // the mrgen command that measured it
	Targets         []Target     `json:"targets"`
	DepthOnly       bool         `json:"depth_only,omitempty"` // xcup measured LUT depth only, no resources
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

// targetCost weighs a target's run time per byte of RTL: the xcup depth and resource runs
// together take about twice the ASIC flow's time (nic_top whole), and an ice40 job with its fit
// search the longest of a unit's (rx_acker's 730 s at the default configuration), so it starts
// early rather than last.
var targetCost = map[Target]float64{ASIC: 1, XCUP: 2, ICE40: 3, ECP5: 2}

// Run measures every unit of the blocks on every target, Jobs measurements at a time. A unit that
// appears in several blocks is measured once, in the first. It returns the report and, when
// any measurement failed, an error naming them (the report holds what was measured).
func Run(ctx context.Context, opt Options, blocks []BlockDesign) (*Report, error) {
	start := time.Now()
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	if opt.Results == nil {
		opt.Results = io.Discard
	}
	if len(blocks) == 0 {
		return nil, errors.New("qor: no blocks to measure")
	}
	c := blocks[0].Config
	rep := &Report{Config: c.Name, ConfigHash: c.Hash(), Targets: opt.Targets, DepthOnly: opt.DepthOnly, BudgetFO4: BudgetFO4,
		BudgetLUTLevels: BudgetLUTLevels, BudgetICE40MHz: BudgetICE40MHz, FO4NS: FO4NS}
	type job struct {
		idx        int
		bd         BlockDesign
		unit       Unit
		target     Target
		cost       float64
		waiting    int   // parts' jobs not finished yet
		dependents []int // jobs composed of this one
	}
	type entry struct {
		idx  int
		bd   BlockDesign
		unit Unit
	}
	var units []entry
	byName := map[string]int{}
	for _, bd := range blocks {
		for _, name := range bd.Units {
			if _, seen := byName[name]; seen {
				continue
			}
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
			byName[name] = len(units)
			units = append(units, entry{idx: len(rep.Units) - 1, bd: bd, unit: u})
		}
	}
	// A unit with measured units below it (the same hardware: equal digests, no parameters)
	// is composed of them, and its jobs wait for theirs.
	costs := make([]float64, len(units))
	for k := range units {
		e := &units[k]
		name := e.unit.Name()
		costs[k] = float64(e.bd.Design.SubtreeBytes(name))
		if opt.Whole {
			continue
		}
		// A combinational unit is no part: its logic merges with its neighbours' LUTs and
		// gates once flattened, and a boundary there would add levels the hardware has not.
		isPart := func(m string) bool {
			i, ok := byName[m]
			return ok && m != name && units[i].unit.Module.Clock != "" &&
				e.bd.Design.SubtreeDigest(m) == units[i].unit.Digest
		}
		parts, glue, withParams := e.bd.Design.Parts(name, isPart)
		if len(parts) == 0 || len(withParams) > 0 {
			continue
		}
		for m, n := range parts {
			e.unit.Parts = append(e.unit.Parts, SubUnit{Name: m, Module: units[byName[m]].unit.Module, Count: n})
		}
		sort.Slice(e.unit.Parts, func(a, b int) bool { return e.unit.Parts[a].Name < e.unit.Parts[b].Name })
		costs[k] = float64(glue)
	}
	var jobs []*job
	jobOf := map[string]int{} // unit/target -> job
	for k, e := range units {
		for _, tg := range opt.Targets {
			jobOf[e.unit.Name()+"/"+string(tg)] = len(jobs)
			jobs = append(jobs, &job{idx: e.idx, bd: e.bd, unit: e.unit, target: tg, cost: costs[k] * targetCost[tg]})
		}
	}
	for k, j := range jobs {
		if j.target == ECP5 {
			continue // synthesized whole: it needs none of its parts' results
		}
		for _, pt := range j.unit.Parts {
			d := jobOf[pt.Name+"/"+string(j.target)]
			jobs[d].dependents = append(jobs[d].dependents, k)
			j.waiting++
		}
	}
	var mu sync.Mutex
	var failed []string
	// The results of a job's parts, taken when it starts (their jobs have finished).
	withParts := func(j *job) Unit {
		u := j.unit
		u.Parts = append([]SubUnit(nil), u.Parts...)
		for i := range u.Parts {
			ur := &rep.Units[units[byName[u.Parts[i].Name]].idx]
			u.Parts[i].ASIC, u.Parts[i].XCUP, u.Parts[i].ICE40 = ur.ASIC, ur.XCUP, ur.ICE40
		}
		return u
	}
	work := make(chan int)
	finished := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < opt.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				j := jobs[k]
				mu.Lock()
				u := withParts(j)
				mu.Unlock()
				t0 := time.Now()
				line, err := measure(ctx, opt, j.bd.Block, u, j.target, &mu, &rep.Units[j.idx])
				mu.Lock()
				if err != nil {
					if rep.Units[j.idx].Errors == nil {
						rep.Units[j.idx].Errors = map[string]string{}
					}
					rep.Units[j.idx].Errors[string(j.target)] = err.Error()
					failed = append(failed, j.unit.Name()+"/"+string(j.target))
					line = "FAILED: " + err.Error()
				}
				fmt.Fprintf(opt.Results, "qor: %-18s %-5s %s (%.0f s)\n", j.unit.Name(), j.target, line, time.Since(t0).Seconds())
				mu.Unlock()
				finished <- k
			}
		}()
	}
	// Dispatch: of the jobs whose parts are done, the largest first, so that the last to
	// finish is a small one.
	var ready []int
	for k, j := range jobs {
		if j.waiting == 0 {
			ready = append(ready, k)
		}
	}
	running, done := 0, 0
	if opt.Progress != nil {
		opt.Progress(0, len(jobs))
	}
	for done < len(jobs) {
		for running < opt.Jobs && len(ready) > 0 && ctx.Err() == nil {
			best := 0
			for i, k := range ready {
				if jobs[k].cost > jobs[ready[best]].cost {
					best = i
				}
			}
			k := ready[best]
			ready = append(ready[:best], ready[best+1:]...)
			work <- k
			running++
		}
		if running == 0 {
			break // cancelled
		}
		k := <-finished
		running--
		done++
		if opt.Progress != nil {
			opt.Progress(done, len(jobs))
		}
		for _, d := range jobs[k].dependents {
			if jobs[d].waiting--; jobs[d].waiting == 0 {
				ready = append(ready, d)
			}
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
	case ECP5:
		r, err := RunECP5(ctx, u, dir, opt.Log)
		if err != nil {
			return "", err
		}
		mu.Lock()
		ur.ECP5 = r
		mu.Unlock()
		return r.Summary(), nil
	}
	return "", fmt.Errorf("qor: unknown target %q", tg)
}

// Summary is one line: Fmax and counts, or why it is not a fit (over the device, or placed but
// fuller than FitFraction) and the configuration that is.
func (r *ICE40Result) Summary() string {
	if r.Fits {
		return fmt.Sprintf("%.1f MHz, %d LUTs, %d FFs, %d RAMs", r.Result.FmaxMHz, r.Result.LUTs, r.Result.FFs, r.Result.RAMs)
	}
	head := r.Note
	if r.Result != nil {
		head = r.Result.DoesNotFit()
		if r.Result.OverCapacity == "" {
			head = fmt.Sprintf("%.1f MHz, %d LUTs at %.0f%% of the device (over %.0f%%)", r.Result.FmaxMHz,
				r.Result.LUTs, 100*r.Share, 100*FitFraction)
		}
	}
	switch {
	case r.Fit != nil:
		return fmt.Sprintf("%s; at %s: %.1f MHz, %d LUTs", head, r.FitConfig, r.Fit.FmaxMHz, r.Fit.LUTs)
	case r.Result != nil && r.Note != "":
		return head + "; " + r.Note
	}
	return head
}
