package verilator

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// testCache is the cache directory of one `go test` run: every model is built cold once per run
// (the Verilator runtime objects once per flag set) and nothing outlives the run.
var testCache string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "mrgen-verilator-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testCache = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

func testdata(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	return p
}

// regaddModule describes testdata/regadd.v.
func regaddModule() *hdl.Module {
	in := func(n string, w int) hdl.Port { return hdl.Port{Name: n, Dir: hdl.Input, Width: w} }
	out := func(n string, w int) hdl.Port { return hdl.Port{Name: n, Dir: hdl.Output, Width: w} }
	return &hdl.Module{
		Name: "regadd", Clock: "clk", Reset: "rst",
		Ports: []hdl.Port{
			in("clk", 1), in("rst", 1), in("in_valid", 1), in("a", 16), in("b", 40), in("w", 300),
			in("bm", 256), in("out_ready", 1),
			out("in_ready", 1), out("out_valid", 1), out("sum", 17), out("acc", 40), out("wsum", 300),
			out("mix", 64), out("bmx", 256), out("count", 32), out("w_nz", 1),
		},
	}
}

// acountModule describes testdata/acount.v.
func acountModule() *hdl.Module {
	return &hdl.Module{
		Name: "acount", Clock: "clk", Reset: "rst_n",
		Ports: []hdl.Port{
			{Name: "clk", Dir: hdl.Input, Width: 1},
			{Name: "rst_n", Dir: hdl.Input, Width: 1},
			{Name: "en", Dir: hdl.Input, Width: 1},
			{Name: "q", Dir: hdl.Output, Width: 8},
			{Name: "next", Dir: hdl.Output, Width: 9},
		},
	}
}

type libResult struct {
	lib *Library
	err error
}

var (
	sharedMu   sync.Mutex
	sharedLibs = map[string]*libResult{}
)

// compileShared builds (once per test run) a model of a testdata file into the run's cache.
func compileShared(t testing.TB, m *hdl.Module, file string, trace bool) *Library {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	id := fmt.Sprintf("%s/%s/%v", m.Name, file, trace)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	r, ok := sharedLibs[id]
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		lib, err := Compile(ctx, Build{Module: m, Files: []string{testdata(t, file)}, Trace: trace, CacheDir: testCache}, nil)
		r = &libResult{lib, err}
		sharedLibs[id] = r
	}
	require.NoError(t, r.err)
	return r.lib
}

func regaddLib(t testing.TB) *Library { return compileShared(t, regaddModule(), "regadd.v", false) }

// ---- golden model of regadd ----

var (
	mask300 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 300), big.NewInt(1))
	mask256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
)

// regaddIn is one cycle's stimulus.
type regaddIn struct {
	Rst, InValid, OutReady bool
	A, B                   uint64 // 16 and 40 bits
	W, BM                  *big.Int
}

// regaddOut is what the outputs must be just before the rising edge.
type regaddOut struct {
	InReady, OutValid, WNz bool
	Sum, Acc, Mix          uint64
	Count                  uint64
	Wsum, Bmx              []uint32 // 10 and 8 words
}

type regaddGolden struct {
	countStep uint64
	outValid  bool
	sum, acc  uint64
	count     uint64
	wsum      *big.Int
}

func newRegaddGolden(countStep uint64) *regaddGolden {
	return &regaddGolden{countStep: countStep, wsum: new(big.Int)}
}

func (g *regaddGolden) inReady(in regaddIn) bool { return !g.outValid || in.OutReady }

// outputs are the values before the edge: registers as they are, combinational paths from in.
func (g *regaddGolden) outputs(in regaddIn) regaddOut {
	mix := (g.count<<32 | in.A<<16 | in.A) ^ in.B
	return regaddOut{
		InReady: g.inReady(in), OutValid: g.outValid, WNz: in.W.Sign() != 0,
		Sum: g.sum, Acc: g.acc, Mix: mix, Count: g.count,
		Wsum: bigWords(g.wsum, 10),
		Bmx:  bigWords(new(big.Int).And(new(big.Int).Xor(in.BM, in.W), mask256), 8),
	}
}

// edge applies the rising edge.
func (g *regaddGolden) edge(in regaddIn) {
	if in.Rst {
		*g = regaddGolden{countStep: g.countStep, wsum: new(big.Int)}
		return
	}
	accept := in.InValid && g.inReady(in)
	if g.outValid && in.OutReady {
		g.outValid = false
	}
	if accept {
		g.outValid = true
		g.sum = in.A + in.B&0xffff
		g.acc = (g.acc + in.B) & (1<<40 - 1)
		g.wsum = new(big.Int).Add(in.W, new(big.Int).SetUint64(in.B))
		g.wsum.And(g.wsum, mask300)
		g.count = (g.count + g.countStep) & (1<<32 - 1)
	}
}

// bigWords is x as n little-endian 32-bit words.
func bigWords(x *big.Int, n int) []uint32 {
	out := make([]uint32, n)
	b := x.Bits()
	for i := range out {
		wi := i * 32 / wordBits
		if wi >= len(b) {
			break
		}
		out[i] = uint32(uint64(b[wi]) >> (uint(i*32) % wordBits))
	}
	return out
}

