// Package formal runs bounded model checks of a generated block's embedded properties (the
// `ifdef FORMAL assertions and assumptions of its templates) with the open Yosys flow: Yosys
// reads the RTL with -formal, flattens it, drops the ordinary outputs and writes an AIGER
// model whose bad-state properties are the assertions; yosys-abc's bmc3 then searches for a
// counterexample of up to Depth cycles from reset.
//
// docs/toolchain.md records z3 stalling on a real bug where abc bmc3 found it in milliseconds, so
// bmc3 is the bug-finding leg. Check (prove.go) takes one labelled property at a time: abc pdr
// proves it unbounded or, when it does not finish, bmc3 bounds it; a counterexample is replayed
// into a VCD.
package formal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrToolMissing is wrapped when yosys or yosys-abc is not on PATH.
var ErrToolMissing = errors.New("tool not found on PATH; run make deps")

// Result is the outcome of one bounded check.
type Result struct {
	Top     string  `json:"top"`
	Depth   int     `json:"depth"`   // cycles asked for
	Frames  int     `json:"frames"`  // cycles searched with no counterexample (Depth unless time ran out)
	Passed  bool    `json:"passed"`  // no assertion can fail within Depth cycles
	Frame   int     `json:"frame"`   // the cycle of the first failure (when !Passed)
	Seconds float64 `json:"seconds"` // wall time of the search
	Log     string  `json:"log"`     // the solver's last lines
}

var (
	passRE = regexp.MustCompile(`No output asserted in (\d+) frames`)
	failRE = regexp.MustCompile(`Output (\d+) of miter "[^"]*" was asserted in frame (\d+)`)
)

// BMC checks the assertions of top over depth cycles. files are all the RTL sources; workDir
// receives the AIGER model and logs ("" = a temporary directory, removed afterwards).
func BMC(ctx context.Context, files []string, top string, depth int, workDir string) (*Result, error) {
	return BMCWithin(ctx, files, top, depth, 0, workDir)
}

// BMCWithin is BMC with a limit on the search's time (0: none): when it runs out, the result
// passes with the frames searched so far (Frames < Depth).
func BMCWithin(ctx context.Context, files []string, top string, depth int, limit time.Duration, workDir string) (*Result, error) {
	if depth < 1 || depth > 1000 {
		return nil, fmt.Errorf("formal: depth %d out of range 1..1000", depth)
	}
	if err := needTools("yosys", "yosys-abc"); err != nil {
		return nil, err
	}
	workDir, done, err := workFolder(workDir)
	if err != nil {
		return nil, err
	}
	defer done()
	aig := filepath.Join(workDir, top+".aig")
	script, abcScript := Scripts(files, top, aig, depth, limit)
	if out, err := run(ctx, workDir, "yosys", "-q", "-p", script); err != nil {
		return nil, fmt.Errorf("formal: yosys model of %s: %w\n%s", top, err, tail(out, 20))
	}
	start := time.Now()
	out, err := run(ctx, workDir, "yosys-abc", "-c", abcScript)
	if err != nil {
		return nil, fmt.Errorf("formal: bmc3 of %s: %w\n%s", top, err, tail(out, 20))
	}
	res := &Result{Top: top, Depth: depth, Seconds: time.Since(start).Seconds(), Log: tail(out, 4)}
	failed, cycle, ok := searchVerdict(out)
	if !ok {
		return nil, fmt.Errorf("formal: bmc3 of %s gave no verdict:\n%s", top, tail(out, 20))
	}
	if failed {
		res.Frame = cycle
	} else {
		res.Passed, res.Frames = true, cycle
	}
	return res, nil
}

// searchVerdict reads a yosys-abc search's output: an assertion failed in cycle (failed), or none
// did in cycle cycles (bmc3's "No output asserted"); ok is false when it says neither (pdr's
// proof or time-out, or an unexpected output).
func searchVerdict(out string) (failed bool, cycle int, ok bool) {
	if m := failRE.FindStringSubmatch(out); m != nil {
		cycle, _ = strconv.Atoi(m[2])
		return true, cycle, true
	}
	if m := passRE.FindStringSubmatch(out); m != nil {
		cycle, _ = strconv.Atoi(m[1])
		return false, cycle, true
	}
	return false, 0, false
}

// workFolder is dir, made if missing, or a new temporary folder when dir is "" (removed by done).
func workFolder(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("formal: %w", err)
		}
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "mrgen-formal-")
	if err != nil {
		return "", nil, fmt.Errorf("formal: temp dir: %w", err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// Scripts are BMC's two steps: the Yosys script that writes the AIGER model of top's
// unlabelled assertions from files to aig (a labelled one, p_*, is a Property for Check), and
// the yosys-abc script that searches it depth cycles deep, within limit of its CPU time (0: none).
func Scripts(files []string, top, aig string, depth int, limit time.Duration) (yosys, abc string) {
	// The labelled properties are Check's, one at a time (their shadow logic goes with them).
	yosys = strings.Join(append(modelSteps(files, top, "chformal -assert -remove t:$assert n:p_* n:*.p_* %u %i"),
		"write_aiger -zinit "+strconv.Quote(aig)), "; ")
	abc = fmt.Sprintf("read_aiger %s; fold; bmc3 -F %d", aig, depth)
	if limit > 0 {
		abc += fmt.Sprintf(" -T %d", int(limit.Seconds()+0.5))
	}
	return yosys, abc
}

// modelSteps are the Yosys steps from the RTL to the AIGER-ready netlist of top's assertions:
// select are the steps after flattening that choose which assertions stay.
func modelSteps(files []string, top string, selects ...string) []string {
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = strconv.Quote(f)
	}
	steps := append([]string{
		"read_verilog -sv -formal -DFORMAL " + strings.Join(quoted, " "),
		"prep -top " + top,
		"flatten",
	}, selects...)
	return append(steps,
		"delete -output", // only the assertions remain as AIGER outputs
		"async2sync",
		"chformal -assume -early",
		"memory_map",
		"opt -full",
		"dffunmap",
		"techmap",
		"opt -fast",
		"dffunmap",
		"abc -fast -g AND",
		"opt_clean",
	)
}

func run(ctx context.Context, dir, prog string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
