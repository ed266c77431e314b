package verilator

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
)

func newModel(t testing.TB, lib *Library) *Model {
	t.Helper()
	m, err := lib.New()
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

// TestStepTiming pins the Step semantics cycle by cycle on a directed sequence: outputs are the
// values before the rising edge, combinational outputs follow the same cycle's inputs, registers
// show the inputs of the previous cycle, and the synchronous reset acts at the edge.
func TestStepTiming(t *testing.T) {
	lib := regaddLib(t)
	m := newModel(t, lib)
	lay := lib.Layout()
	type obs struct {
		InReady, OutValid    bool
		Sum, Acc, Count, Mix uint64
		WsumLow              uint64
		WsumTop              uint32 // word 9 of wsum
	}
	ones := new(big.Int).Set(mask300)
	zero := new(big.Int)
	steps := []struct {
		what string
		in   regaddIn
		want obs
	}{
		{"reset", regaddIn{Rst: true}, obs{InReady: true}},
		{"offer 5+7; mix is combinational", regaddIn{InValid: true, A: 5, B: 7, W: ones},
			obs{InReady: true, Mix: 0x5_0005 ^ 7}},
		{"accepted at the last edge; output not taken, so not ready", regaddIn{InValid: true, A: 1, B: 2},
			obs{InReady: false, OutValid: true, Sum: 12, Acc: 7, Count: 1, Mix: 1<<32 | 0x1_0001 ^ 2, WsumLow: 6}},
		{"out_ready makes in_ready in the same cycle", regaddIn{InValid: true, A: 1, B: 2, OutReady: true},
			obs{InReady: true, OutValid: true, Sum: 12, Acc: 7, Count: 1, Mix: 1<<32 | 0x1_0001 ^ 2, WsumLow: 6}},
		{"second result", regaddIn{}, obs{InReady: false, OutValid: true, Sum: 3, Acc: 9, Count: 2, Mix: 2 << 32, WsumLow: 2}},
		{"taken", regaddIn{OutReady: true}, obs{InReady: true, OutValid: true, Sum: 3, Acc: 9, Count: 2, Mix: 2 << 32, WsumLow: 2}},
		{"idle", regaddIn{W: ones}, obs{InReady: true, Sum: 3, Acc: 9, Count: 2, Mix: 2 << 32, WsumLow: 2}},
		{"sync reset is not seen before the edge", regaddIn{Rst: true, InValid: true, A: 9, B: 9},
			obs{InReady: true, Sum: 3, Acc: 9, Count: 2, Mix: 2<<32 | 0x9_0009 ^ 9, WsumLow: 2}},
		{"reset done", regaddIn{}, obs{InReady: true}},
		{"offer all-ones + 0xffffffff", regaddIn{InValid: true, A: 0xffff, B: 0xffff_ffff, W: ones},
			obs{InReady: true, Mix: 0xffff_ffff ^ 0xffff_ffff}},
		{"carry through 300 bits wraps", regaddIn{},
			obs{InReady: false, OutValid: true, Sum: 0x1_fffe, Acc: 0xffff_ffff, Count: 1, Mix: 1 << 32, WsumLow: 0xffff_fffe}},
		{"taken and the next offered, top bit of w set", regaddIn{InValid: true, OutReady: true, B: 1, W: new(big.Int).Lsh(big.NewInt(1), 299)},
			obs{InReady: true, OutValid: true, Sum: 0x1_fffe, Acc: 0xffff_ffff, Count: 1, Mix: 1<<32 ^ 1, WsumLow: 0xffff_fffe}},
		{"wsum's top word", regaddIn{},
			obs{OutValid: true, Sum: 1, Acc: 1 << 32, Count: 2, Mix: 2 << 32, WsumLow: 1, WsumTop: 0x800}},
	}
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	f := lookupRegadd(t, lay)
	for c, s := range steps {
		if s.in.W == nil {
			s.in.W = zero
		}
		if s.in.BM == nil {
			s.in.BM = zero
		}
		f.pack(in, s.in)
		require.Equal(t, uint64(c), m.Cycle())
		require.NoError(t, m.Step(in, out))
		got := obs{
			InReady: f.inReady.Get(out) == 1, OutValid: f.outValid.Get(out) == 1,
			Sum: f.sum.Get(out), Acc: f.acc.Get(out), Count: f.count.Get(out), Mix: f.mix.Get(out),
			WsumLow: f.wsum.Get(out), WsumTop: f.wsum.View(out)[9],
		}
		require.Empty(t, cmp.Diff(s.want, got), "cycle %d: %s", c, s.what)
	}
	require.Equal(t, uint64(len(steps)), m.Cycle())
}

// TestStepGolden runs random stimulus against the Go golden model of regadd, packing with both
// helpers, with garbage in every input padding bit and in the whole output buffer beforehand.
func TestStepGolden(t *testing.T) {
	lib := regaddLib(t)
	m := newModel(t, lib)
	lay := lib.Layout()
	f := lookupRegadd(t, lay)
	g := newRegaddGolden(1)
	r := rand.New(rand.NewPCG(7, 7))
	ins := randomRegaddIns(1, 5000)
	in := make([]uint32, lay.InWords())
	in2 := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	for c, x := range ins {
		f.pack(in, x)
		packByName(t, lay, in2, x)
		require.Empty(t, cmp.Diff(in, in2), "cycle %d: Field and name packing differ", c)
		for _, fi := range lay.inputs { // dirty padding must not reach the model
			fi.View(in)[fi.Words-1] |= ^fi.topMask() & r.Uint32()
		}
		for i := range out {
			out[i] = 0xffff_ffff
		}
		require.NoError(t, m.Step(in, out))
		want := g.outputs(x)
		require.Empty(t, cmp.Diff(want, f.unpack(out)), "cycle %d (Field)", c)
		require.Empty(t, cmp.Diff(want, unpackByName(t, lay, out)), "cycle %d (by name)", c)
		for _, fo := range lay.outputs {
			require.Zero(t, fo.View(out)[fo.Words-1]&^fo.topMask(), "cycle %d: padding of %s", c, fo.Name)
		}
		g.edge(x)
	}
}

// TestStepNMatchesStep checks that batched stepping, in uneven batches, is Step repeated.
func TestStepNMatchesStep(t *testing.T) {
	lib := regaddLib(t)
	lay := lib.Layout()
	f := lookupRegadd(t, lay)
	ins := randomRegaddIns(2, 3000)
	iw, ow := lay.InWords(), lay.OutWords()
	inAll := make([]uint32, len(ins)*iw)
	for c, x := range ins {
		f.pack(inAll[c*iw:(c+1)*iw], x)
	}

	one := newModel(t, lib)
	want := make([]uint32, len(ins)*ow)
	for c := range ins {
		require.NoError(t, one.Step(inAll[c*iw:(c+1)*iw], want[c*ow:(c+1)*ow]))
	}

	batched := newModel(t, lib)
	got := make([]uint32, len(ins)*ow)
	c := 0
	for _, n := range []int{1, 2, 0, 17, 1000, len(ins) - 1020} {
		require.NoError(t, batched.StepN(inAll[c*iw:], got[c*ow:], n))
		c += n
		require.Equal(t, uint64(c), batched.Cycle())
	}
	require.Equal(t, len(ins), c)
	require.Empty(t, cmp.Diff(want, got))

	g := newRegaddGolden(1)
	for c, x := range ins {
		require.Empty(t, cmp.Diff(g.outputs(x), f.unpack(got[c*ow:(c+1)*ow])), "cycle %d", c)
		g.edge(x)
	}
}

func TestStepErrors(t *testing.T) {
	lib := regaddLib(t)
	lay := lib.Layout()
	m, err := lib.New()
	require.NoError(t, err)
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())

	require.ErrorContains(t, m.Step(in[:lay.InWords()-1], out), "buffers of 23 and 27 words, the layout needs 24 and 27")
	require.ErrorContains(t, m.Step(in, out[:3]), "buffers of 24 and 3 words")
	require.ErrorContains(t, m.StepN(in, out, -1), "negative cycle count -1")
	require.ErrorContains(t, m.StepN(in, make([]uint32, 2*lay.OutWords()), 2), "StepN(2): buffers of 24 and 54 words")
	require.ErrorContains(t, m.StepN(make([]uint32, 2*lay.InWords()), out, 2), "StepN(2): buffers of 48 and 27 words")
	require.NoError(t, m.StepN(nil, nil, 0))
	require.Equal(t, uint64(0), m.Cycle(), "failed calls must not step")
	require.NoError(t, m.Step(append(in, 1, 2), append(out, 3))) // longer buffers are fine
	require.Equal(t, uint64(1), m.Cycle())
	require.ErrorIs(t, m.TraceStart(filepath.Join(t.TempDir(), "x.vcd")), ErrNoTrace)
	m.TraceStop() // nothing open: no-op

	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	require.ErrorIs(t, m.Step(in, out), ErrClosed)
	require.ErrorIs(t, m.StepN(in, out, 1), ErrClosed)
	require.ErrorIs(t, m.TraceStart("x.vcd"), ErrClosed)
	m.TraceStop()
}

