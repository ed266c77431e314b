package handoff

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
func synthesizeGates(ctx context.Context, block, module string, c config.Config, st gen.Stamp, work string,
	log io.Writer) (*gateLevel, error) {
	bd, err := blocks.QoRDesign(block, c, st, filepath.Join(work, "rtl"))
	if err != nil {
		return nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	u, err := qor.UnitOf(bd.Design, bd.Dir, module, c)
	if err != nil {
		return nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	res, err := qor.RunASIC(ctx, u, filepath.Join(work, "asic"), qor.DefaultMacroModel, log)
	if err != nil {
		return nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	netlist, err := os.ReadFile(res.Logs["netlist"])
	if err != nil {
		return nil, fmt.Errorf("handoff: gate level of %s: %w", module, err)
	}
	g := &gateLevel{Netlist: netlist, Macros: map[string][]byte{}}
	for _, t := range u.MacroTables() {
		name := t.MemModule()
		text, err := macroShell(bd.Design, name)
		if err != nil {
			return nil, err
		}
		g.Macros[name] = text
	}
	// The report without what changes from run to run: the work folder's paths and the time.
	tr := *res
	tr.Logs, tr.Seconds = nil, 0
	if g.Timing, err = json.MarshalIndent(tr, "", "  "); err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	g.Timing = append(g.Timing, '\n')
	return g, nil
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
	fmt.Fprintf(&b, "module %s (%s);\n%s\n%s\n  %s_model u_model (%s);\nendmodule\n", module,
		strings.Join(pins, ", "), strings.Join(decls, "\n"), strings.Join(assigns, "\n"), module,
		strings.Join(conns, ", "))
	return []byte(b.String()), nil
}
