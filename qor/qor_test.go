package qor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/fpga"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// requireTools skips (or fails under CI=true) unless the targets' tools are installed.
func requireTools(t *testing.T, targets ...Target) {
	t.Helper()
	if err := Check(targets...); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip("\n\n*** SKIPPED: " + err.Error() + " ***\n")
	}
}

func writeUnit(t *testing.T, name, verilog string, m *hdl.Module, tables ...hdl.Table) Unit {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, name+".v")
	require.NoError(t, os.WriteFile(f, []byte(verilog), 0o644))
	return Unit{Module: m, Files: []string{f}, Tables: tables, Config: config.Default()}
}

func chainVerilog(n int) string {
	var b strings.Builder
	b.WriteString("module chain (input wire clk, input wire d, output wire q);\n  wire s0;\n")
	b.WriteString("  DFFPOSX1 r_launch (.CLK(clk), .D(d), .Q(s0));\n")
	for i := 1; i <= n; i++ {
		b.WriteString("  wire s" + itoa(i) + ";\n")
		b.WriteString("  INVX1 i" + itoa(i) + " (.A(s" + itoa(i-1) + "), .Y(s" + itoa(i) + "));\n")
	}
	b.WriteString("  DFFPOSX1 r_capture (.CLK(clk), .D(s" + itoa(n) + "), .Q(q));\nendmodule\n")
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

var chainModule = &hdl.Module{Name: "chain", Source: "qor/qor_test.go", Clock: "clk",
	Ports: []hdl.Port{hdl.In("clk", 1, "clock"), hdl.In("d", 1, "data"), hdl.Out("q", 1, "data")}}

// A known circuit (a register, a chain of inverters, a register) through the whole flow gives
// the critical path the liberty predicts, within 5%.
func TestKnownChainMatchesTheLiberty(t *testing.T) {
	requireTools(t, ASIC)
	lib, err := toolLiberty.find()
	require.NoError(t, err)
	for _, n := range []int{8, 32} {
		u := writeUnit(t, "chain", chainVerilog(n), chainModule)
		u.Config.Timing.InputDelayPct, u.Config.Timing.OutputDelayPct = 0, 0 // the chain is the worst path
		r, err := RunASIC(context.Background(), u, t.TempDir(), DefaultMacroModel, nil)
		require.NoError(t, err)
		require.Equal(t, n, r.CellTypes["INVX1"], "the flow keeps the chain as written")
		want := predictInverterChain(t, lib, n)
		t.Logf("%d inverters: flow %.3f ns, liberty %.3f ns", n, r.CriticalNS, want)
		require.InEpsilon(t, want, r.CriticalNS, 0.05, "%d inverters: flow %.3f ns, liberty %.3f ns", n, r.CriticalNS, want)
		require.Equal(t, "s0", r.Start, "the start register is named by its RTL net")
		require.Equal(t, n, r.Levels)
		require.Equal(t, "pre-layout", r.Stage)
	}
}

const deepVerilog = `module deep (input wire clk, input wire [23:0] a, input wire [23:0] b, output reg [47:0] p);
  reg [23:0] a_q, b_q;
  always @(posedge clk) begin
    a_q <= a;
    b_q <= b;
    p <= a_q * b_q;  // a 24 x 24 multiply in one cycle: far beyond 40 FO4
  end
endmodule
`

var deepModule = &hdl.Module{Name: "deep", Source: "qor/qor_test.go", Clock: "clk",
	Ports: []hdl.Port{hdl.In("clk", 1, "clock"), hdl.In("a", 24, "a"), hdl.In("b", 24, "b"), hdl.Out("p", 48, "product")}}

// A deliberately deep path fails the gate.
func TestDeepPathFailsTheGate(t *testing.T) {
	requireTools(t, ASIC, XCUP)
	u := writeUnit(t, "deep", deepVerilog, deepModule)
	a, err := RunASIC(context.Background(), u, t.TempDir(), DefaultMacroModel, nil)
	require.NoError(t, err)
	require.Greater(t, a.CriticalFO4, float64(BudgetFO4), "a 24-bit multiply is over 40 FO4")
	x, err := RunXCUP(context.Background(), u, t.TempDir(), XCU55C, false, nil)
	require.NoError(t, err)
	require.Greater(t, x.LUTLevels, BudgetLUTLevels)
	rep := &Report{Config: "default", Units: []UnitReport{{Unit: "deep", ASIC: a, XCUP: x}}}
	b := &Budgets{TolerancePct: 5, Budgets: []Budget{
		{Unit: "deep", Config: "default", Target: ASIC, Metric: MetricCriticalNS, Max: BudgetFO4 * FO4NS},
		{Unit: "deep", Config: "default", Target: XCUP, Metric: MetricLUTLevels, Max: BudgetLUTLevels},
	}}
	viol, unmeasured := b.Check(rep)
	require.Empty(t, unmeasured)
	require.Len(t, viol, 2, "both figures fail the gate")
	require.Contains(t, viol[0].String(), "deep asic critical_ns at default")
}

const macroVerilog = `module withmem (input wire clk, input wire we, input wire [5:0] wa, input wire [31:0] wd,
    input wire [5:0] ra, output reg [31:0] q);
  wire [31:0] rd;
  mrgen_ram_1r1w_64x32 u_tab (.clk(clk), .we(we), .waddr(wa), .wdata(wd), .re(1'b1), .raddr(ra), .rdata(rd));
  always @(posedge clk) q <= rd + 32'd1;
endmodule
module mrgen_ram_1r1w_64x32 (input wire clk, input wire we, input wire [5:0] waddr, input wire [31:0] wdata,
    input wire re, input wire [5:0] raddr, output reg [31:0] rdata);
  reg [31:0] mem [0:63];
  always @(posedge clk) begin
    if (we) mem[waddr] <= wdata;
    if (re) rdata <= mem[raddr];
  end
endmodule
`

// A memory macro appears as a macro in the timing report, not as flip-flops.
func TestMemoryIsAMacroInTheTimingReport(t *testing.T) {
	requireTools(t, ASIC)
	m := &hdl.Module{Name: "withmem", Source: "qor/qor_test.go", Clock: "clk", Ports: []hdl.Port{hdl.In("clk", 1, "clock"),
		hdl.In("we", 1, ""), hdl.In("wa", 6, ""), hdl.In("wd", 32, ""), hdl.In("ra", 6, ""), hdl.Out("q", 32, "")}}
	tab := hdl.Table{Name: "tab", Depth: 64, Width: 32}
	require.True(t, tab.Macro())
	u := writeUnit(t, "withmem", macroVerilog, m, tab)
	// The behavioural model is in the same file here: the flow must still black-box it, so give
	// it its own file as generate does.
	dir := filepath.Dir(u.Files[0])
	parts := strings.SplitN(macroVerilog, "module mrgen_ram", 2)
	require.NoError(t, os.WriteFile(u.Files[0], []byte(parts[0]), 0o644))
	memFile := filepath.Join(dir, "mrgen_ram_1r1w_64x32.v")
	require.NoError(t, os.WriteFile(memFile, []byte("module mrgen_ram"+parts[1]), 0o644))
	u.Files = []string{memFile, u.Files[0]}
	r, err := RunASIC(context.Background(), u, t.TempDir(), DefaultMacroModel, nil)
	require.NoError(t, err)
	require.Equal(t, 1, r.CellTypes["mrgen_ram_1r1w_64x32"], "one macro instance")
	require.Equal(t, 1, r.Macros)
	require.Equal(t, 2048, r.MacroBits)
	require.Less(t, r.Flops, 64, "the memory's 2048 bits are not flip-flops")
	found := false
	for _, p := range r.Paths {
		if p.StartKind == "macro" {
			found = true
			require.Equal(t, "u_tab (macro)", p.Start)
		}
	}
	require.True(t, found, "a worst path starts at the macro: %+v", r.Paths)
	require.Greater(t, r.MacroAreaUM2, 0.0)
}

func TestMissingToolNamesItsPackage(t *testing.T) {
	t.Setenv("MRGEN_BLIFFANOUT", "/nonexistent/blifFanout")
	err := Check(ASIC)
	require.ErrorIs(t, err, ErrToolMissing)
	require.ErrorContains(t, err, "Debian package qflow")
	t.Setenv("MRGEN_OSU018_STDCELLS_LIB", "/nonexistent/osu018.lib")
	t.Setenv("MRGEN_BLIFFANOUT", "")
	if Check(ASIC) != nil {
		require.ErrorContains(t, Check(ASIC), "qflow-tech-osu018")
	}
}

func TestToolVersions(t *testing.T) {
	tooltest.Require(t, "yosys", "sta", "nextpnr-ice40")
	tests := []struct {
		targets []Target
		want    map[string]string // tool -> prefix of its version line
	}{
		{[]Target{XCUP}, map[string]string{"yosys": "Yosys "}},
		{[]Target{ASIC}, map[string]string{"yosys": "Yosys ", "sta": ""}},
		{[]Target{ICE40, XCUP}, map[string]string{"yosys": "Yosys ", "nextpnr-ice40": "nextpnr-ice40 "}},
	}
	for _, tt := range tests {
		got, err := ToolVersions(tt.targets...)
		require.NoError(t, err)
		require.Len(t, got, len(tt.want), "%v", tt.targets)
		for tool, prefix := range tt.want {
			require.NotEmpty(t, got[tool], tool)
			require.True(t, strings.HasPrefix(got[tool], prefix), "%s: %q", tool, got[tool])
		}
	}
	t.Setenv("MRGEN_NEXTPNR_ICE40", "/nonexistent/nextpnr-ice40")
	_, err := ToolVersions(ICE40)
	require.ErrorIs(t, err, ErrToolMissing)
}

func TestVersionLine(t *testing.T) {
	tests := []struct {
		name, script, want, err string
	}{
		{"first line", "echo 'Tool 1.2'; echo more", "Tool 1.2", ""},
		{"a non-zero exit with a line", "echo 'Tool 3'; exit 1", "Tool 3", ""},
		{"no output", "exit 0", "", "no output"},
		{"no output and a failure", "exit 2", "", "exit status 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VersionLine("sh", "-c", tt.script)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets("all")
	require.NoError(t, err)
	require.Empty(t, cmp.Diff([]Target{ASIC, XCUP, ICE40}, got))
	_, err = ParseTargets("vivado")
	require.ErrorContains(t, err, "targets: asic, xcup, ice40, ecp5, all")
	got, err = ParseTargets("asic,xcup")
	require.NoError(t, err)
	require.Equal(t, []Target{ASIC, XCUP}, got)
	got, err = ParseTargets("ecp5")
	require.NoError(t, err)
	require.Equal(t, []Target{ECP5}, got, "ecp5 is measured when named")
}

// synth_ecp5's cells become a device's resources: carry cells and distributed RAM take LUT4
// positions, and the fit is the largest share, against FitFraction of each device.
func TestECP5CountsAndFit(t *testing.T) {
	tests := []struct {
		name                 string
		cells                map[string]int
		luts, ffs, ebr, mult int
		smallest             string
	}{
		{"logic only", map[string]int{"LUT4": 10000, "TRELLIS_FF": 5000, "PFUMX": 300}, 10000, 5000, 0, 0, "LFE5U-25F"},
		{"carry and distributed RAM", map[string]int{"LUT4": 18000, "CCU2C": 1000, "TRELLIS_DPR16X4": 10,
			"TRELLIS_FF": 10}, 18000 + 2000 + 40, 10, 0, 0, "LFE5U-45F"},
		{"block RAM decides", map[string]int{"LUT4": 100, "DP16KD": 100, "PDPW16KD": 20}, 100, 0, 120, 0, "LFE5U-85F"},
		{"multipliers decide", map[string]int{"LUT4": 100, "MULT18X18D": 50}, 100, 0, 0, 50, "LFE5U-45F"},
		{"too big for the family", map[string]int{"LUT4": 70000}, 70000, 0, 0, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			luts, ffs, ebr, mult := ecp5Counts(tc.cells)
			require.Equal(t, []int{tc.luts, tc.ffs, tc.ebr, tc.mult}, []int{luts, ffs, ebr, mult})
			devs, smallest := ecp5Fit(luts, ffs, ebr, mult)
			require.Equal(t, tc.smallest, smallest)
			require.Len(t, devs, len(fpga.ECP5Devices()))
			for i, d := range devs {
				require.Equal(t, fpga.ECP5Devices()[i].Name, d.Device)
				require.Equal(t, d.Share <= FitFraction, d.Fits, d.Device)
			}
		})
	}
}

// A unit through synth_ecp5: its memory is inferred as block RAM, its adder as carry cells, and
// it fits the smallest device.
func TestECP5SynthesizesAUnit(t *testing.T) {
	requireTools(t, ECP5)
	m := &hdl.Module{Name: "withmem", Source: "qor/qor_test.go", Clock: "clk", Ports: []hdl.Port{hdl.In("clk", 1, "clock"),
		hdl.In("we", 1, ""), hdl.In("wa", 6, ""), hdl.In("wd", 32, ""), hdl.In("ra", 6, ""), hdl.Out("q", 32, "")}}
	u := writeUnit(t, "withmem", macroVerilog, m)
	r, err := RunECP5(context.Background(), u, t.TempDir(), nil)
	require.NoError(t, err)
	require.Equal(t, "withmem", r.Unit)
	require.Positive(t, r.Cells["CCU2C"], "the 32-bit increment is a carry chain: %v", r.Cells)
	require.GreaterOrEqual(t, r.FFs, 32, "q")
	require.Positive(t, r.EBR+r.Cells["TRELLIS_DPR16X4"], "the 64 x 32 table is a RAM, not flip-flops: %v", r.Cells)
	require.Equal(t, "LFE5U-25F", r.Smallest)
	require.Contains(t, r.Summary(), "smallest device LFE5U-25F")
}

func shiftVerilog(n int) string {
	return "module shreg (input wire clk, input wire rst_n, input wire d, output wire q);\n" +
		"  reg [" + itoa(n-1) + ":0] r;\n" +
		"  always @(posedge clk or negedge rst_n) if (!rst_n) r <= 0; else r <= {r[" + itoa(n-2) + ":0], d};\n" +
		"  assign q = r[" + itoa(n-1) + "];\nendmodule\n"
}

// shregUnits makes units of an n-flip-flop shift register, its digest its length.
func shregUnits(t *testing.T) func(n int) Unit {
	m := &hdl.Module{Name: "shreg", Source: "qor/qor_test.go", Clock: "clk", Reset: "rst_n",
		Ports: []hdl.Port{hdl.In("clk", 1, "clock"), hdl.In("rst_n", 1, "reset"), hdl.In("d", 1, "data"),
			hdl.Out("q", 1, "data")}}
	return func(n int) Unit {
		u := writeUnit(t, "shreg", shiftVerilog(n), m)
		u.Digest = itoa(n)
		return u
	}
}

// A unit over the device's capacity is placed at the largest candidate that fits in 80% of it,
// found by bisection over the candidates' coarse size: a candidate with the same hardware as one
// tried, one not smaller than the unit and one below a fitting probe are not synthesized.
func TestICE40FitSearch(t *testing.T) {
	requireTools(t, ICE40)
	unit := shregUnits(t)
	cands := []Candidate{{Config: "small", Unit: unit(1000)}, {Config: "medium", Unit: unit(4000)},
		{Config: "too-big", Unit: unit(7000)}, {Config: "medium-again", Unit: unit(4000)},
		{Config: "huge", Unit: unit(12000)}}
	r, err := RunICE40(context.Background(), unit(9000), t.TempDir(), "ice40-hx8k",
		func() ([]Candidate, error) { return cands, nil }, nil)
	require.NoError(t, err)
	require.False(t, r.Fits)
	require.Contains(t, r.Result.DoesNotFit(), "FFs (7680)")
	require.Equal(t, "medium", r.FitConfig, "the largest within 80%% of the device: %+v", r.Candidates)
	require.NotNil(t, r.Fit)
	require.Greater(t, r.Fit.FmaxMHz, 0.0)
	for _, c := range r.Candidates {
		switch c.Config {
		case "too-big":
			require.False(t, c.Fits)
			require.Greater(t, c.Share, FitFraction, "packed: %+v", c)
		case "medium":
			require.Greater(t, c.Share, 0.5, "packed: 4000 flip-flops of 7680 cells: %+v", c)
		case "medium-again":
			require.Contains(t, c.Note, "the same hardware as medium")
		case "small":
			require.Contains(t, c.Note, "not synthesized: smaller", "below a probe that fits: %+v", c)
			require.Zero(t, c.LUTs+c.FFs)
		case "huge":
			require.Contains(t, c.Note, "not smaller", "%+v", c)
			require.Greater(t, c.CoarseBits, r.CoarseBits)
		}
	}
	require.Contains(t, r.Summary(), "at medium")
}

func TestParseWireBits(t *testing.T) {
	stat := "\n=== sub ===\n\n   Number of wire bits:   12\n\n=== top ===\n\n   Number of wires:    3\n" +
		"   Number of wire bits:          30922\n   Number of public wire bits:   25932\n"
	n, err := parseWireBits(stat, "top")
	require.NoError(t, err)
	require.Equal(t, 30922, n)
	_, err = parseWireBits(stat, "other")
	require.ErrorContains(t, err, "no module other")
	_, err = parseWireBits("=== top ===\n", "top")
	require.ErrorContains(t, err, "no wire-bit count")
}

// A unit that places but fills more than 80% of the device is not reported as fitting: its own
// figure stays in the report, beside the largest candidate within 80%.
func TestICE40OverFitFractionSearchesSmaller(t *testing.T) {
	requireTools(t, ICE40)
	unit := shregUnits(t)
	r, err := RunICE40(context.Background(), unit(7000), t.TempDir(), "ice40-hx8k",
		func() ([]Candidate, error) { return []Candidate{{Config: "medium", Unit: unit(4000)}}, nil }, nil)
	require.NoError(t, err)
	require.Empty(t, r.Result.OverCapacity, "7000 flip-flops place on the HX8K")
	require.Greater(t, r.Result.FmaxMHz, 0.0)
	require.Greater(t, r.Share, FitFraction)
	require.False(t, r.Fits)
	require.Equal(t, "medium", r.FitConfig)
	require.NotNil(t, r.Fit)
	require.Contains(t, r.Summary(), "of the device (over 80%); at medium")
	require.Contains(t, r.overWhat(), "over 80%", "what a parent holding it is told")
}
