package baseline

import (
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
)

// wqe is one posted message on a QP's send queue.
type wqe struct {
	msg   *traffic.Message
	first uint64 // absolute PSN of its first packet
	n     uint64 // packets
	write bool
	va    uint64 // Write: the remote address (RETH)
	buf   []byte // the message's bytes, filled at its first transmission, dropped when acked
}

// qp is one end of a reliable connection: the requester of this host's messages to peer and
// the responder of peer's messages to this host (the two directions share nothing but the QP's
// port and source ports, as in an RC QP).
type qp struct {
	nic    *NIC
	peer   int
	port   *nicPort
	sports []uint16 // UDP source ports; data rotates over them, ACKs and CNPs use the first

	// Requester. PSNs are absolute (64-bit) here; the wire carries (StartPSN + abs) mod 2^24.
	sq           []*wqe // messages not yet fully acknowledged, in order
	cur          int    // index in sq of the message holding nxt
	una, nxt     uint64 // oldest unacknowledged; next to send
	end          uint64 // one past the last packet posted
	maxSent      uint64 // one past the highest packet ever sent
	nextVA       uint64
	retries      int
	lastProgress fabric.Time
	rtoArmed     bool
	failed       bool
	tx           uint64 // data packets sent, for the source-port rotation
	rate         rateState
	lastTx       fabric.Time
	lastTxBytes  int
	active       bool

	// Responder.
	epsn    uint32 // expected PSN (24 bits)
	nakSent bool   // a NAK for the current epsn is out
	unacked int    // in-order packets since the last ACK
	// firstUnacked is when the oldest of them arrived.
	firstUnacked fabric.Time
	msn          uint32
	rx           rxMessage
	nextRecv     uint64 // next posted receive buffer
	lastCNP      fabric.Time
	cnpSent      bool
}

// rxMessage is the message the responder is placing (in order, so at most one per QP).
type rxMessage struct {
	open   bool
	id     uint64
	write  bool
	base   uint64
	off    uint64
	dmaLen uint32
}

func (q *qp) cfg() *Config { return &q.nic.c.cfg }

func (q *qp) wirePSN(abs uint64) uint32 {
	return q.nic.c.space.Wrap(q.cfg().StartPSN + uint32(abs))
}

// sendable reports whether the requester has a packet it may send (rate aside).
func (q *qp) sendable() bool {
	return !q.failed && q.nxt < q.end && q.nxt-q.una < MaxOutstanding
}

// activate puts the QP on its port's round robin when it has something to send.
func (q *qp) activate() {
	if !q.sendable() {
		return
	}
	if !q.active {
		q.active = true
		q.port.active = append(q.port.active, q)
	}
	q.nic.c.net.Kick(q.nic.host, q.port.idx)
}

// eligibleAt is when the rate limiter lets the next data packet go.
func (q *qp) eligibleAt() fabric.Time {
	if !q.rate.paced() || q.lastTxBytes == 0 {
		return 0
	}
	return q.lastTx + q.rate.gap(q.lastTxBytes)
}

// seek points cur at the message holding nxt.
func (q *qp) seek() {
	q.cur = 0
	for q.cur < len(q.sq) && q.sq[q.cur].first+q.sq[q.cur].n <= q.nxt {
		q.cur++
	}
}

// emit builds the data packet nxt and advances.
func (q *qp) emit(now fabric.Time) *fabric.Packet {
	c := q.nic.c
	w := q.sq[q.cur]
	idx := q.nxt - w.first
	if w.buf == nil && w.msg.Len > 0 {
		w.buf = make([]byte, w.msg.Len)
		traffic.Fill(w.msg.ID, 0, w.buf)
	}
	mtu := uint64(c.cfg.MTU)
	off := idx * mtu
	plen := min(mtu, uint64(w.msg.Len)-min(off, uint64(w.msg.Len)))
	op := dataOpcode(w.write, idx, w.n)
	d := &DataPacket{Opcode: op, PSN: q.wirePSN(q.nxt), AckReq: op.Last(), Data: w.buf[off : off+plen],
		MsgID: w.msg.ID, Index: uint32(idx)}
	bytes := PacketOverhead + int(plen)
	if w.write && idx == 0 {
		d.VA, d.DMALen = w.va, w.msg.Len
		bytes += RETHBytes
	}
	retrans := q.nxt < q.maxSent
	c.ledger.SentPacket(w.msg.ID, uint32(idx), retrans)
	q.nic.cnt.DataPackets++
	if retrans {
		q.nic.cnt.Retransmissions++
	}
	if q.una == q.maxSent {
		q.lastProgress = now // the timer starts with the first outstanding packet
	}
	q.nxt++
	q.maxSent = max(q.maxSent, q.nxt)
	if q.nxt == w.first+w.n {
		q.cur++
	}
	sport := q.sports[q.tx%uint64(len(q.sports))]
	q.tx++
	q.lastTx, q.lastTxBytes = now, bytes
	if q.rate.sent(bytes) {
		q.nic.cnt.RateIncreases++
	}
	q.armRTO()
	return &fabric.Packet{Dst: q.peer, SrcPort: sport, DstPort: UDPPort, Proto: 17, Bytes: bytes,
		ECN: fabric.ECT0, Payload: d}
}

