package qor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/hdl"
)

// A parent whose worst path crosses both of its parts: src's register leaves through its
// output, the parent's glue adds to it, and dst's logic takes it into dst's register. The
// one-bit bus of src (flag) and the scalar of dst (en) cover the port forms Yosys names
// without an index.
const composeVerilog = `module src (input wire clk, input wire [15:0] d, output wire [15:0] q, output wire [0:0] flag);
  reg [15:0] q_r;
  always @(posedge clk) q_r <= d;
  assign q = q_r;
  assign flag = q_r[0];
endmodule
module dst (input wire clk, input wire en, input wire [15:0] a, output wire [15:0] y);
  reg [15:0] y_r;
  always @(posedge clk) if (en) y_r <= a * a;
  assign y = y_r;
endmodule
module par (input wire clk, input wire [15:0] d, input wire [15:0] k, output wire [15:0] y);
  wire [15:0] q;
  wire [0:0] flag;
  src u_src (.clk(clk), .d(d), .q(q), .flag(flag));
  dst u_dst (.clk(clk), .en(flag[0]), .a(q + k), .y(y));
endmodule
`

var (
	srcModule = &hdl.Module{Name: "src", Source: "qor/compose_test.go", Clock: "clk", Ports: []hdl.Port{
		hdl.In("clk", 1, ""), hdl.In("d", 16, ""), hdl.Out("q", 16, ""), hdl.Out("flag", 1, "")}}
	dstModule = &hdl.Module{Name: "dst", Source: "qor/compose_test.go", Clock: "clk", Ports: []hdl.Port{
		hdl.In("clk", 1, ""), hdl.In("en", 1, ""), hdl.In("a", 16, ""), hdl.Out("y", 16, "")}}
	parModule = &hdl.Module{Name: "par", Source: "qor/compose_test.go", Clock: "clk", Ports: []hdl.Port{
		hdl.In("clk", 1, ""), hdl.In("d", 16, ""), hdl.In("k", 16, ""), hdl.Out("y", 16, "")}}
)

func composeUnits(t *testing.T) (src, dst, par Unit) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, m := range strings.SplitAfter(composeVerilog, "endmodule\n") {
		if strings.TrimSpace(m) == "" {
			continue
		}
		name := strings.Fields(m)[1]
		f := filepath.Join(dir, name+".v")
		require.NoError(t, os.WriteFile(f, []byte(m), 0o644))
		files = append(files, f)
	}
	c := config.Default()
	c.Timing.InputDelayPct, c.Timing.OutputDelayPct = 0, 0
	mk := func(m *hdl.Module) Unit { return Unit{Module: m, Files: files, Config: c} }
	return mk(srcModule), mk(dstModule), mk(parModule)
}

// A unit composed of its parts' netlists times the paths that cross them as the whole unit
// does: the same start and end registers, the delay within a buffer or two (the part's outputs
// drive one BUFX2 each in the glue), and its cells the parts' and the glue's.
func TestComposedASICTimesAcrossParts(t *testing.T) {
	requireTools(t, ASIC)
	ctx := context.Background()
	src, dst, par := composeUnits(t)
	rs, err := RunASIC(ctx, src, t.TempDir(), DefaultMacroModel, nil)
	require.NoError(t, err)
	rd, err := RunASIC(ctx, dst, t.TempDir(), DefaultMacroModel, nil)
	require.NoError(t, err)
	whole, err := RunASIC(ctx, par, t.TempDir(), DefaultMacroModel, nil)
	require.NoError(t, err)

	par.Parts = []SubUnit{{Name: "dst", Module: dstModule, Count: 1, ASIC: rd}, {Name: "src", Module: srcModule, Count: 1, ASIC: rs}}
	comp, err := RunASIC(ctx, par, t.TempDir(), DefaultMacroModel, nil)
	require.NoError(t, err)
	t.Logf("whole %.3f ns %s -> %s; composed %.3f ns %s -> %s; parts %.3f, %.3f ns",
		whole.CriticalNS, whole.Start, whole.End, comp.CriticalNS, comp.Start, comp.End, rs.CriticalNS, rd.CriticalNS)
	require.Equal(t, []string{"dst", "src"}, comp.ComposedOf)
	// Registers are named by the net their Q drives: q_r[0] is u_src.flag, y_r u_dst.y.
	require.True(t, strings.HasPrefix(comp.Start, "u_src."), "the path starts in src: %s", comp.Start)
	require.True(t, strings.HasPrefix(comp.End, "u_dst."), "and ends in dst: %s", comp.End)
	require.Greater(t, comp.CriticalNS, rd.CriticalNS, "the path crosses from src through the glue into dst")
	require.InDelta(t, whole.CriticalNS, comp.CriticalNS, 0.25*whole.CriticalNS)
	require.Equal(t, rs.Flops+rd.Flops, comp.Flops, "the glue has no registers")
	require.Greater(t, comp.Cells, rs.Cells+rd.Cells, "the glue's cells are added to the parts'")
	require.Greater(t, comp.CellAreaUM2, rs.CellAreaUM2+rd.CellAreaUM2)
}

