package handoff

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/qor"
)

// gateLevel is one module's osu018 netlist from the QoR flow (qor.RunASIC, synthesized whole:
// the netlist OpenSTA timed) and what the bundle says about it.
type gateLevel struct {
	Netlist []byte
	Macros  map[string][]byte // gls/macros/<module>.v: each macro as the netlist instantiates it
	Timing  []byte            // reports/timing/<module>.json
}

// synthesizeGates runs the QoR flow's ASIC synthesis and timing on module of block, whole.
func synthesizeGates(ctx context.Context, cache *toolCache, block, module string, c config.Config, st gen.Stamp, work string,
	log io.Writer) (*gateLevel, error) {
	bd, err := blocks.QoRDesign(block, c, st, filepath.Join(work, "rtl"))
	if err != nil {
		return nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	u, err := qor.UnitOf(bd.Design, bd.Dir, module, c)
	if err != nil {
		return nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	key := cache.key("gates", c.Hash(), []*gen.Design{bd.Design}, module)
	g := &gateLevel{Macros: map[string][]byte{}}
	if files, ok := cache.load(key); ok {
		g.Netlist, g.Timing = files["netlist"], files["timing"]
	} else if g.Netlist, g.Timing, err = runGates(ctx, u, module, work, log); err != nil {
		return nil, err
	} else if err := cache.store(key, map[string][]byte{"netlist": g.Netlist, "timing": g.Timing}); err != nil {
		return nil, err
	}
	for _, t := range u.MacroTables() {
		name := t.MemModule()
		text, err := macroShell(bd.Design, name)
		if err != nil {
			return nil, err
		}
		g.Macros[name] = text
	}
	return g, nil
}

// runGates runs the ASIC flow on u and returns its netlist and its timing report, the report
// without what changes from run to run (the work folder's paths and the time).
func runGates(ctx context.Context, u qor.Unit, module, work string, log io.Writer) (netlist, timing []byte, err error) {
	res, err := qor.RunASIC(ctx, u, filepath.Join(work, "asic"), qor.DefaultMacroModel, log)
	if err != nil {
		return nil, nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	if netlist, err = os.ReadFile(res.Logs["netlist"]); err != nil {
		return nil, nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	tr := *res
	tr.Logs, tr.Seconds = nil, 0
	if timing, err = json.MarshalIndent(tr, "", "  "); err != nil {
		return nil, nil, fmt.Errorf("handoff: %w", err)
	}
	return netlist, append(timing, '\n'), nil
}

// macroShell is a memory macro as the gate-level netlist instantiates it, one pin per bit
// (raddr_0_, ...; 1-bit ports keep their names), around the memory's behavioural model, renamed
// <module>_model: the netlist's macros then behave as the RTL's memories.
func macroShell(d *gen.Design, module string) ([]byte, error) {
	m, ok := d.Descriptions[module]
	if !ok {
		return nil, fmt.Errorf("handoff: no description of memory %s", module)
	}
	var model []byte
	for _, f := range d.Files {
		if f.Path == "rtl/"+module+".v" {
			model = f.Content
		}
	}
	decl := "module " + module + " ("
	if model == nil || strings.Count(string(model), decl) != 1 {
		return nil, fmt.Errorf("handoff: the model of %s does not declare it once", module)
	}
	var b strings.Builder
	b.WriteString(strings.Replace(string(model), decl, "module "+module+"_model (", 1))
	fmt.Fprintf(&b, "\n// %s as the gate-level netlist instantiates it: one pin per bit.\n", module)
	var pins, decls, conns, assigns []string
	for _, p := range m.Ports {
		dir := "input"
		if p.Dir == hdl.Output {
			dir = "output"
		}
		if p.Width == 1 {
			pins = append(pins, p.Name)
			decls = append(decls, fmt.Sprintf("  %s %s;", dir, p.Name))
			conns = append(conns, fmt.Sprintf(".%s(%s)", p.Name, p.Name))
			continue
		}
		bits := make([]string, p.Width)
		for i := range p.Width {
			bit := fmt.Sprintf("%s_%d_", p.Name, i)
			pins = append(pins, bit)
			decls = append(decls, fmt.Sprintf("  %s %s;", dir, bit))
			bits[p.Width-1-i] = bit
		}
		decls = append(decls, fmt.Sprintf("  wire [%d:0] %s;", p.Width-1, p.Name))
		if p.Dir == hdl.Output {
			assigns = append(assigns, fmt.Sprintf("  assign {%s} = %s;", strings.Join(bits, ", "), p.Name))
		} else {
			assigns = append(assigns, fmt.Sprintf("  assign %s = {%s};", p.Name, strings.Join(bits, ", ")))
		}
		conns = append(conns, fmt.Sprintf(".%s(%s)", p.Name, p.Name))
	}
	fmt.Fprintf(&b, "module %s (%s);\n%s\n%s\n  %s_model u_model (%s);\n%sendmodule\n", module,
		strings.Join(pins, ", "), strings.Join(decls, "\n"), strings.Join(assigns, "\n"), module,
		strings.Join(conns, ", "), macroPowerUp(m))
	return []byte(b.String()), nil
}

// macroPowerUp is the shell's power-up block: with MRGEN_POWER_UP_SEED defined (verify.sh's
// default gate level), every word of the model and its read register start at random values
// from gls/power_up.v's seed, as an SRAM's cells do at power-up.
func macroPowerUp(m *hdl.Module) string {
	width := 0
	for _, p := range m.Ports {
		if p.Name == "rdata" {
			width = p.Width
		}
	}
	words := make([]string, (width+31)/32)
	for i := range words {
		words[i] = "$random(mrgen_power_up.seed)"
	}
	rnd := "{" + strings.Join(words, ", ") + "}"
	return "`ifdef MRGEN_POWER_UP_SEED\n" +
		"  // Power-up (gls/power_up.v): every word and the read register start at random values.\n" +
		"  initial begin : power_up\n" +
		"    integer i;\n" +
		"    for (i = 0; i < u_model.DEPTH; i = i + 1) begin\n" +
		"      u_model.mem[i] = " + rnd + ";\n" +
		"    end\n" +
		"    u_model.rdata = " + rnd + ";\n" +
		"  end\n" +
		"`endif\n"
}

// flopModels are the osu018 flip-flops the gate-level netlists may use, as gls/power_up.v
// models them: the library's function (Q takes D at the clock edge; in Icarus' zero-delay
// simulation the library model's timing checks do nothing) with a random power-up value.
var flopModels = map[string]string{
	"DFFPOSX1": "posedge",
	"DFFNEGX1": "negedge",
}

var cellRE = regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*) [A-Za-z_][A-Za-z0-9_]* \(`)

// netlistFlops are the flip-flop cells netlist instantiates, sorted; an error names a stateful
// cell (a flip-flop or latch) that flopModels does not model.
func netlistFlops(module string, netlist []byte) ([]string, error) {
	seen := map[string]bool{}
	for _, m := range cellRE.FindAllSubmatch(netlist, -1) {
		cell := string(m[1])
		if _, ok := flopModels[cell]; ok {
			seen[cell] = true
		} else if strings.HasPrefix(cell, "DFF") || strings.HasPrefix(cell, "LATCH") {
			return nil, fmt.Errorf("handoff: the %s netlist uses %s, which has no power-up model", module, cell)
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// powerUpModels is gls/power_up.v: the seed (module mrgen_power_up, a second top) and each flop
// cell of flops with a random power-up value. verify.sh compiles it in place of the library's
// models of those cells.
func powerUpModels(flops []string) []byte {
	var b strings.Builder
	b.WriteString(`// gls/power_up.v -- the gate-level replays' power-up (verify.sh, POWER_UP=random).
// Silicon starts every flip-flop without reset and every SRAM word at an arbitrary value; a
// 4-state simulation starts them unknown (X), and a netlist, unlike the RTL's if/case, does not
// mask an X that the logic ignores (X-pessimism). Here each starts at a random value from one
// seed, as a commercial simulator's random register initialisation does (VCS
// +vcs+initreg+random, Xcelium -xminit rand): a replay that passes for every seed shows the
// netlist does not depend on the power-up state. verify.sh compiles these flip-flops in place
// of the library's models of the same cells (the library's others are used as they are), with
// -DMRGEN_POWER_UP_SEED=<seed>; the memory macros' shells (gls/macros/) randomise their words.
` + "`timescale 1ns / 1ps\n\n")
	b.WriteString("// The seed every power-up value is drawn from, in order (a second top-level module).\n")
	b.WriteString("module mrgen_power_up;\n  integer seed = `MRGEN_POWER_UP_SEED;\nendmodule\n")
	for _, cell := range flops {
		fmt.Fprintf(&b, `
// %[1]s: Q takes D at the clock's %[2]s; a random value until the first edge.
module %[1]s (CLK, D, Q);
  input CLK;
  input D;
  output Q;
  reg q;
  initial q = $random(mrgen_power_up.seed);
  always @(%[2]s CLK) q <= D;
  assign Q = q;
endmodule
`, cell, flopModels[cell])
	}
	return []byte(b.String())
}
