package fpga

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/constraints"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/lint"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestFoldLevels(t *testing.T) {
	tests := []struct {
		out  int
		want []int
	}{
		{1, []int{1}},
		{7, []int{7}},
		{8, []int{8}},
		{9, []int{9, 8}},
		{32, []int{32, 8}},
		{33, []int{33, 9, 8}},
		{36, []int{36, 9, 8}},
		{603, []int{603, 151, 38, 10, 8}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.out), func(t *testing.T) {
			got := foldLevels(tc.out)
			require.Empty(t, cmp.Diff(tc.want, got))
			for i := 1; i < len(got); i++ {
				// One LUT4 per bit: at most four bits of the level before fold into one.
				require.LessOrEqual(t, (got[i-1]+got[i]-1)/got[i], foldFanIn)
			}
		})
	}
}

func TestNewWrapperShape(t *testing.T) {
	tests := []struct {
		name  string
		m     *hdl.Module
		chain int
		out   int
		folds []int
		pins  []string
	}{
		{
			name: "counter32", m: counter32Module(), chain: 34, out: 33, folds: []int{33, 9, 8},
			pins: []string{"clk", "rst", "sin", "dout[0]", "dout[1]", "dout[2]", "dout[3]",
				"dout[4]", "dout[5]", "dout[6]", "dout[7]"},
		},
		{
			name: "rst_n and one bit each way", m: pulseAsyncModule(), chain: 1, out: 1, folds: []int{1},
			pins: []string{"clk", "rst_n", "sin", "dout"},
		},
		{
			name: "no data inputs", m: shapeModule("no_inputs", "rst", nil, []int{3}), chain: 0, out: 3,
			folds: []int{3}, pins: []string{"clk", "rst", "dout[0]", "dout[1]", "dout[2]"},
		},
		{
			// A pipeline of data registers (the CRC unshift stages): no reset pin.
			name: "no reset", m: shapeModule("no_reset", "", []int{4}, []int{2}), chain: 4, out: 2,
			folds: []int{2}, pins: []string{"clk", "sin", "dout[0]", "dout[1]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWrapper(tc.m, WrapperOptions{})
			require.NoError(t, err)
			require.Equal(t, tc.m.Name+"_board_top", w.Name)
			require.Equal(t, tc.chain, w.ChainBits)
			require.Equal(t, tc.out, w.OutBits)
			require.Empty(t, cmp.Diff(tc.folds, w.FoldLevels))
			require.Empty(t, cmp.Diff(tc.pins, w.Pins))
			ffs := tc.chain
			for _, f := range tc.folds {
				ffs += f
			}
			require.Equal(t, ffs, w.FFs())
		})
	}
}

func TestNewWrapperErrors(t *testing.T) {
	bad := func(edit func(m *hdl.Module)) *hdl.Module {
		m := counter32Module()
		edit(m)
		return m
	}
	tests := []struct {
		name string
		m    *hdl.Module
		want string
	}{
		{name: "nil", m: nil, want: "no module"},
		{name: "invalid description", m: bad(func(m *hdl.Module) { m.Name = "Counter" }), want: "lower_snake_case"},
		{name: "no outputs", m: shapeModule("sink", "rst", []int{4}, nil), want: "no outputs"},
		{name: "reset named like a wrapper pin", m: shapeModule("odd", "sin", []int{4}, []int{4}), want: `reset port "sin" collides`},
		{name: "clock is reset", m: bad(func(m *hdl.Module) { m.Reset = "clk" }), want: "clock and reset are the same port"},
		{name: "wide clock", m: bad(func(m *hdl.Module) { m.Ports[0].Width = 2 }), want: "clk must be a 1-bit input"},
		{name: "reset is an output", m: bad(func(m *hdl.Module) { m.Reset = "wrap" }), want: "wrap must be a 1-bit input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWrapper(tc.m, WrapperOptions{})
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, w)
		})
	}
}

