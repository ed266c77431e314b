package fpga

import (
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/constraints"
	"github.com/mrgen/mrgen/hdl"
)

// Wrapper port names. The reset pin takes the wrapped block's reset port name instead.
const (
	ClockPin    = "clk"
	SerialInPin = "sin"
	OutPin      = "dout"
)

// FoldPins is the number of XOR-folded output pins: the same for every block, so that numbers
// are comparable. It equals the number of output pins every board's pin file provides.
const FoldPins = constraints.OutPins

// foldFanIn is the number of bits one fold stage XORs into one: a single 4-input LUT.
const foldFanIn = 4

// WrapperOptions fills the generated-file banner.
type WrapperOptions struct {
	Version    string // mrgen version; "" renders as "dev"
	Command    string // command line that produced the wrapper; "" leaves the line out
	ConfigHash string // configuration hash; "" leaves the line out
	// RegisteredOutputs says every output of the block comes straight from a flip-flop (as
	// mrgen's blocks do). Fold level 0 then XORs the block's outputs directly instead of first
	// capturing them in a register of its own: the paths stay one LUT between flip-flops, and a
	// wide block does not pay hundreds of capture flip-flops that would crowd the device.
	RegisteredOutputs bool
}

// Wrapper is the board top that place-and-route sees for one block. A block has more I/O than
// any package has pins, so every block is measured inside the same scheme:
//
//   - the board clock and reset go straight to the block;
//   - the serial input sin shifts through a chain register as wide as all of the block's other
//     inputs together, and the chain's bits drive those inputs;
//   - every output bit of the block is registered (fold level 0) and then XOR-folded through
//     registered levels, each bit of a level the XOR of at most four bits of the level before
//     (one LUT4), down to FoldPins registered dout pins.
//
// Every input is driven by a flip-flop and every output bit reaches a pin, so synthesis removes
// nothing, and no wrapper path has more than one LUT between flip-flops, so the block, not the
// wrapper, sets Fmax.
type Wrapper struct {
	Name      string // <block>_board_top
	Block     string // the wrapped module
	Reset     string // the reset pin: the block's reset port name
	ChainBits int    // width of the input chain: all input bits but clock and reset
	OutBits   int    // all output bits of the block
	// FoldLevels are the widths of the registered levels from the capture register (OutBits)
	// to the dout register (min(OutBits, FoldPins)).
	FoldLevels []int
	Pins       []string // top-level pin names as place-and-route sees them, clock first
	Verilog    string
	// Capture says fold level 0 is a register (the block's outputs may be combinational);
	// without it level 0 is the block's registered outputs themselves.
	Capture bool
}

// FFs is the wrapper's own flip-flop count by construction: the input chain plus every fold
// level. Synth reports the measured overhead separately; the two agree when synthesis keeps
// every wrapper register, which the scheme guarantees.
func (w *Wrapper) FFs() int {
	n := w.ChainBits
	for i, l := range w.FoldLevels {
		if i == 0 && !w.Capture {
			continue
		}
		n += l
	}
	return n
}

// FileName is the wrapper's Verilog file name: the module name, as Verilator's DECLFILENAME
// rule wants.
func (w *Wrapper) FileName() string { return w.Name + ".v" }

// foldLevels returns the widths of the fold levels for outBits output bits.
func foldLevels(outBits int) []int {
	levels := []int{outBits}
	for w := outBits; w > FoldPins; {
		w = max(FoldPins, (w+foldFanIn-1)/foldFanIn)
		levels = append(levels, w)
	}
	return levels
}

