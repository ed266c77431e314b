package sender

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// AckIn is an ACK's fields the sender uses.
type AckIn struct {
	Conn, Path int         // this NIC's connection index (the ACK's conn id) and path
	Cum        uint32      // cumulative PSN
	Bitmap     sack.Bitmap // SACK bits aligned to Cum (bit 0 unused), sack_width bits
	ECN        uint16      // ECN echo
	TSEcho     uint32      // timestamp echo
	Hint       uint16      // rate hint
}

// Done is a message every packet of which has been acknowledged: the sender's completion.
type Done struct {
	Conn, Stream int
	MSN          uint32
	ID           uint64
}

// Ack processes an ACK at now and returns the messages it completed, in the order they
// completed (package doc, "An ACK").
func (s *Sender) Ack(now uint64, a AckIn) ([]Done, error) {
	if err := s.checkPath(a.Conn, a.Path); err != nil {
		return nil, err
	}
	if a.Bitmap.Len() != s.p.Sack.Width {
		return nil, fmt.Errorf("sender: ACK bitmap of %d bits, want %d", a.Bitmap.Len(), s.p.Sack.Width)
	}
	s.Counters.Acks++
	c, path := a.Conn, a.Path
	cn := s.conn(c)
	if s.win.Path(c, path).State == window.Failed {
		s.Counters.AcksOnFailedPath++
		return nil, nil
	}
	var done []Done
	idx := s.index(c, path)
	oldUna := s.stx.Una(idx)
	ar := s.stx.Ack(idx, a.Cum, a.Bitmap)
	var cumAdv, sacked uint32
	if ar.Status == sack.AckAccepted {
		recs := &cn.recs[path]
		for p := oldUna; p != ar.Base; p = s.psns.Add(p, 1) {
			if r := recs.lookup(p); r != nil {
				if !r.sacked {
					cumAdv++
					done = s.acked(cn, r, done)
				}
				recs.remove(r)
			}
		}
		for i := 1; i < a.Bitmap.Len(); i++ {
			if !a.Bitmap.Get(i) {
				continue
			}
			if r := recs.lookup(s.psns.Add(ar.Base, uint32(i))); r != nil && !r.sacked {
				r.sacked = true
				sacked++
				done = s.acked(cn, r, done)
			}
		}
		for i := 0; i < ar.Lost.Len(); i++ {
			if !ar.Lost.Get(i) {
				continue
			}
			// A retransmitted copy sent after the packet that triggered this ACK is still on
			// its way: the ACK cannot know about it.
			if r := recs.lookup(s.psns.Add(ar.Base, uint32(i))); r != nil && (!r.retx || sentBefore(r.sentAt, a.TSEcho)) {
				s.Counters.SackLosses++
				s.queueRetx(c, path, r)
			}
		}
	}
	if ar.Status == sack.AckAccepted || ar.Status == sack.AckDuplicate {
		cn.probed[path] = false
		s.lostBefore(cn, path, a.TSEcho)
		s.win.AckUpdate(c, path, window.Ack{CumAdvance: uint16(min(cumAdv, 0xFFFF)), NewlySacked: uint16(min(sacked, 0xFFFF)),
			ECNEcho: a.ECN, TimestampEcho: a.TSEcho, RateHint: a.Hint}, s.ns(now))
		s.Counters.ECNEchoes += uint64(a.ECN)
	}
	cn.blocked = false
	cn.heard = true
	if cn.moved.Len() > 0 || s.startable(cn) {
		s.addWork(cn)
	}
	return done, nil
}

// lostBefore resends every packet of the path an ACK proves lost by time: the ACK was
// triggered by a packet sent at echo, the path is FIFO (one 5-tuple, one route), so every
// packet whose latest copy left before it has arrived or was lost, and this ACK (which covers
// every PSN from its cumulative point up) does not acknowledge it.
func (s *Sender) lostBefore(cn *conn, path int, echo uint32) {
	idx := s.index(cn.idx, path)
	una, nxt := s.stx.Una(idx), s.stx.Nxt(idx)
	recs := &cn.recs[path]
	for p := una; p != nxt; p = s.psns.Add(p, 1) {
		r := recs.lookup(p)
		if r == nil || r.sacked || r.queued || r.inNIC {
			continue
		}
		if sentBefore(r.sentAt, echo) {
			s.Counters.TimeLosses++
			s.queueRetx(cn.idx, path, r)
		}
	}
}

