// Package mem is mrgen's memory module family: one behavioural Verilog model per memory kind
// (hdl.RAM, registered read; hdl.RegFile, combinational read), rendered once per shape used in
// a design. Every table, FIFO and array a block declares (hdl.Table) is an instance of one of
// these modules, so one file decides how a memory is built: FPGAs infer block RAM from it, the
// ASIC flow treats it as a macro, and a silicon team replaces it with its SRAM compiler's.
package mem

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// Template is the family's Verilog template (gen delimiters); its data is the hdl.Table.
//
//go:embed ram.v.tmpl
var Template string

// Source is the Go description this package's modules name in their banner.
const Source = "hdl/mem/mem.go"

// Module is the memory module of t's kind and shape.
func Module(t hdl.Table) *hdl.Module {
	read := "registered read (rdata one clock after re; the old contents on a read of the address written at the same edge)"
	if t.CollisionDontCare {
		read = "registered read (rdata one clock after re; undefined on a read of the address written at the same edge, " +
			"which the block never uses)"
	}
	if t.Kind == hdl.RegFile {
		read = "combinational read (flip-flops)"
	}
	ports := []hdl.Port{
		hdl.In("clk", 1, "clock"),
		hdl.In("we", 1, "write enable"),
		hdl.In("waddr", t.AddrWidth(), "write address"),
		hdl.In("wdata", t.Width, "write data"),
	}
	if t.Kind == hdl.RAM {
		ports = append(ports, hdl.In("re", 1, "read enable"))
	}
	ports = append(ports, hdl.In("raddr", t.AddrWidth(), "read address"), hdl.Out("rdata", t.Width, "read data"))
	return &hdl.Module{
		Name:   t.MemModule(),
		Source: Source,
		Doc: fmt.Sprintf("Memory of %d entries x %d bits (%d bits), one write port and one read port, %s. "+
			"Its contents have no reset: the blocks clear their tables themselves.", t.Depth, t.Width, t.Bits(), read),
		Clock: "clk",
		Ports: ports,
	}
}

// Ports are the port names of a kind's module in order, clock first.
func Ports(k hdl.MemKind) []string {
	if k == hdl.RegFile {
		return []string{"clk", "we", "waddr", "wdata", "raddr", "rdata"}
	}
	return []string{"clk", "we", "waddr", "wdata", "re", "raddr", "rdata"}
}

// Instance renders the instantiation of module m's table name, its ports connected as conns
// says (port -> expression; every port but the clock, which is m's). It is the template
// function memory: a template can only instantiate a table its module declares, with every
// port connected.
func Instance(m *hdl.Module, name string, conns map[string]any) (string, error) {
	t, ok := m.Table(name)
	if !ok {
		return "", fmt.Errorf("memory: module %s declares no table %q", m.Name, name)
	}
	if m.Clock == "" {
		return "", fmt.Errorf("memory: module %s has no clock for table %s", m.Name, name)
	}
	want := Ports(t.Kind)
	expr := map[string]string{"clk": m.Clock}
	for k, v := range conns {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("memory: table %s: port %s: connection %v is not a string", name, k, v)
		}
		expr[k] = s
	}
	var unknown []string
	for k := range expr {
		if !contains(want, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", fmt.Errorf("memory: table %s (%s): no port %s; ports: %s", name, t.Kind,
			strings.Join(unknown, ", "), strings.Join(want, ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  // %s: %d x %d bits, %s, read latency %d (memories.json)\n", t.Name, t.Depth, t.Width,
		t.Kind, t.ReadLatency())
	fmt.Fprintf(&b, "  %s %s (\n", t.MemModule(), t.Instance())
	for i, p := range want {
		e, ok := expr[p]
		if !ok {
			return "", fmt.Errorf("memory: table %s: port %s is not connected", name, p)
		}
		sep := ","
		if i == len(want)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    .%s(%s)%s\n", p, e, sep)
	}
	b.WriteString("  );")
	return b.String(), nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