// TestWrapperGolden pins the generated text: regeneration must be byte-identical, and a change
// to the generator shows up as a reviewable diff (go test ./fpga -run Golden -update).
func TestWrapperGolden(t *testing.T) {
	opt := WrapperOptions{Version: "v0.1.0", Command: "mrgen synth --board ice40-hx8k", ConfigHash: "0123abcd"}
	w, err := NewWrapper(counter32Module(), opt)
	require.NoError(t, err)
	again, err := NewWrapper(counter32Module(), opt)
	require.NoError(t, err)
	require.Equal(t, w.Verilog, again.Verilog, "regeneration must be byte-identical")
	golden := filepath.Join("testdata", "counter32_board_top.v.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(w.Verilog), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(string(want), w.Verilog), "-golden +generated")
}

func lintShapes() []*hdl.Module {
	return []*hdl.Module{
		shapeModule("one_each", "rst", []int{1}, []int{1}),
		shapeModule("no_inputs", "rst", nil, []int{12}),
		shapeModule("exact_eight", "rst", []int{4}, []int{8}),
		shapeModule("async_low", "rst_n", []int{7, 1}, []int{9}),
		shapeModule("wide", "rst", []int{512, 64, 1}, []int{600, 3}),
	}
}

// TestWrapperLintClean runs the wrapper, with its block, through all three lint checks, and
// checks the HDL_STYLE layout rules the linters do not.
func TestWrapperLintClean(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	type tcase struct {
		m     *hdl.Module
		block string // Verilog file of the block
	}
	var tests []tcase
	for _, m := range []*hdl.Module{counter32Module(), ramTableModule(), pulseAsyncModule()} {
		tests = append(tests, tcase{m, filepath.Join("testdata", m.Name+".v")})
	}
	for _, m := range lintShapes() {
		tests = append(tests, tcase{m: m})
	}
	for _, tc := range tests {
		t.Run(tc.m.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			block := tc.block
			if block == "" {
				block = filepath.Join(dir, tc.m.Name+".v")
				require.NoError(t, os.WriteFile(block, []byte(shapeVerilog(tc.m)), 0o644))
			}
			w, err := NewWrapper(tc.m, WrapperOptions{})
			require.NoError(t, err)
			wf := filepath.Join(dir, w.FileName())
			require.NoError(t, os.WriteFile(wf, []byte(w.Verilog), 0o644))

			rep, err := lint.Run(context.Background(), []string{wf, block}, w.Name, lint.Options{})
			require.NoError(t, err)
			require.True(t, rep.OK(), "%s", rep)

			require.True(t, strings.HasPrefix(w.Verilog, "`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n"))
			require.True(t, strings.HasSuffix(w.Verilog, "\n`resetall\n"))
			require.Contains(t, w.Verilog, "generated by mrgen dev - do not edit")
			for i, l := range strings.Split(w.Verilog, "\n") {
				require.LessOrEqual(t, len(l), 100, "line %d too long: %q", i+1, l)
				require.NotContains(t, l, "\t", "line %d: tab", i+1)
				for _, r := range l {
					require.Less(t, r, rune(128), "line %d: not ASCII: %q", i+1, l)
				}
			}
		})
	}
}

// TestWrapperSimulation checks the wrapper's wiring in Icarus against a cycle model written
// independently of the generator: the chain feeds the block's inputs in port order, and every
// output bit reaches dout through the fold levels (bit j of a level is the XOR of bits j, j+W,
// j+2W, ... of the level before, W its width).
func TestWrapperSimulation(t *testing.T) {
	tooltest.Require(t, "iverilog", "vvp")
	tests := []*hdl.Module{
		// Pass-through blocks: output bit k is input bit k one cycle later.
		shapeModule("pass71", "rst", []int{3, 37, 1, 30}, []int{50, 1, 20}),
		shapeModule("pass1", "rst_n", []int{1}, []int{1}),
	}
	for _, m := range tests {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			w, err := NewWrapper(m, WrapperOptions{})
			require.NoError(t, err)
			require.Equal(t, w.ChainBits, w.OutBits, "the model needs a pass-through block")
			dir := t.TempDir()
			block := filepath.Join(dir, m.Name+".v")
			wf := filepath.Join(dir, w.FileName())
			tb := filepath.Join(dir, "tb.v")
			require.NoError(t, os.WriteFile(block, []byte(shapeVerilog(m)), 0o644))
			require.NoError(t, os.WriteFile(wf, []byte(w.Verilog), 0o644))

			warmup := w.ChainBits + 1 + len(w.FoldLevels)
			cycles := warmup + 300
			rng := rand.New(rand.NewPCG(1, uint64(w.ChainBits)))
			stim := make([]bool, cycles)
			var sb strings.Builder
			for i := range stim {
				stim[i] = rng.IntN(2) == 1
				if stim[i] {
					sb.WriteByte('1')
				} else {
					sb.WriteByte('0')
				}
			}
			dout := w.FoldLevels[len(w.FoldLevels)-1]
			rstIdle := "1'b0"
			if strings.HasSuffix(m.Reset, "_n") {
				rstIdle = "1'b1"
			}
			tbText := fmt.Sprintf(`module tb;
  reg clk = 1'b0;
  reg sin = 1'b0;
  wire %sdout;
  reg [%d:0] stim = %d'b%s;
  integer i;
  %s u_top (.clk(clk), .%s(%s), .sin(sin), .dout(dout));
  initial begin
    for (i = 0; i < %d; i = i + 1) begin
      sin = stim[%d - i];
      #1 clk = 1'b1;
      #1 clk = 1'b0;
      $display("%%b", dout);
    end
    $finish;
  end
endmodule
`, rangeSp(dout), cycles-1, cycles, sb.String(), w.Name, m.Reset, rstIdle, cycles, cycles-1)
			require.NoError(t, os.WriteFile(tb, []byte(tbText), 0o644))
			sim := filepath.Join(dir, "sim.vvp")
			out, err := exec.Command("iverilog", "-g2012", "-o", sim, "-s", "tb", tb, wf, block).CombinedOutput()
			require.NoError(t, err, "%s", out)
			out, err = exec.Command("vvp", "-n", sim).CombinedOutput()
			require.NoError(t, err, "%s", out)
			var got []string
			for _, l := range strings.Split(string(out), "\n") {
				if l != "" && strings.Trim(l, "01xz") == "" {
					got = append(got, l)
				}
			}
			require.Len(t, got, cycles, "%s", out)

			want := modelWrapper(w, stim)
			require.Empty(t, cmp.Diff(want[warmup:], got[warmup:]), "dout per cycle after warm-up (-model +sim)")
		})
	}
}

