package window

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

// checkInvariants returns the first broken invariant of the whole table, or nil.
func checkInvariants(tb *Table) error {
	p := tb.p
	for c := 0; c < p.Conns; c++ {
		ce := tb.conns[c]
		sum := uint32(0)
		for path := 0; path < p.Paths; path++ {
			e := tb.Path(c, path)
			sum += e.Inflight
			switch {
			case e.Cwnd < p.MinCwnd || e.Cwnd > p.MaxCwnd:
				return fmt.Errorf("conn %d path %d: cwnd %d outside [%d, %d]", c, path, e.Cwnd, p.MinCwnd, p.MaxCwnd)
			case e.Inflight > p.MaxCwnd>>FracBits:
				return fmt.Errorf("conn %d path %d: inflight %d above max_cwnd", c, path, e.Inflight)
			case e.State > Failed:
				return fmt.Errorf("conn %d path %d: state %d", c, path, e.State)
			case e.State == Failed && (e.Inflight != 0 || !e.Armed):
				return fmt.Errorf("conn %d path %d: failed with %d in flight, armed %v", c, path, e.Inflight, e.Armed)
			case e.State != Failed && e.Inflight > 0 && !e.Armed:
				return fmt.Errorf("conn %d path %d: %d in flight and no timer", c, path, e.Inflight)
			case e.Accum > accumMax || e.Marks > marksMax || e.Timeouts > timeoutsMax:
				return fmt.Errorf("conn %d path %d: counter overflow %+v", c, path, e)
			case e.RTO < p.RTOMin || e.RTO > p.RTOMax:
				return fmt.Errorf("conn %d path %d: rto %d", c, path, e.RTO)
			case e.SRTT >= 1<<31 || e.RTTVar >= 1<<31:
				return fmt.Errorf("conn %d path %d: srtt %d rttvar %d", c, path, e.SRTT, e.RTTVar)
			case e.LFSR == 0 || e.Entropy != EntropyOf(e.LFSR):
				return fmt.Errorf("conn %d path %d: lfsr %#x entropy %#x", c, path, e.LFSR, e.Entropy)
			case e.Floored && e.Cwnd != p.MinCwnd:
				return fmt.Errorf("conn %d path %d: floored with cwnd %d", c, path, e.Cwnd)
			case e.NextPSN > p.psns().Mask():
				return fmt.Errorf("conn %d path %d: psn %d", c, path, e.NextPSN)
			}
		}
		switch {
		case ce.Inflight != sum:
			return fmt.Errorf("conn %d: inflight %d, paths sum to %d", c, ce.Inflight, sum)
		case ce.Inflight > p.ConnMaxCwnd>>FracBits:
			return fmt.Errorf("conn %d: inflight %d above conn max", c, ce.Inflight)
		case ce.Cwnd < p.MinCwnd || ce.Cwnd > p.ConnMaxCwnd:
			return fmt.Errorf("conn %d: cwnd %d", c, ce.Cwnd)
		case ce.RateCap < p.MinCwnd || ce.RateCap > p.ConnMaxCwnd:
			return fmt.Errorf("conn %d: rate cap %d", c, ce.RateCap)
		case ce.Accum > connAccumMax:
			return fmt.Errorf("conn %d: accum %d", c, ce.Accum)
		case int(ce.RR) >= p.Paths:
			return fmt.Errorf("conn %d: rr %d", c, ce.RR)
		}
	}
	return nil
}

// checkDecision verifies a decision against the table as it was before it: the connection's
// published window and the paths' classes, as the decision reads them (package doc, "Published
// state").
func checkDecision(before *Table, conn int, d Decision) error {
	c := before.conns[conn]
	pc := before.pubConn[conn]
	limit := (min(pc.ConnCwnd, pc.RateCap) + One - 1) >> FracBits // rounded up
	best := 0
	for _, cl := range before.Classes(conn) {
		best = max(best, cl)
	}
	switch {
	case !d.OK && c.Inflight < limit && best > 0:
		return fmt.Errorf("refused (%v) with window and an eligible path", d.Reason)
	case !d.OK:
		return nil
	case c.Inflight >= limit:
		return fmt.Errorf("sent beyond the connection limit %d", limit)
	}
	e := before.Path(conn, d.Path)
	if cl := before.Classes(conn)[d.Path]; cl != best || cl == 0 {
		return fmt.Errorf("picked path %d of class %d (state %v, inflight %d, cwnd %d), best class %d", d.Path, cl, e.State, e.Inflight, e.Cwnd, best)
	}
	if d.Entropy != e.Entropy || d.PSN != e.NextPSN {
		return fmt.Errorf("decision %+v does not match the entry", d)
	}
	return nil
}

func (t *Table) clone() *Table {
	c := *t
	c.paths = append([]PathEntry(nil), t.paths...)
	c.conns = append([]ConnEntry(nil), t.conns...)
	c.pubPath = append([]Published(nil), t.pubPath...)
	c.pubConn = append([]Published(nil), t.pubConn...)
	c.pending = append([][PubLag]publication(nil), t.pending...)
	c.seq = append([]int(nil), t.seq...)
	c.cls = append([]uint8(nil), t.cls...)
	c.clsW = append([]uint32(nil), t.clsW...)
	return &c
}

