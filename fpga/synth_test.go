package fpga

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// TestSynth runs the real flow: Yosys, and nextpnr where the board has it.
func TestSynth(t *testing.T) {
	if testing.Short() {
		t.Skip("place and route of four designs takes seconds; skipped with -short")
	}
	tooltest.Require(t, "yosys", "nextpnr-ice40")
	tests := []struct {
		name  string
		board string
		m     *hdl.Module
		mhz   int
		seed  int
		ffs   int // exact where the RTL fixes it (-1: only > 0)
		rams  int
		// path matches CriticalPath: where the limiting path is in the RTL.
		path string
	}{
		// count_reg (32) and wrap_reg (1).
		{name: "counter on hx8k", board: "ice40-hx8k", m: counter32Module(), mhz: 100, seed: 7, ffs: 33, rams: 0,
			// The carry chain of count_reg + 1.
			path: `^dut_count\[\d+\] \(counter32_board_top\.v:\d+\) -> u_dut\.count_next\S* \(counter32\.v:26\)`},
		// 256 x 16 bits is one 4-kbit block RAM; Yosys adds read-during-write bypass registers.
		{name: "ram table on hx8k", board: "ice40-hx8k", m: ramTableModule(), mhz: 100, ffs: -1, rams: 1,
			// Yosys gives the RAM's nets no RTL location; the path ends in the block.
			path: `^u_dut\.mem\S* .*\(into u_dut\.`},
		// level_reg and pulse_reg; the wrapper's reset pin is rst_n.
		{name: "rst_n block on up5k", board: "ice40-up5k", m: pulseAsyncModule(), mhz: 48, ffs: 2, rams: 0,
			// The block's output register straight into the wrapper's capture register.
			path: `^dut_pulse \(pulse_async_board_top\.v:\d+\) \(into fold0_reg`},
		{name: "counter on ecp5, synthesis only", board: "ecp5-45k", m: counter32Module(), mhz: 100, ffs: 33, rams: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			board, err := LookupBoard(tc.board)
			require.NoError(t, err)
			var log bytes.Buffer
			req := SynthRequest{
				Board: tc.board, Module: tc.m, Files: []string{filepath.Join("testdata", tc.m.Name+".v")},
				TargetMHz: tc.mhz, WorkDir: filepath.Join(t.TempDir(), "work"), Seed: tc.seed,
			}
			res, err := Synth(context.Background(), req, &log)
			require.NoError(t, err, "log:\n%s", log.String())
			t.Logf("%s on %s: %d LUTs, %d FFs, %d RAMs, %.2f MHz (wrapper %+v); %s; synth %.1f s, pnr %.1f s",
				res.Top, res.Board, res.LUTs, res.FFs, res.RAMs, res.FmaxMHz, res.WrapperOverhead,
				res.CriticalPath, res.SynthSeconds, res.PnRSeconds)

			require.Equal(t, tc.board, res.Board)
			require.Equal(t, board.Device, res.Device)
			require.Equal(t, tc.m.Name, res.Top)
			require.Equal(t, tc.m.Name+"_board_top", res.Wrapper)
			require.Equal(t, tc.mhz, res.TargetMHz)
			require.Positive(t, res.LUTs)
			if tc.ffs >= 0 {
				require.Equal(t, tc.ffs, res.FFs)
			} else {
				require.Positive(t, res.FFs)
			}
			require.Equal(t, tc.rams, res.RAMs)
			require.Empty(t, cmp.Diff(board.Count(res.Cells), Resources{LUTs: res.LUTs, FFs: res.FFs, RAMs: res.RAMs}))

			// The wrapper keeps every register it was built with, and no RAM.
			w, err := NewWrapper(tc.m, WrapperOptions{})
			require.NoError(t, err)
			require.Equal(t, w.FFs(), res.WrapperOverhead.FFs)
			require.Zero(t, res.WrapperOverhead.RAMs)
			wrapper, err := os.ReadFile(res.LogPaths["wrapper"])
			require.NoError(t, err)
			require.Equal(t, w.Verilog, string(wrapper))

			for k, p := range res.LogPaths {
				st, err := os.Stat(p)
				require.NoError(t, err, "%s", k)
				require.Positive(t, st.Size(), "%s is empty", k)
			}

			if !board.PlaceAndRoute() {
				require.Zero(t, res.FmaxMHz)
				require.Nil(t, res.TimingMet)
				require.Empty(t, res.CriticalPath)
				require.Contains(t, res.Note, "no ECP5 place-and-route")
				require.NotContains(t, res.LogPaths, "nextpnr_report")
				return
			}
			require.Greater(t, res.FmaxMHz, 0.0)
			require.Less(t, res.FmaxMHz, 1000.0)
			require.NotNil(t, res.TimingMet)
			require.Equal(t, res.FmaxMHz >= float64(tc.mhz), *res.TimingMet)
			require.Contains(t, res.CriticalPath, "logic levels")
			require.Regexp(t, tc.path, res.CriticalPath)
			// A logic cell holds one LUT and one flip-flop: the placed design needs at least as
			// many as the netlist has of either.
			lc := res.Utilization["ICESTORM_LC"].Used
			require.GreaterOrEqual(t, lc, res.LUTs+res.WrapperOverhead.LUTs)
			require.GreaterOrEqual(t, lc, res.FFs+res.WrapperOverhead.FFs)
			require.Equal(t, res.RAMs, res.Utilization["ICESTORM_RAM"].Used)
			require.Equal(t, len(w.Pins), res.Utilization["SB_IO"].Used)
			if tc.seed != 0 {
				require.Contains(t, log.String(), "--seed 7")
				require.Equal(t, tc.seed, res.Seed)
			}
		})
	}
}

