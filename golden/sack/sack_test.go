package sack

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

func testParams(t *testing.T, mutate func(*config.Config)) Params {
	t.Helper()
	c := config.Default()
	if mutate != nil {
		mutate(&c)
	}
	require.NoError(t, c.Validate())
	return ParamsFrom(c)
}

func bm(w int, set ...int) Bitmap {
	b := NewBitmap(w)
	for _, i := range set {
		b.Set(i)
	}
	return b
}

var cmpBitmap = cmp.Comparer(func(a, b Bitmap) bool { return a.Equal(b) })

func TestReceiverDirected(t *testing.T) {
	type step struct {
		psn      uint32
		ackReq   bool
		class    Class
		cum      uint32
		bits     []int // set bits of the aligned bitmap after the packet
		gap      bool
		gapFirst uint32
		gapCount uint32
	}
	tests := []struct {
		name  string
		first uint32
		psnW  int
		steps []step
	}{
		{"in order", 100, 32, []step{
			{psn: 100, class: ClassNew, cum: 101},
			{psn: 101, class: ClassNew, cum: 102},
			{psn: 102, class: ClassNew, cum: 103},
		}},
		{"single loss then repair", 0, 32, []step{
			{psn: 0, class: ClassNew, cum: 1},
			{psn: 2, class: ClassNew, cum: 1, bits: []int{1}, gap: true, gapFirst: 1, gapCount: 1},
			{psn: 3, class: ClassNew, cum: 1, bits: []int{1, 2}},
			{psn: 1, class: ClassNew, cum: 4},
		}},
		{"burst loss", 0, 32, []step{
			{psn: 5, class: ClassNew, cum: 0, bits: []int{5}, gap: true, gapFirst: 0, gapCount: 5},
			{psn: 9, class: ClassNew, cum: 0, bits: []int{5, 9}, gap: true, gapFirst: 6, gapCount: 3},
			{psn: 7, class: ClassNew, cum: 0, bits: []int{5, 7, 9}},
		}},
		{"duplicate and old", 10, 32, []step{
			{psn: 10, class: ClassNew, cum: 11},
			{psn: 12, class: ClassNew, cum: 11, bits: []int{1}, gap: true, gapFirst: 11, gapCount: 1},
			{psn: 12, class: ClassDuplicate, cum: 11, bits: []int{1}},
			{psn: 10, class: ClassOld, cum: 11, bits: []int{1}},
			{psn: 9, class: ClassOld, cum: 11, bits: []int{1}},
		}},
		{"window edge", 0, 32, []step{
			{psn: 255, class: ClassNew, cum: 0, bits: []int{255}, gap: true, gapFirst: 0, gapCount: 255},
			{psn: 256, class: ClassBeyond, cum: 0, bits: []int{255}},
			{psn: 0x7fffffff, class: ClassBeyond, cum: 0, bits: []int{255}},
			{psn: 0x80000000, class: ClassOld, cum: 0, bits: []int{255}},
		}},
		{"wraparound 32-bit", 0xfffffffe, 32, []step{
			{psn: 0xfffffffe, class: ClassNew, cum: 0xffffffff},
			{psn: 0, class: ClassNew, cum: 0xffffffff, bits: []int{1}, gap: true, gapFirst: 0xffffffff, gapCount: 1},
			{psn: 0xffffffff, class: ClassNew, cum: 1},
			{psn: 0xfffffffe, class: ClassOld, cum: 1},
		}},
		{"wraparound 10-bit", 1020, 10, []step{
			{psn: 1023, class: ClassNew, cum: 1020, bits: []int{3}, gap: true, gapFirst: 1020, gapCount: 3},
			{psn: 2, class: ClassNew, cum: 1020, bits: []int{3, 6}, gap: true, gapFirst: 0, gapCount: 2},
			{psn: 1020, class: ClassNew, cum: 1021, bits: []int{2, 5}},
			{psn: 1021, class: ClassNew, cum: 1022, bits: []int{1, 4}},
			{psn: 1022, class: ClassNew, cum: 0, bits: []int{2}},
			{psn: 0, class: ClassNew, cum: 1, bits: []int{1}},
			{psn: 1000, class: ClassOld, cum: 1, bits: []int{1}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := testParams(t, func(c *config.Config) { c.PSNWidth = tc.psnW; c.AckPolicy.Mode = config.AckEveryPacket })
			r := NewReceiver(p)
			r.Init(3, tc.first)
			for i, s := range tc.steps {
				got := r.Packet(3, s.psn, s.ackReq)
				want := RxResult{Class: s.class, Cum: s.cum, Bitmap: bm(p.Width, s.bits...), AckDue: s.class != ClassBeyond,
					GapValid: s.gap, GapFirst: s.gapFirst, GapCount: s.gapCount}
				if d := cmp.Diff(want, got, cmpBitmap); d != "" {
					t.Fatalf("step %d (psn %d) (-want +got):\n%s", i, s.psn, d)
				}
			}
		})
	}
}

func TestReceiverFullWindowAdvance(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.SackWidth = 64 })
	r := NewReceiver(p)
	for i := uint32(1); i < 64; i++ {
		require.Equal(t, ClassNew, r.Packet(0, i, false).Class)
	}
	res := r.Packet(0, 0, false)
	require.Equal(t, uint32(64), res.Cum)
	require.True(t, res.Bitmap.IsZero())
}