// sentBefore reports whether ns timestamp a is before b (mod 2^32, serially).
func sentBefore(a, b uint32) bool { return nanos.Before(a, b) }

// nanos is the 32-bit serial space of ns timestamps (golden/psn's rule, as golden/window uses).
var nanos = psn.MustSpace(32)

// acked counts one packet of a message as delivered; the message completes when all its
// packets are, and the stream's oldest completed messages leave its ring.
func (s *Sender) acked(cn *conn, r *record, done []Done) []Done {
	if r.nakked {
		return done
	}
	e := cn.message(r.msg)
	if e == nil {
		return done // a packet of a message completed long ago
	}
	w, b := r.idx/64, uint64(1)<<(r.idx%64)
	if e.got[w]&b != 0 {
		return done // the other copy was acknowledged first
	}
	e.got[w] |= b
	e.acked++
	if e.acked < e.n {
		return done
	}
	done = append(done, Done{Conn: cn.idx, Stream: r.msg.stream, MSN: e.msn, ID: e.wr.ID})
	st := &cn.streams[r.msg.stream]
	for st.head != st.start && st.entry(st.head).complete() {
		st.head++
	}
	return done
}

// queueRetx schedules r for retransmission on its path, unless a copy is already queued or
// waits in a port queue (that copy is the retransmission). A full FIFO drops the request
// (package doc, "Tables").
func (s *Sender) queueRetx(c, path int, r *record) {
	if r.queued || r.inNIC || r.sacked {
		return
	}
	s.pushRetx(s.refOf(c, path, r), r)
}

// pushRetx puts ref (r's) in the retransmit FIFO and marks r queued; a full FIFO drops the
// request, counted, and r stays unqueued.
func (s *Sender) pushRetx(ref Ref, r *record) {
	if !s.retx.Push(ref) {
		s.Counters.RetxOverflows++
		return
	}
	r.queued = true
}

// NakIn is a NAK's fields the sender uses.
type NakIn struct {
	Conn, Path int
	PSN        uint32
	Code       wire.NakCode
	RNRDelay   uint16 // wire.RNRDelayUnitUS units
}

// Nak processes a receiver's refusal of the packet PSN on the path at now (package doc, "A
// NAK"). It reports the time of the RNR retry it queued, if any.
func (s *Sender) Nak(now uint64, n NakIn) (uint64, bool, error) {
	if err := s.checkPath(n.Conn, n.Path); err != nil {
		return 0, false, err
	}
	s.Counters.Naks++
	cn := s.conn(n.Conn)
	r := cn.recs[n.Path].lookup(s.psns.Wrap(n.PSN))
	if r == nil {
		return 0, false, nil // stale: its packet was acknowledged, moved or forgotten since
	}
	s.win.Heard(n.Conn, n.Path, s.ns(now))
	if n.Code != wire.NakReceiverNotReady {
		r.nakked = true
		s.Counters.MessagesFailed++
		return 0, false, nil
	}
	if r.queued || r.inNIC || r.sacked {
		return 0, false, nil // a copy is about to leave, or the PSN got through after all
	}
	due := now + uint64(n.RNRDelay)*wire.RNRDelayUnitUS*1000*s.p.TicksPerNS
	if !s.retries.Push(retry{due: due, ref: s.refOf(n.Conn, n.Path, r)}) {
		s.Counters.RetryOverflows++
		return 0, false, nil
	}
	r.queued, r.waiting = true, true // loss recovery and timeout copies leave it alone until then
	return due, true, nil
}

func (s *Sender) checkPath(c, path int) error {
	if c < 0 || c >= s.p.conns() || path < 0 || path >= s.p.paths() {
		return fmt.Errorf("sender: connection %d path %d outside %d×%d", c, path, s.p.conns(), s.p.paths())
	}
	return nil
}
