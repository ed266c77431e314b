package verilator

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// Field is the place of one port in a packed input or output buffer: Words 32-bit words from
// word Offset on, little-endian word order (word Offset holds bits 31:0 of the port). Bits of
// the top word above Width are padding. Field is a small value meant to be looked up once (with
// Layout.In or Layout.Out) and then used in hot loops without map lookups.
//
// The Field methods do no checking beyond Go's own bounds checks: buf must be a buffer of the
// layout's size (InWords for inputs, OutWords for outputs), or a larger one.
type Field struct {
	Name   string // port name
	Width  int    // bits
	Offset int    // first word in the buffer
	Words  int    // number of 32-bit words, hdl.Words32(Width)
}

// topMask is the mask of the valid bits of the field's top word.
func (f Field) topMask() uint32 {
	if r := f.Width % 32; r != 0 {
		return 1<<r - 1
	}
	return ^uint32(0)
}

// mask64 is the mask of the valid bits of the low 64 bits of the field.
func (f Field) mask64() uint64 {
	if f.Width >= 64 {
		return ^uint64(0)
	}
	return 1<<f.Width - 1
}

// Set stores v in the port, truncated to the port's width. For a port wider than 64 bits v
// fills the low 64 bits and the remaining words are cleared.
func (f Field) Set(buf []uint32, v uint64) {
	v &= f.mask64()
	w := buf[f.Offset : f.Offset+f.Words]
	w[0] = uint32(v)
	if len(w) > 1 {
		w[1] = uint32(v >> 32)
		clear(w[2:])
	}
}

// Get returns the port's value; for a port wider than 64 bits, its low 64 bits. Padding bits
// are masked off.
func (f Field) Get(buf []uint32) uint64 {
	w := buf[f.Offset : f.Offset+f.Words]
	v := uint64(w[0])
	if len(w) > 1 {
		v |= uint64(w[1]) << 32
	}
	return v & f.mask64()
}

// SetWords stores a little-endian word vector (v[0] = bits 31:0) in the port. Missing words are
// cleared; words beyond the port and bits above its width are dropped.
func (f Field) SetWords(buf []uint32, v []uint32) {
	w := buf[f.Offset : f.Offset+f.Words]
	n := copy(w, v)
	clear(w[n:])
	w[len(w)-1] &= f.topMask()
}

// GetWords returns a copy of the port's words, little-endian, padding bits cleared.
func (f Field) GetWords(buf []uint32) []uint32 {
	out := make([]uint32, f.Words)
	copy(out, buf[f.Offset:f.Offset+f.Words])
	out[len(out)-1] &= f.topMask()
	return out
}

// View returns the port's words inside buf without copying (writes go to buf). Padding bits
// are as the buffer holds them: the harness masks inputs and outputs, so in an output buffer
// filled by Step they are zero.
func (f Field) View(buf []uint32) []uint32 {
	return buf[f.Offset : f.Offset+f.Words : f.Offset+f.Words]
}

// Layout is the packing of a module's ports into the []uint32 buffers of Model.Step: every
// input except the clock, in port order, each padded to whole 32-bit words; the outputs the same
// way in their own buffer. It is the Go half of the C ABI; the generated harness is the other.
type Layout struct {
	inputs, outputs   []Field
	inIdx, outIdx     map[string]int
	inWords, outWords int
	clock             string
}

// NewLayout computes the packing of m's ports. It needs no tool and no build, so stimulus can
// be prepared before a model exists.
func NewLayout(m *hdl.Module) (*Layout, error) {
	if m == nil {
		return nil, errors.New("verilator: layout: nil module")
	}
	// A module without a clock (Clock "") is combinational: Step applies the inputs, evaluates
	// and returns the outputs.
	if m.Clock != "" {
		clk, ok := m.Port(m.Clock)
		if !ok {
			return nil, fmt.Errorf("verilator: layout of %s: clock port %q is not a port of the module", m.Name, m.Clock)
		}
		if clk.Dir != hdl.Input || clk.Width != 1 {
			return nil, fmt.Errorf("verilator: layout of %s: clock port %s must be a 1-bit input, is a %d-bit %s", m.Name, clk.Name, clk.Width, clk.Dir)
		}
	}
	l := &Layout{inIdx: map[string]int{}, outIdx: map[string]int{}, clock: m.Clock}
	for _, p := range m.Ports {
		if p.Width < 1 {
			return nil, fmt.Errorf("verilator: layout of %s: port %s: width %d, must be ≥ 1", m.Name, p.Name, p.Width)
		}
		if _, dup := l.inIdx[p.Name]; dup {
			return nil, fmt.Errorf("verilator: layout of %s: port %s declared twice", m.Name, p.Name)
		}
		if _, dup := l.outIdx[p.Name]; dup {
			return nil, fmt.Errorf("verilator: layout of %s: port %s declared twice", m.Name, p.Name)
		}
		switch {
		case m.Clock != "" && p.Name == m.Clock:
			continue
		case p.Dir == hdl.Input:
			f := Field{Name: p.Name, Width: p.Width, Offset: l.inWords, Words: hdl.Words32(p.Width)}
			l.inIdx[p.Name] = len(l.inputs)
			l.inputs = append(l.inputs, f)
			l.inWords += f.Words
		case p.Dir == hdl.Output:
			f := Field{Name: p.Name, Width: p.Width, Offset: l.outWords, Words: hdl.Words32(p.Width)}
			l.outIdx[p.Name] = len(l.outputs)
			l.outputs = append(l.outputs, f)
			l.outWords += f.Words
		default:
			return nil, fmt.Errorf("verilator: layout of %s: port %s: unsupported direction %d", m.Name, p.Name, int(p.Dir))
		}
	}
	return l, nil
}