func TestAckPolicies(t *testing.T) {
	tests := []struct {
		mode   string
		n      int
		ackReq []bool
		want   []bool
	}{
		{config.AckEveryPacket, 1, []bool{false, false, false}, []bool{true, true, true}},
		{config.AckEveryN, 3, []bool{false, false, false, false, false, false}, []bool{false, false, true, false, false, true}},
		{config.AckEveryN, 3, []bool{false, true, false, false}, []bool{false, true, false, false}},
		{config.AckOnGap, 1, []bool{false, false, true, false}, []bool{false, false, true, false}},
	}
	for _, tc := range tests {
		p := testParams(t, func(c *config.Config) { c.AckPolicy.Mode, c.AckPolicy.EveryN = tc.mode, tc.n })
		r := NewReceiver(p)
		var got []bool
		for i, req := range tc.ackReq {
			got = append(got, r.Packet(1, uint32(i), req).AckDue)
		}
		require.Equal(t, tc.want, got, "%s/%d", tc.mode, tc.n)
	}
	// A gap, a duplicate and an old packet always make an ACK due.
	p := testParams(t, func(c *config.Config) { c.AckPolicy.Mode, c.AckPolicy.EveryN = config.AckOnGap, 1 })
	r := NewReceiver(p)
	require.False(t, r.Packet(0, 0, false).AckDue)
	require.True(t, r.Packet(0, 2, false).AckDue)
	require.True(t, r.Packet(0, 2, false).AckDue)
	require.True(t, r.Packet(0, 0, false).AckDue)
	require.False(t, r.Packet(0, 300, false).AckDue, "beyond window: dropped, no ACK")
	require.Equal(t, RxCounters{New: 2, Duplicate: 1, Old: 1, Beyond: 1}, r.Counters)
}

