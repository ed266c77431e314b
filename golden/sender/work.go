package sender

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/wire"
)

// WorkRequest is one message the host posts: a WRITE or SEND of Len bytes from its buffer at
// Local, on a stream of a connection.
type WorkRequest struct {
	Conn, Stream int
	Op           wire.Opcode // wire.OpWrite or wire.OpSend
	Len          uint32
	Local        uint64 // host address of the message's byte 0 (the payload's DMA reads)
	// WRITE: the receiver's address of byte 0 and the region's rkey. A SEND lands in the
	// receive the receiver posted for its (stream, MSN), so it carries neither.
	RemoteVA uint64
	RKey     uint32
	ID       uint64 // the host's cookie (wr_id), returned with the completion
}

// workEntry is one slot of a (connection, stream) work-request ring.
type workEntry struct {
	wr    WorkRequest
	msn   uint32 // the stream's post sequence number, which is also its MSN (tag of the slot)
	n     uint32 // packets
	next  uint32 // next packet to send for the first time
	acked uint32
	got   []uint64 // packets acknowledged (a packet may have copies on two paths)
}

// complete reports whether every packet of the message is acknowledged.
func (e *workEntry) complete() bool { return e.acked == e.n }

// stream is a (connection, stream) ring's pointers, as MSNs (mod 2^32): [head, start) are the
// started messages not all acknowledged in order (at most Depth), [start, tail) the posted
// ones not started. cur: message start−1 is still being cut into packets.
type stream struct {
	head, start, tail uint32
	cur               bool
	depth             uint32      // WorkDepth
	ring              []workEntry // slot msn mod depth; the Go storage grows to depth as MSNs do
}

// entry is the slot of msn (it must have been posted: the ring has grown past it).
func (st *stream) entry(msn uint32) *workEntry { return &st.ring[msn%st.depth] }

// startable reports whether the stream can send a new packet: its current message has packets
// left, or its next message may start (the receiver has a posted receive for it).
func (st *stream) startable(depth int) bool {
	return st.cur || st.tail != st.start && int(st.start-st.head) < depth
}

// msgRef names a message of a connection: its stream and MSN. It is stale when the ring slot
// holds a later message (the slot was reposted: package doc, "Stale references").
type msgRef struct {
	stream int
	msn    uint32
}

// PostWork writes a work request into its (connection, stream) ring. It does not schedule the
// connection: Doorbell does. A full ring refuses it with ErrQueueFull.
func (s *Sender) PostWork(now uint64, wr WorkRequest) error {
	p := s.p
	switch {
	case wr.Conn < 0 || wr.Conn >= p.conns() || wr.Stream < 0 || wr.Stream >= p.streams():
		return fmt.Errorf("sender: work request on connection %d stream %d outside %d×%d", wr.Conn, wr.Stream, p.conns(), p.streams())
	case wr.Op != wire.OpWrite && wr.Op != wire.OpSend:
		return fmt.Errorf("sender: work request opcode %v is not WRITE or SEND", wr.Op)
	case wr.Len > p.Placement.MaxMsgLen():
		return fmt.Errorf("sender: work request of %d bytes exceeds the %d-byte maximum", wr.Len, p.Placement.MaxMsgLen())
	}
	cn := s.conn(wr.Conn)
	st := &cn.streams[wr.Stream]
	if st.tail-st.head == st.depth {
		s.Counters.QueueFull++
		return ErrQueueFull
	}
	if int(st.tail%st.depth) == len(st.ring) {
		st.ring = append(st.ring, workEntry{})
	}
	e := st.entry(st.tail)
	n := uint32(p.Placement.Packets(wr.Len))
	*e = workEntry{wr: wr, msn: st.tail, n: n, got: e.got[:0]}
	for range (n + 63) / 64 {
		e.got = append(e.got, 0)
	}
	st.tail++
	return nil
}

// Doorbell schedules connection conn: it joins the work list if it is not on it.
func (s *Sender) Doorbell(now uint64, conn int) error {
	if conn < 0 || conn >= s.p.conns() {
		return fmt.Errorf("sender: doorbell of connection %d outside %d", conn, s.p.conns())
	}
	s.addWork(s.conn(conn))
	return nil
}

// startable reports whether a stream of cn can send a new packet.
func (s *Sender) startable(cn *conn) bool {
	for i := range cn.streams {
		if cn.streams[i].startable(s.p.depth()) {
			return true
		}
	}
	return false
}

// nextNew takes the next new packet of cn's streams, round robin over streams, starting the
// stream's next message when it has none being cut.
func (s *Sender) nextNew(cn *conn) (msgRef, uint32) {
	for k := range cn.streams {
		si := (cn.rrStream + k) % len(cn.streams)
		st := &cn.streams[si]
		if !st.cur && st.tail != st.start && int(st.start-st.head) < s.p.depth() {
			st.start++
			st.cur = true
		}
		if !st.cur {
			continue
		}
		e := st.entry(st.start - 1)
		idx := e.next
		e.next++
		if e.next == e.n {
			st.cur = false
		}
		cn.rrStream = (si + 1) % len(cn.streams)
		return msgRef{stream: si, msn: e.msn}, idx
	}
	panic("sender: nextNew without a startable stream")
}

// message is the ring entry of ref, or nil when the slot has been reposted since.
func (cn *conn) message(ref msgRef) *workEntry {
	st := &cn.streams[ref.stream]
	cn.agePeak = max(cn.agePeak, st.tail-ref.msn)
	e := st.entry(ref.msn)
	if e.msn != ref.msn {
		return nil
	}
	return e
}