// driver turns a stream of random numbers into operations, checking invariants after each.
type driver struct {
	tb  *Table
	now uint32
}

func (d *driver) step(op, a, b, x uint32) error {
	p := d.tb.p
	conn := int(a % uint32(p.Conns))
	path := int(b % uint32(p.Paths))
	switch op % 8 {
	case 0, 1, 2: // send
		before := d.tb.clone()
		dec := d.tb.SendDecision(conn, d.now)
		if err := checkDecision(before, conn, dec); err != nil {
			return err
		}
	case 3, 4: // ACK with an RTT of up to ~65 µs (or a bogus echo when x's top bit is set), or a NAK
		if op%8 == 4 && x>>30&1 == 1 {
			d.tb.Heard(conn, path, d.now)
			break
		}
		rtt := x & 0xFFFF
		if x>>31 == 1 {
			rtt = x
		}
		d.tb.AckUpdate(conn, path, Ack{
			CumAdvance: uint16(x>>16) % 8, NewlySacked: uint16(x>>20) % 4,
			ECNEcho: uint16(x>>24) % 4 / 3, TimestampEcho: d.now - rtt, RateHint: uint16(x>>26) * 300,
		}, d.now)
	case 5:
		d.tb.Expire(conn, path, d.now)
	case 6:
		d.tb.Tick(d.now)
	case 7: // time passes: usually a little, sometimes past every RTO
		if x&7 == 0 {
			d.now += x >> 8 & 0x3FFFFF
		} else {
			d.now += x & 0x3FFF
		}
	}
	return checkInvariants(d.tb)
}

func TestRandomOperationsKeepInvariants(t *testing.T) {
	cfgs := map[string]func(*config.Config){
		"default": nil,
		"1 path":  onePath,
		"64 paths": func(c *config.Config) {
			c.PathsPerConnection, c.Connections, c.SackWidth = 64, 2, 256
		},
		"narrow": func(c *config.Config) {
			c.PathsPerConnection, c.SackWidth, c.PSNWidth = 3, 64, 10
			c.Window.InitCwnd, c.Window.MinCwnd, c.Window.MaxCwnd, c.Window.ConnMaxCwnd = 4, 2, 8, 10
			c.Window.MDShift, c.Window.AIStep = 3, 2
			c.Window.RTOMinNS, c.Window.RTOInitialNS, c.Window.RTOMaxNS = 1000, 2000, 8000
			c.Window.SuspectTimeouts, c.Window.FailedTimeouts, c.Window.ProbeIntervalNS = 1, 2, 5000
		},
	}
	for name, mut := range cfgs {
		t.Run(name, func(t *testing.T) {
			p := testParams(t, mut)
			for seed := uint64(1); seed <= 20; seed++ {
				rng := rand.New(rand.NewPCG(seed, 7))
				d := &driver{tb: New(p), now: rng.Uint32()}
				for i := 0; i < 5000; i++ {
					if err := d.step(rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32()); err != nil {
						t.Fatalf("seed %d op %d: %v", seed, i, err)
					}
				}
			}
		})
	}
}

func FuzzOperations(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 3, 0, 0, 1, 7, 0, 0, 0xff, 5, 0, 0, 0})
	f.Add([]byte("send send ack expire tick time passes"))
	p := ParamsFrom(func() config.Config {
		c := config.Default()
		c.Connections, c.PathsPerConnection, c.SackWidth, c.PSNWidth = 2, 4, 64, 10
		c.Window.RTOMinNS, c.Window.RTOInitialNS, c.Window.RTOMaxNS, c.Window.ProbeIntervalNS = 1000, 1000, 4000, 3000
		return c
	}())
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &driver{tb: New(p)}
		for len(data) >= 4 {
			x := uint32(data[3]) * 0x01010101
			if err := d.step(uint32(data[0]), uint32(data[1]), uint32(data[2]), x); err != nil {
				t.Fatal(err)
			}
			data = data[4:]
		}
	})
}

func TestDeterministic(t *testing.T) {
	p := testParams(t, nil)
	run := func() ([]Decision, *Table) {
		rng := rand.New(rand.NewPCG(42, 42))
		d := &driver{tb: New(p)}
		var out []Decision
		for i := 0; i < 3000; i++ {
			if op := rng.Uint32(); op%8 < 3 {
				out = append(out, d.tb.SendDecision(int(rng.Uint32()%4), d.now))
			} else {
				require.NoError(t, d.step(op, rng.Uint32(), rng.Uint32(), rng.Uint32()))
			}
		}
		return out, d.tb
	}
	a, ta := run()
	b, tb := run()
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatal(diff)
	}
	require.Equal(t, ta.paths, tb.paths)
	require.Equal(t, ta.conns, tb.conns)
}