func TestSenderDirected(t *testing.T) {
	p := testParams(t, nil)
	s := NewSender(p)
	s.Init(2, 1000)
	for q := uint32(1000); q < 1010; q++ {
		s.Sent(2, q)
	}
	require.Equal(t, uint32(1010), s.Nxt(2))

	// 1000 lost, 1001..1002 SACKed: 1000 is now known lost.
	res := s.Ack(2, 1000, bm(256, 1, 2))
	require.Equal(t, AckAccepted, res.Status)
	require.Empty(t, cmp.Diff(bm(256, 0), res.Lost, cmpBitmap))
	// Same information again: duplicate, nothing re-reported.
	require.Equal(t, AckDuplicate, s.Ack(2, 1000, bm(256, 1, 2)).Status)
	// 1005 SACKed too: 1003 and 1004 newly lost; 1000 not re-reported.
	res = s.Ack(2, 1000, bm(256, 1, 2, 5))
	require.Equal(t, AckAccepted, res.Status)
	require.Empty(t, cmp.Diff(bm(256, 3, 4), res.Lost, cmpBitmap))
	// Retransmitted 1000 arrives: cum moves to 1003; 1003/1004 already reported.
	res = s.Ack(2, 1003, bm(256, 2))
	require.Equal(t, AckAccepted, res.Status)
	require.True(t, res.Lost.IsZero())
	require.Equal(t, uint32(1003), s.Una(2))
	// An older ACK arriving late is stale.
	require.Equal(t, AckStale, s.Ack(2, 1000, bm(256, 1, 2, 5)).Status)
	// ACKing beyond what was sent is invalid, as is a bitmap reaching nxt or setting bit 0.
	require.Equal(t, AckInvalid, s.Ack(2, 1011, bm(256)).Status)
	require.Equal(t, AckInvalid, s.Ack(2, 1003, bm(256, 7)).Status)
	require.Equal(t, AckInvalid, s.Ack(2, 1003, bm(256, 0)).Status)
	require.Equal(t, TxCounters{Accepted: 3, Duplicate: 1, Stale: 1, Invalid: 3}, s.Counters)
	// Everything acknowledged.
	res = s.Ack(2, 1010, bm(256))
	require.Equal(t, AckAccepted, res.Status)
	require.Equal(t, s.Nxt(2), s.Una(2))
}

// TestLoopbackReportsEveryLossOnce sends random traffic over a lossy, reordering path into a
// Receiver, feeds its ACKs (some lost) to a Sender, retransmits what the Sender reports, and
// checks the protocol's promises: only really-missing PSNs are reported, and each loss is
// reported once per transmission.
func TestLoopbackReportsEveryLossOnce(t *testing.T) {
	for _, psnW := range []int{32, 12} {
		p := testParams(t, func(c *config.Config) { c.PSNWidth = psnW; c.SackWidth = 64 })
		sp := p.space()
		rng := rand.New(rand.NewPCG(1, uint64(psnW)))
		rx, tx := NewReceiver(p), NewSender(p)
		first := sp.Wrap(sp.Mask() - 500) // cross the wrap point
		rx.Init(0, first)
		tx.Init(0, first)
		received := map[uint32]bool{}
		next := first
		var inflight []uint32
		reports := 0
		for round := 0; round < 3000; round++ {
			// Keep the window under W outstanding.
			for sp.Dist(tx.Una(0), next) < uint32(p.Width)-1 && len(inflight) < 8 {
				inflight = append(inflight, next)
				tx.Sent(0, next)
				next = sp.Add(next, 1)
			}
			if len(inflight) == 0 {
				continue
			}
			i := rng.IntN(min(len(inflight), 3)) // mild reordering
			q := inflight[i]
			inflight = append(inflight[:i], inflight[i+1:]...)
			if rng.IntN(10) == 0 {
				continue // lost
			}
			res := rx.Packet(0, q, false)
			if res.Class == ClassNew {
				received[q] = true
			}
			if rng.IntN(4) == 0 {
				continue // ACK lost
			}
			ack := tx.Ack(0, res.Cum, res.Bitmap)
			for b := 0; b < p.Width; b++ {
				if ack.Lost.Get(b) {
					lost := sp.Add(ack.Base, uint32(b))
					require.False(t, received[lost], "psn %d reported lost but was received", lost)
					reports++
					inflight = append(inflight, lost) // retransmit on the same path
				}
			}
		}
		require.Positive(t, reports)
	}
}

