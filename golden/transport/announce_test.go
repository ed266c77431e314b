package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/wire"
)

// dropAnnounces stands in front of a NIC and loses every ANNOUNCE addressed to it.
type dropAnnounces struct {
	*NIC
	dropped int
}

func (d *dropAnnounces) Receive(now fabric.Time, port int, p *fabric.Packet) {
	if fr, ok := p.Payload.(*frame); ok && fr.w.BTH.Opcode == wire.OpAnnounce {
		d.dropped++
		return
	}
	d.NIC.Receive(now, port, p)
}

// TestAnnounceCountsTheSenderAndIsAnswered: each sender of a small incast announces itself once,
// the receiver counts it when the ANNOUNCE arrives (before its first data packet), and every
// answer is an ACK of the announced path carrying the cumulative PSN, no SACK bits, no ECN echo,
// the share of all senders and the ANNOUNCE's own timestamp.
func TestAnnounceCountsTheSenderAndIsAnswered(t *testing.T) {
	w := newWorld(t, smallTopo(), DefaultConfig())
	sent := map[int]uint32{}            // sender -> its ANNOUNCE's timestamp
	answers := map[int][]*wire.Packet{} // sender -> the answers to its ANNOUNCE
	counted := map[int]int{}            // sender -> receiver's count when its first data packet arrived
	firstData := map[int]bool{}
	w.net.OnDeliver = func(now fabric.Time, host, port int, p *fabric.Packet) {
		fw := p.Payload.(*frame).w
		switch {
		case fw.BTH.Opcode == wire.OpAnnounce:
			require.Equal(t, 0, host)
			require.True(t, p.Control, "ANNOUNCE rides the control class")
			require.False(t, firstData[p.Src], "the ANNOUNCE arrives before the first data packet")
			sent[p.Src] = fw.Announce.Timestamp
		case fw.BTH.Opcode.IsData() && host == 0 && !firstData[p.Src]:
			firstData[p.Src] = true
			counted[p.Src] = w.tn.NIC(0).ActiveSenders()
			require.Equal(t, len(sent), counted[p.Src], "every announced sender is counted, before its data")
		case fw.BTH.Opcode == wire.OpAck && p.Src == 0 && fw.Ack.TimestampEcho == sent[host]:
			answers[host] = append(answers[host], fw)
		}
	}
	for s := 1; s < 8; s++ {
		w.post(s, 0, 4, 64<<10)
	}
	w.sim.Run(20 * fabric.Millisecond)
	requireAllDelivered(t, w)
	require.Len(t, sent, 7, "one ANNOUNCE per connection")
	require.Len(t, counted, 7)
	// Hosts 1-3 share host 0's leaf: their ANNOUNCEs arrive 2 µs before those of hosts 4-7,
	// behind the spines, and are answered with a third each; when the second wave is answered
	// the first is answered again with the share of all 7.
	require.Len(t, answers, 7)
	for s, as := range answers {
		wantN := 1
		if s < 4 {
			wantN = 2
			require.Equal(t, uint16(100_000/3/wire.RateHintUnitMbps), as[0].Ack.RateHint, "sender %d: first wave", s)
		}
		require.Len(t, as, wantN, "sender %d", s)
		for _, a := range as {
			require.LessOrEqual(t, a.BTH.PSN, uint32(1), "the path's cum: at most the first data packet (one in flight) arrived before the answer")
			require.Equal(t, make([]uint64, len(a.Ack.Sack)), a.Ack.Sack)
			require.Zero(t, a.Ack.ECNEcho)
		}
		require.Equal(t, uint16(100_000/7/wire.RateHintUnitMbps), as[len(as)-1].Ack.RateHint, "sender %d: the share of all 7", s)
	}
	c := w.counters()
	require.Equal(t, uint64(7), c["announces_sent"])
	require.Equal(t, uint64(7), c["announces_received"])
	require.Equal(t, uint64(3), c["announces_refreshed"])
	require.Equal(t, uint64(10), c["announces_answered"])
	require.Zero(t, w.ledger.Totals.Retransmissions, "%v", c)
}