// TestSynthOverCapacity: a design that needs more than the device has is reported with its
// counts and what exceeds the device, and place-and-route, which could only fail, is not run.
func TestSynthOverCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesis takes seconds; skipped with -short")
	}
	tooltest.Require(t, "yosys", "nextpnr-ice40")
	m := ramDeepModule()
	deep := writeRAMDeep(t)
	res, err := Synth(context.Background(), SynthRequest{Board: "ice40-up5k", Module: m,
		Files: []string{deep}, TargetMHz: 48,
		WorkDir: filepath.Join(t.TempDir(), "work"), Seed: 3}, nil)
	require.NoError(t, err)
	require.Equal(t, 32, res.RAMs, "8192 x 16 bits is 32 4-kbit RAMs")
	require.Equal(t, "32 RAMs (30)", res.OverCapacity)
	require.Equal(t, "does not fit: needs 32 RAMs (30)", res.DoesNotFit())
	require.Zero(t, res.FmaxMHz)
	require.Nil(t, res.TimingMet)
	require.Zero(t, res.Seed)
	require.NotContains(t, res.LogPaths, "nextpnr_log")
	require.NotContains(t, res.LogPaths, "nextpnr_report")
	require.NoFileExists(t, filepath.Join(filepath.Dir(res.LogPaths["netlist"]), "nextpnr.log"))

	// The same design fits an HX8K's 32 RAMs: no capacity note, placed and routed.
	fits, err := Synth(context.Background(), SynthRequest{Board: "ice40-hx8k", Module: m,
		Files: []string{deep}, TargetMHz: 48,
		WorkDir: filepath.Join(t.TempDir(), "work")}, nil)
	require.NoError(t, err)
	require.Empty(t, fits.OverCapacity)
	require.Empty(t, fits.DoesNotFit())
	require.Positive(t, fits.FmaxMHz)
}

