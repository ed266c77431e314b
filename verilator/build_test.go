package verilator

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// uniqueRTL writes testdata/<name> with a fresh comment into dir, so its key has never been
// built in this run's cache and a build of it is guaranteed cold.
func uniqueRTL(t *testing.T, dir, name string) string {
	t.Helper()
	src, err := os.ReadFile(testdata(t, name))
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	nonce := fmt.Sprintf("// %s %d\n", t.Name(), time.Now().UnixNano())
	require.NoError(t, os.WriteFile(p, append([]byte(nonce), src...), 0o644))
	return p
}

func noTempDirs(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), "tmp-"), "left behind: %s", e.Name())
	}
}

// TestCompileCache: concurrent first builds of one key build once; a later Compile is a fast
// cache hit; the key follows content, ports and flags, not paths.
func TestCompileCache(t *testing.T) {
	tooltest.Require(t, "verilator", "g++", "make")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src := uniqueRTL(t, t.TempDir(), "acount.v")
	b := Build{Module: acountModule(), Files: []string{src}, CacheDir: testCache}
	key := b.Key()
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), key)
	require.Equal(t, key, b.Key(), "the key is deterministic")

	const racers = 3
	libs := make([]*Library, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			libs[i], errs[i] = Compile(ctx, b, nil)
		}()
	}
	wg.Wait()
	built := 0
	var cold time.Duration
	for i := range racers {
		require.NoError(t, errs[i])
		require.Equal(t, key, libs[i].Key)
		require.Equal(t, libs[0].Path, libs[i].Path)
		if !libs[i].Cached {
			built++
			cold = libs[i].Elapsed
		}
	}
	require.Equal(t, 1, built, "exactly one of the concurrent Compiles builds")
	require.Equal(t, filepath.Join(testCache, key), libs[0].Dir)
	for _, f := range []string{"build.log", "mrgen_harness.cpp", "Vacount.h", filepath.Base(libs[0].Path)} {
		require.FileExists(t, filepath.Join(libs[0].Dir, f))
	}
	noTempDirs(t, testCache)

	var log bytes.Buffer
	again, err := Compile(ctx, b, &log)
	require.NoError(t, err)
	require.True(t, again.Cached)
	require.Equal(t, libs[0].Path, again.Path)
	require.Contains(t, log.String(), "cached model")
	require.Less(t, again.Elapsed, cold/5, "a cache hit (%v) must be much faster than the build (%v)", again.Elapsed, cold)
	t.Logf("cold build %v, cache hit %v", cold, again.Elapsed)

	// The same bytes under another path are the same model.
	moved := filepath.Join(t.TempDir(), "acount.v")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(moved, data, 0o644))
	same, err := Compile(ctx, Build{Module: acountModule(), Files: []string{moved}, CacheDir: testCache}, nil)
	require.NoError(t, err)
	require.True(t, same.Cached)
	require.Equal(t, key, same.Key)

	// The library keeps its own copy of the description.
	desc := same.Module()
	require.Empty(t, cmp.Diff(acountModule(), desc))
	desc.Ports[2].Name = "changed"
	require.Equal(t, "en", same.Module().Ports[2].Name)

	// The cached library works.
	m := newModel(t, same)
	lay := same.Layout()
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	require.NoError(t, lay.Set(in, "rst_n", 1))
	require.NoError(t, lay.Set(in, "en", 1))
	require.NoError(t, m.StepN(append(in, in...), append(out, out...), 2))

	// Anything that changes the model changes the key.
	changed := filepath.Join(t.TempDir(), "acount.v")
	require.NoError(t, os.WriteFile(changed, append(data, "// changed\n"...), 0o644))
	widerQ := acountModule()
	widerQ.Ports[3].Width = 9
	renamed := acountModule()
	renamed.Ports[2].Name = "enable"
	variants := map[string]Build{
		"content": {Module: acountModule(), Files: []string{changed}, CacheDir: testCache},
		"trace":   {Module: acountModule(), Files: []string{src}, Trace: true, CacheDir: testCache},
		"quick":   {Module: acountModule(), Files: []string{src}, Quick: true, CacheDir: testCache},
		"width":   {Module: widerQ, Files: []string{src}, CacheDir: testCache},
		"name":    {Module: renamed, Files: []string{src}, CacheDir: testCache},
	}
	seen := map[string]string{key: "base"}
	for what, v := range variants {
		k := v.Key()
		require.NotEmpty(t, k, what)
		prev, dup := seen[k]
		require.False(t, dup, "%s has the key of %s", what, prev)
		seen[k] = what
	}
	require.Equal(t, key, Build{Module: acountModule(), Files: []string{src}, CacheDir: t.TempDir()}.Key(), "the cache directory is not part of the key")
}

