package lint

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/internal/tooltest"
)

func td(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join("testdata", n)
	}
	return out
}

func TestRunCatches(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	tests := []struct {
		name   string
		files  []string
		top    string
		passed map[Check]bool
		// want holds, for each failing check, text its Output must contain.
		want map[Check]string
	}{
		{
			name:   "clean module passes all three",
			files:  td("clean_adder.v"),
			top:    "clean_adder",
			passed: map[Check]bool{Verilator: true, Yosys: true, Icarus: true},
		},
		{
			name:   "design over two files passes all three",
			files:  td("two_file_top.v", "sub_inverter.v"),
			top:    "two_file_top",
			passed: map[Check]bool{Verilator: true, Yosys: true, Icarus: true},
		},
		{
			name:   "latch in always @* is caught by yosys with the signal name",
			files:  td("latch_mux.v"),
			top:    "latch_mux",
			passed: map[Check]bool{Verilator: false, Yosys: false, Icarus: true},
			want: map[Check]string{
				Verilator: "%Warning-LATCH",
				Yosys:     `Latch inferred for signal ` + "`" + `\latch_mux.\q'`,
			},
		},
		{
			name:   "combinational loop is caught",
			files:  td("comb_loop.v"),
			top:    "comb_loop",
			passed: map[Check]bool{Verilator: false, Yosys: false, Icarus: true},
			want: map[Check]string{
				Verilator: "%Warning-UNOPTFLAT",
				Yosys:     "found logic loop in module comb_loop",
			},
		},
		{
			name:   "unused signal is a verilator -Wall failure",
			files:  td("unused_signal.v"),
			top:    "unused_signal",
			passed: map[Check]bool{Verilator: false, Yosys: true, Icarus: true},
			want:   map[Check]string{Verilator: "Signal is not used: 'spare'"},
		},
		{
			name:   "multiple drivers pass verilator but not yosys check -assert",
			files:  td("multi_driver.v"),
			top:    "multi_driver",
			passed: map[Check]bool{Verilator: true, Yosys: false, Icarus: true},
			want:   map[Check]string{Yosys: "multiple conflicting drivers for multi_driver"},
		},
		{
			name:   "syntax only icarus rejects",
			files:  td("icarus_reject.v"),
			top:    "icarus_reject",
			passed: map[Check]bool{Verilator: true, Yosys: true, Icarus: false},
			want:   map[Check]string{Icarus: "icarus_reject.v:12: syntax error"},
		},
		{
			name:   "syntax error fails everything",
			files:  td("syntax_error.v"),
			top:    "syntax_error",
			passed: map[Check]bool{Verilator: false, Yosys: false, Icarus: false},
			want: map[Check]string{
				Verilator: "%Error",
				Yosys:     "syntax_error.v:13: ERROR: syntax error",
				Icarus:    "syntax error",
			},
		},
		{
			name:   "top module absent from the files fails everything",
			files:  td("clean_adder.v"),
			top:    "no_such_module",
			passed: map[Check]bool{Verilator: false, Yosys: false, Icarus: false},
			want: map[Check]string{
				Verilator: "no_such_module",
				Yosys:     "no_such_module",
				Icarus:    "no_such_module",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, err := Run(context.Background(), tc.files, tc.top, Options{})
			require.NoError(t, err)
			got := map[Check]bool{}
			var order []Check
			for _, r := range rep.Results {
				got[r.Tool] = r.Passed
				order = append(order, r.Tool)
				require.Positive(t, r.Duration, "%s duration", r.Tool)
				require.Equal(t, string(r.Tool), r.Command[0])
			}
			require.Empty(t, cmp.Diff(AllChecks(), order), "result order")
			require.Empty(t, cmp.Diff(tc.passed, got), "passed per check (-want +got)\n%s", rep)
			wantOK := tc.passed[Verilator] && tc.passed[Yosys] && tc.passed[Icarus]
			require.Equal(t, wantOK, rep.OK())
			for _, r := range rep.Results {
				if sub, ok := tc.want[r.Tool]; ok {
					require.Contains(t, r.Output, sub, "%s output", r.Tool)
				}
				if !r.Passed {
					require.NotEmpty(t, r.Output, "a failed %s check must explain itself", r.Tool)
				}
			}
		})
	}
}

func TestRunSelectsChecksAndLogs(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	tests := []struct {
		name   string
		checks []Check
		want   []Check
	}{
		{name: "default is all", want: []Check{Verilator, Yosys, Icarus}},
		{name: "one", checks: []Check{Yosys}, want: []Check{Yosys}},
		{name: "reordered and repeated", checks: []Check{Icarus, Verilator, Icarus}, want: []Check{Verilator, Icarus}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			rep, err := Run(context.Background(), td("latch_mux.v"), "latch_mux", Options{Checks: tc.checks, Log: &log})
			require.NoError(t, err)
			var got []Check
			for _, r := range rep.Results {
				got = append(got, r.Tool)
				require.Contains(t, log.String(), "=== lint "+string(r.Tool)+": "+string(r.Tool)+" ")
			}
			require.Empty(t, cmp.Diff(tc.want, got))
			for _, c := range AllChecks() {
				if !contains(tc.want, c) {
					require.NotContains(t, log.String(), "=== lint "+string(c))
				}
			}
			if contains(tc.want, Yosys) {
				// The log has the full Yosys output, not just the extracted lines.
				require.Contains(t, log.String(), "Executing PROC pass")
			}
		})
	}
}