// TestAnnounceChangesNoSequenceState: an ANNOUNCE delivered to a receiver, on a path with
// packets received and lost, leaves the path's SACK entry as it was; a repeated one (the
// connection is already counted) is not answered.
func TestAnnounceChangesNoSequenceState(t *testing.T) {
	w := newWorld(t, smallTopo(), DefaultConfig())
	nic := w.tn.NIC(5)
	c, path := ConnIndex(5, 2), 3
	idx := nic.index(c, path)
	for _, psn := range []uint32{0, 1, 3} { // 2 lost
		nic.srx.Packet(idx, psn, false)
	}
	before := *nic.srx
	ann := func() *fabric.Packet {
		a := &wire.Packet{BTH: wire.BTH{Opcode: wire.OpAnnounce, ConnID: uint16(c), PathID: uint8(path)}, Announce: &wire.Announce{Timestamp: 123}}
		return &fabric.Packet{Src: 2, Dst: 5, Control: true, Bytes: nic.frameBytes(a), Payload: &frame{w: a}}
	}
	var acks []*wire.Packet
	w.net.OnDeliver = func(now fabric.Time, host, port int, p *fabric.Packet) {
		if fw := p.Payload.(*frame).w; host == 2 && fw.BTH.Opcode == wire.OpAck {
			acks = append(acks, fw)
		}
	}
	nic.Receive(0, 0, ann())
	require.Equal(t, 1, nic.ActiveSenders())
	w.sim.Run(50 * fabric.Microsecond)
	nic.Receive(w.sim.Now(), 0, ann()) // already counted: not answered
	w.sim.Run(100 * fabric.Microsecond)
	require.Equal(t, before.Counters, nic.srx.Counters)
	require.Equal(t, uint32(2), nic.srx.Cum(idx))
	// The entry still holds PSN 3 and still takes 2 as new.
	require.Equal(t, sack.ClassDuplicate, nic.srx.Packet(idx, 3, false).Class)
	require.Equal(t, sack.ClassNew, nic.srx.Packet(idx, 2, false).Class)
	require.Len(t, acks, 1, "one answer")
	require.Equal(t, uint32(2), acks[0].BTH.PSN)
	require.Equal(t, uint32(123), acks[0].Ack.TimestampEcho, "the echo is not advanced by the hold")
	require.Equal(t, uint8(path), acks[0].BTH.PathID)
	c2 := nic.Counters()
	require.Equal(t, uint64(2), c2["announces_received"])
	require.Equal(t, uint64(1), c2["announces_answered"])
	require.Equal(t, uint64(1), c2["announces_unanswered"])
}

// TestLostAnnounceCostsOnlyTheHeadStart: with every ANNOUNCE lost, the receiver counts each
// sender at its first data packet and answers it from the gather window, as without ANNOUNCE.
func TestLostAnnounceCostsOnlyTheHeadStart(t *testing.T) {
	w := newWorld(t, smallTopo(), DefaultConfig())
	d := &dropAnnounces{NIC: w.tn.NIC(0)}
	w.net.Attach(0, d)
	for s := 1; s < 8; s++ {
		w.post(s, 0, 4, 64<<10)
	}
	w.sim.Run(20 * fabric.Millisecond)
	requireAllDelivered(t, w)
	require.Equal(t, 7, d.dropped)
	c := w.tn.NIC(0).Counters()
	require.Zero(t, c["announces_received"])
	require.Equal(t, uint64(7), c["gathered_acks"], "each sender counted at its first data packet")
}

// TestNoAnnounceAnswerWithoutHints: a receiver that gives no rate hints has nothing to answer.
func TestNoAnnounceAnswerWithoutHints(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RateHints = false
	w := newWorld(t, smallTopo(), cfg)
	w.post(1, 0, 4, 64<<10)
	w.sim.Run(5 * fabric.Millisecond)
	requireAllDelivered(t, w)
	c := w.tn.NIC(0).Counters()
	require.Equal(t, uint64(1), c["announces_received"])
	require.Equal(t, uint64(1), c["announces_unanswered"])
	require.Zero(t, c["announces_answered"])
}

// TestAnnounceSwitch: with rate_hint.announce off no sender announces, and the receiver counts
// each sender at its first data packet (its gathered ACK brings the hint).
func TestAnnounceSwitch(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Announce = false
	w := newWorld(t, smallTopo(), cfg)
	for s := 1; s < 8; s++ {
		w.post(s, 0, 4, 64<<10)
	}
	w.sim.Run(20 * fabric.Millisecond)
	requireAllDelivered(t, w)
	c := w.counters()
	require.Zero(t, c["announces_sent"])
	require.Zero(t, c["announces_received"])
	require.Equal(t, uint64(7), w.tn.NIC(0).Counters()["gathered_acks"])
}
