package acker

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/sack"
)

func testParams() Params {
	return Params{Conns: 4, Paths: 2, Width: 64, AckDelay: 2000, Gather: 2000, MaxGather: 25000,
		HintWindow: 100000, Scan: 5000, Hints: HintTable(4, 100000, true)}
}

func res(class sack.Class, cum uint32, due bool) sack.RxResult {
	return sack.RxResult{Class: class, Cum: cum, Bitmap: sack.NewBitmap(64), AckDue: due}
}

type step struct {
	at   uint64
	in   *Input // nil: Advance only
	want []Ack  // Bitmap compared by content
}

func TestScheduling(t *testing.T) {
	bm := sack.NewBitmap(64)
	cases := []struct {
		name  string
		steps []step
	}{
		{"newcomer is gathered, answered at the close with the held time in the echo", []step{
			{at: 100, in: &Input{Conn: 1, Path: 0, TS: 7, Res: res(sack.ClassNew, 1, true)}},
			{at: 2099},
			{at: 2100, want: []Ack{{Kind: Gathered, Conn: 1, Path: 0, Cum: 1, Bitmap: bm, Hint: 1000, TS: 7 + 2000}}},
		}},
		{"two newcomers share the window and both get the share of two", []step{
			{at: 100, in: &Input{Conn: 0, Path: 1, TS: 1, Res: res(sack.ClassNew, 5, false)}},
			{at: 1100, in: &Input{Conn: 2, Path: 0, TS: 2, Res: res(sack.ClassNew, 9, true)}},
			{at: 3100, want: []Ack{
				{Kind: Gathered, Conn: 0, Path: 1, Cum: 5, Bitmap: bm, Hint: 500, TS: 1 + 3000},
				{Kind: Gathered, Conn: 2, Path: 0, Cum: 9, Bitmap: bm, Hint: 500, TS: 2 + 2000}}},
		}},
		{"a known sender's due packet is answered at once with its ECN count", []step{
			{at: 0, in: &Input{Conn: 3, Path: 1, Res: res(sack.ClassNew, 1, false)}},
			{at: 2000, want: []Ack{{Kind: Gathered, Conn: 3, Path: 1, Cum: 1, Bitmap: bm, Hint: 1000, TS: 2000}}},
			{at: 2500, in: &Input{Conn: 3, Path: 1, CE: true, TS: 9, Res: res(sack.ClassNew, 2, false)}},
			{at: 2600, in: &Input{Conn: 3, Path: 1, CE: true, TS: 10, Res: res(sack.ClassDuplicate, 2, true)},
				want: []Ack{{Kind: Immediate, Conn: 3, Path: 1, Cum: 2, Bitmap: bm, ECN: 2, Hint: 1000, TS: 10}}},
			// The delayed ACK the first packet held was cleared by the immediate one.
			{at: 10000},
		}},
		{"a delayed ACK goes AckDelay after the packet that held it, with the latest state", []step{
			{at: 0, in: &Input{Conn: 0, Path: 0, Res: res(sack.ClassNew, 1, false)}},
			{at: 2000, want: []Ack{{Kind: Gathered, Conn: 0, Path: 0, Cum: 1, Bitmap: bm, Hint: 1000, TS: 2000}}},
			{at: 3000, in: &Input{Conn: 0, Path: 0, TS: 30, Res: res(sack.ClassNew, 2, false)}},
			{at: 4000, in: &Input{Conn: 0, Path: 0, TS: 40, Res: res(sack.ClassNew, 3, false)}},
			{at: 4999},
			{at: 5000, want: []Ack{{Kind: Delayed, Conn: 0, Path: 0, Cum: 3, Bitmap: bm, Hint: 1000, TS: 40}}},
		}},
		{"an idle sender stops counting at the first scan after the hint window", []step{
			{at: 0, in: &Input{Conn: 0, Path: 0, Res: res(sack.ClassNew, 1, false)}},
			{at: 1000, in: &Input{Conn: 1, Path: 0, Res: res(sack.ClassNew, 1, false)}},
			{at: 3000, want: []Ack{
				{Kind: Gathered, Conn: 0, Path: 0, Cum: 1, Bitmap: bm, Hint: 500, TS: 3000},
				{Kind: Gathered, Conn: 1, Path: 0, Cum: 1, Bitmap: bm, Hint: 500, TS: 2000}}},
			{at: 100500, in: &Input{Conn: 1, Path: 0, TS: 5, Res: res(sack.ClassOld, 1, true)},
				want: []Ack{{Kind: Immediate, Conn: 1, Path: 0, Cum: 1, Bitmap: bm, Hint: 500, TS: 5}}},
			// Scan at 105000: connection 0 (last data at 0) expires; connection 1 (100500) stays.
			{at: 105000, in: &Input{Conn: 1, Path: 0, TS: 6, Res: res(sack.ClassOld, 1, true)},
				want: []Ack{{Kind: Immediate, Conn: 1, Path: 0, Cum: 1, Bitmap: bm, Hint: 1000, TS: 6}}},
		}},
		{"beyond-window packets send nothing but count the sender", []step{
			{at: 0, in: &Input{Conn: 2, Path: 1, CE: true, Res: res(sack.ClassBeyond, 0, false)}},
			{at: 50000},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(testParams())
			require.NoError(t, err)
			for i, s := range tc.steps {
				var got []Ack
				if s.in != nil {
					got, err = a.Packet(s.at, *s.in)
					require.NoError(t, err)
				} else {
					got = a.Advance(s.at)
				}
				require.Empty(t, cmp.Diff(s.want, got, cmp.Comparer(func(x, y sack.Bitmap) bool { return x.Equal(y) })),
					"step %d at %d ns", i, s.at)
			}
		})
	}
}

