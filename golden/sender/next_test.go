package sender

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/wire"
)

// TestSegmentation: messages are cut into mtu packets round robin over streams; First on
// packet 0, Last|AckReq on the last; a WRITE carries its rkey and the VA of each packet's
// first byte, a SEND its offset; the DMA read is the local buffer at the packet's offset.
func TestSegmentation(t *testing.T) {
	r := newRig(t, 1, nil)
	r.hello(0)
	r.post(0, 0, wire.OpWrite, 2500, 1)
	r.post(0, 1, wire.OpSend, 1500, 2)
	got := r.drain()
	type seg struct {
		Stream         int
		Op             wire.Opcode
		Flags          wire.Flags
		PSN, MSN       uint32
		MsgLen, Offset uint32
		RKey           uint32
		VA, Local      uint64
		Len            uint32
		WireConn       uint16
	}
	w, s := wire.OpWrite, wire.OpSend
	last := wire.FlagLast | wire.FlagAckReq
	want := []seg{
		{0, w, wire.FlagFirst, 0, 0, 2500, 0, 0x55, 1 << 32, 1<<20 + 1<<16, 1024, 7},
		{1, s, wire.FlagFirst, 1, 0, 1500, 0, 0, 0, 1<<20 + 2<<16, 1024, 7},
		{0, w, 0, 2, 0, 2500, 1024, 0x55, 1<<32 + 1024, 1<<20 + 1<<16 + 1024, 1024, 7},
		{1, s, last, 3, 0, 1500, 1024, 0, 0, 1<<20 + 2<<16 + 1024, 476, 7},
		{0, w, last, 4, 0, 2500, 2048, 0x55, 1<<32 + 2048, 1<<20 + 1<<16 + 2048, 452, 7},
	}
	var have []seg
	for _, pk := range got {
		require.Equal(t, KindNew, pk.Kind)
		have = append(have, seg{pk.Stream, pk.Op, pk.Flags, pk.PSN, pk.MSN, pk.MsgLen, pk.Offset, pk.RKey, pk.VA, pk.Local, pk.Len, pk.WireConn})
	}
	require.Empty(t, cmp.Diff(want, have))
	// The header is what the wire carries.
	h := got[2].Header()
	require.Equal(t, &wire.WriteExt{MsgLen: 2500, RKey: 0x55, VA: 1<<32 + 1024}, h.Write)
	require.Equal(t, &wire.SendExt{MsgLen: 1500, Offset: 1024}, got[3].Header().Send)
}

// TestFirstRTTGate: before its receiver answers, a connection has one packet in flight; it
// asks for an immediate ACK and carries the ANNOUNCE; the ACK opens the gate.
func TestFirstRTTGate(t *testing.T) {
	r := newRig(t, 1, nil)
	r.post(0, 0, wire.OpWrite, 3*testMTU, 1)
	first := r.drain()
	require.Len(t, first, 1)
	require.True(t, first[0].Announce)
	require.Equal(t, wire.FlagFirst|wire.FlagAckReq, first[0].Flags)
	require.Equal(t, &wire.Packet{BTH: wire.BTH{Opcode: wire.OpAnnounce, ConnID: 7}, Announce: &wire.Announce{}}, first[0].AnnounceHeader())
	r.now = 1000
	require.Empty(t, r.drain(), "gated: blocked until an ACK")
	r.ack(0, 0, 1, nil, 0, 0)
	rest := r.drain()
	require.Empty(t, cmp.Diff([]brief{
		{KindNew, 0, 1, 0, 1, 0},
		{KindNew, 0, 2, 0, 2, wire.FlagLast | wire.FlagAckReq},
	}, briefs(rest)))
	require.False(t, rest[0].Announce)
	require.Equal(t, uint64(1), r.s.Counters.Announces)
}

// TestPacing: a connection is paced at its last rate hint, may catch up four frames, and asks
// for a wake-up when its pacer holds it.
func TestPacing(t *testing.T) {
	for _, tc := range []struct {
		bytes int
		hint  uint16
		ticks uint64
		want  uint64
	}{
		{1000, 1000, 1, 80},             // 1000 B at 100 Gb/s: 80 ns
		{4200, 1000, 1000, 336000},      // in picoseconds
		{1124, 1000, 1, 90},             // 89.92 ns rounds to 90
		{33, 2816, 1000, 938},           // an exact half rounds up
		{1000, 1, 1, 80000},             // 100 Mb/s
		{0, 65535, 1000, 0},             // nothing to send takes no time
		{9000 + 100, 65535, 1, 11},      // 11.108 ns
		{64, 3, 1, 1707},                // 1706.67 ns
		{1024 + 100, 500, 1000, 179840}, // 50 Gb/s
	} {
		require.Equal(t, tc.want, PaceGap(tc.bytes, tc.hint, tc.ticks), "%+v", tc)
	}

	r := newRig(t, 1, nil)
	r.now = 10_000
	r.ack(0, 0, 0, nil, 0, 1000) // heard, RTT 10 µs, hint 100 Gb/s
	r.post(0, 0, wire.OpWrite, 8*testMTU, 1)
	gap := PaceGap(testMTU+testOverhead, 1000, 1)
	require.Len(t, r.drain(), 5, "one frame plus four of catch-up")
	require.Equal(t, []uint64{10_000 - 4*gap + 5*gap}, r.s.TakeWakes())
	r.now = 10_000 - 4*gap + 5*gap - 1
	require.Empty(t, r.drain())
	require.Empty(t, r.s.TakeWakes(), "the pending wake-up is not asked for again")
	r.s.Woke(r.now + 1)
	r.now++
	require.Len(t, r.drain(), 1)
	require.Equal(t, []uint64{r.now + gap}, r.s.TakeWakes())
	at, ok := r.s.NextTimer()
	require.True(t, ok)
	require.Equal(t, r.now+gap, at)
}