// armRTO schedules the retransmission timer if it is not running.
func (q *qp) armRTO() {
	if q.rtoArmed {
		return
	}
	q.rtoArmed = true
	q.nic.c.sim.At(q.lastProgress+q.cfg().RTO, q.onRTO)
}

// onRTO is the local ACK timeout: with packets outstanding and no progress for RTO, go back to
// the oldest unacknowledged packet; after RetryLimit such retries in a row, the QP fails.
func (q *qp) onRTO() {
	q.rtoArmed = false
	if q.failed || q.una == q.maxSent {
		return
	}
	now := q.nic.c.sim.Now()
	if deadline := q.lastProgress + q.cfg().RTO; now < deadline {
		q.armRTO()
		return
	}
	q.nic.cnt.Timeouts++
	if !q.retry() {
		return
	}
	q.lastProgress = now
	q.rewind(q.una)
	q.armRTO()
}

// retry counts one retry without progress; false when that exceeded the limit and the QP
// failed.
func (q *qp) retry() bool {
	q.retries++
	if q.retries <= q.cfg().RetryLimit {
		return true
	}
	q.fail()
	return false
}

// fail moves the QP to the error state: every posted message is flushed, undelivered.
func (q *qp) fail() {
	q.failed = true
	q.nic.cnt.RetryExceeded++
	q.nic.cnt.MessagesFlushed += uint64(len(q.sq))
	for i := range q.sq {
		q.sq[i] = nil
	}
	q.sq, q.cur = nil, 0
	q.una, q.nxt, q.maxSent = q.end, q.end, q.end
}

// rewind is go-back-N: resend everything from absolute PSN from.
func (q *qp) rewind(from uint64) {
	q.nxt = from
	q.seek()
	q.activate()
}

// receiveAck handles an ACK or a NAK (sequence error) from the responder.
func (q *qp) receiveAck(now fabric.Time, a *AckPacket) {
	cnt := &q.nic.cnt
	if a.NAK {
		cnt.NAKsReceived++
	} else {
		cnt.ACKsReceived++
	}
	if q.failed {
		return
	}
	// The new una: one past the ACKed PSN, or the NAK's expected PSN.
	upTo := a.PSN
	if !a.NAK {
		upTo = q.nic.c.space.Add(upTo, 1)
	}
	sp := q.nic.c.space
	d := sp.Dist(q.wirePSN(q.una), upTo)
	if sp.Negative(d) || q.una+uint64(d) > q.maxSent {
		cnt.StaleAcks++ // behind una (a ghost ACK) or beyond anything sent
		return
	}
	if d > 0 {
		q.advance(now, q.una+uint64(d))
	}
	if !a.NAK {
		return
	}
	if d == 0 && !q.retry() {
		return
	}
	q.lastProgress = now
	q.rewind(q.una)
}

// advance frees everything before newUna and completes the messages it covers.
func (q *qp) advance(now fabric.Time, newUna uint64) {
	q.una = newUna
	q.retries = 0
	q.lastProgress = now
	done := 0
	for done < len(q.sq) && q.sq[done].first+q.sq[done].n <= q.una {
		w := q.sq[done]
		q.nic.c.ledger.SenderDone(now, w.msg.ID)
		w.buf = nil
		q.sq[done] = nil
		done++
	}
	q.sq = q.sq[done:]
	if q.nxt < q.una {
		q.nxt = q.una // an ACK of copies sent before a rewind
	}
	q.seek()
	q.activate() // a QP held at MaxOutstanding may send again
}

// receiveCNP is the reaction point: cut the rate, at most once per DecreaseInterval (a CNP
// inside the interval is coalesced into one decrease at its end).
func (q *qp) receiveCNP(now fabric.Time) {
	q.nic.cnt.CNPsReceived++
	r := &q.rate
	if !r.cfg.Enabled || r.pending {
		return
	}
	if r.canDecrease(now) {
		q.decrease(now)
		return
	}
	r.pending = true
	q.nic.c.sim.At(r.lastDec+r.cfg.DecreaseInterval, func() {
		if r.pending {
			q.decrease(q.nic.c.sim.Now())
		}
	})
}

func (q *qp) decrease(now fabric.Time) {
	q.rate.decrease(now)
	q.nic.cnt.RateDecreases++
	q.rate.gen++
	q.rate.running = true
	q.scheduleRateTimer(now)
}