// ann is an ANNOUNCE input of a step.
type ann struct {
	conn, path int
	ts, cum    uint32
}

type astep struct {
	at   uint64
	in   *Input
	ann  *ann
	want []Ack
}

func TestAnnounce(t *testing.T) {
	bm := sack.NewBitmap(64)
	cases := []struct {
		name   string
		params func(*Params)
		steps  []astep
	}{
		{"counted at once, answered at the close with the path's cum, no SACK bits and the unadvanced echo", nil, []astep{
			{at: 100, ann: &ann{conn: 2, path: 1, ts: 77, cum: 0}},
			{at: 2099},
			{at: 2100, want: []Ack{{Kind: Announce, Conn: 2, Path: 1, Cum: 0, Bitmap: bm, Hint: 1000, TS: 77}}},
		}},
		{"an announced sender's first data packet is no newcomer: answered at once, and the answer carries its cum", nil, []astep{
			{at: 100, ann: &ann{conn: 0, path: 1, ts: 5, cum: 0}},
			{at: 600, in: &Input{Conn: 0, Path: 1, TS: 6, Res: res(sack.ClassNew, 1, true)},
				want: []Ack{{Kind: Immediate, Conn: 0, Path: 1, Cum: 1, Bitmap: bm, Hint: 1000, TS: 6}}},
			// A packet on another path leaves the record's cum alone.
			{at: 700, in: &Input{Conn: 0, Path: 0, TS: 7, Res: res(sack.ClassNew, 9, true)},
				want: []Ack{{Kind: Immediate, Conn: 0, Path: 0, Cum: 9, Bitmap: bm, Hint: 1000, TS: 7}}},
			{at: 2100, want: []Ack{{Kind: Announce, Conn: 0, Path: 1, Cum: 1, Bitmap: bm, Hint: 1000, TS: 5}}},
		}},
		{"announces and data newcomers share one window, answered in arrival order", nil, []astep{
			{at: 0, in: &Input{Conn: 3, Path: 0, TS: 1, Res: res(sack.ClassNew, 4, false)}},
			{at: 1000, ann: &ann{conn: 1, path: 0, ts: 2, cum: 8}},
			{at: 2500, ann: &ann{conn: 0, path: 1, ts: 3, cum: 0}},
			{at: 4500, want: []Ack{
				{Kind: Gathered, Conn: 3, Path: 0, Cum: 4, Bitmap: bm, Hint: 333, TS: 1 + 4500},
				{Kind: Announce, Conn: 1, Path: 0, Cum: 8, Bitmap: bm, Hint: 333, TS: 2},
				{Kind: Announce, Conn: 0, Path: 1, Cum: 0, Bitmap: bm, Hint: 333, TS: 3}}},
		}},
		{"an ANNOUNCE of a counted connection is ignored", nil, []astep{
			{at: 0, in: &Input{Conn: 1, Path: 0, TS: 1, Res: res(sack.ClassNew, 1, false)}},
			{at: 500, ann: &ann{conn: 1, path: 1, ts: 9, cum: 0}},
			{at: 2000, want: []Ack{{Kind: Gathered, Conn: 1, Path: 0, Cum: 1, Bitmap: bm, Hint: 1000, TS: 1 + 2000}}},
			{at: 30000},
		}},
		{"hints off: ignored, nothing counted, no window", func(p *Params) { p.Hints = HintTable(4, 100000, false) }, []astep{
			{at: 0, ann: &ann{conn: 1, path: 1, ts: 9, cum: 0}},
			{at: 200000},
		}},
		{"the answer leaves the path's ECN count and held ACK alone", nil, []astep{
			{at: 0, in: &Input{Conn: 2, Path: 0, CE: true, Res: res(sack.ClassBeyond, 0, false)}},
			{at: 2000},
			// Connection 2 expires at the scan of 105000 with its mark still counted.
			{at: 105000},
			{at: 106000, ann: &ann{conn: 2, path: 0, ts: 4, cum: 3}},
			{at: 108000, want: []Ack{{Kind: Announce, Conn: 2, Path: 0, Cum: 3, Bitmap: bm, Hint: 1000, TS: 4}}},
			{at: 109000, in: &Input{Conn: 2, Path: 0, TS: 5, Res: res(sack.ClassDuplicate, 3, true)},
				want: []Ack{{Kind: Immediate, Conn: 2, Path: 0, Cum: 3, Bitmap: bm, ECN: 1, Hint: 1000, TS: 5}}},
		}},
		{"a later close refreshes an answered sender whose share moved by more than a tenth, within MaxGather", nil, []astep{
			{at: 0, ann: &ann{conn: 0, path: 0, ts: 10, cum: 0}},
			{at: 2000, want: []Ack{{Kind: Announce, Conn: 0, Path: 0, Cum: 0, Bitmap: bm, Hint: 1000, TS: 10}}},
			{at: 2500, in: &Input{Conn: 0, Path: 0, TS: 11, Res: res(sack.ClassNew, 1, true)},
				want: []Ack{{Kind: Immediate, Conn: 0, Path: 0, Cum: 1, Bitmap: bm, Hint: 1000, TS: 11}}},
			{at: 5000, ann: &ann{conn: 1, path: 1, ts: 20, cum: 0}},
			{at: 6000, ann: &ann{conn: 2, path: 0, ts: 30, cum: 0}},
			// The refresh first (the record's cum followed the data), then the newcomers.
			{at: 8000, want: []Ack{
				{Kind: Announce, Conn: 0, Path: 0, Cum: 1, Bitmap: bm, Hint: 333, TS: 10},
				{Kind: Announce, Conn: 1, Path: 1, Cum: 0, Bitmap: bm, Hint: 333, TS: 20},
				{Kind: Announce, Conn: 2, Path: 0, Cum: 0, Bitmap: bm, Hint: 333, TS: 30}}},
			// 26 µs after the first ANNOUNCE (beyond MaxGather = 25 µs): connection 0 is no
			// longer refreshed; 1 and 2 are (333 -> 250).
			{at: 24000, ann: &ann{conn: 3, path: 0, ts: 40, cum: 0}},
			{at: 26000, want: []Ack{
				{Kind: Announce, Conn: 1, Path: 1, Cum: 0, Bitmap: bm, Hint: 250, TS: 20},
				{Kind: Announce, Conn: 2, Path: 0, Cum: 0, Bitmap: bm, Hint: 250, TS: 30},
				{Kind: Announce, Conn: 3, Path: 0, Cum: 0, Bitmap: bm, Hint: 250, TS: 40}}},
		}},
		{"a move of at most a tenth is not refreshed", func(p *Params) {
			p.Conns, p.Hints = 16, HintTable(16, 100000, true) // 15 -> 16 senders: 66 -> 62
		}, func() []astep {
			var st []astep
			var want []Ack
			for c := 0; c < 15; c++ {
				st = append(st, astep{at: uint64(c * 100), ann: &ann{conn: c, path: 0, ts: uint32(c), cum: 0}})
				want = append(want, Ack{Kind: Announce, Conn: c, Path: 0, Bitmap: bm, Hint: 66, TS: uint32(c)})
			}
			st = append(st, astep{at: 3400, want: want},
				astep{at: 4000, ann: &ann{conn: 15, path: 1, ts: 99, cum: 0}},
				astep{at: 6000, want: []Ack{{Kind: Announce, Conn: 15, Path: 1, Bitmap: bm, Hint: 62, TS: 99}}})
			return st
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := testParams()
			if tc.params != nil {
				tc.params(&p)
			}
			a, err := New(p)
			require.NoError(t, err)
			for i, s := range tc.steps {
				var got []Ack
				switch {
				case s.in != nil:
					got, err = a.Packet(s.at, *s.in)
				case s.ann != nil:
					got, err = a.Announce(s.at, s.ann.conn, s.ann.path, s.ann.ts, s.ann.cum)
				default:
					got = a.Advance(s.at)
				}
				require.NoError(t, err)
				require.Empty(t, cmp.Diff(s.want, got, cmp.Comparer(func(x, y sack.Bitmap) bool { return x.Equal(y) })),
					"step %d at %d ns", i, s.at)
			}
			if tc.params != nil && !p.HintsOn() {
				require.Zero(t, a.Active())
				_, pending := a.Next()
				require.False(t, pending)
				require.Equal(t, uint64(1), a.Counters.AnnouncesIgnored)
			}
		})
	}
}