func TestBitmapOps(t *testing.T) {
	b := bm(256, 0, 1, 2, 70, 200)
	require.Equal(t, 3, b.TrailingOnes())
	require.Equal(t, 200, b.Highest())
	require.Equal(t, 5, b.Count())
	c := b.Clone()
	c.ShiftDown(3)
	require.Empty(t, cmp.Diff(bm(256, 67, 197), c, cmpBitmap))
	c.ShiftDown(64)
	require.Empty(t, cmp.Diff(bm(256, 3, 133), c, cmpBitmap))
	c.ClearFrom(100)
	require.Empty(t, cmp.Diff(bm(256, 3), c, cmpBitmap))
	d := bm(200, 0, 63, 64, 65, 130, 199)
	d.ClearBelow(64)
	require.Empty(t, cmp.Diff(bm(200, 64, 65, 130, 199), d, cmpBitmap))
	d.ClearFrom(65)
	require.Empty(t, cmp.Diff(bm(200, 64), d, cmpBitmap))
	d.Invert()
	require.Equal(t, 199, d.Count(), "padding above Len stays clear")
	require.False(t, d.Get(64))
	require.Empty(t, cmp.Diff(b, BitmapFromWords32(256, b.Words32()), cmpBitmap))
	full := NewBitmap(64)
	for i := 0; i < 64; i++ {
		full.Set(i)
	}
	require.Equal(t, 64, full.TrailingOnes())
	require.Equal(t, "64'h0000000000000005", bm(64, 0, 2).String())
}