// InWords is the size in words of one cycle's input buffer.
func (l *Layout) InWords() int { return l.inWords }

// OutWords is the size in words of one cycle's output buffer.
func (l *Layout) OutWords() int { return l.outWords }

// Clock is the name of the clock port, which the harness drives and the buffers leave out.
func (l *Layout) Clock() string { return l.clock }

// Inputs lists the packed input fields in buffer order.
func (l *Layout) Inputs() []Field { return append([]Field(nil), l.inputs...) }

// Outputs lists the packed output fields in buffer order.
func (l *Layout) Outputs() []Field { return append([]Field(nil), l.outputs...) }

// In returns the field of the named input port.
func (l *Layout) In(port string) (Field, error) {
	if i, ok := l.inIdx[port]; ok {
		return l.inputs[i], nil
	}
	return Field{}, l.unknown(port, "input")
}

// Out returns the field of the named output port.
func (l *Layout) Out(port string) (Field, error) {
	if i, ok := l.outIdx[port]; ok {
		return l.outputs[i], nil
	}
	return Field{}, l.unknown(port, "output")
}

func (l *Layout) unknown(port, dir string) error {
	if port == l.clock && port != "" {
		return fmt.Errorf("verilator: %s is the clock port, which the harness drives; it has no place in the buffers", port)
	}
	fs := l.inputs
	if dir == "output" {
		fs = l.outputs
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return fmt.Errorf("verilator: no %s port %q (%ss: %s)", dir, port, dir, strings.Join(names, ", "))
}

func checkLen(buf []uint32, words int, what string) error {
	if len(buf) < words {
		return fmt.Errorf("verilator: %s buffer has %d words, the layout needs %d", what, len(buf), words)
	}
	return nil
}

// Set stores v in the named input port of in. Unlike Field.Set it rejects a value that does
// not fit the port.
func (l *Layout) Set(in []uint32, port string, v uint64) error {
	f, err := l.In(port)
	if err != nil {
		return err
	}
	if err := checkLen(in, l.inWords, "input"); err != nil {
		return err
	}
	if f.Width < 64 && v>>f.Width != 0 {
		return fmt.Errorf("verilator: value %#x does not fit input %s (%d bits)", v, port, f.Width)
	}
	f.Set(in, v)
	return nil
}

// SetWords stores a little-endian word vector in the named input port of in. Missing words are
// cleared. Unlike Field.SetWords it rejects a vector that does not fit the port.
func (l *Layout) SetWords(in []uint32, port string, v []uint32) error {
	f, err := l.In(port)
	if err != nil {
		return err
	}
	if err := checkLen(in, l.inWords, "input"); err != nil {
		return err
	}
	if n := bitLen(v); n > f.Width {
		return fmt.Errorf("verilator: a %d-bit value does not fit input %s (%d bits)", n, port, f.Width)
	}
	f.SetWords(in, v)
	return nil
}

// Get returns the named output port's value from out; for a port wider than 64 bits, its low
// 64 bits (use GetWords for all of it).
func (l *Layout) Get(out []uint32, port string) (uint64, error) {
	f, err := l.Out(port)
	if err != nil {
		return 0, err
	}
	if err := checkLen(out, l.outWords, "output"); err != nil {
		return 0, err
	}
	return f.Get(out), nil
}

// GetWords returns a copy of the named output port's words from out, little-endian.
func (l *Layout) GetWords(out []uint32, port string) ([]uint32, error) {
	f, err := l.Out(port)
	if err != nil {
		return nil, err
	}
	if err := checkLen(out, l.outWords, "output"); err != nil {
		return nil, err
	}
	return f.GetWords(out), nil
}

// bitLen is the position of the highest set bit of a little-endian word vector, plus one.
func bitLen(v []uint32) int {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] != 0 {
			return 32*i + bits.Len32(v[i])
		}
	}
	return 0
}