// writeRAMDeep writes ram_deep.v, testdata/ram_table.v made 32 times deeper (8192 x 16 bits,
// 32 4-kbit block RAMs on iCE40: more than an UP5K's 30), and returns its path.
func writeRAMDeep(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ram_table.v"))
	require.NoError(t, err)
	text := string(data)
	for _, r := range []struct{ from, to string }{
		{"module ram_table", "module ram_deep"}, {"[7:0]  wr_addr", "[12:0] wr_addr"},
		{"[7:0]  rd_addr", "[12:0] rd_addr"}, {"mem [0:255]", "mem [0:8191]"},
	} {
		require.Equal(t, 1, strings.Count(text, r.from), "ram_table.v: %q", r.from)
		text = strings.Replace(text, r.from, r.to, 1)
	}
	path := filepath.Join(t.TempDir(), "ram_deep.v")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestResourcesBeyond(t *testing.T) {
	capacity := Resources{LUTs: 100, FFs: 100, RAMs: 4}
	for _, tc := range []struct {
		need Resources
		want string
	}{
		{Resources{}, ""},
		{Resources{LUTs: 100, FFs: 100, RAMs: 4}, ""},
		{Resources{LUTs: 101, FFs: 10, RAMs: 1}, "101 LUTs (100)"},
		{Resources{LUTs: 1, FFs: 1, RAMs: 5}, "5 RAMs (4)"},
		{Resources{LUTs: 400, FFs: 200, RAMs: 9}, "400 LUTs (100), 200 FFs (100), 9 RAMs (4)"},
	} {
		require.Equal(t, tc.want, tc.need.Beyond(capacity), "%+v", tc.need)
	}
}

// TestResultJSON checks the keys of DESIGN.md's `mrgen synth --json` contract.
func TestResultJSON(t *testing.T) {
	met := true
	b, err := json.Marshal(Result{Board: "ice40-hx8k", Device: "hx8k", Top: "t", LUTs: 1, FFs: 2, RAMs: 3,
		FmaxMHz: 123.45, TargetMHz: 100, TimingMet: &met, CriticalPath: "a -> b"})
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	want := map[string]any{
		"board": "ice40-hx8k", "device": "hx8k", "top": "t", "luts": 1.0, "ffs": 2.0, "rams": 3.0,
		"fmax_mhz": 123.45, "target_mhz": 100.0, "critical_path": "a -> b", "timing_met": true,
	}
	for k, v := range want {
		require.Equal(t, v, got[k], "key %s", k)
	}
}

func TestSynthRequestErrors(t *testing.T) {
	good := func() SynthRequest {
		return SynthRequest{Board: "ice40-hx8k", Module: counter32Module(),
			Files: []string{filepath.Join("testdata", "counter32.v")}, TargetMHz: 100, WorkDir: t.TempDir()}
	}
	edit := func(f func(r *SynthRequest)) SynthRequest {
		r := good()
		f(&r)
		return r
	}
	tests := []struct {
		name string
		req  SynthRequest
		want string
	}{
		{name: "unknown board", req: edit(func(r *SynthRequest) { r.Board = "arty-a7" }), want: "unknown board \"arty-a7\" (valid: ecp5-45k, ice40-hx8k, ice40-up5k)"},
		{name: "no target", req: edit(func(r *SynthRequest) { r.TargetMHz = 0 }), want: "target clock 0 MHz"},
		{name: "no files", req: edit(func(r *SynthRequest) { r.Files = nil }), want: "no Verilog files"},
		{name: "missing file", req: edit(func(r *SynthRequest) { r.Files = []string{"testdata/nope.v"} }), want: "nope.v"},
		{name: "no module", req: edit(func(r *SynthRequest) { r.Module = nil }), want: "no module"},
		{name: "quote in file name", req: edit(func(r *SynthRequest) { r.Files = []string{`a"b.v`} }), want: "quotes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Synth(context.Background(), tc.req, nil)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, res)
		})
	}
}

// TestSynthToolErrors checks that a failing tool's own message reaches the caller.
func TestSynthToolErrors(t *testing.T) {
	tooltest.Require(t, "yosys")
	wrongPort := counter32Module()
	wrongPort.Ports[2].Name = "enable"
	tests := []struct {
		name  string
		m     *hdl.Module
		files []string
		want  string
	}{
		{name: "block not in the files", m: counter32Module(), files: []string{"testdata/ram_table.v"},
			want: "is not part of the design"},
		{name: "description and RTL disagree", m: wrongPort, files: []string{"testdata/counter32.v"},
			want: "does not have a port named 'enable'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Synth(context.Background(), SynthRequest{Board: "ecp5-45k", Module: tc.m, Files: tc.files,
				TargetMHz: 100, WorkDir: t.TempDir()}, nil)
			require.ErrorContains(t, err, "fpga: yosys failed")
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, res)
		})
	}
}

func TestSynthMissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Synth(context.Background(), SynthRequest{Board: "ice40-hx8k", Module: counter32Module(),
		Files: []string{"testdata/counter32.v"}, TargetMHz: 100, WorkDir: t.TempDir()}, nil)
	require.ErrorIs(t, err, ErrToolMissing)
	require.ErrorContains(t, err, "yosys")
	require.ErrorContains(t, err, "make deps")
}

func TestSynthCancelled(t *testing.T) {
	tooltest.Require(t, "yosys")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Synth(ctx, SynthRequest{Board: "ecp5-45k", Module: counter32Module(),
		Files: []string{"testdata/counter32.v"}, TargetMHz: 100, WorkDir: t.TempDir()}, nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestOutOfCells(t *testing.T) {
	require.True(t, outOfCells("ERROR: Unable to place cell 'x_LC', no BELs remaining to implement cell type 'ICESTORM_LC'"))
	require.True(t, outOfCells("ERROR: Failed to expand region (0, 0) |_> (33, 33) of 8394 ICESTORM_LCs"))
	require.False(t, outOfCells("ERROR: syntax error"))
}

func TestPackedUtilization(t *testing.T) {
	u, err := ParseUtilization([]byte(`{"critical_paths": [], "fmax": {}, "utilization": {"ICESTORM_LC": ` +
		`{"available": 7680, "used": 7553}, "ICESTORM_RAM": {"available": 32, "used": 25}, "SB_IO": {"available": 256, "used": 11}}}`))
	require.NoError(t, err)
	for _, tc := range []struct {
		kinds []string
		want  float64
	}{
		{[]string{"ICESTORM_LC", "ICESTORM_RAM"}, 7553.0 / 7680},
		{[]string{"ICESTORM_RAM"}, 25.0 / 32},
		{[]string{"ICESTORM_PLL"}, 0},
	} {
		require.InDelta(t, tc.want, Share(u, tc.kinds...), 1e-9, "%v", tc.kinds)
	}
	_, err = ParseUtilization([]byte(`{"fmax": {}}`))
	require.ErrorContains(t, err, "no \"utilization\"")
}

func TestOverPacked(t *testing.T) {
	for _, tc := range []struct {
		u    map[string]Utilization
		want string
	}{
		{map[string]Utilization{"ICESTORM_LC": {Used: 7553, Available: 7680}}, ""},
		{map[string]Utilization{"ICESTORM_LC": {Used: 9464, Available: 7680}, "ICESTORM_RAM": {Used: 20, Available: 32}},
			"9464 ICESTORM_LC (7680)"},
		{map[string]Utilization{"ICESTORM_RAM": {Used: 33, Available: 32}, "ICESTORM_LC": {Used: 7681, Available: 7680}},
			"7681 ICESTORM_LC (7680), 33 ICESTORM_RAM (32)"},
	} {
		require.Equal(t, tc.want, overPacked(tc.u))
	}
}

// A pack-only run counts the packed cells and stops there: no placement, no Fmax.
func TestSynthPackOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesis takes seconds; skipped with -short")
	}
	tooltest.Require(t, "yosys", "nextpnr-ice40")
	res, err := Synth(context.Background(), SynthRequest{Board: "ice40-hx8k", Module: counter32Module(),
		Files: []string{"testdata/counter32.v"}, TargetMHz: 100, WorkDir: t.TempDir(), PackOnly: true}, nil)
	require.NoError(t, err)
	require.Empty(t, res.OverCapacity)
	lc := res.Utilization["ICESTORM_LC"].Used
	require.GreaterOrEqual(t, lc, res.FFs+res.WrapperOverhead.FFs)
	require.Zero(t, res.FmaxMHz)
	require.Nil(t, res.TimingMet)
	require.Contains(t, res.LogPaths, "pack_report")
	require.NotContains(t, res.LogPaths, "nextpnr_report")
}