// TestReceiverPacketInit covers the path-init rule: an INIT packet at or after cum
// re-initialises the entry at its PSN and is then new at the head; a stale copy behind cum is
// old and changes nothing.
func TestReceiverPacketInit(t *testing.T) {
	type step struct {
		psn      uint32
		init     bool // carries the path-init flag
		ackReq   bool
		class    Class
		cum      uint32
		bits     []int
		gap      bool
		gapFirst uint32
		gapCount uint32
		ackDue   bool
		reinit   bool
	}
	tests := []struct {
		name    string
		first   uint32
		psnW    int
		ackMode string
		everyN  int
		steps   []step
		want    RxCounters
	}{
		{"fresh init ahead of cum clears the bitmap", 100, 32, config.AckOnGap, 1, []step{
			{psn: 100, class: ClassNew, cum: 101},
			{psn: 103, class: ClassNew, cum: 101, bits: []int{2}, gap: true, gapFirst: 101, gapCount: 2, ackDue: true},
			{psn: 150, init: true, class: ClassNew, cum: 151, reinit: true},
			// The abandoned PSNs are now old, the new sequence continues without a gap.
			{psn: 103, class: ClassOld, cum: 151, ackDue: true},
			{psn: 151, class: ClassNew, cum: 152},
			{psn: 153, class: ClassNew, cum: 152, bits: []int{1}, gap: true, gapFirst: 152, gapCount: 1, ackDue: true},
		}, RxCounters{New: 5, Old: 1}},
		{"init exactly at cum", 10, 32, config.AckOnGap, 1, []step{
			{psn: 12, class: ClassNew, cum: 10, bits: []int{2}, gap: true, gapFirst: 10, gapCount: 2, ackDue: true},
			{psn: 10, init: true, ackReq: true, class: ClassNew, cum: 11, ackDue: true, reinit: true},
			// 12 was forgotten by the re-initialisation: new again, and 11 is a fresh gap.
			{psn: 12, class: ClassNew, cum: 11, bits: []int{1}, gap: true, gapFirst: 11, gapCount: 1, ackDue: true},
		}, RxCounters{New: 3}},
		{"stale init behind cum", 10, 32, config.AckOnGap, 1, []step{
			{psn: 10, init: true, class: ClassNew, cum: 11, reinit: true},
			{psn: 11, class: ClassNew, cum: 12},
			{psn: 13, class: ClassNew, cum: 12, bits: []int{1}, gap: true, gapFirst: 12, gapCount: 1, ackDue: true},
			{psn: 10, init: true, class: ClassOld, cum: 12, bits: []int{1}, ackDue: true},
			{psn: 11, init: true, class: ClassOld, cum: 12, bits: []int{1}, ackDue: true},
			{psn: 12, class: ClassNew, cum: 14},
		}, RxCounters{New: 4, Old: 2}},
		{"duplicate init copy right after the init", 500, 32, config.AckOnGap, 1, []step{
			{psn: 700, init: true, class: ClassNew, cum: 701, reinit: true},
			{psn: 700, init: true, class: ClassOld, cum: 701, ackDue: true},
		}, RxCounters{New: 1, Old: 1}},
		{"init beyond the window re-initialises too", 0, 32, config.AckOnGap, 1, []step{
			{psn: 3, class: ClassNew, cum: 0, bits: []int{3}, gap: true, gapFirst: 0, gapCount: 3, ackDue: true},
			{psn: 256, class: ClassBeyond, cum: 0, bits: []int{3}},
			{psn: 0x7fffffff, init: true, class: ClassNew, cum: 0x80000000, reinit: true},
			{psn: 3, class: ClassOld, cum: 0x80000000, ackDue: true},
		}, RxCounters{New: 2, Old: 1, Beyond: 1}},
		{"init half the space away is behind", 0, 32, config.AckOnGap, 1, []step{
			{psn: 0x80000000, init: true, class: ClassOld, cum: 0, ackDue: true},
		}, RxCounters{Old: 1}},
		{"wrap of the PSN space, 10 bits", 1020, 10, config.AckOnGap, 1, []step{
			{psn: 1020, class: ClassNew, cum: 1021},
			{psn: 1023, init: true, class: ClassNew, cum: 0, reinit: true},
			{psn: 1, class: ClassNew, cum: 0, bits: []int{1}, gap: true, gapFirst: 0, gapCount: 1, ackDue: true},
			{psn: 1022, init: true, class: ClassOld, cum: 0, bits: []int{1}, ackDue: true},
			{psn: 0, init: true, class: ClassNew, cum: 1, reinit: true},
			{psn: 1, class: ClassNew, cum: 2},
		}, RxCounters{New: 5, Old: 1}},
		{"wrap of the PSN space, 32 bits", 0xfffffff0, 32, config.AckOnGap, 1, []step{
			{psn: 0xffffffff, init: true, class: ClassNew, cum: 0, reinit: true},
			{psn: 0xfffffff0, init: true, class: ClassOld, cum: 0, ackDue: true},
			{psn: 0, class: ClassNew, cum: 1},
		}, RxCounters{New: 2, Old: 1}},
		{"without the flag it is Packet", 0, 32, config.AckOnGap, 1, []step{
			{psn: 5, class: ClassNew, cum: 0, bits: []int{5}, gap: true, gapFirst: 0, gapCount: 5, ackDue: true},
		}, RxCounters{New: 1}},
		{"every-n: the re-initialised count starts again", 0, 32, config.AckEveryN, 3, []step{
			{psn: 0, class: ClassNew, cum: 1},
			{psn: 1, class: ClassNew, cum: 2},
			{psn: 40, init: true, class: ClassNew, cum: 41, reinit: true}, // count 0 -> 1, not 3
			{psn: 41, class: ClassNew, cum: 42},
			{psn: 42, class: ClassNew, cum: 43, ackDue: true},
		}, RxCounters{New: 5}},
		{"every-n with n = 1 acknowledges the init", 0, 32, config.AckEveryN, 1, []step{
			{psn: 40, init: true, class: ClassNew, cum: 41, ackDue: true, reinit: true},
		}, RxCounters{New: 1}},
		{"every-packet", 7, 16, config.AckEveryPacket, 1, []step{
			{psn: 9, init: true, class: ClassNew, cum: 10, ackDue: true, reinit: true},
			{psn: 8, init: true, class: ClassOld, cum: 10, ackDue: true},
		}, RxCounters{New: 1, Old: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := testParams(t, func(c *config.Config) {
				c.PSNWidth = tc.psnW
				c.AckPolicy.Mode, c.AckPolicy.EveryN = tc.ackMode, tc.everyN
			})
			r := NewReceiver(p)
			r.Init(5, tc.first)
			for i, s := range tc.steps {
				got := r.PacketInit(5, s.psn, s.ackReq, s.init)
				want := RxResult{Class: s.class, Cum: s.cum, Bitmap: bm(p.Width, s.bits...), AckDue: s.ackDue,
					GapValid: s.gap, GapFirst: s.gapFirst, GapCount: s.gapCount, PathInit: s.reinit}
				if d := cmp.Diff(want, got, cmpBitmap); d != "" {
					t.Fatalf("step %d (psn %d init %v) (-want +got):\n%s", i, s.psn, s.init, d)
				}
				require.Equal(t, s.cum, r.Cum(5))
			}
			require.Equal(t, tc.want, r.Counters)
		})
	}
}