// NewWrapper generates the board-top wrapper for m.
func NewWrapper(m *hdl.Module, opt WrapperOptions) (*Wrapper, error) {
	if m == nil {
		return nil, fmt.Errorf("fpga: wrapper: no module")
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("fpga: wrapper: %w", err)
	}
	if m.Clock == m.Reset {
		return nil, fmt.Errorf("fpga: wrapper for %s: clock and reset are the same port %q", m.Name, m.Clock)
	}
	pins := []string{m.Clock}
	if m.Reset != "" { // a block without a reset (a pipeline of data registers) has no reset pin
		pins = append(pins, m.Reset)
	}
	for _, name := range pins {
		p, _ := m.Port(name)
		if p.Dir != hdl.Input || p.Width != 1 {
			return nil, fmt.Errorf("fpga: wrapper for %s: %s must be a 1-bit input, is a %d-bit %s",
				m.Name, name, p.Width, p.Dir)
		}
	}
	switch m.Reset {
	case ClockPin, SerialInPin, OutPin:
		return nil, fmt.Errorf("fpga: wrapper for %s: reset port %q collides with the wrapper pin of that name",
			m.Name, m.Reset)
	}
	w := &Wrapper{Name: m.Name + "_board_top", Block: m.Name, Reset: m.Reset, Capture: !opt.RegisteredOutputs}
	var outs []hdl.Port
	for _, p := range m.Ports {
		switch {
		case p.Name == m.Clock || p.Name == m.Reset:
		case p.Dir == hdl.Input:
			w.ChainBits += p.Width
		default:
			outs = append(outs, p)
			w.OutBits += p.Width
		}
	}
	if w.OutBits == 0 {
		return nil, fmt.Errorf("fpga: wrapper for %s: the block has no outputs, so synthesis would remove it", m.Name)
	}
	w.FoldLevels = foldLevels(w.OutBits)
	doutBits := w.FoldLevels[len(w.FoldLevels)-1]
	w.Pins = append([]string{ClockPin}, pins[1:]...) // the board clock, then the reset pin if any
	if w.ChainBits > 0 {
		w.Pins = append(w.Pins, SerialInPin)
	}
	if doutBits == 1 {
		w.Pins = append(w.Pins, OutPin)
	} else {
		for i := range doutBits {
			w.Pins = append(w.Pins, fmt.Sprintf("%s[%d]", OutPin, i))
		}
	}
	w.Verilog = renderWrapper(m, w, outs, opt)
	return w, nil
}

// bits renders bits [lo, lo+width) of a vector named name that is total bits wide.
func bits(name string, total, lo, width int) string {
	switch {
	case total == 1:
		return name
	case width == 1:
		return fmt.Sprintf("%s[%d]", name, lo)
	default:
		return fmt.Sprintf("%s[%d:%d]", name, lo+width-1, lo)
	}
}

func foldName(level int) string { return fmt.Sprintf("fold%d_reg", level) }

