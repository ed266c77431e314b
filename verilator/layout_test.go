package verilator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
)

func TestLayoutPacking(t *testing.T) {
	lay, err := NewLayout(regaddModule())
	require.NoError(t, err)
	wantIn := []Field{
		{Name: "rst", Width: 1, Offset: 0, Words: 1},
		{Name: "in_valid", Width: 1, Offset: 1, Words: 1},
		{Name: "a", Width: 16, Offset: 2, Words: 1},
		{Name: "b", Width: 40, Offset: 3, Words: 2},
		{Name: "w", Width: 300, Offset: 5, Words: 10},
		{Name: "bm", Width: 256, Offset: 15, Words: 8},
		{Name: "out_ready", Width: 1, Offset: 23, Words: 1},
	}
	wantOut := []Field{
		{Name: "in_ready", Width: 1, Offset: 0, Words: 1},
		{Name: "out_valid", Width: 1, Offset: 1, Words: 1},
		{Name: "sum", Width: 17, Offset: 2, Words: 1},
		{Name: "acc", Width: 40, Offset: 3, Words: 2},
		{Name: "wsum", Width: 300, Offset: 5, Words: 10},
		{Name: "mix", Width: 64, Offset: 15, Words: 2},
		{Name: "bmx", Width: 256, Offset: 17, Words: 8},
		{Name: "count", Width: 32, Offset: 25, Words: 1},
		{Name: "w_nz", Width: 1, Offset: 26, Words: 1},
	}
	require.Empty(t, cmp.Diff(wantIn, lay.Inputs()))
	require.Empty(t, cmp.Diff(wantOut, lay.Outputs()))
	require.Equal(t, 24, lay.InWords())
	require.Equal(t, 27, lay.OutWords())
	require.Equal(t, "clk", lay.Clock())
}

func TestFieldSetGet(t *testing.T) {
	tests := []struct {
		name  string
		width int
		set   uint64
		get   uint64   // after Set, Get returns the value truncated to the width
		words []uint32 // and the port's words hold this
	}{
		{"1 bit", 1, 3, 1, []uint32{1}},
		{"8 bits", 8, 0x1ff, 0xff, []uint32{0xff}},
		{"16 bits", 16, 0xdead_beef, 0xbeef, []uint32{0xbeef}},
		{"17 bits", 17, 0xffff_ffff, 0x1_ffff, []uint32{0x1_ffff}},
		{"32 bits", 32, 0x1_2345_6789, 0x2345_6789, []uint32{0x2345_6789}},
		{"33 bits", 33, 0xffff_ffff_ffff_ffff, 0x1_ffff_ffff, []uint32{0xffff_ffff, 1}},
		{"40 bits", 40, 0x12_3456_789a, 0x12_3456_789a, []uint32{0x3456_789a, 0x12}},
		{"64 bits", 64, 0xffff_ffff_ffff_fffe, 0xffff_ffff_ffff_fffe, []uint32{0xffff_fffe, 0xffff_ffff}},
		{"65 bits", 65, 0x8000_0000_0000_0001, 0x8000_0000_0000_0001, []uint32{1, 0x8000_0000, 0}},
		{"300 bits", 300, 7, 7, []uint32{7, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Field{Name: "p", Width: tc.width, Offset: 1, Words: hdl.Words32(tc.width)}
			buf := make([]uint32, f.Words+2)
			for i := range buf {
				buf[i] = 0xa5a5_a5a5 // the port's words must be overwritten, its neighbours kept
			}
			f.Set(buf, tc.set)
			require.Equal(t, tc.get, f.Get(buf))
			require.Empty(t, cmp.Diff(tc.words, f.GetWords(buf)))
			require.Empty(t, cmp.Diff(tc.words, f.View(buf)))
			require.Equal(t, uint32(0xa5a5_a5a5), buf[0])
			require.Equal(t, uint32(0xa5a5_a5a5), buf[len(buf)-1])
		})
	}
}

