package qor

import (
	"fmt"
	"math"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// MacroModel is the timing model of a memory macro in the ASIC flow. A memory compiler's
// figures are proprietary, so the model is stated in FO4 delays of the cell library and scaled
// with the macro's size (docs/qor.md, "Memory macros"):
//
//   - clock to rdata: ReadFO4At1K FO4 for a 1-Kbit macro, plus FO4PerDoubling for every
//     doubling of its bits. The slope is Amrutur and Horowitz's ("Speed and power scaling of
//     SRAMs", IEEE JSSC 35(2), 2000: about one gate delay per doubling of the array up to
//     1 Mbit with an optimal organisation); the intercept, 12 FO4 (1.2 ns in osu018), is
//     mrgen's assumption, within the 1-2 ns of small compiler SRAMs of the 0.18 um generation.
//   - setup of every input to the clock: SetupFO4; hold: HoldFO4.
//   - rdata drives its load like a 4x buffer: DriveNSPerPF ns per pF.
//   - area: AreaPerBit um^2 per bit plus AreaFixed for the periphery (an estimate).
type MacroModel struct {
	FO4NS          float64
	ReadFO4At1K    float64
	FO4PerDoubling float64
	SetupFO4       float64
	HoldFO4        float64
	DriveNSPerPF   float64
	InputCapPF     float64
	ClockCapPF     float64
	AreaPerBit     float64
	AreaFixed      float64
}

// DefaultMacroModel is the model in osu018 (FO4 about 100 ps: docs/toolchain.md, an INVX1
// driving four INVX1 at 93-105 ps a stage in OpenSTA).
var DefaultMacroModel = MacroModel{
	FO4NS: 0.1, ReadFO4At1K: 12, FO4PerDoubling: 1, SetupFO4: 3, HoldFO4: 0.5,
	DriveNSPerPF: 1.5, InputCapPF: 0.01, ClockCapPF: 0.05, AreaPerBit: 6, AreaFixed: 20000,
}

// ClockToQNS is the macro's clock-to-rdata delay at no load, ns.
func (m MacroModel) ClockToQNS(t hdl.Table) float64 {
	doublings := math.Log2(float64(t.Bits()) / 1024)
	if doublings < 0 {
		doublings = 0
	}
	return (m.ReadFO4At1K + m.FO4PerDoubling*doublings) * m.FO4NS
}

// SetupNS is every input's setup time to the clock, ns.
func (m MacroModel) SetupNS() float64 { return m.SetupFO4 * m.FO4NS }

// Area is the macro's area estimate, um^2.
func (m MacroModel) Area(t hdl.Table) float64 { return m.AreaPerBit*float64(t.Bits()) + m.AreaFixed }

// Liberty renders the library of the macros of the given shapes (one cell per memory module,
// bus pins as scalar pins name_i_), for OpenSTA and blifFanout.
func (m MacroModel) Liberty(tables []hdl.Table) string {
	var b strings.Builder
	b.WriteString(`/* Timing models of mrgen's memory macros: black boxes for ASIC timing (mrgen qor).
 * Generated from qor.MacroModel; the figures' sources are in docs/qor.md. Not a compiler's
 * characterisation: a silicon team replaces these with its SRAM compiler's libraries. */
library (mrgen_macros) {
  delay_model : table_lookup;
  time_unit : "1ns";
  voltage_unit : "1V";
  current_unit : "1mA";
  pulling_resistance_unit : "1kohm";
  leakage_power_unit : "1nW";
  capacitive_load_unit (1, pf);
  nom_process : 1;
  nom_voltage : 1.8;
  nom_temperature : 25;
  slew_lower_threshold_pct_rise : 10;
  slew_upper_threshold_pct_rise : 90;
  slew_lower_threshold_pct_fall : 10;
  slew_upper_threshold_pct_fall : 90;
  input_threshold_pct_rise : 50;
  input_threshold_pct_fall : 50;
  output_threshold_pct_rise : 50;
  output_threshold_pct_fall : 50;
  lu_table_template (load_1d) {
    variable_1 : total_output_net_capacitance;
    index_1 ("0.001, 0.05, 0.2, 1.0");
  }
`)
	seen := map[string]bool{}
	for _, t := range tables {
		if seen[t.MemModule()] {
			continue
		}
		seen[t.MemModule()] = true
		m.cell(&b, t)
	}
	b.WriteString("}\n")
	return b.String()
}

func (m MacroModel) cell(b *strings.Builder, t hdl.Table) {
	fmt.Fprintf(b, "  cell (%s) {\n", t.MemModule())
	fmt.Fprintf(b, "    area : %.1f;\n    dont_touch : true;\n    dont_use : true;\n    interface_timing : true;\n", m.Area(t))
	fmt.Fprintf(b, "    pin (clk) {\n      direction : input;\n      clock : true;\n      capacitance : %.4f;\n    }\n", m.ClockCapPF)
	in := func(name string) {
		fmt.Fprintf(b, "    pin (%s) {\n      direction : input;\n      capacitance : %.4f;\n", name, m.InputCapPF)
		for _, c := range []struct {
			typ string
			v   float64
		}{{"setup_rising", m.SetupNS()}, {"hold_rising", m.HoldFO4 * m.FO4NS}} {
			fmt.Fprintf(b, "      timing () {\n        related_pin : \"clk\";\n        timing_type : %s;\n", c.typ)
			fmt.Fprintf(b, "        rise_constraint (scalar) { values (\"%.4f\"); }\n", c.v)
			fmt.Fprintf(b, "        fall_constraint (scalar) { values (\"%.4f\"); }\n      }\n", c.v)
		}
		b.WriteString("    }\n")
	}
	bus := func(name string, w int) []string {
		out := make([]string, w)
		for i := range out {
			out[i] = fmt.Sprintf("%s_%d_", name, i)
		}
		return out
	}
	in("we")
	for _, p := range bus("waddr", t.AddrWidth()) {
		in(p)
	}
	for _, p := range bus("wdata", t.Width) {
		in(p)
	}
	in("re")
	for _, p := range bus("raddr", t.AddrWidth()) {
		in(p)
	}
	cq := m.ClockToQNS(t)
	delays := make([]string, 4)
	slews := make([]string, 4)
	for i, c := range []float64{0.001, 0.05, 0.2, 1.0} {
		delays[i] = fmt.Sprintf("%.4f", cq+m.DriveNSPerPF*c)
		slews[i] = fmt.Sprintf("%.4f", 0.05+2*m.DriveNSPerPF*c)
	}
	for _, p := range bus("rdata", t.Width) {
		fmt.Fprintf(b, "    pin (%s) {\n      direction : output;\n      max_capacitance : 1.0;\n", p)
		b.WriteString("      timing () {\n        related_pin : \"clk\";\n        timing_type : rising_edge;\n")
		for _, k := range []string{"cell_rise", "cell_fall"} {
			fmt.Fprintf(b, "        %s (load_1d) { values (\"%s\"); }\n", k, strings.Join(delays, ", "))
		}
		for _, k := range []string{"rise_transition", "fall_transition"} {
			fmt.Fprintf(b, "        %s (load_1d) { values (\"%s\"); }\n", k, strings.Join(slews, ", "))
		}
		b.WriteString("      }\n    }\n")
	}
	b.WriteString("  }\n")
}

// MacroStubs is the Verilog of the macros as black boxes, which Yosys keeps as cells.
func MacroStubs(tables []hdl.Table) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, t := range tables {
		if seen[t.MemModule()] {
			continue
		}
		seen[t.MemModule()] = true
		fmt.Fprintf(&b, "(* blackbox *)\nmodule %s (\n  input wire clk,\n  input wire we,\n", t.MemModule())
		fmt.Fprintf(&b, "  input wire [%d:0] waddr,\n  input wire [%d:0] wdata,\n  input wire re,\n", t.AddrWidth()-1, t.Width-1)
		fmt.Fprintf(&b, "  input wire [%d:0] raddr,\n  output wire [%d:0] rdata\n);\nendmodule\n\n", t.AddrWidth()-1, t.Width-1)
	}
	return b.String()
}