// renderWrapper writes the wrapper's Verilog; outs are the block's output ports in declaration
// order.
func renderWrapper(m *hdl.Module, w *Wrapper, outs []hdl.Port, opt WrapperOptions) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	version := opt.Version
	if version == "" {
		version = "dev"
	}
	doutBits := w.FoldLevels[len(w.FoldLevels)-1]

	p("`resetall")
	p("`timescale 1ns / 1ps")
	p("`default_nettype none")
	p("")
	p("// %s: board-top wrapper for place-and-route of %s.", w.Name, m.Name)
	p("//")
	p("// generated by mrgen %s - do not edit", version)
	if opt.Command != "" {
		p("// command: %s", opt.Command)
	}
	if opt.ConfigHash != "" {
		p("// configuration: %s", opt.ConfigHash)
	}
	src := m.Source
	if src == "" {
		src = "(not given)"
	}
	p("// from: fpga/wrapper.go, wrapping %s described in %s", m.Name, src)
	p("//")
	clockReset := m.Clock + " and " + m.Reset
	if m.Reset == "" {
		clockReset = m.Clock + " (it has no reset)"
	}
	text := fmt.Sprintf("A block has more I/O than a package has pins, so every block is measured in "+
		"this same wrapper. The serial input %s shifts through a %d-bit chain register whose bits "+
		"drive all inputs of %s but %s. Its %d output bits are registered and XOR-folded "+
		"through registered levels (%s bits), each bit the XOR of at most %d bits of the level "+
		"before: one LUT4 between flip-flops. Nothing is optimised away and the block, not the "+
		"wrapper, limits Fmax. The wrapper adds %d flip-flops.",
		SerialInPin, w.ChainBits, m.Name, clockReset, w.OutBits,
		joinInts(w.FoldLevels, " -> "), foldFanIn, w.FFs())
	if w.ChainBits == 0 {
		text += fmt.Sprintf(" %s has no inputs besides clock and reset, so the wrapper has no %s pin.",
			m.Name, SerialInPin)
	}
	for _, l := range wrapText(text, 100-len("// ")) {
		p("// %s", l)
	}
	p("module %s (", w.Name)
	type decl struct{ kind, rng, name, doc string }
	decls := []decl{{"input ", "", ClockPin, fmt.Sprintf("board clock, drives %s's %s", m.Name, m.Clock)}}
	if m.Reset != "" {
		decls = append(decls, decl{"input ", "", m.Reset, "reset, passed straight to " + m.Name})
	}
	if w.ChainBits > 0 {
		decls = append(decls, decl{"input ", "", SerialInPin, "serial input, shifted into the input chain"})
	}
	decls = append(decls, decl{"output", hdl.Range(doutBits), OutPin, "XOR-fold of every output bit, registered"})
	rngW := 0
	for _, d := range decls {
		rngW = max(rngW, len(d.rng))
	}
	lines := make([]string, len(decls))
	lineW := 0
	for i, d := range decls {
		sep := ","
		if i == len(decls)-1 {
			sep = ""
		}
		rng := ""
		if rngW > 0 {
			rng = fmt.Sprintf("%-*s ", rngW, d.rng)
		}
		lines[i] = fmt.Sprintf("  %s wire %s%s%s", d.kind, rng, d.name, sep)
		lineW = max(lineW, len(lines[i]))
	}
	for i, d := range decls {
		p("%-*s  // %s", lineW, lines[i], d.doc)
	}
	p(");")
	p("")

	if w.ChainBits > 0 {
		p("  // Input chain: bit 0 holds the newest bit of %s.", SerialInPin)
		p("  reg %schain_reg;", rangeSp(w.ChainBits))
		p("")
		p("  always @(posedge %s) begin", ClockPin)
		if w.ChainBits == 1 {
			p("    chain_reg <= %s;", SerialInPin)
		} else {
			p("    chain_reg <= {chain_reg[%d:0], %s};", w.ChainBits-2, SerialInPin)
		}
		p("  end")
		p("")
	}

	for _, o := range outs {
		p("  wire %sdut_%s;", rangeSp(o.Width), o.Name)
	}
	p("")
	p("  %s u_dut (", m.Name)
	// Clock and reset first, as HDL_STYLE asks; then the other ports in declaration order.
	ordered := []string{fmt.Sprintf(".%s(%s)", m.Clock, ClockPin)}
	if m.Reset != "" {
		ordered = append(ordered, fmt.Sprintf(".%s(%s)", m.Reset, m.Reset))
	}
	lo := 0
	for _, port := range m.Ports {
		switch {
		case port.Name == m.Clock || port.Name == m.Reset:
		case port.Dir == hdl.Input:
			ordered = append(ordered, fmt.Sprintf(".%s(%s)", port.Name, bits("chain_reg", w.ChainBits, lo, port.Width)))
			lo += port.Width
		default:
			ordered = append(ordered, fmt.Sprintf(".%s(dut_%s)", port.Name, port.Name))
		}
	}
	for i, c := range ordered {
		sep := ","
		if i == len(ordered)-1 {
			sep = ""
		}
		p("    %s%s", c, sep)
	}
	p("  );")
	p("")

	if w.Capture {
		p("  // Fold level 0 captures every output bit; each later level XORs bits that lie one level")
		p("  // width apart, so every output bit reaches exactly one %s pin.", OutPin)
	} else {
		p("  // Fold level 0 is the block's outputs (registered inside the block); each later level XORs")
		p("  // bits that lie one level width apart, so every output bit reaches exactly one %s pin.", OutPin)
	}
	for i, lw := range w.FoldLevels {
		kind := "reg"
		if i == 0 && !w.Capture {
			kind = "wire"
		}
		p("  %s %s%s;", kind, rangeSp(lw), foldName(i))
	}
	p("")
	// Level 0: the outputs, last-declared in the most significant bits.
	assign, lhs := "    %s <= ", "    %s <= {"
	if !w.Capture {
		assign, lhs = "  assign %s = ", "  assign %s = {"
	} else {
		p("  always @(posedge %s) begin", ClockPin)
	}
	if len(outs) == 1 {
		p(assign+"dut_%s;", foldName(0), outs[0].Name)
	} else {
		p(lhs, foldName(0))
		for i := len(outs) - 1; i >= 0; i-- {
			sep := ","
			if i == 0 {
				sep = ""
			}
			p("      dut_%s%s", outs[i].Name, sep)
		}
		if w.Capture {
			p("    };")
		} else {
			p("  };")
		}
	}
	if !w.Capture {
		p("")
		p("  always @(posedge %s) begin", ClockPin)
	}
	for lvl := 1; lvl < len(w.FoldLevels); lvl++ {
		in, out := w.FoldLevels[lvl-1], w.FoldLevels[lvl]
		src := foldName(lvl - 1)
		var terms []string
		for lo := 0; lo < in; lo += out {
			n := min(out, in-lo)
			t := bits(src, in, lo, n)
			if n < out {
				t = fmt.Sprintf("{%d'b0, %s}", out-n, t)
			}
			terms = append(terms, t)
		}
		stmt := []string{fmt.Sprintf("    %s <= %s", foldName(lvl), terms[0])}
		for _, t := range terms[1:] {
			stmt = append(stmt, "      ^ "+t)
		}
		p("%s;", strings.Join(stmt, "\n"))
	}
	p("  end")
	p("")
	p("  assign %s = %s;", OutPin, foldName(len(w.FoldLevels)-1))
	p("")
	p("endmodule")
	p("")
	p("`resetall")
	return b.String()
}

