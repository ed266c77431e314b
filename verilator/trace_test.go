package verilator

import (
	"bufio"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vcd is what the trace test reads back from a VCD file.
type vcd struct {
	names map[string]string // first name of each id code
	ids   map[string]string // id code of each name (first declaration, the TOP scope)
	times []uint64
	// values[name][time] is the value of the signal at that timestamp (after its changes).
	values map[string]map[uint64]*big.Int
}

func readVCD(t *testing.T, path string) vcd {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	v := vcd{names: map[string]string{}, ids: map[string]string{}, values: map[string]map[uint64]*big.Int{}}
	cur := map[string]*big.Int{} // by id
	snapshot := func() {
		if len(v.times) == 0 {
			return
		}
		now := v.times[len(v.times)-1]
		for name, id := range v.ids {
			if x, ok := cur[id]; ok {
				if v.values[name] == nil {
					v.values[name] = map[uint64]*big.Int{}
				}
				v.values[name][now] = x
			}
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case fields[0] == "$var" && len(fields) >= 5:
			id, name := fields[3], fields[4]
			if _, ok := v.names[id]; !ok {
				v.names[id] = name
			}
			if _, ok := v.ids[name]; !ok {
				v.ids[name] = id
			}
		case strings.HasPrefix(line, "#"):
			snapshot()
			ts, err := strconv.ParseUint(line[1:], 10, 64)
			require.NoError(t, err, line)
			v.times = append(v.times, ts)
		case line[0] == 'b' && len(fields) == 2:
			x, ok := new(big.Int).SetString(fields[0][1:], 2)
			require.True(t, ok, line)
			cur[fields[1]] = x
		case line[0] == '0' || line[0] == '1':
			cur[line[1:]] = big.NewInt(int64(line[0] - '0'))
		}
	}
	require.NoError(t, sc.Err())
	snapshot()
	return v
}

func windowTimes(from, to uint64) []uint64 {
	var ts []uint64
	for c := from; c < to; c++ {
		ts = append(ts, 10*c, 10*c+5)
	}
	return ts
}

// TestTrace dumps two windows from one model and checks signal names, that each file holds
// exactly its window's timestamps, and that the values line up with the cycles driven.
func TestTrace(t *testing.T) {
	lib := compileShared(t, regaddModule(), "regadd.v", true)
	require.True(t, lib.Trace)
	m := newModel(t, lib)
	lay := lib.Layout()
	f := lookupRegadd(t, lay)
	ins := randomRegaddIns(9, 60)
	in := make([]uint32, lay.InWords())
	out := make([]uint32, lay.OutWords())
	g := newRegaddGolden(1)
	counts := map[int]uint64{} // count output of each cycle
	run := func(n int) {
		for range n {
			c := int(m.Cycle())
			f.pack(in, ins[c])
			require.NoError(t, m.Step(in, out))
			require.Equal(t, g.outputs(ins[c]).Count, f.count.Get(out), "a traced model must simulate the same")
			counts[c] = f.count.Get(out)
			g.edge(ins[c])
		}
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.vcd"), filepath.Join(dir, "second.vcd")

	run(20)
	require.NoError(t, m.TraceStart(first))
	require.ErrorContains(t, m.TraceStart(second), "already open")
	run(5)
	m.TraceStop()
	m.TraceStop()
	run(10)
	require.ErrorContains(t, m.TraceStart(filepath.Join(dir, "no", "such", "dir.vcd")), "cannot open")
	require.NoError(t, m.TraceStart(second))
	run(3)
	m.TraceStop()
	run(2)

	for _, w := range []struct {
		path     string
		from, to uint64
	}{{first, 20, 25}, {second, 35, 38}} {
		v := readVCD(t, w.path)
		for _, name := range []string{"clk", "rst", "in_valid", "a", "b", "w", "bm", "out_ready",
			"in_ready", "out_valid", "sum", "acc", "wsum", "mix", "bmx", "count", "w_nz"} {
			require.Contains(t, v.ids, name, "%s: signal %s", w.path, name)
		}
		require.Equal(t, windowTimes(w.from, w.to), v.times, "%s: timestamps", w.path)
		for c := w.from; c < w.to; c++ {
			lo, hi := 10*c, 10*c+5
			require.Equal(t, int64(0), v.values["clk"][lo].Int64(), "clk low at %d", lo)
			require.Equal(t, int64(1), v.values["clk"][hi].Int64(), "clk high at %d", hi)
			require.Equal(t, ins[c].A, v.values["a"][lo].Uint64(), "a at %d", lo)
			require.Zero(t, ins[c].W.Cmp(v.values["w"][lo]), "w at %d", lo)
			require.Equal(t, counts[int(c)], v.values["count"][lo].Uint64(), "count at %d", lo)
		}
	}
	require.True(t, slices.Contains(readVCD(t, first).times, 245))
}

// TestTraceCloseWithOpenTrace closes a model with a trace still open: the file is complete.
func TestTraceCloseWithOpenTrace(t *testing.T) {
	lib := compileShared(t, regaddModule(), "regadd.v", true)
	m, err := lib.New()
	require.NoError(t, err)
	lay := lib.Layout()
	path := filepath.Join(t.TempDir(), "open.vcd")
	require.NoError(t, m.TraceStart(path))
	in := make([]uint32, 4*lay.InWords())
	out := make([]uint32, 4*lay.OutWords())
	require.NoError(t, m.StepN(in, out, 4))
	require.NoError(t, m.Close())
	require.Equal(t, windowTimes(0, 4), readVCD(t, path).times)
}
