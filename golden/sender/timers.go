package sender

import (
	"math"

	"github.com/mrgen/mrgen/golden/window"
)

// Arm starts the periodic scan if it is not running: it reports the time of its first run,
// ScanTicks after now. The host arms it whenever it hands the unit something to do (a post,
// a received packet).
func (s *Sender) Arm(now uint64) (uint64, bool) {
	if s.scanOn {
		return 0, false
	}
	s.scanOn, s.scanAt = true, now+s.p.ScanTicks
	return s.scanAt, true
}

// Scan is the periodic timer scan at now (package doc, "The scan"): every path of every
// connection that has sent gets its tail-loss probe and RTO check, in (connection, path)
// order. Rearm decides whether it runs again.
func (s *Sender) Scan(now uint64) {
	ns := s.ns(now)
	s.busy = false
	for c := range s.conns {
		cn := &s.conns[c]
		if !cn.sending {
			continue
		}
		for path := range cn.recs {
			// A path with neither a live record nor an armed timer has nothing to check: the
			// scan skips it, and it must, because every Expire is an operation on the
			// connection that moves its published window state (golden/window, "Published
			// state").
			if cn.recs[path].live == 0 && !s.win.Path(c, path).Armed {
				continue
			}
			s.tailProbe(cn, path, ns)
			x := s.win.Expire(c, path, ns)
			if x.Event != window.EventNone {
				cn.blocked = false
			}
			switch x.Event {
			case window.EventTimeout, window.EventSuspect:
				s.Counters.Timeouts++
				if x.Event == window.EventSuspect {
					s.Counters.PathsSuspect++
				}
				if r := s.oldest(cn, path); r != nil {
					s.Counters.RTORetransmissions++
					s.queueRetx(c, path, r)
				}
				s.copyOff(cn, path)
			case window.EventFailed:
				s.Counters.Timeouts++
				s.Counters.PathsFailed++
				for _, r := range s.unacked(cn, path) {
					if !r.copied { // a copied packet was already resent elsewhere
						s.Counters.Moved++
						s.move(cn, path, r)
					}
				}
				cn.recs[path].clear()
			case window.EventProbe:
				s.Counters.PathsProbed++
				for _, r := range s.unacked(cn, path) {
					s.move(cn, path, r)
				}
				cn.recs[path].clear()
				s.stx.Init(s.index(c, path), s.win.Path(c, path).NextPSN)
				cn.needInit[path] = true
			}
		}
		if s.win.Conn(c).Inflight > 0 || cn.moved.Len() > 0 || s.startable(cn) || s.hasFailed(c) {
			s.busy = true
		}
	}
}

// Rearm ends a scan once the packets it made ready have been taken (Next until no port has
// room): the scan runs again ScanTicks after its last run if that run found a connection with
// packets in flight, packets to move, work to start or a path not Active, or if the retransmit
// FIFO is not empty; otherwise it stops until the next Arm.
func (s *Sender) Rearm() (uint64, bool) {
	if s.busy || s.retx.Len() > 0 {
		s.scanAt += s.p.ScanTicks
		return s.scanAt, true
	}
	s.scanOn = false
	return 0, false
}

// Retry queues the record of every RNR retry at the head of the FIFO that is due at now for
// retransmission on its path. A record forgotten or reallocated since (its path failed or was
// probed, or it was acknowledged) is not resent; a full retransmit FIFO drops the request and
// the record's queued flag clears, as queueRetx does. Retries fall due in FIFO order when the
// receivers' RNR delays are constant; should a peer's delay shrink, a retry behind a later one
// goes with it (late, never lost).
func (s *Sender) Retry(now uint64) {
	for s.retries.Len() > 0 && s.retries.Front().due <= now {
		rt := s.retries.Pop()
		r := s.resolve(rt.ref)
		if r == nil || !r.waiting {
			continue
		}
		r.waiting, r.queued = false, false
		s.Counters.RNRRetries++
		s.pushRetx(rt.ref, r)
	}
}

