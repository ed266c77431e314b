// Package crc generates the parallel update logic of MetaRoCE's ICRC: CRC-32 (IEEE 802.3,
// reflected, polynomial 0xEDB88320) over D data bits per clock, as explicit XOR equations.
//
// The CRC register update for one beat is linear over GF(2): next = A·crc ⊕ B·data, where the
// initial value and the final inversion live outside it. The generator evaluates the CRC that
// golden/wire's ICRC uses (Go's hash/crc32, IEEE) on unit vectors to find the columns of A and
// B, so there is no second CRC implementation and the equations are correct by construction for
// any width; the tests check them against hash/crc32 and, through Verilator, the Verilog.
//
// Bit order: data bit k is bit k%8 of byte k/8, byte 0 first on the wire. On an AXI-Stream bus
// that is tdata[k] (byte lane 0 = tdata[7:0]), so the parser feeds tdata straight in.
package crc

import (
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// Raw is the CRC register after feeding data to it (no initial value, no final inversion):
// hash/crc32's IEEE update with its built-in inversions undone. data is byte 0 first, each byte
// LSB first.
func Raw(crc uint32, data []byte) uint32 { return ^crc32.Update(^crc, crc32.IEEETable, data) }

// Equations is the parallel update for one data width: bit i of the next register is the XOR
// of the register bits State[i] and the data bits Data[i].
type Equations struct {
	Width int // data bits per update, a multiple of 8
	State [32][]int
	Data  [32][]int
}

// Generate derives the equations for width data bits (a multiple of 8, 8..1024).
func Generate(width int) (*Equations, error) {
	if width < 8 || width > 1024 || width%8 != 0 {
		return nil, fmt.Errorf("crc: data width %d: must be a multiple of 8 in 8..1024", width)
	}
	e := &Equations{Width: width}
	zero := make([]byte, width/8)
	for j := 0; j < 32; j++ {
		col := Raw(1<<j, zero)
		for i := 0; i < 32; i++ {
			if col>>i&1 == 1 {
				e.State[i] = append(e.State[i], j)
			}
		}
	}
	buf := make([]byte, width/8)
	for k := 0; k < width; k++ {
		clear(buf)
		buf[k/8] = 1 << (k % 8)
		col := Raw(0, buf)
		for i := 0; i < 32; i++ {
			if col>>i&1 == 1 {
				e.Data[i] = append(e.Data[i], k)
			}
		}
	}
	return e, nil
}

// Apply evaluates the equations in Go (the model of the generated logic).
func (e *Equations) Apply(crc uint32, data []byte) uint32 {
	var next uint32
	for i := 0; i < 32; i++ {
		var v uint32
		for _, j := range e.State[i] {
			v ^= crc >> j & 1
		}
		for _, k := range e.Data[i] {
			v ^= uint32(data[k/8]>>(k%8)) & 1
		}
		next |= v << i
	}
	return next
}

// Terms is the number of XOR inputs of the widest output bit, a measure of the logic depth
// (log4 of it LUT4 levels).
func (e *Equations) Terms() int {
	m := 0
	for i := 0; i < 32; i++ {
		m = max(m, len(e.State[i])+len(e.Data[i]))
	}
	return m
}

// Module describes the combinational update module crc32_d<width>.
func Module(width int) *hdl.Module {
	return &hdl.Module{
		Name:   fmt.Sprintf("crc32_d%d", width),
		Source: "hdl/crc/crc.go",
		Doc: fmt.Sprintf("CRC-32 (IEEE 802.3, reflected, 0xEDB88320) update over %d data bits per clock, as "+
			"one XOR equation per register bit, derived from the bit-serial definition. Combinational. "+
			"The initial value (all ones) and the final inversion are the caller's.", width),
		Ports: []hdl.Port{
			{Name: "crc_in", Dir: hdl.Input, Width: 32, Doc: "CRC register before the beat"},
			{Name: "data", Dir: hdl.Input, Width: width, Doc: "beat data, byte 0 in bits 7:0"},
			{Name: "crc_out", Dir: hdl.Output, Width: 32, Doc: "CRC register after the beat"},
		},
	}
}

// Template is the Verilog template of the module (gen delimiters {% %}); its data is the
// *Equations.
const Template = "`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n" +
	"// Each output bit is the parity of the register bits and data bits whose unit vectors reach\n" +
	"// it, written as a reduction XOR over a constant mask (S_<i> over crc_in, D_<i> over data).\n" +
	"// Synthesis builds each as a balanced tree: log2 of its inputs deep.\n" +
	"module {% .M.Name %} (\n" +
	"{%- $n := len .M.Ports %}{% range $i, $p := .M.Ports %}\n{% portDecl $p (eq (add1 $i) $n) %}{% end %}\n);\n\n" +
	"{% range $i, $eq := .D.Lines %}{% $eq %}\n{% end %}\n" +
	"endmodule\n\n`resetall\n"

// Lines renders the equations for the template: per output bit, its masks as localparams and
// one assign.
func (e *Equations) Lines() []string {
	var out []string
	for i := 0; i < 32; i++ {
		out = append(out,
			fmt.Sprintf("  // crc_out[%d]: %d register bits, %d data bits.", i, len(e.State[i]), len(e.Data[i])),
			maskParam(fmt.Sprintf("S_%d", i), 32, e.State[i]),
			maskParam(fmt.Sprintf("D_%d", i), e.Width, e.Data[i]),
			fmt.Sprintf("  assign crc_out[%d] = ^(crc_in & S_%d) ^ ^(data & D_%d);", i, i, i))
	}
	return out
}

// maskParam renders a localparam of width bits with the listed bits set, as a concatenation of
// 64-bit hex words (most significant first), four to a line.
func maskParam(name string, width int, set []int) string {
	words := make([]uint64, (width+63)/64)
	for _, k := range set {
		words[k/64] |= 1 << (k % 64)
	}
	if width <= 64 {
		return fmt.Sprintf("  localparam [%d:0] %s = %d'h%0*x;", width-1, name, width, (width+3)/4, words[0])
	}
	var parts []string
	for w := len(words) - 1; w >= 0; w-- {
		parts = append(parts, fmt.Sprintf("64'h%016x", words[w]))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  localparam [%d:0] %s = {", width-1, name)
	for i, p := range parts {
		if i%4 == 0 {
			b.WriteString("\n     ")
		}
		b.WriteString(" " + p)
		if i < len(parts)-1 {
			b.WriteString(",")
		}
	}
	b.WriteString("};")
	return b.String()
}

// TotalTerms is the number of XOR inputs over all output bits, a measure of the logic's size.
func (e *Equations) TotalTerms() int {
	n := 0
	for i := 0; i < 32; i++ {
		n += len(e.State[i]) + len(e.Data[i])
	}
	return n
}

// poly is the reflected CRC-32 (IEEE) polynomial.
const poly = 0xEDB88320

// Unshift runs the CRC register backwards over zeroBytes zero bytes: Raw(Unshift(c, k), k zero
// bytes) = c. The step is invertible because the polynomial's top bit is set: a register whose
// bit 31 is set came from one whose bit 0 was set. The parser uses it twice: to find the initial
// register that makes the CRC start at a byte inside a beat (zero the bytes before it and start
// from Unshift(0xFFFFFFFF, offset)), and to remove the zero bytes that pad the last beat of the
// CRC's input up to the beat boundary.
func Unshift(crc uint32, zeroBytes int) uint32 {
	for i := 0; i < 8*zeroBytes; i++ {
		if crc&(1<<31) != 0 {
			crc = (crc^poly)<<1 | 1
		} else {
			crc <<= 1
		}
	}
	return crc
}

// UnshiftEquations is Unshift over a fixed number of zero bytes as a linear map: bit i of the
// result is the XOR of the input bits listed in [i].
func UnshiftEquations(zeroBytes int) [32][]int {
	var eq [32][]int
	for j := 0; j < 32; j++ {
		col := Unshift(1<<j, zeroBytes)
		for i := 0; i < 32; i++ {
			if col>>i&1 == 1 {
				eq[i] = append(eq[i], j)
			}
		}
	}
	return eq
}

// XorLines renders a 32x32 linear map as assign statements lhs[i] = the parity of the bits of
// in that row i lists, a reduction XOR over a constant mask (a balanced tree in synthesis); a
// row with no terms is 1'b0.
func XorLines(lhs, in string, eq [32][]int) []string {
	var out []string
	for i := 0; i < 32; i++ {
		var m uint32
		for _, j := range eq[i] {
			m |= 1 << j
		}
		if m == 0 {
			out = append(out, fmt.Sprintf("  assign %s[%d] = 1'b0;", lhs, i))
			continue
		}
		out = append(out, fmt.Sprintf("  assign %s[%d] = ^(%s & 32'h%08x);", lhs, i, in, m))
	}
	return out
}
