package fpga

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
)

// Resources counts what a design uses, in the units of DESIGN.md's synth contract.
type Resources struct {
	LUTs int `json:"luts"`
	FFs  int `json:"ffs"`
	RAMs int `json:"rams"`
}

// Beyond lists the resources of r that exceed capacity, as "36846 LUTs (7680)", joined by
// ", "; "" when r is within capacity in every resource.
func (r Resources) Beyond(capacity Resources) string {
	var over []string
	for _, x := range []struct {
		name      string
		need, has int
	}{{"LUTs", r.LUTs, capacity.LUTs}, {"FFs", r.FFs, capacity.FFs}, {"RAMs", r.RAMs, capacity.RAMs}} {
		if x.need > x.has {
			over = append(over, fmt.Sprintf("%d %s (%d)", x.need, x.name, x.has))
		}
	}
	return strings.Join(over, ", ")
}

// Share is how full of capacity r is: its fullest resource's fraction (resources the device
// has none of are left out).
func (r Resources) Share(capacity Resources) float64 {
	share := 0.0
	for _, x := range [][2]int{{r.LUTs, capacity.LUTs}, {r.FFs, capacity.FFs}, {r.RAMs, capacity.RAMs}} {
		if x[1] > 0 && float64(x[0])/float64(x[1]) > share {
			share = float64(x[0]) / float64(x[1])
		}
	}
	return share
}

// Utilization is one resource line of a nextpnr report.
type Utilization struct {
	Used      int `json:"used"`
	Available int `json:"available"`
}

// PnRReport is what mrgen reads from a nextpnr --report file for the clock it constrains.
type PnRReport struct {
	ClockNet      string                 // the clock's net name after global promotion, e.g. clk$SB_IO_IN_$glb_clk
	FmaxMHz       float64                // achieved, rounded to 0.01 MHz
	ConstraintMHz float64                // the --freq target
	Utilization   map[string]Utilization // whole placed design (ICESTORM_LC, ICESTORM_RAM, SB_IO, ...)
	CriticalPath  *CriticalPath          // the clock's slowest register-to-register path; nil if none
}

// CriticalPath summarises the path that limits Fmax. StartNet is the net the launching
// flip-flop (or RAM) drives and EndNet the last net, into the capturing cell EndCell.EndPort.
// Nets carry RTL signal names: "u_dut.X" is the block's signal X, "dut_P" the block's output
// port P, "chain_reg[i]" the wrapper's input chain. The launch element's own from/to cells are
// not used: nextpnr 0.4 fills them inconsistently.
type CriticalPath struct {
	StartNet    string
	EndNet      string
	EndCell     string
	EndPort     string
	LogicLevels int     // LUTs and carry steps on the path
	DelayNS     float64 // the whole path
	LogicNS     float64 // clock-to-out, logic and setup
	RoutingNS   float64
}

// String renders the path without source locations.
func (p *CriticalPath) String() string { return p.Describe(nil) }

// Describe renders the path as
//
//	START [(file:line)] -> END [(file:line)] (into CELL.PORT): N logic levels, T ns (L ns logic,
//	R ns routing)
//
// where src, if not nil, gives the RTL source location of a net ("" if unknown).
func (p *CriticalPath) Describe(src func(net string) string) string {
	at := func(net string) string {
		if src == nil {
			return net
		}
		if loc := src(net); loc != "" {
			return net + " (" + loc + ")"
		}
		return net
	}
	ends := at(p.StartNet)
	if p.EndNet != p.StartNet {
		ends += " -> " + at(p.EndNet)
	}
	return fmt.Sprintf("%s (into %s.%s): %d logic levels, %.2f ns (%.2f ns logic, %.2f ns routing)",
		ends, p.EndCell, p.EndPort, p.LogicLevels, p.DelayNS, p.LogicNS, p.RoutingNS)
}

type nextpnrReport struct {
	Fmax map[string]struct {
		Achieved   float64 `json:"achieved"`
		Constraint float64 `json:"constraint"`
	} `json:"fmax"`
	Utilization   map[string]Utilization `json:"utilization"`
	CriticalPaths []struct {
		From string        `json:"from"`
		To   string        `json:"to"`
		Path []pathElement `json:"path"`
	} `json:"critical_paths"`
}

type pathElement struct {
	Type  string   `json:"type"` // clk-to-q, source, routing, logic, setup
	Delay float64  `json:"delay"`
	Net   string   `json:"net"`
	From  pathNode `json:"from"`
	To    pathNode `json:"to"`
}