// TestQuickBuild: a Quick build compiles the C++ at -O0 (and says so in its build log), is
// cached apart from the optimised one and simulates the same cycles.
func TestQuickBuild(t *testing.T) {
	tooltest.Require(t, "verilator", "g++", "make")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src := uniqueRTL(t, t.TempDir(), "acount.v")
	libs := map[bool]*Library{}
	for _, quick := range []bool{false, true} {
		lib, err := Compile(ctx, Build{Module: acountModule(), Files: []string{src}, Quick: quick, CacheDir: testCache}, nil)
		require.NoError(t, err)
		log, err := os.ReadFile(filepath.Join(lib.Dir, "build.log"))
		require.NoError(t, err)
		want, not := "OPT_FAST=-O3", "OPT_FAST=-O0"
		if quick {
			want, not = not, want
		}
		require.Contains(t, string(log), want)
		require.NotContains(t, string(log), not)
		libs[quick] = lib
	}
	require.NotEqual(t, libs[false].Key, libs[true].Key)

	outs := map[bool][]uint32{}
	for quick, lib := range libs {
		m := newModel(t, lib)
		lay := lib.Layout()
		const cycles = 40
		in := make([]uint32, cycles*lay.InWords())
		for c := range cycles {
			rec := in[c*lay.InWords() : (c+1)*lay.InWords()]
			require.NoError(t, lay.Set(rec, "rst_n", uint64(min(c, 1))))
			require.NoError(t, lay.Set(rec, "en", uint64(c%3&1)))
		}
		outs[quick] = make([]uint32, cycles*lay.OutWords())
		require.NoError(t, m.StepN(in, outs[quick], cycles))
	}
	require.Empty(t, cmp.Diff(outs[false], outs[true]), "the quick model simulates differently")
	require.NotEqual(t, make([]uint32, len(outs[true])), outs[true], "the counter never moved: the comparison proves nothing")
}

