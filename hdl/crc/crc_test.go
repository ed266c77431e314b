package crc

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/lint"
	"github.com/mrgen/mrgen/verilator"
)

// TestRaw checks the register view of hash/crc32 against the CRC-32/ISO-HDLC check value.
func TestRaw(t *testing.T) {
	require.Equal(t, uint32(0xCBF43926), ^Raw(0xFFFFFFFF, []byte("123456789")))
}

func TestParallelEquationsMatchHashCRC32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, w := range []int{8, 16, 64, 128, 256, 512} {
		e, err := Generate(w)
		require.NoError(t, err)
		for n := 0; n < 200; n++ {
			data := make([]byte, w/8)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			c := rng.Uint32()
			require.Equal(t, Raw(c, data), e.Apply(c, data), "width %d", w)
		}
		t.Logf("width %d: widest output XORs %d inputs, %d inputs in all", w, e.Terms(), e.TotalTerms())
	}
	for _, bad := range []int{0, 7, 12, 2048} {
		_, err := Generate(bad)
		require.Error(t, err)
	}
}

// TestVerilogMatchesModel renders crc32_d64 and crc32_d512, lints them and runs them under
// Verilator against the Go model: the block-cosim pattern on the smallest possible block.
func TestVerilogMatchesModel(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog", "g++", "make")
	for _, w := range []int{64, 512} {
		e, err := Generate(w)
		require.NoError(t, err)
		model, lay := lintAndVerilate(t, gen.Source{Module: Module(w), Template: Template, Data: e})
		crcIn, err := lay.In("crc_in")
		require.NoError(t, err)
		dataIn, err := lay.In("data")
		require.NoError(t, err)
		crcOut, err := lay.Out("crc_out")
		require.NoError(t, err)
		in, out := make([]uint32, lay.InWords()), make([]uint32, lay.OutWords())
		rng := rand.New(rand.NewPCG(5, uint64(w)))
		for n := 0; n < 2000; n++ {
			data := make([]byte, w/8)
			words := make([]uint32, w/32)
			for i := range words {
				words[i] = rng.Uint32()
				for b := 0; b < 4; b++ {
					data[4*i+b] = byte(words[i] >> (8 * b))
				}
			}
			c := rng.Uint32()
			crcIn.Set(in, uint64(c))
			dataIn.SetWords(in, words)
			require.NoError(t, model.Step(in, out))
			require.Equal(t, Raw(c, data), uint32(crcOut.Get(out)), "width %d vector %d", w, n)
		}
		require.NoError(t, model.Close())
	}
}

// TestUnshift checks that Unshift inverts the CRC register's step over zero bytes, and that its
// linear form agrees with it.
func TestUnshift(t *testing.T) {
	for _, tc := range []struct {
		crc uint32
		k   int
	}{{0xFFFFFFFF, 1}, {0xFFFFFFFF, 14}, {0x12345678, 63}, {0x80000001, 7}, {0, 5}} {
		got := Unshift(tc.crc, tc.k)
		require.Equal(t, tc.crc, Raw(got, make([]byte, tc.k)), "crc %#x k %d", tc.crc, tc.k)
		eq := UnshiftEquations(tc.k)
		var lin uint32
		for i := 0; i < 32; i++ {
			var v uint32
			for _, j := range eq[i] {
				v ^= tc.crc >> j & 1
			}
			lin |= v << i
		}
		require.Equal(t, got, lin)
	}
}

func TestNewUnshiftNetRejectsBadBeats(t *testing.T) {
	for _, b := range []int{0, 1, 3, 12, -8} {
		_, err := NewUnshiftNet(b)
		require.Error(t, err, "beat of %d bytes", b)
		require.Contains(t, err.Error(), "power of two")
	}
	for _, tc := range []struct{ b, bw int }{{2, 1}, {8, 3}, {64, 6}} {
		n, err := NewUnshiftNet(tc.b)
		require.NoError(t, err)
		require.Equal(t, tc.bw, n.BW)
		require.Len(t, n.Stages(), (tc.bw+StepsPerStage-1)/StepsPerStage)
	}
}

// TestUnshiftNetVerilog runs the generated network under Verilator for every pad length, a new
// input every enabled cycle (every third cycle is disabled): its output, Latency enabled cycles
// later, run forward over the pad's zero bytes gives back its input.
func TestUnshiftNetVerilog(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog", "g++", "make")
	for _, b := range []int{8, 64} {
		net, err := NewUnshiftNet(b)
		require.NoError(t, err)
		src, err := net.Source()
		require.NoError(t, err)
		model, lay := lintAndVerilate(t, src)
		crcIn, err := lay.In("crc_in")
		require.NoError(t, err)
		zeros, err := lay.In("zeros")
		require.NoError(t, err)
		ce, err := lay.In("ce")
		require.NoError(t, err)
		crcOut, err := lay.Out("crc_out")
		require.NoError(t, err)
		in, out := make([]uint32, lay.InWords()), make([]uint32, lay.OutWords())
		// A new input every cycle; each result leaves Latency cycles later (Step returns the
		// outputs just before the edge, so the result of the input of step n shows at step
		// n+Latency).
		rng := rand.New(rand.NewPCG(7, uint64(b)))
		type vec struct {
			crc uint32
			k   int
		}
		var sent []vec
		for k := 0; k < b; k++ {
			for n := 0; n < 50; n++ {
				sent = append(sent, vec{rng.Uint32(), k})
			}
		}
		lat := net.Latency()
		require.Equal(t, UnshiftLatency(b), lat)
		// Every third cycle is disabled: the stages hold, and the inputs change to garbage.
		n, enabled := 0, 0
		for enabled < len(sent)+lat {
			on := n%3 != 2
			n++
			ce.Set(in, b2u(on))
			if !on {
				crcIn.Set(in, uint64(rng.Uint32()))
				zeros.Set(in, uint64(rng.IntN(b)))
				require.NoError(t, model.Step(in, out))
				continue
			}
			if enabled < len(sent) {
				crcIn.Set(in, uint64(sent[enabled].crc))
				zeros.Set(in, uint64(sent[enabled].k))
			}
			require.NoError(t, model.Step(in, out))
			enabled++
			if enabled <= lat {
				continue
			}
			v := sent[enabled-1-lat]
			got := uint32(crcOut.Get(out))
			require.Equal(t, Unshift(v.crc, v.k), got, "beat %d pad %d", b, v.k)
			require.Equal(t, v.crc, Raw(got, make([]byte, v.k)), "beat %d pad %d", b, v.k)
		}
		require.NoError(t, model.Close())
	}
}

// lintAndVerilate renders one module, requires it lint-clean and returns its Verilated model.
func lintAndVerilate(t *testing.T, src gen.Source) (*verilator.Model, *verilator.Layout) {
	t.Helper()
	m := src.Module
	d, err := gen.Build(m.Name, []gen.Source{src},
		gen.Stamp{Version: "test", Command: "go test ./hdl/crc", ConfigName: "crc", ConfigHash: "-"})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, d.Write(dir))
	rep, err := lint.Run(context.Background(), d.RTLFiles(dir), m.Name, lint.Options{})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%s", rep)
	lib, err := verilator.Compile(context.Background(), verilator.Build{Module: m, Files: d.RTLFiles(dir)}, nil)
	require.NoError(t, err)
	model, err := lib.New()
	require.NoError(t, err)
	return model, lib.Layout()
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