type pathNode struct {
	Cell string `json:"cell"`
	Port string `json:"port"`
}

// ParseUtilization reads the device utilisation of a nextpnr --report file (a --pack-only run
// writes it too, counted after packing).
func ParseUtilization(data []byte) (map[string]Utilization, error) {
	var r nextpnrReport
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("fpga: nextpnr report: %w", err)
	}
	if len(r.Utilization) == 0 {
		return nil, fmt.Errorf("fpga: nextpnr report has no \"utilization\"")
	}
	return r.Utilization, nil
}

// Share is the fraction of the device the kinds of cell take, the fullest of them (0 for a
// kind the utilisation does not list).
func Share(u map[string]Utilization, kinds ...string) float64 {
	most := 0.0
	for _, k := range kinds {
		if x, ok := u[k]; ok && x.Available > 0 {
			most = max(most, float64(x.Used)/float64(x.Available))
		}
	}
	return most
}

// ParsePnRReport reads a nextpnr-ice40 --report JSON file and picks the entry of clockPort,
// the name of the top-level clock input. nextpnr names the clock by its net after global
// promotion ("clk$SB_IO_IN_$glb_clk"), so the entry is the one named clockPort or starting with
// clockPort+"$"; a report with a single clock uses that clock.
func ParsePnRReport(data []byte, clockPort string) (*PnRReport, error) {
	var r nextpnrReport
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("fpga: nextpnr report: %w", err)
	}
	if len(r.Fmax) == 0 {
		return nil, fmt.Errorf("fpga: nextpnr report has no clock in \"fmax\" (no clocked paths?)")
	}
	var names []string
	for n := range r.Fmax {
		names = append(names, n)
	}
	sort.Strings(names)
	clock := ""
	for _, n := range names {
		if n == clockPort || strings.HasPrefix(n, clockPort+"$") {
			clock = n
			break
		}
	}
	if clock == "" && len(names) == 1 {
		clock = names[0]
	}
	if clock == "" {
		return nil, fmt.Errorf("fpga: nextpnr report: no clock for port %q among %s", clockPort, strings.Join(names, ", "))
	}
	f := r.Fmax[clock]
	out := &PnRReport{
		ClockNet:      clock,
		FmaxMHz:       math.Round(f.Achieved*100) / 100,
		ConstraintMHz: f.Constraint,
		Utilization:   r.Utilization,
	}
	edge := "posedge " + clock
	best := -1
	for i, cp := range r.CriticalPaths {
		if cp.To != edge {
			continue
		}
		// Prefer the register-to-register path of this clock over an input-to-register one.
		if best < 0 || (cp.From == edge && r.CriticalPaths[best].From != edge) {
			best = i
		}
	}
	if best >= 0 && len(r.CriticalPaths[best].Path) > 0 {
		out.CriticalPath = summarise(r.CriticalPaths[best].Path)
	}
	return out, nil
}

func summarise(path []pathElement) *CriticalPath {
	p := &CriticalPath{StartNet: "?", EndNet: "?"}
	var nets []string
	for _, e := range path {
		p.DelayNS += e.Delay
		switch e.Type {
		case "routing":
			p.RoutingNS += e.Delay
			if e.Net != "" {
				nets = append(nets, e.Net)
			}
		case "logic":
			p.LogicNS += e.Delay
			p.LogicLevels++
		default: // clk-to-q, source, setup
			p.LogicNS += e.Delay
		}
	}
	if len(nets) > 0 {
		p.StartNet, p.EndNet = nets[0], nets[len(nets)-1]
	}
	last := path[len(path)-1].To
	p.EndCell, p.EndPort = last.Cell, last.Port
	round := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	p.DelayNS, p.LogicNS, p.RoutingNS = round(p.DelayNS), round(p.LogicNS), round(p.RoutingNS)
	return p
}

// yosysNetlist is the part of a Yosys write_json netlist that cell counting needs.
type yosysNetlist struct {
	Modules map[string]struct {
		Attributes map[string]any `json:"attributes"`
		Cells      map[string]struct {
			Type string `json:"type"`
		} `json:"cells"`
		Netnames map[string]struct {
			Attributes map[string]any `json:"attributes"`
		} `json:"netnames"`
	} `json:"modules"`
}

// Netlist holds the cell types of each module of a synthesized Yosys JSON netlist.
type Netlist struct {
	modules   map[string]map[string]int    // user module -> cell type -> count
	instances map[string]map[string]string // user module -> cell name -> user module type
	netSrc    map[string]map[string]string // user module -> net name -> src attribute
}