// TestPacketInitWithoutFlagIsPacket runs random traffic through two receivers, one with Packet
// and one with PacketInit(…, false), and requires identical results.
func TestPacketInitWithoutFlagIsPacket(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.PSNWidth = 12; c.SackWidth = 64 })
	a, b := NewReceiver(p), NewReceiver(p)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		idx, q, req := rng.IntN(4), uint32(rng.IntN(300)), rng.IntN(8) == 0
		want, got := a.Packet(idx, q, req), b.PacketInit(idx, q, req, false)
		if d := cmp.Diff(want, got, cmpBitmap); d != "" {
			t.Fatalf("packet %d (-Packet +PacketInit):\n%s", i, d)
		}
	}
	require.Equal(t, a.Counters, b.Counters)
}

// TestPeekInitChangesNothing runs one receiver that peeks before every packet (and sometimes
// only peeks, as for a refused packet) beside one that never peeks and sees only the committed
// packets: their results and counters stay equal, and every peek reports the classification
// the commit then makes, with the entry as it stood.
func TestPeekInitChangesNothing(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.PSNWidth = 12; c.SackWidth = 64 })
	peeker, plain := NewReceiver(p), NewReceiver(p)
	rng := rand.New(rand.NewPCG(5, 6))
	refused, reinits := 0, 0
	for i := 0; i < 20000; i++ {
		idx, q := rng.IntN(4), uint32(rng.IntN(300))
		req, init := rng.IntN(8) == 0, rng.IntN(10) == 0
		before, beforeBits := peeker.Cum(idx), peeker.entries[idx].bitmap.Clone()
		peek := peeker.PeekInit(idx, q, req, init)
		require.Equal(t, before, peek.Cum, "packet %d: the peek reports the entry as it stands", i)
		require.True(t, beforeBits.Equal(peek.Bitmap), "packet %d: peek bitmap", i)
		if rng.IntN(10) == 0 {
			refused++ // only looked at: the entry must not have moved
			require.Equal(t, before, peeker.Cum(idx))
			require.True(t, beforeBits.Equal(peeker.entries[idx].bitmap))
			continue
		}
		got, want := peeker.PacketInit(idx, q, req, init), plain.PacketInit(idx, q, req, init)
		if d := cmp.Diff(want, got, cmpBitmap); d != "" {
			t.Fatalf("packet %d (-never peeked +peeked first):\n%s", i, d)
		}
		require.Equal(t, got.Class, peek.Class, "packet %d: class", i)
		require.Equal(t, got.PathInit, peek.PathInit, "packet %d: path init", i)
		require.Equal(t, got.AckDue, peek.AckDue, "packet %d: ack due", i)
		require.Equal(t, [3]any{got.GapValid, got.GapFirst, got.GapCount},
			[3]any{peek.GapValid, peek.GapFirst, peek.GapCount}, "packet %d: gap", i)
		if got.PathInit {
			reinits++
		}
	}
	require.Equal(t, plain.Counters, peeker.Counters, "peeks are not counted")
	require.Greater(t, refused, 1000)
	require.Greater(t, reinits, 10)
}