func TestRejectsBadInput(t *testing.T) {
	a, err := New(testParams())
	require.NoError(t, err)
	_, err = a.Packet(0, Input{Conn: 4, Res: res(sack.ClassNew, 0, false)})
	require.ErrorContains(t, err, "connection 4")
	_, err = a.Packet(0, Input{Path: 2, Res: res(sack.ClassNew, 0, false)})
	require.ErrorContains(t, err, "path 2")
	_, err = a.Packet(0, Input{Res: sack.RxResult{Bitmap: sack.NewBitmap(32)}})
	require.ErrorContains(t, err, "bitmap of 32 bits")
	_, err = a.Announce(0, 4, 0, 0, 0)
	require.ErrorContains(t, err, "announce of connection 4")
	_, err = a.Announce(0, 0, -1, 0, 0)
	require.ErrorContains(t, err, "path -1")
	p := testParams()
	p.Hints = p.Hints[:2]
	_, err = New(p)
	require.ErrorContains(t, err, "hint table")
	p = testParams()
	p.MaxGather = 10
	_, err = New(p)
	require.ErrorContains(t, err, "max gather")
}

func TestHintTable(t *testing.T) {
	require.Equal(t, []uint16{0, 1000, 500, 333}, HintTable(3, 100000, true))
	require.Equal(t, []uint16{0, 0, 0}, HintTable(2, 100000, false))
	require.Equal(t, uint16(0xFFFF), HintTable(2, 1e9, true)[1], "clamped high")
	require.Equal(t, uint16(1), HintTable(3, 100, true)[3], "clamped low")
}

