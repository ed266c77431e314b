package sender

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/wire"
)

// sent8 is a rig whose connection 0 has sent the 8 packets (PSN 0..7, path 0) of one WRITE at
// t=100, after its gate opened at t=0.
func sent8(t *testing.T) *rig {
	r := newRig(t, 1, nil)
	r.hello(0)
	r.post(0, 0, wire.OpWrite, 8*testMTU, 1)
	r.now = 100
	require.Len(t, r.drain(), 8)
	r.now = 1000
	return r
}

// TestAckProcessing: the cumulative PSN frees and acknowledges records, SACK bits acknowledge
// the others, and the PSNs golden/sack reports lost (or that loss by send time proves lost)
// are retransmitted on their path, in PSN order, before any new packet.
func TestAckProcessing(t *testing.T) {
	retx := func(psns ...uint32) []brief {
		var out []brief
		for _, p := range psns {
			flags := wire.FlagRetx | wire.FlagAckReq
			if p == 0 {
				flags |= wire.FlagFirst
			}
			if p == 7 {
				flags |= wire.FlagLast
			}
			out = append(out, brief{KindRetx, 0, p, 0, p, flags})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		cum       uint32
		sacks     []int
		echo      uint32
		want      []brief
		sackLoss  uint64
		timeLoss  uint64
		inflight  uint32
		completes bool
	}{
		{name: "cum only", cum: 3, echo: 50, inflight: 5},
		{name: "gaps below the highest SACK are lost", cum: 2, sacks: []int{2, 4}, echo: 50,
			want: retx(2, 3, 5), sackLoss: 3, inflight: 4},
		{name: "loss by send time", cum: 2, sacks: []int{1}, echo: 200,
			want: retx(2, 4, 5, 6, 7), sackLoss: 1, timeLoss: 4, inflight: 5},
		{name: "both, each PSN once", cum: 0, sacks: []int{3}, echo: 200,
			want: retx(0, 1, 2, 4, 5, 6, 7), sackLoss: 3, timeLoss: 4, inflight: 7},
		{name: "all", cum: 8, echo: 50, completes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sent8(t)
			done := r.ack(0, 0, tc.cum, tc.sacks, tc.echo, 0)
			if tc.completes {
				require.Equal(t, []Done{{Conn: 0, Stream: 0, MSN: 0, ID: 1}}, done)
			} else {
				require.Empty(t, done)
			}
			require.Equal(t, tc.inflight, r.s.Window().Path(0, 0).Inflight)
			require.Empty(t, cmp.Diff(tc.want, briefs(r.drain())))
			require.Equal(t, tc.sackLoss, r.s.Counters.SackLosses)
			require.Equal(t, tc.timeLoss, r.s.Counters.TimeLosses)
		})
	}
}

// TestRetransmittedCopyInFlight: a retransmitted packet is not found lost again by an ACK
// triggered by a packet sent before the copy left.
func TestRetransmittedCopyInFlight(t *testing.T) {
	r := sent8(t)
	r.ack(0, 0, 2, []int{2}, 50, 0) // 2, 3 lost
	r.now = 2000
	require.Len(t, r.drain(), 2) // resent at 2000
	r.now = 3000
	r.ack(0, 0, 2, []int{2, 3}, 100, 0) // triggered by a packet sent with the originals: no news
	require.Empty(t, r.drain())
	r.ack(0, 0, 2, []int{2, 3, 4}, 2500, 0) // sent after the copies: they (and 7) are lost
	require.Empty(t, cmp.Diff([]uint32{2, 3, 7}, psnsOf(r.drain())))
}

