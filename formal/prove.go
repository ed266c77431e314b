package formal

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Status is the outcome of one property.
type Status string

// The outcomes of Check.
const (
	// Proved: the property holds in every reachable state (abc pdr found an inductive
	// invariant).
	Proved Status = "proved"
	// Bounded: no counterexample within Depth cycles from reset; the proof did not finish
	// within its time.
	Bounded Status = "bounded"
	// Failed: a counterexample, Frame cycles from reset, written to Trace.
	Failed Status = "failed"
)

// Request is one property of one module to check.
type Request struct {
	Files    []string      // every RTL source of Top
	Top      string        // the module whose `ifdef FORMAL block holds the property
	Property string        // the label of its assertions (every assertion so labelled, in Top or below); "" = all of them
	Depth    int           // cycles from reset of the bounded search when the proof does not finish
	Limit    time.Duration // each engine's time (0: 60 s)
	WorkDir  string        // the model, logs and the trace ("" = a temporary folder, removed; no trace then)
}

// Verdict is what Check found.
type Verdict struct {
	Top      string  `json:"top"`
	Property string  `json:"property"`
	Status   Status  `json:"status"`
	Engine   string  `json:"engine"`          // pdr (proved or failed), bmc3 (bounded or failed)
	Depth    int     `json:"depth,omitempty"` // bounded: cycles searched with no counterexample
	Frame    int     `json:"frame,omitempty"` // failed: the cycle the assertion fails in
	Trace    string  `json:"trace,omitempty"` // failed: the counterexample as VCD, under WorkDir
	Seconds  float64 `json:"seconds"`         // both engines' wall time
	Log      string  `json:"log"`             // the deciding engine's last lines
}

var (
	provedRE = regexp.MustCompile(`Property proved`)
	labelRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Check proves req's property with abc pdr (an unbounded proof from reset) and, when the proof
// does not finish within req.Limit, searches req.Depth cycles for a counterexample with bmc3. A
// failure from either engine is replayed into a VCD when req.WorkDir is set (replay).
func Check(ctx context.Context, req Request) (*Verdict, error) {
	if req.Depth < 1 || req.Depth > 1000 {
		return nil, fmt.Errorf("formal: depth %d out of range 1..1000", req.Depth)
	}
	if req.Property != "" && !labelRE.MatchString(req.Property) {
		return nil, fmt.Errorf("formal: property %q is not an assertion label", req.Property)
	}
	if err := needTools("yosys", "yosys-abc"); err != nil {
		return nil, err
	}
	if req.Limit <= 0 {
		req.Limit = 60 * time.Second
	}
	// The tools run in the work folder: relative paths are the caller's.
	files := make([]string, len(req.Files))
	for i, f := range req.Files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("formal: %w", err)
		}
		files[i] = abs
	}
	req.Files = files
	keepTrace := req.WorkDir != ""
	dir, done, err := workFolder(req.WorkDir)
	if err != nil {
		return nil, err
	}
	defer done()
	name := req.Top
	if req.Property != "" {
		name += "." + req.Property
	}
	v := &Verdict{Top: req.Top, Property: req.Property}
	if out, err := run(ctx, dir, "yosys", "-q", "-p", ModelScript(req.Files, req.Top, req.Property, name)); err != nil {
		return nil, fmt.Errorf("formal: yosys model of %s: %w\n%s", name, err, tail(out, 20))
	}
	limit := int(req.Limit.Seconds() + 0.5)
	start := time.Now()
	out, err := run(ctx, dir, "yosys-abc", "-c", fmt.Sprintf("read_aiger %s.aig; fold; pdr -T %d; write_cex -a %s.aiw",
		name, limit, name))
	if err != nil {
		return nil, fmt.Errorf("formal: pdr of %s: %w\n%s", name, err, tail(out, 20))
	}
	v.Engine, v.Log = "pdr", tail(out, 4)
	failed, cycle, ok := searchVerdict(out)
	switch {
	case provedRE.MatchString(out):
		v.Status = Proved
	case ok && failed:
		v.Status, v.Frame = Failed, cycle
	default:
		out, err = run(ctx, dir, "yosys-abc", "-c", fmt.Sprintf("read_aiger %s.aig; fold; bmc3 -F %d -T %d; write_cex -a %s.aiw",
			name, req.Depth, limit, name))
		if err != nil {
			return nil, fmt.Errorf("formal: bmc3 of %s: %w\n%s", name, err, tail(out, 20))
		}
		v.Engine, v.Log = "bmc3", tail(out, 4)
		failed, cycle, ok := searchVerdict(out)
		switch {
		case !ok:
			return nil, fmt.Errorf("formal: bmc3 of %s gave no verdict:\n%s", name, tail(out, 20))
		case failed:
			v.Status, v.Frame = Failed, cycle
		default:
			v.Status, v.Depth = Bounded, cycle
		}
	}
	v.Seconds = time.Since(start).Seconds()
	if v.Status == Failed && keepTrace {
		if err := replay(ctx, dir, name, v.Frame); err != nil {
			return nil, err
		}
		v.Trace = name + ".vcd"
	}
	return v, nil
}

// replay turns the counterexample abc wrote (name.aiw, over name.aim's inputs and latches) into
// name.vcd: yosys-smtbmc replays it on the SMT-LIB model of the same netlist and checks that the
// assertion does fail in it.
func replay(ctx context.Context, dir, name string, frame int) error {
	if err := needTools("yosys-smtbmc", "z3"); err != nil {
		return err
	}
	if out, err := run(ctx, dir, "yosys", "-q", "-p", fmt.Sprintf("read_rtlil %s.il; write_smt2 -wires %s.smt2", name, name)); err != nil {
		return fmt.Errorf("formal: SMT model of %s: %w\n%s", name, err, tail(out, 20))
	}
	out, err := run(ctx, dir, "yosys-smtbmc", "-s", "z3", "-t", strconv.Itoa(frame+1), "--aig", name+".aim:"+name+".aiw",
		"--aig-noheader", "--dump-vcd", name+".vcd", name+".smt2")
	if !strings.Contains(out, "Assert failed") {
		return fmt.Errorf("formal: the counterexample of %s did not replay (%v):\n%s", name, err, tail(out, 20))
	}
	return nil
}

// ModelScript is the Yosys script that writes name.aig (the AIGER model whose outputs are the
// kept assertions), name.aim (its map of inputs and latches to the design's names) and name.il
// (the same netlist, which a counterexample is replayed on). With property set, only the
// assertions labelled property (in top or, flattened, below it) are kept; the assumptions all
// stay.
func ModelScript(files []string, top, property, name string) string {
	var selects []string
	if property != "" {
		// Flattening names a submodule's assertion <instance>.<label>.
		sel := fmt.Sprintf("t:$assert n:%s n:*.%s %%u %%i", property, property)
		selects = []string{"select -assert-min 1 " + sel, "chformal -assert -remove t:$assert " + sel + " %d"}
	}
	return strings.Join(append(modelSteps(files, top, selects...),
		"write_rtlil "+name+".il",
		fmt.Sprintf("write_aiger -zinit -map %s.aim %s.aig", name, name)), "; ")
}

func needTools(tools ...string) error {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("formal: %s: %w", tool, ErrToolMissing)
		}
	}
	return nil
}

// Property is one labelled property of a block's `ifdef FORMAL block.
type Property struct {
	Top   string `json:"top"`   // the module whose FORMAL block states it
	Label string `json:"label"` // its assertions' label
	Rule  string `json:"rule"`  // what it states
}
