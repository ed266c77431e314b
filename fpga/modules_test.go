package fpga

import (
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// Descriptions of the Verilog modules under testdata/, port for port.

func counter32Module() *hdl.Module {
	return &hdl.Module{
		Name: "counter32", Source: "fpga/testdata/counter32.v", Clock: "clk", Reset: "rst",
		Ports: []hdl.Port{
			{Name: "clk", Dir: hdl.Input, Width: 1},
			{Name: "rst", Dir: hdl.Input, Width: 1},
			{Name: "en", Dir: hdl.Input, Width: 1},
			{Name: "load", Dir: hdl.Input, Width: 1},
			{Name: "load_value", Dir: hdl.Input, Width: 32},
			{Name: "count", Dir: hdl.Output, Width: 32},
			{Name: "wrap", Dir: hdl.Output, Width: 1},
		},
	}
}

func ramTableModule() *hdl.Module {
	return &hdl.Module{
		Name: "ram_table", Source: "fpga/testdata/ram_table.v", Clock: "clk", Reset: "rst",
		Ports: []hdl.Port{
			{Name: "clk", Dir: hdl.Input, Width: 1},
			{Name: "rst", Dir: hdl.Input, Width: 1},
			{Name: "wr_en", Dir: hdl.Input, Width: 1},
			{Name: "wr_addr", Dir: hdl.Input, Width: 8},
			{Name: "wr_data", Dir: hdl.Input, Width: 16},
			{Name: "rd_en", Dir: hdl.Input, Width: 1},
			{Name: "rd_addr", Dir: hdl.Input, Width: 8},
			{Name: "rd_valid", Dir: hdl.Output, Width: 1},
			{Name: "rd_data", Dir: hdl.Output, Width: 16},
		},
	}
}

// ramDeepModule is ram_table's port list with 13-bit addresses (writeRAMDeep).
func ramDeepModule() *hdl.Module {
	m := ramTableModule()
	m.Name = "ram_deep"
	for i, p := range m.Ports {
		if p.Name == "wr_addr" || p.Name == "rd_addr" {
			m.Ports[i].Width = 13
		}
	}
	return m
}

func pulseAsyncModule() *hdl.Module {
	return &hdl.Module{
		Name: "pulse_async", Source: "fpga/testdata/pulse_async.v", Clock: "clk", Reset: "rst_n",
		Ports: []hdl.Port{
			{Name: "clk", Dir: hdl.Input, Width: 1},
			{Name: "rst_n", Dir: hdl.Input, Width: 1},
			{Name: "level", Dir: hdl.Input, Width: 1},
			{Name: "pulse", Dir: hdl.Output, Width: 1},
		},
	}
}

// shapeModule describes a block with the given data input and output widths (besides clk and
// rst), clock and reset declared last so the wrapper must reorder them.
func shapeModule(name, reset string, ins, outs []int) *hdl.Module {
	m := &hdl.Module{Name: name, Source: "fpga/modules_test.go", Clock: "clk", Reset: reset}
	for i, w := range ins {
		m.Ports = append(m.Ports, hdl.Port{Name: fmt.Sprintf("in%d", i), Dir: hdl.Input, Width: w})
	}
	for i, w := range outs {
		m.Ports = append(m.Ports, hdl.Port{Name: fmt.Sprintf("out%d", i), Dir: hdl.Output, Width: w})
	}
	m.Ports = append(m.Ports, hdl.Port{Name: "clk", Dir: hdl.Input, Width: 1})
	if reset != "" {
		m.Ports = append(m.Ports, hdl.Port{Name: reset, Dir: hdl.Input, Width: 1})
	}
	return m
}

// shapeVerilog renders a lint-clean module for shapeModule's description. Every output bit k
// is a register; with as many output as input bits, output bit k is input bit k one cycle
// later (inputs and outputs each concatenated in declaration order, the first port in the
// least significant bits), which the simulation test relies on. Otherwise the register shifts
// in the XOR of all inputs (or, with no inputs, counts), so that every input bit is used.
func shapeVerilog(m *hdl.Module) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	var inNames, outNames []string
	inBits, outBits := 0, 0
	p("`resetall")
	p("`timescale 1ns / 1ps")
	p("`default_nettype none")
	p("")
	p("// %s: a test block for the board-top wrapper.", m.Name)
	p("module %s (", m.Name)
	for i, port := range m.Ports {
		sep := ","
		if i == len(m.Ports)-1 {
			sep = ""
		}
		kind := "input  wire"
		if port.Dir == hdl.Output {
			kind = "output wire"
		}
		p("  %s %s%s%s", kind, rangeSp(port.Width), port.Name, sep)
		switch {
		case port.Name == m.Clock || port.Name == m.Reset:
		case port.Dir == hdl.Input:
			inNames = append([]string{port.Name}, inNames...)
			inBits += port.Width
		default:
			outNames = append([]string{port.Name}, outNames...)
			outBits += port.Width
		}
	}
	p(");")
	p("")
	p("  reg %sstate_reg;", rangeSp(outBits))
	if inBits > 0 {
		p("  wire %sin_all = {%s};", rangeSp(inBits), strings.Join(inNames, ", "))
	}
	p("")
	active := m.Reset
	edge := ""
	if strings.HasSuffix(m.Reset, "_n") {
		active = "!" + m.Reset
		edge = " or negedge " + m.Reset
	}
	p("  always @(posedge %s%s) begin", m.Clock, edge)
	p("    if (%s) begin", active)
	p("      state_reg <= %d'd0;", outBits)
	p("    end else begin")
	switch {
	case inBits == outBits:
		p("      state_reg <= in_all;")
	case inBits == 0:
		p("      state_reg <= state_reg + %d'd1;", outBits)
	case outBits == 1:
		p("      state_reg <= ^in_all;")
	default:
		p("      state_reg <= {state_reg[%d:0], ^in_all};", outBits-2)
	}
	p("    end")
	p("  end")
	p("")
	p("  assign {%s} = state_reg;", strings.Join(outNames, ", "))
	p("")
	p("endmodule")
	p("")
	p("`resetall")
	return b.String()
}