// TestModelsIndependent interleaves two instances of one library on different stimulus.
func TestModelsIndependent(t *testing.T) {
	lib := regaddLib(t)
	lay := lib.Layout()
	f := lookupRegadd(t, lay)
	a, b := newModel(t, lib), newModel(t, lib)
	insA, insB := randomRegaddIns(3, 1000), randomRegaddIns(4, 1000)
	gA, gB := newRegaddGolden(1), newRegaddGolden(1)
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	for c := range insA {
		f.pack(in, insA[c])
		require.NoError(t, a.Step(in, out))
		require.Empty(t, cmp.Diff(gA.outputs(insA[c]), f.unpack(out)), "model A cycle %d", c)
		gA.edge(insA[c])
		f.pack(in, insB[c])
		require.NoError(t, b.Step(in, out))
		require.Empty(t, cmp.Diff(gB.outputs(insB[c]), f.unpack(out)), "model B cycle %d", c)
		gB.edge(insB[c])
	}
	// A third instance made late starts from reset state, whatever the others did.
	c := newModel(t, lib)
	f.pack(in, regaddIn{W: new(big.Int), BM: new(big.Int)})
	require.NoError(t, c.Step(in, out))
	require.Equal(t, uint64(0), f.count.Get(out))
	require.Equal(t, uint64(1), c.Cycle())
}