func TestEqualPathsSpreadEvenly(t *testing.T) {
	for _, paths := range []int{1, 3, 8, 64} {
		t.Run(fmt.Sprint(paths), func(t *testing.T) {
			tb := New(testParams(t, func(c *config.Config) { c.PathsPerConnection = paths }))
			counts := make([]int, paths)
			for n := 0; ; n++ {
				d := tb.SendDecision(0, 0)
				if !d.OK {
					require.Equal(t, 16*paths, n, "stops when the windows are full")
					break
				}
				counts[d.Path]++
				lo, hi := counts[0], counts[0]
				for _, c := range counts {
					lo, hi = min(lo, c), max(hi, c)
				}
				require.LessOrEqual(t, hi-lo, 1, "after %d decisions: %v", n+1, counts)
			}
		})
	}
}

// closedLoop sprays n decisions, one every 100 ns, over a connection whose path i has RTT
// rtts[i] and marks every ACK when marked[i]; each packet is acked alone, after its RTT.
func closedLoop(t *testing.T, tb *Table, rtts []uint32, marked []bool, n int) []int {
	type pkt struct{ due, sent uint32 }
	q := make([][]pkt, len(rtts))
	counts := make([]int, len(rtts))
	now := uint32(0xFFFF_0000) // cross the 32-bit wrap on the way
	for i := 0; i < n; i++ {
		now += 100
		for path := range q {
			for len(q[path]) > 0 && int32(now-q[path][0].due) >= 0 {
				ecn := uint16(0)
				if marked[path] {
					ecn = 1
				}
				tb.AckUpdate(0, path, Ack{CumAdvance: 1, ECNEcho: ecn, TimestampEcho: q[path][0].sent}, now)
				q[path] = q[path][1:]
			}
		}
		if d := tb.SendDecision(0, now); d.OK {
			counts[d.Path]++
			q[d.Path] = append(q[d.Path], pkt{now + rtts[d.Path], now})
		}
		require.NoError(t, checkInvariants(tb))
	}
	return counts
}

func TestSprayingFavoursFastUnmarkedPaths(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.PathsPerConnection = 4 })
	t.Run("equal", func(t *testing.T) {
		counts := closedLoop(t, New(p), []uint32{10_000, 10_000, 10_000, 10_000}, make([]bool, 4), 10_000)
		lo, hi := min(counts[0], counts[1], counts[2], counts[3]), max(counts[0], counts[1], counts[2], counts[3])
		require.LessOrEqual(t, hi-lo, 1, "%v", counts)
	})
	t.Run("slow path", func(t *testing.T) {
		counts := closedLoop(t, New(p), []uint32{40_000, 10_000, 10_000, 10_000}, make([]bool, 4), 10_000)
		t.Logf("counts %v", counts)
		require.Less(t, counts[0]*10, counts[1]*8, "the 4x-RTT path gets clearly less: %v", counts)
	})
	t.Run("marked path", func(t *testing.T) {
		counts := closedLoop(t, New(p), []uint32{10_000, 10_000, 10_000, 10_000}, []bool{true, false, false, false}, 10_000)
		t.Logf("counts %v", counts)
		require.Less(t, counts[0]*10, counts[1]*5, "the marked path gets clearly less: %v", counts)
	})
}

func TestNeverPicksFailedOrFullPath(t *testing.T) {
	tb := New(testParams(t, func(c *config.Config) {
		c.PathsPerConnection = 4
		c.Window.ProbeIntervalNS = 1_000_000_000
	}))
	// Fail path 2: one packet on it, then four timeouts.
	for tb.SendDecision(0, 0).Path != 2 {
	}
	for tb.Path(0, 2).State != Failed {
		tb.Expire(0, 2, tb.Path(0, 2).Deadline)
	}
	now := tb.Path(0, 2).Deadline - 500_000_000
	for i := 0; i < 1000; i++ {
		d := tb.SendDecision(0, now)
		if !d.OK {
			require.Equal(t, ReasonNoPath, d.Reason)
			break
		}
		require.NotEqual(t, 2, d.Path)
	}
	for path := 0; path < 4; path++ {
		if path != 2 {
			e := tb.Path(0, path)
			require.Equal(t, e.Cwnd>>FracBits, e.Inflight, "path %d full", path)
		}
	}
}

func BenchmarkAckUpdate(b *testing.B) {
	tb := New(testParams(b, nil))
	for c := 0; c < 4; c++ {
		for i := 0; i < 100; i++ {
			tb.SendDecision(c, 0)
		}
	}
	now := uint32(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now += 100
		tb.AckUpdate(i&3, i>>2&7, Ack{ECNEcho: uint16(i>>5&1) & uint16(i>>6&1), TimestampEcho: now - 10_000, RateHint: 4000}, now)
	}
}

func BenchmarkSendDecision(b *testing.B) {
	tb := New(testParams(b, nil))
	now := uint32(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now += 100
		c := i & 3
		d := tb.SendDecision(c, now)
		if d.OK && i&1 == 0 {
			tb.AckUpdate(c, d.Path, Ack{CumAdvance: 2, TimestampEcho: now - 10_000}, now)
		}
	}
}