// On xcup the composed unit's ltp runs over the parts' LUT netlists linked under the glue's:
// the longest path crosses them, its resources are the parts' plus the glue's.
func TestComposedXCUPLinksTheLUTNetlists(t *testing.T) {
	requireTools(t, XCUP)
	ctx := context.Background()
	src, dst, par := composeUnits(t)
	xs, err := RunXCUP(ctx, src, t.TempDir(), XCU55C, true, nil)
	require.NoError(t, err)
	xd, err := RunXCUP(ctx, dst, t.TempDir(), XCU55C, true, nil)
	require.NoError(t, err)
	whole, err := RunXCUP(ctx, par, t.TempDir(), XCU55C, true, nil)
	require.NoError(t, err)
	par.Parts = []SubUnit{{Name: "dst", Module: dstModule, Count: 1, XCUP: xd}, {Name: "src", Module: srcModule, Count: 1, XCUP: xs}}
	comp, err := RunXCUP(ctx, par, t.TempDir(), XCU55C, true, nil)
	require.NoError(t, err)
	t.Logf("levels: whole %d, composed %d, src %d, dst %d; LUTs whole %d composed %d", whole.LUTLevels, comp.LUTLevels,
		xs.LUTLevels, xd.LUTLevels, whole.LUTs, comp.LUTs)
	require.Greater(t, comp.LUTLevels, xd.LUTLevels, "the glue's adder feeds dst's multiplier")
	require.GreaterOrEqual(t, comp.LUTLevels, whole.LUTLevels, "no optimization across the parts' boundary")
	require.LessOrEqual(t, comp.LUTLevels, whole.LUTLevels+3)
	require.Equal(t, xs.FFs+xd.FFs, comp.FFs)
	require.Greater(t, comp.LUTs, xs.LUTs+xd.LUTs)
	require.Equal(t, xs.DSP+xd.DSP, comp.DSP)
	require.Len(t, comp.netlists, 3, "the glue's LUT netlist and both parts'")
}

// On ice40 a part that does not fit, and fits at no candidate, decides its parent without a
// synthesis; a part that fits leaves the parent to its own flow.
func TestComposedICE40FollowsItsParts(t *testing.T) {
	_, _, par := composeUnits(t)
	over := &ICE40Result{Unit: "dst", Note: "not synthesized: its 9000000 memory bits exceed the device's"}
	par.Parts = []SubUnit{{Name: "dst", Module: dstModule, Count: 1, ICE40: over}}
	called := false
	r, err := RunICE40(context.Background(), par, t.TempDir(), "ice40-hx8k", func() ([]Candidate, error) {
		called = true
		return nil, nil
	}, nil)
	require.NoError(t, err)
	require.False(t, called, "no search: its part fits at no candidate")
	require.Nil(t, r.Result)
	require.False(t, r.Fits)
	require.Contains(t, r.Note, "its part dst does not fit (not synthesized: its 9000000 memory bits")
	require.Contains(t, r.Note, "no candidate configuration fits: dst fits at none")

	// With no fit search asked for (a handoff bundle's one configuration), the note says only
	// what does not fit.
	r, err = RunICE40(context.Background(), par, t.TempDir(), "ice40-hx8k", nil, nil)
	require.NoError(t, err)
	require.False(t, r.Fits)
	require.Equal(t, "not synthesized: its part dst does not fit (not synthesized: its 9000000 memory bits exceed the device's)", r.Note)
	require.Equal(t, r.Note, r.Summary())
}