// TestCompileInvalid covers descriptions rejected before any tool runs.
func TestCompileInvalid(t *testing.T) {
	bad := acountModule()
	bad.Name = "Acount"
	tests := []struct {
		name string
		b    Build
		want string
	}{
		{"nil module", Build{Files: []string{"x.v"}}, "Build.Module is nil"},
		{"invalid module", Build{Module: bad, Files: []string{"x.v"}}, `module name "Acount"`},
		{"no files", Build{Module: acountModule()}, "build of acount: no RTL files"},
		{"missing file", Build{Module: acountModule(), Files: []string{filepath.Join(t.TempDir(), "nope.v")}}, "reading RTL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib, err := Compile(context.Background(), tc.b, nil)
			require.Nil(t, lib)
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, tc.b.Key())
		})
	}
	_, err := Compile(context.Background(), Build{Module: acountModule(), Files: []string{filepath.Join(t.TempDir(), "nope.v")}}, nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestCompileFailures covers builds the tools reject: the error says which module, why, and
// shows the tool output naming the user's file; nothing is left in the cache.
func TestCompileFailures(t *testing.T) {
	tooltest.Require(t, "verilator", "g++", "make")
	acount := testdata(t, "acount.v")
	broken := filepath.Join(t.TempDir(), "acount.v")
	require.NoError(t, os.WriteFile(broken, []byte("module acount(input wire clk);\n  assign = ;\nendmodule\n"), 0o644))
	edit := func(f func(m *hdl.Module)) *hdl.Module {
		m := acountModule()
		f(m)
		return m
	}
	tests := []struct {
		name  string
		m     *hdl.Module
		file  string
		wants []string
	}{
		{"width", edit(func(m *hdl.Module) { m.Ports[3].Width = 9 }), acount,
			[]string{"verilator build of acount", "port q: described as 9 bits, the RTL has 8"}},
		{"direction", edit(func(m *hdl.Module) { m.Ports[2].Dir = hdl.Output }), acount,
			[]string{"port en: described as output, the RTL has input"}},
		{"port the RTL lacks", edit(func(m *hdl.Module) {
			m.Ports = append(m.Ports, hdl.Port{Name: "extra", Dir: hdl.Input, Width: 4})
		}), acount, []string{"port extra (input, 4 bits) is not a port of the RTL"}},
		{"port the description lacks", edit(func(m *hdl.Module) { m.Ports = m.Ports[:4] }), acount,
			[]string{"the RTL has port next (output, 9 bits) that the description lacks"}},
		{"wrong top", edit(func(m *hdl.Module) { m.Name = "bcount" }), acount,
			[]string{"verilator build of bcount", "verilator: exit status", "bcount"}},
		{"syntax error", acountModule(), broken,
			[]string{"verilator build of acount", "%Error", broken + ":2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := Build{Module: tc.m, Files: []string{tc.file}, CacheDir: testCache}
			var log bytes.Buffer
			lib, err := Compile(context.Background(), b, &log)
			require.Nil(t, lib)
			require.Error(t, err)
			for _, w := range tc.wants {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "/src/0/", "tool output must name the user's file")
			require.NotContains(t, log.String(), "/src/0/", "tool output must name the user's file")
			require.Contains(t, log.String(), tc.file)
			require.NoDirExists(t, filepath.Join(testCache, b.Key()))
			noTempDirs(t, testCache)
		})
	}

	t.Run("cache dir with a space", func(t *testing.T) {
		_, err := Compile(context.Background(), Build{Module: acountModule(), Files: []string{acount}, CacheDir: filepath.Join(t.TempDir(), "a b")}, nil)
		require.ErrorContains(t, err, "contains whitespace")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		src := uniqueRTL(t, t.TempDir(), "acount.v")
		_, err := Compile(ctx, Build{Module: acountModule(), Files: []string{src}, CacheDir: testCache}, nil)
		require.ErrorIs(t, err, context.Canceled)
		noTempDirs(t, testCache)
	})
}

// TestHarnessKinds checks the generated copy code for each Verilator storage class.
func TestHarnessKinds(t *testing.T) {
	lay, err := NewLayout(regaddModule())
	require.NoError(t, err)
	src, err := renderHarness(regaddModule(), lay, "Vregadd", nil)
	require.NoError(t, err)
	code := string(src)
	for _, want := range []string{
		"t->rst = static_cast<CData>(in[0] & 0x1u);",
		"t->a = static_cast<SData>(in[2] & 0xffffu);",
		"t->b = ((static_cast<QData>(in[4]) << 32) | in[3]) & 0xffffffffffULL;",
		"std::memcpy(t->w.data(), in + 5, 10 * sizeof(uint32_t));",
		"t->w[9] &= 0xfffu;",
		"t->bm[7] &= 0xffffffffu;",
		"out[2] = static_cast<uint32_t>(t->sum) & 0x1ffffu;",
		"out[15] = static_cast<uint32_t>(t->mix);",
		"out[16] = static_cast<uint32_t>((t->mix) >> 32);",
		"out[25] = static_cast<uint32_t>(t->count);",
		"out[5 + 9] &= 0xfffu;",
		"t->clk = 1;",
	} {
		require.Contains(t, code, want)
	}
	require.NotContains(t, code, "t->clk = static_cast", "the clock is not a buffer input")
}

func TestParseHeaderPorts(t *testing.T) {
	h := []byte(`
    VL_IN8(&clk,0,0);
    VL_OUT(&sum,16,0);
    VL_INW(&w,299,0,10);
    VL_OUT64(&acc,39,0);
    VL_IN16(&up,1,10);
    VL_INOUT8(&pad,3,0);
`)
	got, err := parseHeaderPorts(h)
	require.NoError(t, err)
	want := []headerPort{
		{"clk", "IN", "8", 1}, {"sum", "OUT", "32", 17}, {"w", "IN", "W", 300},
		{"acc", "OUT", "64", 40}, {"up", "IN", "16", 10}, {"pad", "INOUT", "8", 4},
	}
	require.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(headerPort{})))
	for cname, want := range map[string]string{
		"a": "a", "__SYM__goto": "goto", "a___05Fb": "a__b", "c___05F_d": "c___d", "x_": "x_",
	} {
		require.Equal(t, want, portName(cname), cname)
	}
	_, err = parseHeaderPorts([]byte("class Vx {};"))
	require.ErrorContains(t, err, "no port declarations")
}
