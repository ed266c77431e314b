package sender

import (
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// paceBurst is how many frames a paced connection may send back to back to catch up.
const paceBurst = 4

// Next is the next data packet to send at now, if any: the oldest entry of the retransmit FIFO
// that is still to be resent, else a moved or new packet of the next connection in the work
// list that has one and a window for it. Call it while a port has room for a data packet.
func (s *Sender) Next(now uint64) (Packet, bool) {
	for s.retx.Len() > 0 {
		if pk, ok := s.retransmit(s.retx.Pop()); ok {
			return pk, true
		}
	}
	return s.produce(now)
}

// retransmit resends the record ref names on its path, unless it is stale or SACKed by now;
// a record of a path that failed since it was queued is moved instead.
func (s *Sender) retransmit(ref Ref) (Packet, bool) {
	r := s.resolve(ref)
	if r == nil {
		return Packet{}, false
	}
	r.queued = false
	if r.sacked {
		return Packet{}, false
	}
	cn := &s.conns[ref.Conn]
	if s.win.Path(ref.Conn, ref.Path).State == window.Failed {
		s.move(cn, ref.Path, r)
		return Packet{}, false
	}
	e := cn.message(r.msg)
	if e == nil {
		s.Counters.StaleDropped++
		return Packet{}, false
	}
	s.Counters.Retransmissions++
	return s.describe(cn, ref.Path, r, e, KindRetx), true
}

// produce sends one moved or new packet of the next connection in the work list that has one
// and a window for it.
func (s *Sender) produce(now uint64) (Packet, bool) {
	for tries := 0; tries < len(s.work); tries++ {
		if s.workPos >= len(s.work) {
			s.workPos = 0
		}
		cn := &s.conns[s.work[s.workPos]]
		s.dropStaleMoved(cn)
		if cn.moved.Len() == 0 && !s.startable(cn) {
			// Nothing to send: leave the work list.
			cn.inWork = false
			s.work = append(s.work[:s.workPos], s.work[s.workPos+1:]...)
			tries--
			if len(s.work) == 0 {
				return Packet{}, false
			}
			continue
		}
		s.workPos++
		if cn.blocked {
			continue
		}
		if cn.nextSend > now {
			s.wake(cn.nextSend)
			continue
		}
		if !cn.heard && cn.sending && s.win.Conn(cn.idx).Inflight > 0 {
			// First-RTT gate: one packet in flight until the receiver has answered.
			cn.blocked = true
			continue
		}
		if recordsFull(cn) {
			// No record for the next PSN of some path: only an ACK or a timer event of the
			// connection frees one (package doc, "Tables").
			cn.blocked = true
			s.Counters.BlockedRecords++
			continue
		}
		d := s.win.SendDecision(cn.idx, s.ns(now))
		if !d.OK {
			// The window state changes only with an ACK or a timer event of this connection.
			cn.blocked = true
			s.Counters.Blocked[d.Reason]++
			continue
		}
		return s.sendNew(now, cn, d), true
	}
	return Packet{}, false
}

// sendNew builds the packet SendDecision d allowed: cn's oldest moved packet, else its next
// new one.
func (s *Sender) sendNew(now uint64, cn *conn, d window.Decision) Packet {
	kind := KindNew
	var msg msgRef
	var idx uint32
	if cn.moved.Len() > 0 {
		m := cn.moved.Pop()
		msg, idx, kind = m.msg, m.idx, KindMoved
		s.Counters.MovedSent++
	} else {
		msg, idx = s.nextNew(cn)
	}
	r := cn.recs[d.Path].insert(d.PSN)
	r.msg, r.idx = msg, idx
	if cn.needInit[d.Path] {
		r.init, cn.needInit[d.Path] = true, false
	}
	announce := !cn.sending && !cn.heard && s.p.Announce
	if announce {
		s.Counters.Announces++
	}
	cn.sending = true
	s.stx.Sent(s.index(cn.idx, d.Path), d.PSN)
	s.Counters.DataSent++
	pk := s.describe(cn, d.Path, r, cn.message(msg), kind)
	pk.Announce = announce
	s.pace(now, cn, s.p.overhead(pk.Op)+int(pk.Len))
	return pk
}

// dropStaleMoved drops the moved packets at the head of cn's FIFO whose message slot has been
// reposted (package doc, "Stale references").
func (s *Sender) dropStaleMoved(cn *conn) {
	for cn.moved.Len() > 0 && cn.message(cn.moved.Front().msg) == nil {
		cn.moved.Pop()
		s.Counters.StaleDropped++
	}
}

// pace spaces a connection's new packets at the rate hint it last received: the gap after a
// frame of wireBytes is its wire time at the hinted rate, rounded to the nearest tick (half
// up). No hint (0): no pacing.
func (s *Sender) pace(now uint64, cn *conn, wireBytes int) {
	hint := uint64(s.win.Conn(cn.idx).RateHint)
	if hint == 0 {
		return
	}
	gap := PaceGap(wireBytes, uint16(hint), s.p.TicksPerNS)
	// A connection that fell behind its pace may catch up by a few frames, not more.
	floor := uint64(0)
	if now > paceBurst*gap {
		floor = now - paceBurst*gap
	}
	cn.nextSend = max(cn.nextSend, floor) + gap
}

// PaceGap is the time wireBytes take at rate hint hint (wire.RateHintUnitMbps units), in ticks
// of 1/ticksPerNS ns, rounded half up: wireBytes·8000·ticksPerNS / (hint·unit).
func PaceGap(wireBytes int, hint uint16, ticksPerNS uint64) uint64 {
	den := uint64(hint) * wire.RateHintUnitMbps
	return (2*uint64(wireBytes)*8000*ticksPerNS + den) / (2 * den)
}

// wake asks for a wake-up at t, when no earlier one is pending (the earliest wins).
func (s *Sender) wake(t uint64) {
	if s.wakeAt != 0 && s.wakeAt <= t {
		return
	}
	s.wakeAt = t
	s.wakes = append(s.wakes, t)
}

// TakeWakes returns the pacing wake-ups asked for since the last call, in the order asked.
// Each is a time at which Next may have a packet that it had not at the time of asking.
func (s *Sender) TakeWakes() []uint64 {
	w := s.wakes
	s.wakes = nil
	return w
}

// Woke is told that the pacing wake-up asked for t has come: the pending one is cleared if it
// is that one.
func (s *Sender) Woke(t uint64) {
	if s.wakeAt == t {
		s.wakeAt = 0
	}
}

// Left is told that the packet of ref left the NIC at now: the record's copy is on the wire,
// sent at now (the timestamp the MAC stamped). A stale ref is ignored.
func (s *Sender) Left(now uint64, ref Ref) {
	if r := s.resolve(ref); r != nil {
		r.inNIC, r.sentAt = false, s.ns(now)
	}
}
