// Package lint runs the checks every Verilog file mrgen emits must pass (HDL_STYLE.md, "Checks
// every generated file passes"):
//
//   - Verilator: `verilator --lint-only -Wall --top-module TOP FILES...` must print no %Warning
//     and no %Error at all; -Wall warnings are failures, not advice.
//   - Yosys: `read_verilog -sv FILES; hierarchy -check -top TOP; proc; select -assert-none
//     t:$dlatch t:$adlatch t:$dlatchsr; check -assert`. The select catches latches, which
//     `check -assert` alone does not; `check -assert` catches combinational loops and multiple
//     drivers (which Verilator -Wall accepts on a wire).
//   - Icarus: `iverilog -g2012 -o TMP -s TOP FILES...` must compile.
//
// A failed check is not an error: Run returns a Report whose OK method says whether every
// selected check passed. Run returns an error only when a check could not be run at all (bad
// arguments, a missing tool, a cancelled context).
package lint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Check names one of the three checks. Its value is the program it runs.
type Check string

// The checks Run knows.
const (
	Verilator Check = "verilator"
	Yosys     Check = "yosys"
	Icarus    Check = "iverilog"
)

// AllChecks lists every check in the order Run reports them.
func AllChecks() []Check { return []Check{Verilator, Yosys, Icarus} }

// ErrToolMissing is wrapped by the error Run returns when a selected check's program is not on
// PATH.
var ErrToolMissing = errors.New("tool not found on PATH")

// MaxOutputLines bounds Result.Output; the full output always goes to Options.Log.
const MaxOutputLines = 60

// Options selects checks and where full tool output goes.
type Options struct {
	// Checks to run, reported in AllChecks order; empty means all three.
	Checks []Check
	// Log receives every tool's command line and full output, one block per tool, written
	// whole after the tool exits so concurrent checks never interleave. Nil discards it.
	Log io.Writer
}

// Result is the outcome of one check.
type Result struct {
	Tool     Check         `json:"tool"`
	Command  []string      `json:"command"` // argv as run; the Icarus output path is a temp file
	Passed   bool          `json:"passed"`
	Output   string        `json:"output,omitempty"` // the relevant lines, trimmed
	Duration time.Duration `json:"duration_ns"`
}

// Report is the outcome of Run: one Result per selected check, in AllChecks order.
type Report struct {
	Top     string   `json:"top"`
	Files   []string `json:"files"`
	Results []Result `json:"results"`
}

// OK reports whether at least one check ran and every check passed.
func (r *Report) OK() bool {
	if r == nil || len(r.Results) == 0 {
		return false
	}
	for _, res := range r.Results {
		if !res.Passed {
			return false
		}
	}
	return true
}

// Failures returns the results of the checks that did not pass.
func (r *Report) Failures() []Result {
	if r == nil {
		return nil
	}
	var out []Result
	for _, res := range r.Results {
		if !res.Passed {
			out = append(out, res)
		}
	}
	return out
}

// String renders the report for people: one line per check, then the output of each failure.
func (r *Report) String() string {
	if r == nil {
		return "<nil lint report>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lint %s (%d files):\n", r.Top, len(r.Files))
	for _, res := range r.Results {
		verdict := "PASS"
		if !res.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(&b, "  %-9s %s  %s\n", res.Tool, verdict, res.Duration.Round(time.Millisecond))
	}
	for _, res := range r.Failures() {
		fmt.Fprintf(&b, "--- %s:\n%s\n", res.Tool, res.Output)
	}
	return b.String()
}