// rangeSp renders a declaration's packed range followed by a space, or nothing for one bit.
func rangeSp(width int) string {
	if width <= 1 {
		return ""
	}
	return hdl.Range(width) + " "
}

// wrapText breaks text into lines of at most width columns at spaces.
func wrapText(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}

// PCF renders the wrapper's pin constraints for board from the board's pin file in
// constraints/.
func (w *Wrapper) PCF(board Board) (string, error) {
	pm, err := constraints.Pins(board.Name)
	if err != nil {
		return "", fmt.Errorf("fpga: pins for %s on %s: %w", w.Name, board.Name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s.pcf: pins of %s on %s (%s, package %s).\n", w.Name, w.Name, board.Name, board.Device, board.Package)
	fmt.Fprintf(&b, "# Rendered by mrgen from constraints/%s.pcf - do not edit.\n", board.Name)
	for _, pin := range w.Pins {
		var loc string
		switch {
		case pin == ClockPin:
			loc = pm.Clock
		case pin == w.Reset:
			loc = pm.Reset
		case pin == SerialInPin:
			loc = pm.SerialIn
		case pin == OutPin:
			loc = pm.Out[0]
		default:
			var i int
			if _, err := fmt.Sscanf(pin, OutPin+"[%d]", &i); err != nil || i < 0 || i >= len(pm.Out) {
				return "", fmt.Errorf("fpga: %s: pin %q has no place on %s", w.Name, pin, board.Name)
			}
			loc = pm.Out[i]
		}
		fmt.Fprintf(&b, "set_io %s %s\n", pin, loc)
	}
	return b.String(), nil
}

// SDC renders the wrapper's clock constraint at targetMHz.
func (w *Wrapper) SDC(targetMHz int) (string, error) {
	s, err := constraints.SDC(ClockPin, targetMHz,
		fmt.Sprintf("%s.sdc: clock of %s, target %d MHz. Generated by mrgen - do not edit.", w.Name, w.Name, targetMHz))
	if err != nil {
		return "", fmt.Errorf("fpga: %w", err)
	}
	return s, nil
}