func TestFieldWords(t *testing.T) {
	f := Field{Name: "w", Width: 70, Offset: 2, Words: 3}
	buf := make([]uint32, 6)
	f.SetWords(buf, []uint32{1, 2, 0xffff_ffff, 9}) // the 4th word and bits 70+ are dropped
	require.Empty(t, cmp.Diff([]uint32{0, 0, 1, 2, 0x3f, 0}, buf))
	require.Empty(t, cmp.Diff([]uint32{1, 2, 0x3f}, f.GetWords(buf)))
	require.Equal(t, uint64(2)<<32|1, f.Get(buf))
	f.SetWords(buf, []uint32{5}) // missing words are cleared
	require.Empty(t, cmp.Diff([]uint32{0, 0, 5, 0, 0, 0}, buf))

	// Padding garbage in a buffer is masked by Get and GetWords.
	buf[4] = 0xffff_ffff
	require.Empty(t, cmp.Diff([]uint32{5, 0, 0x3f}, f.GetWords(buf)))
	g := Field{Name: "n", Width: 5, Offset: 0, Words: 1}
	buf[0] = 0xffff_ffe3
	require.Equal(t, uint64(3), g.Get(buf))
}

func TestLayoutByName(t *testing.T) {
	lay, err := NewLayout(regaddModule())
	require.NoError(t, err)
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())

	require.NoError(t, lay.Set(in, "b", 1<<40-1))
	f, err := lay.In("b")
	require.NoError(t, err)
	require.Equal(t, uint64(1<<40-1), f.Get(in))
	require.NoError(t, lay.SetWords(in, "w", []uint32{1, 2, 3}))
	require.Empty(t, cmp.Diff([]uint32{1, 2, 3, 0, 0, 0, 0, 0, 0, 0}, in[5:15]))

	wsum, err := lay.Out("wsum")
	require.NoError(t, err)
	wsum.SetWords(out, []uint32{9, 8, 7, 6, 5, 4, 3, 2, 1, 0xfff})
	got, err := lay.GetWords(out, "wsum")
	require.NoError(t, err)
	require.Empty(t, cmp.Diff([]uint32{9, 8, 7, 6, 5, 4, 3, 2, 1, 0xfff}, got))
	lo, err := lay.Get(out, "wsum")
	require.NoError(t, err)
	require.Equal(t, uint64(8)<<32|9, lo)

	errs := []struct {
		name string
		err  error
		want string
	}{
		{"unknown input", lay.Set(in, "nope", 0), `no input port "nope" (inputs: rst, in_valid, a, b, w, bm, out_ready)`},
		{"clock", lay.Set(in, "clk", 1), "clk is the clock port"},
		{"output as input", lay.Set(in, "sum", 1), `no input port "sum"`},
		{"too wide", lay.Set(in, "a", 0x1_0000), "value 0x10000 does not fit input a (16 bits)"},
		{"extra zero words fit", lay.SetWords(in, "bm", make([]uint32, 9)), ""},
		{"too wide words", lay.SetWords(in, "w", []uint32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1000}), "a 301-bit value does not fit input w (300 bits)"},
		{"short buffer", lay.Set(in[:3], "a", 1), "input buffer has 3 words, the layout needs 24"},
		{"short out buffer", func() error { _, err := lay.Get(out[:1], "sum"); return err }(), "output buffer has 1 words, the layout needs 27"},
		{"unknown output", func() error { _, err := lay.GetWords(out, "a"); return err }(), `no output port "a"`},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				require.NoError(t, tc.err)
				return
			}
			require.ErrorContains(t, tc.err, tc.want)
		})
	}
	// A fitting 64-bit value is accepted in full.
	require.NoError(t, lay.Set(in, "w", ^uint64(0)))
	require.Empty(t, cmp.Diff([]uint32{0xffff_ffff, 0xffff_ffff, 0, 0, 0, 0, 0, 0, 0, 0}, in[5:15]))
}

func TestNewLayoutErrors(t *testing.T) {
	mod := func(edit func(m *hdl.Module)) *hdl.Module {
		m := regaddModule()
		edit(m)
		return m
	}
	tests := []struct {
		name string
		m    *hdl.Module
		want string
	}{
		{"nil", nil, "nil module"},
		{"no clock", mod(func(m *hdl.Module) { m.Clock = "clock" }), `clock port "clock" is not a port`},
		{"wide clock", mod(func(m *hdl.Module) { m.Ports[0].Width = 2 }), "clock port clk must be a 1-bit input, is a 2-bit input"},
		{"output clock", mod(func(m *hdl.Module) { m.Ports[0].Dir = hdl.Output }), "must be a 1-bit input, is a 1-bit output"},
		{"zero width", mod(func(m *hdl.Module) { m.Ports[3].Width = 0 }), "port a: width 0"},
		{"duplicate", mod(func(m *hdl.Module) { m.Ports[4].Name = "a" }), "port a declared twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLayout(tc.m)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