// topRE is a Verilog simple identifier.
var topRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// Run lints files with top as the top module.
func Run(ctx context.Context, files []string, top string, opt Options) (*Report, error) {
	if len(files) == 0 {
		return nil, errors.New("lint: no Verilog files given")
	}
	if !topRE.MatchString(top) {
		return nil, fmt.Errorf("lint: top module %q is not a Verilog identifier", top)
	}
	for _, f := range files {
		if strings.ContainsAny(f, "\"\n\r") || strings.HasPrefix(f, "-") {
			return nil, fmt.Errorf("lint: file name %q: quotes, line breaks and a leading '-' are not supported", f)
		}
		st, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("lint: %w", err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("lint: %s is a directory, want a Verilog file", f)
		}
	}
	checks, err := selectChecks(opt.Checks)
	if err != nil {
		return nil, err
	}
	progs := make(map[Check]string, len(checks))
	var missing []string
	for _, c := range checks {
		p, err := exec.LookPath(string(c))
		if err != nil {
			missing = append(missing, string(c))
			continue
		}
		progs[c] = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("lint: %w: %s; run `make deps` to install the toolchain",
			ErrToolMissing, strings.Join(missing, ", "))
	}

	tmp, err := os.MkdirTemp("", "mrgen-lint-")
	if err != nil {
		return nil, fmt.Errorf("lint: temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	rep := &Report{Top: top, Files: append([]string(nil), files...), Results: make([]Result, len(checks))}
	errs := make([]error, len(checks))
	var logMu sync.Mutex
	var wg sync.WaitGroup
	for i, c := range checks {
		argv := commandFor(c, files, top, tmp)
		wg.Go(func() {
			res, full, err := runOne(ctx, c, progs[c], argv)
			if err != nil {
				errs[i] = err
				return
			}
			rep.Results[i] = res
			if opt.Log != nil {
				logMu.Lock()
				defer logMu.Unlock()
				fmt.Fprintf(opt.Log, "=== lint %s: %s\n%s", c, shellJoin(argv), full)
				if len(full) > 0 && !bytes.HasSuffix(full, []byte("\n")) {
					fmt.Fprintln(opt.Log)
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rep, nil
}

func selectChecks(sel []Check) ([]Check, error) {
	if len(sel) == 0 {
		return AllChecks(), nil
	}
	want := map[Check]bool{}
	for _, c := range sel {
		known := false
		for _, k := range AllChecks() {
			known = known || c == k
		}
		if !known {
			return nil, fmt.Errorf("lint: unknown check %q (valid: %s, %s, %s)", c, Verilator, Yosys, Icarus)
		}
		want[c] = true
	}
	var out []Check
	for _, k := range AllChecks() {
		if want[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

// YosysScript is the Yosys command sequence of the structural check, one command per element.
func YosysScript(files []string, top string) []string {
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = `"` + f + `"`
	}
	return []string{
		"read_verilog -sv " + strings.Join(quoted, " "),
		"hierarchy -check -top " + top,
		"proc",
		"select -assert-none t:$dlatch t:$adlatch t:$dlatchsr",
		"check -assert",
	}
}

func commandFor(c Check, files []string, top, tmp string) []string {
	switch c {
	case Verilator:
		return append([]string{"verilator", "--lint-only", "-Wall", "--top-module", top}, files...)
	case Yosys:
		// Not -q: proc_dlatch's "Latch inferred for signal" lines name the latched signal.
		return []string{"yosys", "-p", strings.Join(YosysScript(files, top), "; ")}
	default:
		out := filepath.Join(tmp, top+".vvp")
		return append([]string{"iverilog", "-g2012", "-o", out, "-s", top}, files...)
	}
}

// runOne runs one check in the caller's working directory, so diagnostics name the files as
// the caller gave them. None of the three commands writes there: --lint-only makes no obj_dir,
// the Yosys script writes nothing, and Icarus writes into a temporary directory. It returns the
// result, the full output for the log, and an error only when the tool could not be run or the
// context ended.
func runOne(ctx context.Context, c Check, prog string, argv []string) (Result, []byte, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, argv[1:]...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	runErr := cmd.Run()
	res := Result{Tool: c, Command: argv, Duration: time.Since(start)}
	if ctx.Err() != nil {
		return res, nil, fmt.Errorf("lint: %s: %w", c, ctx.Err())
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return res, nil, fmt.Errorf("lint: running %s: %w", c, runErr)
	}
	full := out.Bytes()
	switch c {
	case Verilator:
		rel := verilatorLines(full)
		res.Passed = runErr == nil && !hasVerilatorDiag(full)
		res.Output = limit(rel)
	case Yosys:
		res.Passed = runErr == nil
		res.Output = limit(yosysLines(full))
	default:
		res.Passed = runErr == nil
		res.Output = limit(nonEmptyLines(full))
	}
	if !res.Passed && res.Output == "" {
		res.Output = fmt.Sprintf("%s failed (%v) without diagnostics", c, runErr)
	}
	return res, full, nil
}

func hasVerilatorDiag(out []byte) bool {
	for _, l := range lines(out) {
		if strings.HasPrefix(l, "%Warning") || strings.HasPrefix(l, "%Error") {
			return true
		}
	}
	return false
}

// verilatorLines keeps diagnostics and their source excerpts, dropping the generic
// "For warning description see" and "Use /* verilator lint_off */" hints.
func verilatorLines(out []byte) []string {
	var keep []string
	for _, l := range lines(out) {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "... For warning description see") ||
			strings.HasPrefix(t, "... Use \"/* verilator lint_off") {
			continue
		}
		keep = append(keep, strings.TrimRight(l, " \t"))
	}
	return keep
}

// yosysLines keeps what explains a failure in a full Yosys log: inferred latches (with the
// signal name, which the failed select does not give), warnings with their indented detail
// lines (logic loops, conflicting drivers), and everything from the first ERROR on.
func yosysLines(out []byte) []string {
	var keep []string
	inWarning := false
	all := lines(out)
	for i, l := range all {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "ERROR:") || strings.Contains(t, ": ERROR: "):
			for _, rest := range all[i:] {
				if strings.TrimSpace(rest) != "" {
					keep = append(keep, strings.TrimRight(rest, " \t"))
				}
			}
			return keep
		case strings.HasPrefix(t, "Latch inferred for signal"):
			keep = append(keep, t)
			inWarning = false
		case strings.HasPrefix(l, "Warning:"):
			keep = append(keep, strings.TrimRight(l, " \t"))
			inWarning = true
		case inWarning && t != "" && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")):
			keep = append(keep, strings.TrimRight(l, " \t"))
		default:
			inWarning = false
		}
	}
	return keep
}

func nonEmptyLines(out []byte) []string {
	var keep []string
	for _, l := range lines(out) {
		if strings.TrimSpace(l) != "" {
			keep = append(keep, strings.TrimRight(l, " \t"))
		}
	}
	return keep
}

func lines(out []byte) []string {
	var ls []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		ls = append(ls, sc.Text())
	}
	return ls
}

func limit(ls []string) string {
	if len(ls) > MaxOutputLines {
		more := len(ls) - MaxOutputLines
		ls = append(ls[:MaxOutputLines:MaxOutputLines],
			fmt.Sprintf("... %d more lines (the full output is in the lint log)", more))
	}
	return strings.Join(ls, "\n")
}

// shellJoin renders argv for a log line, quoting arguments that a shell would split.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t'\"$;*?[]()<>|&\\") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}
