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