// TestCompletionOrder: messages complete when every packet is acknowledged, in any order, and
// the stream's next message may start once fewer than Depth are outstanding.
func TestCompletionOrder(t *testing.T) {
	r := newRig(t, 1, nil)
	r.hello(0)
	for id := uint64(1); id <= 3; id++ {
		r.post(0, 0, wire.OpSend, testMTU, id)
	}
	require.Empty(t, cmp.Diff([]uint32{0, 1}, psnsOf(r.drain())), "Depth 2: the third waits for a posted receive")
	require.Equal(t, []Done{{Conn: 0, Stream: 0, MSN: 1, ID: 2}}, r.ack(0, 0, 0, []int{1}, 0, 0))
	require.Empty(t, cmp.Diff([]brief{{KindRetx, 0, 0, 0, 0, wire.FlagFirst | wire.FlagLast | wire.FlagAckReq | wire.FlagRetx}}, briefs(r.drain())),
		"message 0 is outstanding (its packet, below the SACKed one, is resent): the third still waits")
	require.Equal(t, []Done{{Conn: 0, Stream: 0, MSN: 0, ID: 1}}, r.ack(0, 0, 2, nil, 0, 0))
	got := r.drain()
	require.Len(t, got, 1)
	require.Equal(t, uint32(2), got[0].MSN)
}

// TestNak: receiver-not-ready resends the packet on its path with its PSN RNRDelay later (one
// retry per NAK), and loss recovery leaves it alone until then; a NAK proves the path alive
// (the window's timer restarts); another code fails the message, whose acknowledgement is then
// not progress.
func TestNak(t *testing.T) {
	r := twoPacketsSent(t)
	due, ok, err := r.s.Nak(r.now, NakIn{Conn: 0, Path: 0, PSN: 1, Code: wire.NakReceiverNotReady, RNRDelay: 10})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(11_000), due)
	require.Equal(t, uint32(1000)+r.s.win.Published(0, 0).RTO, r.s.win.Path(0, 0).Deadline, "the NAK restarted the path's timer (at the published RTO)")
	at, _ := r.s.NextTimer()
	require.Equal(t, uint64(11_000), at, "the scan is not armed: the retry is the earliest timer")
	r.now = 2000
	require.Empty(t, r.ack(0, 0, 1, nil, 1500, 0), "packet 0 acknowledged")
	require.Empty(t, r.drain(), "the refused packet is lost by send time but waits for its retry")
	again, ok, err := r.s.Nak(r.now, NakIn{Conn: 0, Path: 0, PSN: 1, Code: wire.NakReceiverNotReady, RNRDelay: 10})
	require.NoError(t, err)
	require.False(t, ok, "a duplicate NAK of a waiting packet queues nothing: %d", again)
	r.s.Retry(10_999)
	require.Empty(t, r.drain())
	r.now = 11_000
	r.s.Retry(r.now)
	require.Empty(t, cmp.Diff([]brief{{KindRetx, 0, 1, 0, 1, wire.FlagLast | wire.FlagAckReq | wire.FlagRetx}}, briefs(r.drain())))
	require.Equal(t, []Done{{Conn: 0, Stream: 0, MSN: 0, ID: 1}}, r.ack(0, 0, 2, nil, 11_000, 0),
		"the resent packet's acknowledgement completes the message")
	require.Zero(t, r.s.Counters.MovedSent)

	// A retry whose packet got through after all (a duplicate of it was accepted) resends nothing.
	r.post(0, 0, wire.OpSend, testMTU, 2)
	require.Len(t, r.drain(), 1)
	_, ok, err = r.s.Nak(r.now, NakIn{Conn: 0, Path: 0, PSN: 2, Code: wire.NakReceiverNotReady, RNRDelay: 10})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []Done{{Conn: 0, Stream: 0, MSN: 1, ID: 2}}, r.ack(0, 0, 3, nil, 11_000, 0))
	r.now = 21_000
	r.s.Retry(r.now)
	require.Empty(t, r.drain())

	deadline := r.s.win.Path(0, 0).Deadline
	_, ok, err = r.s.Nak(r.now+500, NakIn{Conn: 0, Path: 0, PSN: 99, Code: wire.NakReceiverNotReady, RNRDelay: 10})
	require.NoError(t, err)
	require.False(t, ok, "no record: nothing")
	require.Equal(t, deadline, r.s.win.Path(0, 0).Deadline, "a stale NAK does not count as the path heard")
	r.post(0, 0, wire.OpSend, testMTU, 3)
	require.Len(t, r.drain(), 1)
	_, ok, err = r.s.Nak(r.now+700, NakIn{Conn: 0, Path: 0, PSN: 3, Code: wire.NakRKeyViolation})
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, uint32(r.now+700)+r.s.win.Path(0, 0).RTO, r.s.win.Path(0, 0).Deadline, "a fatal NAK is heard too")
	require.Equal(t, uint64(1), r.s.Counters.MessagesFailed)
	require.Empty(t, r.ack(0, 0, 4, nil, 21_000, 0), "the failed message's acknowledgement completes nothing")
	_, _, err = r.s.Nak(r.now, NakIn{Conn: 2, Path: 0})
	require.Error(t, err)
}

