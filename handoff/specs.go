package handoff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
)

// moduleSpec renders docs/blocks/<module>.md from the module's Go description, the same one its
// RTL is rendered from: what it does, its clock and reset, ports, parameters, latency and II, its
// tables and the modules it instantiates.
func moduleSpec(d *gen.Design, m *hdl.Module) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# `%s`\n\nGenerated from `%s` (the description its RTL is rendered from).\n\n%s\n\n", m.Name, m.Source, m.Doc)
	b.WriteString("## Clock, reset, timing\n\n| | |\n|---|---|\n")
	clock := m.Clock
	if clock == "" {
		clock = "none (combinational)"
	}
	fmt.Fprintf(&b, "| clock | `%s` |\n", clock)
	switch m.Reset {
	case "rst":
		b.WriteString("| reset | `rst`: synchronous, active high |\n")
	case "rst_n":
		b.WriteString("| reset | `rst_n`: asynchronous assert, active low |\n")
	default:
		b.WriteString("| reset | none |\n")
	}
	if m.Latency > 0 {
		fmt.Fprintf(&b, "| latency | %d cycles from an input handshake to its output |\n", m.Latency)
	}
	if m.II > 0 {
		fmt.Fprintf(&b, "| II | %d (cycles between operations) |\n", m.II)
	}
	if m.EntryII > 0 {
		fmt.Fprintf(&b, "| II per entry | %d (an operation on the entry the previous one used waits) |\n", m.EntryII)
	}
	b.WriteString("\n## Ports\n\n| port | direction | width | meaning |\n|---|---|---|---|\n")
	for _, p := range m.Ports {
		w := fmt.Sprint(p.Width)
		if p.WidthParam != "" {
			w = fmt.Sprintf("%s (%d)", p.WidthParam, p.Width)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p.Name, p.Dir, w, cell(p.Doc))
	}
	if len(m.Params) > 0 {
		b.WriteString("\n## Parameters\n\n| name | value | meaning |\n|---|---|---|\n")
		for _, p := range m.Params {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", p.Name, cell(fmt.Sprint(p.Value)), cell(p.Doc))
		}
	}
	if len(m.Tables) > 0 {
		b.WriteString("\n## Tables\n\nEvery table is an instance of the memory family (`memories/models/`); a macro " +
			"in the ASIC flow when it is a registered-read RAM of at least the macro threshold.\n\n" +
			"| table | kind | depth | width | bits | implementation | holds |\n|---|---|---|---|---|---|---|\n")
		for _, t := range m.Tables {
			impl := "flip-flops"
			if t.Macro() {
				impl = "macro (`" + t.MemModule() + "`)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %d | %s | %s |\n", t.Name, t.Kind, t.Depth, t.Width,
				t.Depth*t.Width, impl, cell(t.Doc))
		}
	}
	if inst := d.Instances(m.Name); len(inst) > 0 {
		b.WriteString("\n## Instances\n\n| instance | module |\n|---|---|\n")
		for _, i := range inst {
			link := "`" + i.Module + "`"
			if !strings.HasPrefix(i.Module, "mrgen_") {
				link = "[`" + i.Module + "`](" + i.Module + ".md)"
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", i.Name, link)
		}
	}
	return b.String()
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}

// blockDiagram renders docs/nic.md: nic_top's instance tree, each module with its latency and II
// where its description states them.
func blockDiagram(d *gen.Design) string {
	var b strings.Builder
	b.WriteString("# The NIC: `" + d.Top + "`\n\nThe instance tree of the top, from the generated RTL, with each " +
		"module's latency and II as its description states them (a module without a figure states none: a " +
		"pipeline of its parts, or a table). Memories are left out (memories/memories.md lists them).\n\n```\n")
	var walk func(inst, module string, depth int)
	walk = func(inst, module string, depth int) {
		m := d.Descriptions[module]
		var facts []string
		if m != nil && m.Latency > 0 {
			facts = append(facts, fmt.Sprintf("latency %d", m.Latency))
		}
		if m != nil && m.II > 0 {
			facts = append(facts, fmt.Sprintf("II %d", m.II))
		}
		if m != nil && m.EntryII > 0 {
			facts = append(facts, fmt.Sprintf("II per entry %d", m.EntryII))
		}
		line := strings.Repeat("  ", depth) + inst + ": " + module
		if len(facts) > 0 {
			line += "  (" + strings.Join(facts, ", ") + ")"
		}
		b.WriteString(line + "\n")
		if depth > 16 {
			return
		}
		for _, c := range d.Instances(module) {
			if !strings.HasPrefix(c.Module, "mrgen_") {
				walk(c.Name, c.Module, depth+1)
			}
		}
	}
	walk("top", d.Top, 0)
	b.WriteString("```\n\nEach module's spec: [blocks/](blocks/).\n")
	return b.String()
}

// specFiles are docs/blocks/<module>.md for every logic module of the designs, docs/nic.md and
// the wire format.
func specFiles(designs []*gen.Design, wireFormat []byte, files map[string][]byte) {
	done := map[string]bool{}
	var names []string
	for _, d := range designs {
		for _, n := range d.Modules {
			if strings.HasPrefix(n, "mrgen_") || done[n] {
				continue
			}
			done[n] = true
			names = append(names, n)
			files["docs/blocks/"+n+".md"] = []byte(moduleSpec(d, d.Descriptions[n]))
		}
	}
	sort.Strings(names)
	var idx strings.Builder
	idx.WriteString("# Block specs\n\nOne page per module, generated from the Go description its RTL is rendered from.\n\n")
	for _, n := range names {
		fmt.Fprintf(&idx, "- [`%s`](%s.md)\n", n, n)
	}
	files["docs/blocks/README.md"] = []byte(idx.String())
	files["docs/nic.md"] = []byte(blockDiagram(designs[0]))
	files["docs/wire-format.md"] = wireFormat
}