func contains(cs []Check, c Check) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func TestRunArgumentErrors(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		top    string
		checks []Check
		want   string
	}{
		{name: "no files", top: "clean_adder", want: "no Verilog files"},
		{name: "bad top", files: td("clean_adder.v"), top: "1top", want: `top module "1top"`},
		{name: "missing file", files: td("nope.v"), top: "nope", want: "nope.v"},
		{name: "directory", files: []string{"testdata"}, top: "x", want: "is a directory"},
		{name: "quote in name", files: []string{`a"b.v`}, top: "x", want: "quotes"},
		{
			name: "unknown check", files: td("clean_adder.v"), top: "clean_adder",
			checks: []Check{"spyglass"}, want: `unknown check "spyglass" (valid: verilator, yosys, iverilog)`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), tc.files, tc.top, Options{Checks: tc.checks})
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, rep)
		})
	}
}

func TestRunMissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Run(context.Background(), td("clean_adder.v"), "clean_adder", Options{Checks: []Check{Yosys, Icarus}})
	require.ErrorIs(t, err, ErrToolMissing)
	require.ErrorContains(t, err, "yosys, iverilog")
	require.ErrorContains(t, err, "make deps")
	require.NotContains(t, err.Error(), "verilator", "only the selected checks' tools are required")
}

func TestRunCancelled(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, td("clean_adder.v"), "clean_adder", Options{})
	require.True(t, errors.Is(err, context.Canceled), "err = %v", err)
}

func TestExtractors(t *testing.T) {
	yosysLog := strings.Join([]string{
		"1. Executing Verilog-2005 frontend: x.v",
		"No latch inferred for signal `\\m.\\a' from process `\\m.$proc$x.v:3$1'.",
		"Latch inferred for signal `\\m.\\q' from process `\\m.$proc$x.v:9$2': $auto$proc_dlatch.cc:427:proc_dlatch$15",
		"Warning: found logic loop in module m:",
		"    cell $not$x.v:14$2 ($not)",
		"    wire $not$x.v:14$2_Y",
		"",
		"5. Executing CHECK pass (checking for obvious problems).",
		"    indented but not part of a warning",
		"x.v:20: ERROR: syntax error, unexpected TOK_ENDMODULE",
		"ERROR: Assertion failed: selection is not empty: t:$dlatch t:$adlatch t:$dlatchsr",
		"Selection contains:",
		"m/$auto$proc_dlatch.cc:427:proc_dlatch$15",
		"",
	}, "\n")
	verilatorLog := strings.Join([]string{
		"%Warning-UNUSEDSIGNAL: u.v:11:14: Signal is not used: 'spare'",
		"                                            : ... In instance u",
		"   11 |   wire [3:0] spare;",
		"      |              ^~~~~",
		"                       ... For warning description see https://verilator.org/warn/UNUSEDSIGNAL?v=5.006",
		"                       ... Use \"/* verilator lint_off UNUSEDSIGNAL */\" and lint_on around source to disable this message.",
		"%Error: Exiting due to 1 warning(s)",
	}, "\n")
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{
			name: "yosys",
			got:  yosysLines([]byte(yosysLog)),
			want: []string{
				"Latch inferred for signal `\\m.\\q' from process `\\m.$proc$x.v:9$2': $auto$proc_dlatch.cc:427:proc_dlatch$15",
				"Warning: found logic loop in module m:",
				"    cell $not$x.v:14$2 ($not)",
				"    wire $not$x.v:14$2_Y",
				"x.v:20: ERROR: syntax error, unexpected TOK_ENDMODULE",
				"ERROR: Assertion failed: selection is not empty: t:$dlatch t:$adlatch t:$dlatchsr",
				"Selection contains:",
				"m/$auto$proc_dlatch.cc:427:proc_dlatch$15",
			},
		},
		{
			name: "verilator",
			got:  verilatorLines([]byte(verilatorLog)),
			want: []string{
				"%Warning-UNUSEDSIGNAL: u.v:11:14: Signal is not used: 'spare'",
				"                                            : ... In instance u",
				"   11 |   wire [3:0] spare;",
				"      |              ^~~~~",
				"%Error: Exiting due to 1 warning(s)",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Empty(t, cmp.Diff(tc.want, tc.got))
		})
	}
	require.True(t, hasVerilatorDiag([]byte(verilatorLog)))
	require.False(t, hasVerilatorDiag([]byte("- V e r i l a t i o n   R e p o r t\n")))
}

func TestLimit(t *testing.T) {
	var ls []string
	for range MaxOutputLines + 5 {
		ls = append(ls, "x")
	}
	got := strings.Split(limit(ls), "\n")
	require.Len(t, got, MaxOutputLines+1)
	require.Equal(t, "... 5 more lines (the full output is in the lint log)", got[MaxOutputLines])
	require.Len(t, ls, MaxOutputLines+5, "limit must not modify its argument")
	require.Equal(t, "a\nb", limit([]string{"a", "b"}))
}

func TestReportOK(t *testing.T) {
	tests := []struct {
		name string
		rep  *Report
		want bool
	}{
		{name: "nil", rep: nil, want: false},
		{name: "no checks ran", rep: &Report{}, want: false},
		{name: "all passed", rep: &Report{Results: []Result{{Tool: Yosys, Passed: true}, {Tool: Icarus, Passed: true}}}, want: true},
		{name: "one failed", rep: &Report{Results: []Result{{Tool: Yosys, Passed: true}, {Tool: Icarus}}}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.rep.OK())
		})
	}
}