// TestEveryNewPacketIsAnswered drives random traffic and checks the invariants: every new packet
// is acknowledged (by an ACK of its path sent no earlier than it arrived) within max(AckDelay,
// MaxGather) unless a later ACK of its path covers it; ECN marks are echoed exactly once; a
// hint always matches the table for the active count at that moment.
func TestEveryNewPacketIsAnswered(t *testing.T) {
	p := testParams()
	rng := rand.New(rand.NewPCG(1, 2))
	a, err := New(p)
	require.NoError(t, err)
	pendingSince := map[int]uint64{} // path index -> arrival of its oldest unanswered new packet
	marks := map[int]int{}
	echoed := 0
	now := uint64(0)
	// Announces: cumOf is each path's current cumulative PSN (the latest packet's), announced
	// the pending first answers by connection, told the hint each was last told.
	cumOf := map[int]uint32{}
	type pend struct {
		path    int
		ts      uint32
		arrived uint64
	}
	announced := map[int]pend{}
	told := map[int]uint16{}
	answers, refreshes := 0, 0
	check := func(at uint64, acks []Ack) {
		for _, k := range acks {
			idx := k.Conn*p.Paths + k.Path
			echoed += int(k.ECN)
			require.Equal(t, p.Hints[a.Active()], k.Hint, "hint at %d", at)
			if k.Kind == Announce {
				require.Zero(t, k.ECN, "an announce answer echoes no ECN")
				require.True(t, k.Bitmap.Equal(sack.NewBitmap(p.Width)), "an announce answer has no SACK bits")
				require.Equal(t, cumOf[idx], k.Cum, "announce answer at %d: the path's current cumulative PSN", at)
				if pa, ok := announced[k.Conn]; ok {
					require.Equal(t, pa.path, k.Path)
					require.Equal(t, pa.ts, k.TS, "the ANNOUNCE's own timestamp, not advanced")
					require.LessOrEqual(t, at-pa.arrived, p.MaxGather, "answered within the gather bound")
					delete(announced, k.Conn)
					answers++
				} else {
					h, ok := told[k.Conn]
					require.True(t, ok, "a refresh of a connection never told, at %d", at)
					d := int(h) - int(k.Hint)
					require.Greater(t, 10*max(d, -d), int(k.Hint), "refreshed although the share moved by at most a tenth")
					refreshes++
				}
				told[k.Conn] = k.Hint
				continue
			}
			if s, ok := pendingSince[idx]; ok {
				require.LessOrEqual(t, at-s, max(p.AckDelay, p.MaxGather), "path %d answered late", idx)
				delete(pendingSince, idx)
			}
			marks[idx] = 0
		}
	}
	classes := []sack.Class{sack.ClassNew, sack.ClassNew, sack.ClassNew, sack.ClassDuplicate, sack.ClassOld, sack.ClassBeyond}
	total := 0
	for i := 0; i < 20000; i++ {
		now += uint64(rng.IntN(3000))
		if rng.IntN(50) == 0 {
			now += 150000 // idle long enough for senders to expire
		}
		for t0, ok := a.Next(); ok && t0 <= now; t0, ok = a.Next() {
			check(t0, a.Advance(t0))
		}
		if rng.IntN(8) == 0 {
			// An ANNOUNCE, answered at the gather close unless its connection is counted.
			conn, path, ts := rng.IntN(p.Conns), rng.IntN(p.Paths), rng.Uint32()
			counted := a.Active()
			wasActive := a.active[conn]
			acks, err := a.Announce(now, conn, path, ts, cumOf[conn*p.Paths+path])
			require.NoError(t, err)
			check(now, acks)
			if wasActive {
				require.Equal(t, counted, a.Active(), "an ANNOUNCE of a counted connection is ignored")
				continue
			}
			require.True(t, a.active[conn], "an announced connection is counted at once")
			announced[conn] = pend{path: path, ts: ts, arrived: now}
			delete(told, conn)
			continue
		}
		in := Input{Conn: rng.IntN(p.Conns), Path: rng.IntN(p.Paths), CE: rng.IntN(4) == 0, TS: rng.Uint32()}
		c := classes[rng.IntN(len(classes))]
		in.Res = res(c, rng.Uint32(), c != sack.ClassNew && c != sack.ClassBeyond || rng.IntN(3) == 0)
		acks, err := a.Packet(now, in)
		require.NoError(t, err)
		idx := in.Conn*p.Paths + in.Path
		cumOf[idx] = in.Res.Cum
		if in.CE {
			total++
		}
		if c == sack.ClassNew {
			if _, ok := pendingSince[idx]; !ok {
				pendingSince[idx] = now
			}
		}
		check(now, acks)
	}
	for {
		t0, ok := a.Next()
		if !ok || len(pendingSince) == 0 {
			break
		}
		check(t0, a.Advance(t0))
	}
	require.Empty(t, pendingSince, "new packets never answered")
	require.Empty(t, announced, "ANNOUNCEs never answered")
	require.Equal(t, uint64(answers), a.Counters.Announced)
	require.Equal(t, uint64(refreshes), a.Counters.Refreshed)
	require.NotZero(t, answers)
	require.NotZero(t, refreshes)
	require.NotZero(t, a.Counters.AnnouncesIgnored)
	held := 0
	for _, e := range a.ecn {
		held += int(e)
	}
	require.Equal(t, total, echoed+held, "every CE mark is echoed once or still counted")
	require.NotZero(t, a.Counters.Immediate)
	require.NotZero(t, a.Counters.Delayed)
	require.NotZero(t, a.Counters.Gathered)
	require.NotZero(t, a.Counters.Expired)
}