// NextTimer is the earliest pending timer: the scan, the oldest RNR retry or the pacing
// wake-up, and whether any is pending.
func (s *Sender) NextTimer() (uint64, bool) {
	t, ok := uint64(math.MaxUint64), false
	if s.scanOn {
		t, ok = s.scanAt, true
	}
	if s.retries.Len() > 0 && s.retries.Front().due < t {
		t, ok = s.retries.Front().due, true
	}
	if s.wakeAt != 0 && s.wakeAt < t {
		t, ok = s.wakeAt, true
	}
	return t, ok
}

// tailProbe resends a path's oldest unacknowledged packet when the path has been silent for
// max(2·SRTT, SRTT + 4·RTTVar) plus the ACK delay (at least TailProbeMinNS) since it left;
// one probe per ACK.
func (s *Sender) tailProbe(cn *conn, path int, ns uint32) {
	if cn.probed[path] || cn.recs[path].live == 0 {
		return
	}
	e := s.win.Path(cn.idx, path)
	if e.State == window.Failed {
		return
	}
	// A connection's first packet (alone under the first-RTT gate, no RTT sample yet) waits
	// FirstProbeNS; other paths without a sample have no basis for a probe and wait for the RTO.
	pto := uint32(s.p.FirstProbeNS)
	if !e.RTTValid && cn.heard {
		return
	}
	if e.RTTValid {
		pto = max(max(2*e.SRTT, e.SRTT+4*e.RTTVar)+uint32(s.p.AckDelayNS), uint32(s.p.TailProbeMinNS))
	}
	r := s.oldest(cn, path)
	if r == nil || r.queued || r.inNIC {
		return
	}
	if d := ns - r.sentAt; !nanos.Negative(d) && d > pto {
		cn.probed[path] = true
		s.Counters.TailProbes++
		s.queueRetx(cn.idx, path, r)
	}
}

// copyOff sends a copy of every unacknowledged packet of a path that timed out to the paths
// SendDecision picks (once per packet); the path keeps its packets.
func (s *Sender) copyOff(cn *conn, path int) {
	for _, r := range s.unacked(cn, path) {
		if r.copied || r.nakked || r.waiting {
			continue
		}
		r.copied = true
		s.Counters.RTOCopies++
		s.pushMoved(cn, movedPkt{msg: r.msg, idx: r.idx})
	}
	if cn.moved.Len() > 0 {
		s.addWork(cn)
	}
}

// move takes r off its path: it will be resent as a new packet on a path SendDecision picks.
func (s *Sender) move(cn *conn, path int, r *record) {
	s.pushMoved(cn, movedPkt{msg: r.msg, idx: r.idx})
	cn.recs[path].remove(r)
	s.addWork(cn)
}

// pushMoved appends to cn's moved FIFO; a full FIFO drops the packet (package doc, "Tables").
func (s *Sender) pushMoved(cn *conn, m movedPkt) {
	if !cn.moved.Push(m) {
		s.Counters.MovedOverflows++
	}
}

func (s *Sender) hasFailed(c int) bool {
	for p := range s.p.paths() {
		if s.win.Path(c, p).State != window.Active {
			return true
		}
	}
	return false
}

// oldest is the path's oldest unacknowledged packet that is not waiting for its RNR retry
// (the retry resends that one; a probe or an RTO looks past it, so that a lost packet behind
// it is not left to wait for the receiver to become ready).
func (s *Sender) oldest(cn *conn, path int) *record {
	idx := s.index(cn.idx, path)
	una, nxt := s.stx.Una(idx), s.stx.Nxt(idx)
	for p := una; p != nxt; p = s.psns.Add(p, 1) {
		if r := cn.recs[path].lookup(p); r != nil && !r.sacked && !r.waiting {
			return r
		}
	}
	return nil
}

// unacked lists a path's unacknowledged packets in PSN order.
func (s *Sender) unacked(cn *conn, path int) []*record {
	idx := s.index(cn.idx, path)
	una, nxt := s.stx.Una(idx), s.stx.Nxt(idx)
	var out []*record
	for p := una; p != nxt; p = s.psns.Add(p, 1) {
		if r := cn.recs[path].lookup(p); r != nil && !r.sacked {
			out = append(out, r)
		}
	}
	return out
}
