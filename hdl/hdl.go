// Package hdl holds the common vocabulary of mrgen's hardware descriptions: modules, their
// ports and parameters, and the facts (latency, initiation interval, tables) that every block
// states about itself. One package per block (hdl/sack, ...) builds a Module from the shared
// configuration; gen/ renders it, verilator/ builds a model from its port list, fpga/ wraps it.
package hdl

import (
	"fmt"
	"regexp"

	"github.com/mrgen/mrgen/golden/wire"
)

// In is an input port of w bits.
func In(name string, w int, doc string) Port { return Port{Name: name, Dir: Input, Width: w, Doc: doc} }

// Out is an output port of w bits.
func Out(name string, w int, doc string) Port {
	return Port{Name: name, Dir: Output, Width: w, Doc: doc}
}

// Direction of a port.
type Direction int

// Port directions.
const (
	Input Direction = iota
	Output
)

func (d Direction) String() string {
	if d == Input {
		return "input"
	}
	return "output"
}

// Port is one module port. Ports are listed clock first, then reset, then by interface.
type Port struct {
	Name  string
	Dir   Direction
	Width int    // bits, ≥1 (for a parameterised port: the width at the default parameter)
	Doc   string // what the port means, rendered as a comment
	// WidthParam, when set, names the parameter that gives the port's width ([WidthParam-1:0]).
	WidthParam string
}

// Param is one Verilog parameter or localparam.
type Param struct {
	Name  string
	Value int
	Doc   string
}

// Table describes one memory of a block: a table, FIFO or array. Every table is an instance
// of the memory module family (memory.go), rendered into the block by the template function
// memory; the banner, memories.json and the QoR flows read this description.
type Table struct {
	Name  string
	Depth int // entries
	Width int // bits per entry
	// Kind is RAM (registered read, the default) or RegFile (combinational read, flip-flops).
	Kind MemKind
	// CollisionDontCare (RAM only) says the block never uses what a read of the entry written
	// at the same edge returns (a FIFO reads only entries written cycles before, and drops a
	// read it did not issue): the memory may return anything then, so an FPGA maps it with no
	// read-during-write logic and a silicon team may use a macro with undefined collisions.
	CollisionDontCare bool
	Doc               string
}

// Module is a hardware block ready for rendering.
type Module struct {
	Name    string // Verilog module name, lower_snake_case
	Source  string // the Go description it came from, e.g. hdl/sack/sack.go
	Doc     string // one paragraph: what the block does and why
	Clock   string // clock port name ("" for a combinational module)
	Reset   string // reset port name, rst or rst_n ("" when the module has no reset)
	Ports   []Port
	Params  []Param
	Tables  []Table
	Latency int // cycles from an input handshake to its output
	II      int // initiation interval in cycles
	// EntryII is the initiation interval between two operations on one table entry, when it is
	// longer than II (a same-entry hazard holds the second); 0 when it is II.
	EntryII int
}

// Port returns the named port.
func (m *Module) Port(name string) (Port, bool) {
	for _, p := range m.Ports {
		if p.Name == name {
			return p, true
		}
	}
	return Port{}, false
}

var identRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
var paramRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Check validates names (lower_snake_case ports, UPPER_CASE parameters, no keyword, no
// duplicates) and widths. Every description calls it before rendering.
func (m *Module) Check() error {
	if !identRE.MatchString(m.Name) || IsKeyword(m.Name) {
		return fmt.Errorf("hdl: module name %q: must be lower_snake_case and not a Verilog keyword", m.Name)
	}
	seen := map[string]bool{}
	for _, p := range m.Ports {
		if !identRE.MatchString(p.Name) {
			return fmt.Errorf("hdl: module %s: port %q: must be lower_snake_case", m.Name, p.Name)
		}
		if IsKeyword(p.Name) {
			return fmt.Errorf("hdl: module %s: port %q: is a Verilog/SystemVerilog keyword", m.Name, p.Name)
		}
		if p.Width < 1 {
			return fmt.Errorf("hdl: module %s: port %s: width %d, must be ≥ 1", m.Name, p.Name, p.Width)
		}
		if seen[p.Name] {
			return fmt.Errorf("hdl: module %s: port %s declared twice", m.Name, p.Name)
		}
		seen[p.Name] = true
	}
	tables := map[string]bool{}
	for _, t := range m.Tables {
		if err := t.Check(); err != nil {
			return fmt.Errorf("hdl: module %s: %w", m.Name, err)
		}
		if tables[t.Name] {
			return fmt.Errorf("hdl: module %s: table %s declared twice", m.Name, t.Name)
		}
		tables[t.Name] = true
	}
	for _, p := range m.Params {
		if !paramRE.MatchString(p.Name) {
			return fmt.Errorf("hdl: module %s: parameter %q: must be UPPER_CASE", m.Name, p.Name)
		}
	}
	if _, ok := m.Port(m.Clock); m.Clock != "" && !ok {
		return fmt.Errorf("hdl: module %s: clock port %q missing", m.Name, m.Clock)
	}
	if _, ok := m.Port(m.Reset); m.Reset != "" && !ok {
		return fmt.Errorf("hdl: module %s: reset port %q missing", m.Name, m.Reset)
	}
	return nil
}

// Range renders a Verilog packed range for a width: "" for 1 bit, "[W-1:0]" otherwise.
func Range(width int) string {
	if width <= 1 {
		return ""
	}
	return fmt.Sprintf("[%d:0]", width-1)
}

// Words32 is the number of 32-bit words a port of this width occupies in the C ABI.
func Words32(width int) int { return (width + 31) / 32 }

// MinFrameBytes is the line-rate unit of every block: the smallest valid MetaRoCE frame on the
// datapath, in bytes (golden/wire: an untagged IPv4 NAK). A block keeps line rate when it takes
// one operation per port per MinFrameBeats cycles, for every traffic pattern.
const MinFrameBytes = wire.MinValidFrameLen

// MinFrameBeats is the minimum frame time in cycles at a datapath width in bits: 2 at 512 bits,
// 3 at 256, 5 at 128, 9 at 64.
func MinFrameBeats(datapathBits int) int {
	if datapathBits <= 0 {
		return 1
	}
	bytes := datapathBits / 8
	return (MinFrameBytes + bytes - 1) / bytes
}