const wordBits = 32 << (^uint(0) >> 63) // big.Word size

// specials are values that stress carries and word boundaries.
var specials300 = []*big.Int{
	new(big.Int).Set(mask300),
	new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 32), big.NewInt(1)),
	new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1)),
	new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)),
	new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 299), big.NewInt(1)),
	new(big.Int).Lsh(big.NewInt(1), 299),
	new(big.Int),
}

func randBig(r *rand.Rand, width int) *big.Int {
	x := new(big.Int)
	for i := 0; i < width; i += 32 {
		x.Lsh(x, 32)
		x.Or(x, big.NewInt(int64(r.Uint32())))
	}
	return x.And(x, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width)), big.NewInt(1)))
}

// randomRegaddIns is a reproducible stimulus: reset for the first cycles and now and then later,
// random handshakes, and wide values that are often all-ones patterns to exercise carries.
func randomRegaddIns(seed uint64, n int) []regaddIn {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	ins := make([]regaddIn, n)
	for c := range ins {
		in := regaddIn{
			Rst:      c < 2 || r.IntN(64) == 0,
			InValid:  r.IntN(4) != 0,
			OutReady: r.IntN(3) != 0,
			A:        r.Uint64() & 0xffff,
			B:        r.Uint64() & (1<<40 - 1),
			W:        randBig(r, 300),
			BM:       randBig(r, 256),
		}
		if r.IntN(4) == 0 {
			in.W = specials300[r.IntN(len(specials300))]
			in.B = []uint64{1<<40 - 1, 1, 0xffffffff}[r.IntN(3)]
		}
		ins[c] = in
	}
	return ins
}

// regaddFields are the Field handles of regadd, looked up once.
type regaddFields struct {
	rst, inValid, a, b, w, bm, outReady                     Field
	inReady, outValid, sum, acc, wsum, mix, bmx, count, wNz Field
}

func lookupRegadd(t testing.TB, lay *Layout) regaddFields {
	t.Helper()
	in := func(n string) Field {
		f, err := lay.In(n)
		require.NoError(t, err)
		return f
	}
	out := func(n string) Field {
		f, err := lay.Out(n)
		require.NoError(t, err)
		return f
	}
	return regaddFields{
		rst: in("rst"), inValid: in("in_valid"), a: in("a"), b: in("b"), w: in("w"), bm: in("bm"),
		outReady: in("out_ready"),
		inReady:  out("in_ready"), outValid: out("out_valid"), sum: out("sum"), acc: out("acc"),
		wsum: out("wsum"), mix: out("mix"), bmx: out("bmx"), count: out("count"), wNz: out("w_nz"),
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// pack writes one cycle's stimulus with the Field handles.
func (f regaddFields) pack(buf []uint32, in regaddIn) {
	f.rst.Set(buf, b2u(in.Rst))
	f.inValid.Set(buf, b2u(in.InValid))
	f.outReady.Set(buf, b2u(in.OutReady))
	f.a.Set(buf, in.A)
	f.b.Set(buf, in.B)
	f.w.SetWords(buf, bigWords(in.W, 10))
	f.bm.SetWords(buf, bigWords(in.BM, 8))
}

// unpack reads one cycle's outputs with the Field handles.
func (f regaddFields) unpack(buf []uint32) regaddOut {
	return regaddOut{
		InReady: f.inReady.Get(buf) == 1, OutValid: f.outValid.Get(buf) == 1, WNz: f.wNz.Get(buf) == 1,
		Sum: f.sum.Get(buf), Acc: f.acc.Get(buf), Mix: f.mix.Get(buf), Count: f.count.Get(buf),
		Wsum: f.wsum.GetWords(buf), Bmx: f.bmx.GetWords(buf),
	}
}

// unpackByName reads one cycle's outputs with the name-based Layout helpers.
func unpackByName(t testing.TB, lay *Layout, buf []uint32) regaddOut {
	t.Helper()
	get := func(n string) uint64 {
		v, err := lay.Get(buf, n)
		require.NoError(t, err)
		return v
	}
	words := func(n string) []uint32 {
		v, err := lay.GetWords(buf, n)
		require.NoError(t, err)
		return v
	}
	return regaddOut{
		InReady: get("in_ready") == 1, OutValid: get("out_valid") == 1, WNz: get("w_nz") == 1,
		Sum: get("sum"), Acc: get("acc"), Mix: get("mix"), Count: get("count"),
		Wsum: words("wsum"), Bmx: words("bmx"),
	}
}

// packByName writes one cycle's stimulus with the name-based Layout helpers.
func packByName(t testing.TB, lay *Layout, buf []uint32, in regaddIn) {
	t.Helper()
	require.NoError(t, lay.Set(buf, "rst", b2u(in.Rst)))
	require.NoError(t, lay.Set(buf, "in_valid", b2u(in.InValid)))
	require.NoError(t, lay.Set(buf, "out_ready", b2u(in.OutReady)))
	require.NoError(t, lay.Set(buf, "a", in.A))
	require.NoError(t, lay.Set(buf, "b", in.B))
	require.NoError(t, lay.SetWords(buf, "w", bigWords(in.W, 10)))
	require.NoError(t, lay.SetWords(buf, "bm", bigWords(in.BM, 8)))
}