func (q *qp) scheduleRateTimer(now fabric.Time) {
	gen := q.rate.gen
	q.nic.c.sim.At(now+q.rate.cfg.RateTimer, func() {
		if q.rate.gen != gen || !q.rate.running {
			return
		}
		q.rate.timerStep()
		q.nic.cnt.RateIncreases++
		if q.rate.limited() {
			q.scheduleRateTimer(q.nic.c.sim.Now())
		} else {
			q.rate.running = false
		}
		if q.active {
			q.nic.c.net.Kick(q.nic.host, q.port.idx) // the next packet may be due earlier
		}
	})
}

// receiveData is the responder: place in-order packets, re-ACK duplicates, drop packets ahead
// of the expected PSN with one NAK per expected PSN.
func (q *qp) receiveData(now fabric.Time, pkt *fabric.Packet, d *DataPacket) {
	c := q.nic.c
	cnt := &q.nic.cnt
	c.ledger.ArrivedPacket(d.MsgID, d.Index)
	if pkt.ECN == fabric.CE {
		q.notify(now)
	}
	dist := c.space.Dist(q.epsn, d.PSN)
	switch {
	case dist == 0:
		q.accept(now, d)
	case c.space.Negative(dist):
		cnt.Duplicates++
		q.sendAck(false, c.space.Add(q.epsn, c.space.Mask()))
	default:
		cnt.OOODropped++
		if !q.nakSent {
			q.nakSent = true
			cnt.NAKsSent++
			q.sendAck(true, q.epsn)
		}
	}
}

// accept places the in-order packet d.
func (q *qp) accept(now fabric.Time, d *DataPacket) {
	c := q.nic.c
	cnt := &q.nic.cnt
	if d.Opcode.First() == q.rx.open {
		// A FIRST inside a message or a MIDDLE outside one: IB's invalid-request NAK; the
		// requester never sends it, so it is counted and dropped.
		cnt.OpcodeErrors++
		return
	}
	if d.Opcode.First() {
		q.rx = rxMessage{open: true, id: d.MsgID, write: d.Opcode.Write(), base: q.nextRecv, dmaLen: d.DMALen}
		if q.rx.write {
			q.rx.base = d.VA
		}
	}
	q.nic.mem.Write(q.rx.base+q.rx.off, d.Data)
	c.ledger.Placed(d.MsgID, len(d.Data)) // in order: every byte is placed exactly once
	q.rx.off += uint64(len(d.Data))
	q.epsn = c.space.Add(q.epsn, 1)
	q.nakSent = false
	if q.unacked == 0 {
		q.firstUnacked = now
	}
	q.unacked++
	if d.Opcode.Last() {
		q.complete(now)
	}
	if d.AckReq || q.unacked >= c.cfg.AckEvery || now-q.firstUnacked >= c.cfg.AckDelay {
		q.sendAck(false, c.space.Add(q.epsn, c.space.Mask()))
	}
}

// complete reads a finished message back from memory, hands it to the ledger, frees it.
func (q *qp) complete(now fabric.Time) {
	m := &q.rx
	if m.write && uint64(m.dmaLen) != m.off {
		q.nic.cnt.LengthErrors++
	}
	if err := q.nic.c.ledger.Delivered(now, m.id, q.nic.mem.Read(m.base, int(m.off))); err != nil {
		q.nic.cnt.VerifyFailures++
	}
	q.nic.mem.Free(m.base, pageRound(m.off))
	if !m.write {
		regionAdvance(&q.nextRecv, regionBase(q.peer)|sendRegion, m.off)
	}
	q.msn = q.nic.c.space.Add(q.msn, 1)
	*m = rxMessage{}
}

// sendAck sends an ACK (psn: last received in order) or a NAK (psn: expected).
func (q *qp) sendAck(nak bool, psn uint32) {
	if !nak {
		q.nic.cnt.ACKsSent++
		q.unacked = 0
	}
	q.nic.sendCtrl(q.port, &fabric.Packet{Dst: q.peer, SrcPort: q.sports[0], DstPort: UDPPort, Proto: 17,
		Bytes: AckBytes, ECN: fabric.NotECT, Payload: &AckPacket{NAK: nak, PSN: psn, MSN: q.msn}})
}

// notify is the notification point: a CE-marked data packet triggers a CNP, at most one per
// CNPInterval per QP.
func (q *qp) notify(now fabric.Time) {
	d := q.rate.cfg
	if !d.Enabled || (q.cnpSent && now-q.lastCNP < d.CNPInterval) {
		return
	}
	q.cnpSent, q.lastCNP = true, now
	q.nic.cnt.CNPsSent++
	q.nic.sendCtrl(q.port, &fabric.Packet{Dst: q.peer, SrcPort: q.sports[0], DstPort: UDPPort, Proto: 17,
		Bytes: CNPBytes, ECN: fabric.NotECT, Payload: &CNPPacket{}})
}