// modelWrapper simulates the wrapper around a pass-through block, one dout string (MSB first)
// per cycle, sampled after the clock edge.
func modelWrapper(w *Wrapper, stim []bool) []string {
	chain := make([]bool, w.ChainBits)
	block := make([]bool, w.OutBits)
	folds := make([][]bool, len(w.FoldLevels))
	for i, n := range w.FoldLevels {
		folds[i] = make([]bool, n)
	}
	var out []string
	for _, s := range stim {
		// Every register takes its next value from the current ones.
		next := make([][]bool, len(folds))
		next[0] = append([]bool(nil), block...)
		for l := 1; l < len(folds); l++ {
			wl := w.FoldLevels[l]
			next[l] = make([]bool, wl)
			for k, v := range folds[l-1] {
				next[l][k%wl] = next[l][k%wl] != v
			}
		}
		block = append([]bool(nil), chain...)
		chain = append([]bool{s}, chain[:len(chain)-1]...)
		folds = next
		last := folds[len(folds)-1]
		var b strings.Builder
		for i := len(last) - 1; i >= 0; i-- {
			if last[i] {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		out = append(out, b.String())
	}
	return out
}

func TestWrapperPCF(t *testing.T) {
	hx8k, err := LookupBoard("ice40-hx8k")
	require.NoError(t, err)
	up5k, err := LookupBoard("ice40-up5k")
	require.NoError(t, err)
	tests := []struct {
		name  string
		m     *hdl.Module
		board Board
		want  string
	}{
		{
			name: "counter32 on hx8k", m: counter32Module(), board: hx8k,
			want: `# counter32_board_top.pcf: pins of counter32_board_top on ice40-hx8k (hx8k, package ct256).
# Rendered by mrgen from constraints/ice40-hx8k.pcf - do not edit.
set_io clk J3
set_io rst R2
set_io sin T1
set_io dout[0] B5
set_io dout[1] B4
set_io dout[2] A2
set_io dout[3] A1
set_io dout[4] C5
set_io dout[5] C4
set_io dout[6] B3
set_io dout[7] C3
`,
		},
		{
			name: "rst_n and a 1-bit dout on up5k", m: pulseAsyncModule(), board: up5k,
			want: `# pulse_async_board_top.pcf: pins of pulse_async_board_top on ice40-up5k (up5k, package sg48).
# Rendered by mrgen from constraints/ice40-up5k.pcf - do not edit.
set_io clk 35
set_io rst_n 10
set_io sin 43
set_io dout 4
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWrapper(tc.m, WrapperOptions{})
			require.NoError(t, err)
			got, err := w.PCF(tc.board)
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(tc.want, got))
		})
	}

	ecp5, err := LookupBoard("ecp5-45k")
	require.NoError(t, err)
	w, err := NewWrapper(counter32Module(), WrapperOptions{})
	require.NoError(t, err)
	_, err = w.PCF(ecp5)
	require.ErrorIs(t, err, constraints.ErrNoPinFile)
}

func TestWrapperSDC(t *testing.T) {
	w, err := NewWrapper(counter32Module(), WrapperOptions{})
	require.NoError(t, err)
	tests := []struct {
		mhz     int
		want    string
		wantErr string
	}{
		{mhz: 100, want: "create_clock -name clk -period 10.000 [get_ports clk]\n"},
		{mhz: 125, want: "create_clock -name clk -period 8.000 [get_ports clk]\n"},
		{mhz: 300, want: "create_clock -name clk -period 3.333 [get_ports clk]\n"},
		{mhz: 0, wantErr: "must be > 0"},
		{mhz: -5, wantErr: "must be > 0"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.mhz), func(t *testing.T) {
			got, err := w.SDC(tc.mhz)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("# counter32_board_top.sdc: clock of counter32_board_top, target %d MHz. "+
				"Generated by mrgen - do not edit.\n", tc.mhz)+tc.want, got)
		})
	}
}