// TestModelsConcurrent runs several instances on separate goroutines at once.
func TestModelsConcurrent(t *testing.T) {
	lib := regaddLib(t)
	lay := lib.Layout()
	f := lookupRegadd(t, lay)
	const workers, cycles = 4, 4000
	errs := make([]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		m := newModel(t, lib)
		ins := randomRegaddIns(uint64(100+w), cycles)
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newRegaddGolden(1)
			in := make([]uint32, lay.InWords())
			out := make([]uint32, lay.OutWords())
			for c, x := range ins {
				f.pack(in, x)
				if err := m.Step(in, out); err != nil {
					errs[w] = err.Error()
					return
				}
				if d := cmp.Diff(g.outputs(x), f.unpack(out)); d != "" {
					errs[w] = fmt.Sprintf("cycle %d: %s", c, d)
					return
				}
				g.edge(x)
			}
		}()
	}
	wg.Wait()
	require.Empty(t, cmp.Diff(make([]string, workers), errs))
}

// TestAsyncReset checks that an asynchronous reset acts in the cycle it is asserted, before the
// edge, unlike regadd's synchronous one (TestStepTiming).
func TestAsyncReset(t *testing.T) {
	lib := compileShared(t, acountModule(), "acount.v", false)
	m := newModel(t, lib)
	lay := lib.Layout()
	steps := []struct {
		rstN, en uint64
		q, next  uint64
	}{
		{0, 0, 0, 0},
		{1, 1, 0, 1},
		{1, 1, 1, 2},
		{1, 0, 2, 2},
		{1, 1, 2, 3},
		{1, 1, 3, 4},
		{0, 1, 0, 1}, // reset asserted: q is 0 before the edge
		{1, 1, 0, 1}, // it was held through the last edge
		{1, 1, 1, 2},
	}
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	for c, s := range steps {
		require.NoError(t, lay.Set(in, "rst_n", s.rstN))
		require.NoError(t, lay.Set(in, "en", s.en))
		require.NoError(t, m.Step(in, out))
		q, err := lay.Get(out, "q")
		require.NoError(t, err)
		next, err := lay.Get(out, "next")
		require.NoError(t, err)
		require.Equal(t, [2]uint64{s.q, s.next}, [2]uint64{q, next}, "cycle %d", c)
	}
	// 256 enabled edges wrap the 8-bit counter; next shows the 9-bit sum.
	require.NoError(t, lay.Set(in, "en", 1))
	recs := 256
	ins := make([]uint32, recs*lay.InWords())
	for i := 0; i < recs; i++ {
		copy(ins[i*lay.InWords():], in)
	}
	outs := make([]uint32, recs*lay.OutWords())
	require.NoError(t, m.StepN(ins, outs, recs))
	last := outs[(recs-1)*lay.OutWords():]
	q, _ := lay.Get(last, "q")
	next, _ := lay.Get(last, "next")
	require.Equal(t, [2]uint64{1, 2}, [2]uint64{q, next}) // 2 + 255 = 257 ≡ 1
	for range 254 {                                       // q went on from 2 (258 mod 256); the 254th Step shows 2+253
		require.NoError(t, m.Step(in, out))
	}
	q, _ = lay.Get(out, "q")
	next, _ = lay.Get(out, "next")
	require.Equal(t, [2]uint64{255, 256}, [2]uint64{q, next})
}