// TestRNRWaitingPacketDoesNotHideALoss: the path's oldest packet waits for its RNR retry while
// the receiver keeps refusing it (its NAKs keep the path's timer from firing); a packet sent
// after it and lost is found by the tail probe, which looks past the waiting one.
func TestRNRWaitingPacketDoesNotHideALoss(t *testing.T) {
	r := newRig(t, 1, nil)
	r.hello(0)
	r.post(0, 0, wire.OpSend, 2*testMTU, 1)
	require.Len(t, r.drain(), 2) // PSN 0 is refused, PSN 1 is lost
	r.now = 1000
	_, ok, err := r.s.Nak(r.now, NakIn{Conn: 0, Path: 0, PSN: 0, Code: wire.NakReceiverNotReady, RNRDelay: 500})
	require.NoError(t, err)
	require.True(t, ok)
	at, ok := r.s.Arm(r.now)
	require.True(t, ok)
	for r.s.Counters.TailProbes == 0 && at < 400_000 { // the RNR retry is due at 501,000
		r.now = at
		r.s.Scan(r.now)
		at, ok = r.s.Rearm()
		require.True(t, ok)
	}
	require.Equal(t, uint64(1), r.s.Counters.TailProbes, "probed by %d ns", r.now)
	require.Empty(t, cmp.Diff([]brief{{KindRetx, 0, 1, 0, 1, wire.FlagLast | wire.FlagAckReq | wire.FlagRetx}}, briefs(r.drain())),
		"the lost packet behind the waiting one is probed")
}

// TestRetriesOutOfOrder: a peer whose RNR delay shrinks makes a retry fall due before the one
// ahead of it in the FIFO; it goes with that one, late but not lost.
func TestRetriesOutOfOrder(t *testing.T) {
	r := twoPacketsSent(t)
	for _, n := range []NakIn{{PSN: 0, RNRDelay: 20}, {PSN: 1, RNRDelay: 5}} {
		n.Code = wire.NakReceiverNotReady
		_, ok, err := r.s.Nak(r.now, n)
		require.NoError(t, err)
		require.True(t, ok)
	}
	r.s.Retry(6000)
	require.Empty(t, r.drain(), "the head is not due")
	r.now = 21_000
	r.s.Retry(r.now)
	require.Empty(t, cmp.Diff([]uint32{0, 1}, psnsOf(r.drain())))
	require.Equal(t, uint64(2), r.s.Counters.RNRRetries)
}

// twoPacketsSent is a one-path rig that has sent a two-packet SEND (PSNs 0 and 1), at time 1000.
func twoPacketsSent(t *testing.T) *rig {
	r := newRig(t, 1, nil)
	r.hello(0)
	r.post(0, 0, wire.OpSend, 2*testMTU, 1)
	require.Len(t, r.drain(), 2)
	r.now = 1000
	return r
}