// ParseNetlist reads a Yosys write_json netlist.
func ParseNetlist(data []byte) (*Netlist, error) {
	var y yosysNetlist
	if err := json.Unmarshal(data, &y); err != nil {
		return nil, fmt.Errorf("fpga: yosys netlist: %w", err)
	}
	n := &Netlist{
		modules:   map[string]map[string]int{},
		instances: map[string]map[string]string{},
		netSrc:    map[string]map[string]string{},
	}
	for name, m := range y.Modules {
		// Yosys writes the vendor cell library (SB_LUT4, ...) into the netlist as modules
		// marked blackbox or whitebox; those are primitives, not hierarchy.
		if attrTrue(m.Attributes["blackbox"]) || attrTrue(m.Attributes["whitebox"]) {
			continue
		}
		counts := map[string]int{}
		for _, c := range m.Cells {
			counts[c.Type]++
		}
		n.modules[name] = counts
		srcs := map[string]string{}
		for net, nn := range m.Netnames {
			if src, ok := nn.Attributes["src"].(string); ok {
				srcs[net] = src
			}
		}
		n.netSrc[name] = srcs
	}
	for name, m := range y.Modules {
		if _, ok := n.modules[name]; !ok {
			continue
		}
		inst := map[string]string{}
		for cell, c := range m.Cells {
			if _, ok := n.modules[c.Type]; ok {
				inst[cell] = c.Type
			}
		}
		n.instances[name] = inst
	}
	return n, nil
}

// Source returns where net, a flattened net name as nextpnr reports it ("u_dut.count_reg[3]"),
// is declared in the RTL, as "file.v:LINE" with the file's base name; "" if the netlist does
// not say. Names are resolved from module top down through instance names.
func (n *Netlist) Source(top, net string) string {
	if i := strings.LastIndexByte(net, '['); i > 0 && strings.HasSuffix(net, "]") {
		net = net[:i]
	}
	mod := top
	for depth := 0; depth < 64; depth++ {
		if src, ok := n.netSrc[mod][net]; ok {
			return shortSrc(src)
		}
		head, rest, ok := strings.Cut(net, ".")
		if !ok {
			return ""
		}
		next, ok := n.instances[mod][head]
		if !ok {
			return ""
		}
		mod, net = next, rest
	}
	return ""
}

// shortSrc turns a Yosys src attribute ("/a/b/x.v:26.20-26.37|/usr/.../arith_map.v:33.26-33.27")
// into "x.v:26": the first location outside Yosys' own cell library, base name and line only.
func shortSrc(src string) string {
	for _, loc := range strings.Split(src, "|") {
		file, pos, ok := strings.Cut(loc, ":")
		if !ok || strings.Contains(filepath.ToSlash(file), "/share/yosys/") {
			continue
		}
		if line, _, _ := strings.Cut(pos, "."); line != "" {
			return filepath.Base(file) + ":" + line
		}
	}
	return ""
}

// attrTrue reads a Yosys JSON attribute as a boolean: a binary string ("000...1") or a number
// that is nonzero.
func attrTrue(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "1")
	case float64:
		return x != 0
	}
	return false
}

// Has reports whether the netlist contains module as a user (non-primitive) module.
func (n *Netlist) Has(module string) bool {
	_, ok := n.modules[module]
	return ok
}

// Cells counts the primitive cells of module, including those of every module instance inside
// it (recursively, each instance counted).
func (n *Netlist) Cells(module string) (map[string]int, error) {
	out := map[string]int{}
	if err := n.add(out, module, 1, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// OwnCells counts the primitive cells of module alone, leaving out module instances.
func (n *Netlist) OwnCells(module string) (map[string]int, error) {
	m, ok := n.modules[module]
	if !ok {
		return nil, fmt.Errorf("fpga: module %s is not in the netlist", module)
	}
	out := map[string]int{}
	for typ, c := range m {
		if !n.Has(typ) {
			out[typ] += c
		}
	}
	return out, nil
}

func (n *Netlist) add(out map[string]int, module string, mult int, stack []string) error {
	for _, s := range stack {
		if s == module {
			return fmt.Errorf("fpga: netlist hierarchy loops through %s", module)
		}
	}
	m, ok := n.modules[module]
	if !ok {
		return fmt.Errorf("fpga: module %s is not in the netlist", module)
	}
	for typ, c := range m {
		if n.Has(typ) {
			if err := n.add(out, typ, mult*c, append(stack, module)); err != nil {
				return err
			}
			continue
		}
		out[typ] += mult * c
	}
	return nil
}