// TestTwoLibraries loads two builds of the same module name (different RTL) and a third module
// into one process and runs them interleaved.
func TestTwoLibraries(t *testing.T) {
	base := regaddLib(t)
	src, err := os.ReadFile(testdata(t, "regadd.v"))
	require.NoError(t, err)
	const from, to = "COUNT_STEP = 32'd1;", "COUNT_STEP = 32'd3;"
	require.Contains(t, string(src), from)
	variant := filepath.Join(t.TempDir(), "regadd.v")
	require.NoError(t, os.WriteFile(variant, []byte(strings.Replace(string(src), from, to, 1)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lib3, err := Compile(ctx, Build{Module: regaddModule(), Files: []string{variant}, CacheDir: testCache}, nil)
	require.NoError(t, err)
	require.NotEqual(t, base.Key, lib3.Key)
	require.NotEqual(t, base.Path, lib3.Path)
	counter := compileShared(t, acountModule(), "acount.v", false)

	lay := base.Layout()
	f := lookupRegadd(t, lay)
	m1, m3, mc := newModel(t, base), newModel(t, lib3), newModel(t, counter)
	g1, g3 := newRegaddGolden(1), newRegaddGolden(3)
	clay := counter.Layout()
	cin := make([]uint32, clay.InWords())
	cout := make([]uint32, clay.OutWords())
	require.NoError(t, clay.Set(cin, "rst_n", 1))
	require.NoError(t, clay.Set(cin, "en", 1))
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	for c, x := range randomRegaddIns(5, 500) {
		f.pack(in, x)
		require.NoError(t, m1.Step(in, out))
		require.Empty(t, cmp.Diff(g1.outputs(x), f.unpack(out)), "base, cycle %d", c)
		require.NoError(t, m3.Step(in, out))
		require.Empty(t, cmp.Diff(g3.outputs(x), f.unpack(out)), "variant, cycle %d", c)
		require.NoError(t, mc.Step(cin, cout))
		q, _ := clay.Get(cout, "q")
		require.Equal(t, uint64(c%256), q, "counter, cycle %d", c)
		g1.edge(x)
		g3.edge(x)
	}
	require.NotZero(t, g3.count, "the variant's counter must have moved for the test to mean anything")
}

// TestEscapedPortNames: Verilator renames ports named like C++ keywords and ports with double
// underscores in its C++; the harness follows.
func TestEscapedPortNames(t *testing.T) {
	mod := &hdl.Module{Name: "cxxkw", Clock: "clk", Reset: "rst", Ports: []hdl.Port{
		{Name: "clk", Dir: hdl.Input, Width: 1},
		{Name: "rst", Dir: hdl.Input, Width: 1},
		{Name: "goto", Dir: hdl.Input, Width: 4},
		{Name: "a__b", Dir: hdl.Input, Width: 4},
		{Name: "switch", Dir: hdl.Output, Width: 4},
		{Name: "c___d", Dir: hdl.Output, Width: 4},
	}}
	lib := compileShared(t, mod, "cxxkw.v", false)
	m := newModel(t, lib)
	lay := lib.Layout()
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	var got [][2]uint64
	for _, v := range []uint64{9, 3, 12, 0} {
		require.NoError(t, lay.Set(in, "goto", v))
		require.NoError(t, lay.Set(in, "a__b", 15-v))
		require.NoError(t, m.Step(in, out))
		s, err := lay.Get(out, "switch")
		require.NoError(t, err)
		c, err := lay.Get(out, "c___d")
		require.NoError(t, err)
		got = append(got, [2]uint64{s, c})
	}
	require.Equal(t, [][2]uint64{{0, 6}, {9, 12}, {3, 3}, {12, 15}}, got)
}
