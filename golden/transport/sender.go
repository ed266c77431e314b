package transport

import (
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// frameBytes is a packet's length on the fabric: the frame wire.Encode builds plus the FCS.
// (No MetaRoCE frame is below the Ethernet minimum, so none is padded.)
func (nic *NIC) frameBytes(w *wire.Packet) int {
	return wire.FrameLen(w, nic.nw.wprm) + fabric.FCSBytes
}

// roomy reports whether some port wants more data packets.
func (nic *NIC) roomy() bool {
	for _, q := range nic.dataQ {
		if len(q) < nic.nw.cfg.PortQueue {
			return true
		}
	}
	return false
}

// fill tops up the ports' data queues: retransmissions first, then moved packets and new data
// from the connections round robin.
func (nic *NIC) fill() {
	kick := false
	for nic.roomy() {
		if len(nic.rtxQ) > 0 {
			rec := nic.rtxQ[0]
			nic.rtxQ = nic.rtxQ[1:]
			rec.queued = false
			if rec.dead || rec.sacked {
				continue
			}
			if nic.win.Path(rec.conn, rec.path).State == window.Failed {
				nic.move(nic.conns[rec.conn], rec)
				continue
			}
			nic.cnt["retransmissions"]++
			nic.nw.ledger.SentPacket(rec.ms.m.ID, rec.idx, true)
			nic.emit(rec, true)
			kick = true
			continue
		}
		if !nic.produceOne() {
			break
		}
		kick = true
	}
	if kick {
		nic.kickAll()
	}
}

func (nic *NIC) kickAll() {
	for k := 0; k < nic.planes; k++ {
		if len(nic.ctrlQ[k]) > 0 || len(nic.dataQ[k]) > 0 {
			nic.nw.net.Kick(nic.host, k)
		}
	}
}

// produceOne sends one moved or new packet of the next connection in the work list that has
// one and a window for it.
func (nic *NIC) produceOne() bool {
	for tries := 0; tries < len(nic.work); tries++ {
		if nic.workPos >= len(nic.work) {
			nic.workPos = 0
		}
		cn := nic.conns[nic.work[nic.workPos]]
		if len(cn.moved) == 0 && !nic.startable(cn) {
			// Nothing to send: leave the work list.
			cn.inWork = false
			nic.work = append(nic.work[:nic.workPos], nic.work[nic.workPos+1:]...)
			tries--
			if len(nic.work) == 0 {
				return false
			}
			continue
		}
		nic.workPos++
		if cn.blocked {
			continue
		}
		if now := nic.now(); cn.nextSend > now {
			nic.wake(cn.nextSend)
			continue
		}
		if !cn.heard && cn.sending && nic.win.Conn(cn.idx).Inflight > 0 {
			// First-RTT gate: one packet in flight until the receiver has answered.
			cn.blocked = true
			continue
		}
		d := nic.win.SendDecision(cn.idx, nic.nowNS())
		if !d.OK {
			// The window state changes only with an ACK or a timer event of this connection.
			cn.blocked = true
			nic.cnt["blocked_"+d.Reason.String()]++
			continue
		}
		var rec *txPkt
		if len(cn.moved) > 0 {
			old := cn.moved[0]
			cn.moved = cn.moved[1:]
			rec = &txPkt{conn: cn.idx, ms: old.ms, idx: old.idx}
			nic.nw.ledger.SentPacket(rec.ms.m.ID, rec.idx, true)
			nic.cnt["moved_sent"]++
		} else {
			ms, idx := nic.nextNew(cn)
			rec = &txPkt{conn: cn.idx, ms: ms, idx: idx}
			nic.nw.ledger.SentPacket(ms.m.ID, idx, false)
		}
		rec.path, rec.psn = d.Path, d.PSN
		if cn.needInit[d.Path] {
			rec.init, cn.needInit[d.Path] = true, false
		}
		cn.recs[d.Path][d.PSN] = rec
		if !cn.sending && !cn.heard && nic.nw.cfg.Announce {
			nic.announce(cn, d.Path) // announce.go: ahead of the first data packet
		}
		cn.sending = true
		nic.stx.Sent(nic.index(cn.idx, d.Path), d.PSN)
		nic.cnt["data_sent"]++
		bytes := nic.emit(rec, false)
		nic.pace(cn, bytes)
		return true
	}
	return false
}

// startable reports whether a stream of cn can send a new packet: its current message has
// packets left, or its next message may start (the receiver has a posted receive for it).
func (nic *NIC) startable(cn *conn) bool {
	depth := nic.nw.plPrm.Depth
	for i := range cn.streams {
		st := &cn.streams[i]
		if st.cur != nil || len(st.pending) > 0 && len(st.started) < depth {
			return true
		}
	}
	return false
}

// nextNew takes the next new packet of cn's streams, round robin over streams.
func (nic *NIC) nextNew(cn *conn) (*msgState, uint32) {
	depth := nic.nw.plPrm.Depth
	for k := 0; k < len(cn.streams); k++ {
		s := (cn.rrStream + k) % len(cn.streams)
		st := &cn.streams[s]
		if st.cur == nil && len(st.pending) > 0 && len(st.started) < depth {
			ms := st.pending[0]
			st.pending = st.pending[1:]
			ms.msn = st.nextMSN
			st.nextMSN++
			peerConn := ConnIndex(cn.peer, nic.host)
			ms.va = nic.nw.slotAddr(writeBase, peerConn, s, ms.msn)
			ms.rkey = nic.nw.nics[cn.peer].conns[peerConn].rkeyAt
			st.started = append(st.started, ms)
			st.cur = ms
		}
		if st.cur == nil {
			continue
		}
		ms := st.cur
		idx := ms.next
		ms.next++
		if ms.next == ms.n {
			st.cur = nil
		}
		cn.rrStream = (s + 1) % len(cn.streams)
		return ms, idx
	}
	panic("transport: nextNew without a startable stream")
}

// pace spaces a connection's new packets at the rate hint it last received: the gap after a
// frame of bytes is its wire time at the hinted rate. The window (and its rate cap, golden/window)
// bounds what is in flight; the pacer spreads it, which also realises shares below one packet
// per RTT (a 64:1 incast at 100 Gb/s and a 4 KiB mtu). No hint (0): no pacing.
func (nic *NIC) pace(cn *conn, bytes int) {
	hint := nic.win.Conn(cn.idx).RateHint
	if hint == 0 {
		return
	}
	gap := fabric.FrameTime(bytes, float64(uint32(hint)*wire.RateHintUnitMbps)/1000)
	// A connection that fell behind its pace may catch up by a few frames, not more.
	cn.nextSend = max(cn.nextSend, nic.now()-paceBurst*gap) + gap
}

// paceBurst is how many frames a paced connection may send back to back to catch up.
const paceBurst = 4

// wake schedules a fill at t (the earliest pending wake-up wins).
func (nic *NIC) wake(t fabric.Time) {
	if nic.wakeAt != 0 && nic.wakeAt <= t {
		return
	}
	nic.wakeAt = t
	nic.nw.net.Sim().At(t, func() {
		if nic.wakeAt == t {
			nic.wakeAt = 0
		}
		nic.fill()
	})
}

// emit builds the data packet of rec, queues it on its path's port and returns its frame size.
func (nic *NIC) emit(rec *txPkt, retx bool) int {
	cn := nic.conns[rec.conn]
	ms := rec.ms
	off, plen := nic.nw.plPrm.Segment(ms.m.Len, rec.idx)
	flags := wire.Flags(0)
	if rec.idx == 0 {
		flags |= wire.FlagFirst
	}
	if rec.idx == ms.n-1 {
		flags |= wire.FlagLast | wire.FlagAckReq
	}
	if retx {
		flags |= wire.FlagRetx | wire.FlagAckReq
		rec.retx = true
	}
	if rec.init {
		flags |= wire.FlagPathInit
	}
	if !cn.heard {
		flags |= wire.FlagAckReq // the first-RTT packet asks for its answer at once
	}
	w := &wire.Packet{BTH: wire.BTH{Opcode: ms.m.Op, Flags: flags, ConnID: uint16(ConnIndex(cn.peer, nic.host)),
		PathID: uint8(rec.path), StreamID: uint8(ms.stream), PSN: rec.psn, MSN: ms.msn}}
	if ms.m.Op == wire.OpWrite {
		w.Write = &wire.WriteExt{MsgLen: ms.m.Len, RKey: ms.rkey, VA: ms.va + uint64(off)}
	} else {
		w.Send = &wire.SendExt{MsgLen: ms.m.Len, Offset: off}
	}
	if plen > 0 {
		w.Payload = make([]byte, plen)
		fillPayload(ms.m.ID, off, w.Payload)
	}
	entropy := nic.win.Path(rec.conn, rec.path).Entropy
	ecn := fabric.NotECT
	if nic.nw.cfg.ECN {
		ecn = fabric.ECT0
	}
	p := &fabric.Packet{Dst: cn.peer, SrcPort: entropy, DstPort: uint16(nic.nw.cfg.NIC.UDPDestPort), Proto: 17,
		Bytes: nic.frameBytes(w), ECN: ecn, Payload: &frame{w: w, msgID: ms.m.ID, idx: rec.idx, rec: rec}}
	k := nic.portOf(rec.path)
	rec.inNIC = true
	nic.dataQ[k] = append(nic.dataQ[k], p)
	return p.Bytes
}

// queueRetx schedules rec for retransmission on its path, unless a copy is already queued or
// waits in a port queue (that copy is the retransmission).
func (nic *NIC) queueRetx(rec *txPkt) {
	if rec.queued || rec.inNIC || rec.dead || rec.sacked {
		return
	}
	rec.queued = true
	nic.rtxQ = append(nic.rtxQ, rec)
}

// move takes rec off its path: it will be resent as a new packet on a path SendDecision picks.
func (nic *NIC) move(cn *conn, rec *txPkt) {
	if rec.dead {
		return
	}
	rec.dead = true
	delete(cn.recs[rec.path], rec.psn)
	cn.moved = append(cn.moved, rec)
	nic.addWork(cn)
}

// onAck processes an ACK for one of our paths.
func (nic *NIC) onAck(w *wire.Packet) {
	nic.cnt["acks_received"]++
	c, path := int(w.BTH.ConnID), int(w.BTH.PathID)
	cn := nic.conns[c]
	if nic.win.Path(c, path).State == window.Failed {
		nic.cnt["acks_on_failed_path"]++
		return
	}
	idx := nic.index(c, path)
	bm := sack.NewBitmap(nic.nw.sprm.Width)
	for i := 0; i < nic.nw.sprm.Width; i++ {
		if w.Ack.SackBit(i) {
			bm.Set(i)
		}
	}
	oldUna := nic.stx.Una(idx)
	cum := w.BTH.PSN
	ar := nic.stx.Ack(idx, cum, bm)
	var cumAdv, sacked uint32
	if ar.Status == sack.AckAccepted {
		recs := cn.recs[path]
		for p := oldUna; p != cum; p = nic.psns.Add(p, 1) {
			if rec := recs[p]; rec != nil {
				if !rec.sacked {
					cumAdv++
					nic.acked(cn, rec)
				}
				rec.dead = true
				delete(recs, p)
			}
		}
		for i := 1; i < bm.Len(); i++ {
			if !bm.Get(i) {
				continue
			}
			if rec := recs[nic.psns.Add(cum, uint32(i))]; rec != nil && !rec.sacked {
				rec.sacked = true
				sacked++
				nic.acked(cn, rec)
			}
		}
		for i := 0; i < ar.Lost.Len(); i++ {
			if ar.Lost.Get(i) {
				// A retransmitted copy sent after the packet that triggered this ACK is
				// still on its way: the ACK cannot know about it.
				if rec := recs[nic.psns.Add(ar.Base, uint32(i))]; rec != nil && (!rec.retx || sentBefore(rec.sentAt, w.Ack.TimestampEcho)) {
					nic.cnt["sack_losses"]++
					nic.queueRetx(rec)
				}
			}
		}
	}
	if ar.Status == sack.AckAccepted || ar.Status == sack.AckDuplicate {
		cn.probed[path] = false
		nic.lostBefore(cn, path, w.Ack.TimestampEcho)
		hint := w.Ack.RateHint
		nic.win.AckUpdate(c, path, window.Ack{CumAdvance: uint16(min(cumAdv, 0xFFFF)), NewlySacked: uint16(min(sacked, 0xFFFF)),
			ECNEcho: w.Ack.ECNEcho, TimestampEcho: w.Ack.TimestampEcho, RateHint: hint}, nic.nowNS())
		if w.Ack.ECNEcho > 0 {
			nic.cnt["ecn_echoes"] += uint64(w.Ack.ECNEcho)
		}
	}
	cn.blocked = false
	cn.heard = true
	if len(cn.moved) > 0 || nic.startable(cn) {
		nic.addWork(cn)
	}
}

// lostBefore resends every packet of the path an ACK proves lost by time: the ACK was
// triggered by a packet sent at echo, the path is FIFO (one 5-tuple, one route), so every
// packet whose latest copy left before it has arrived or was lost, and this ACK (which covers
// every PSN from its cumulative point up) does not acknowledge it. This finds the tail losses
// that leave no SACK gap, and lost retransmissions, one RTT after the fact instead of an RTO.
func (nic *NIC) lostBefore(cn *conn, path int, echo uint32) {
	idx := nic.index(cn.idx, path)
	una, nxt := nic.stx.Una(idx), nic.stx.Nxt(idx)
	recs := cn.recs[path]
	for p := una; p != nxt; p = nic.psns.Add(p, 1) {
		rec := recs[p]
		if rec == nil || rec.sacked || rec.queued || rec.inNIC {
			continue
		}
		if sentBefore(rec.sentAt, echo) {
			nic.cnt["time_losses"]++
			nic.queueRetx(rec)
		}
	}
}

// sentBefore reports whether ns timestamp a is before b (mod 2^32, serially).
func sentBefore(a, b uint32) bool { d := b - a; return d != 0 && d < 1<<31 }

// acked counts one packet of a message as delivered; the message completes at the sender when
// all its packets are.
func (nic *NIC) acked(cn *conn, rec *txPkt) {
	if rec.nakked {
		return
	}
	ms := rec.ms
	if w, b := rec.idx/64, uint64(1)<<(rec.idx%64); ms.got[w]&b != 0 {
		return // the other copy was acknowledged first
	} else {
		ms.got[w] |= b
	}
	ms.acked++
	if ms.acked < ms.n || ms.done {
		return
	}
	ms.done = true
	nic.nw.ledger.SenderDone(nic.now(), ms.m.ID)
	st := &cn.streams[ms.stream]
	for len(st.started) > 0 && st.started[0].done {
		st.started = st.started[1:]
	}
}

// onNak handles a receiver's refusal. receiver_not_ready: the packet is sent again after the
// delay; any other code fails the message (the application sees the error).
func (nic *NIC) onNak(w *wire.Packet) {
	nic.cnt["naks_received"]++
	c, path := int(w.BTH.ConnID), int(w.BTH.PathID)
	cn := nic.conns[c]
	rec := cn.recs[path][w.BTH.PSN]
	if rec == nil {
		return
	}
	rec.nakked = true
	if w.Nak.Code != wire.NakReceiverNotReady {
		nic.cnt["messages_failed"]++
		return
	}
	copyRec := &txPkt{conn: c, ms: rec.ms, idx: rec.idx}
	delay := fabric.Time(w.Nak.RNRDelay) * wire.RNRDelayUnitUS * fabric.Microsecond
	nic.nw.net.Sim().After(delay, func() {
		cn.moved = append(cn.moved, copyRec)
		nic.addWork(cn)
		nic.fill()
	})
}

// startTimer runs the periodic RTO and hint-activity scan while there is anything to watch.
func (nic *NIC) startTimer() {
	if nic.timerOn {
		return
	}
	nic.timerOn = true
	nic.nw.net.Sim().After(nic.nw.cfg.TimerScan, nic.scan)
}

func (nic *NIC) scan() {
	now := nic.now()
	ns := uint32(now.NS())
	busy := false
	for _, cn := range nic.conns {
		if !cn.sending {
			continue
		}
		for path := 0; path < nic.paths; path++ {
			nic.tailProbe(cn, path, ns)
			x := nic.win.Expire(cn.idx, path, ns)
			if x.Event != window.EventNone {
				cn.blocked = false
			}
			switch x.Event {
			case window.EventTimeout, window.EventSuspect:
				nic.cnt["timeouts"]++
				if x.Event == window.EventSuspect {
					nic.cnt["paths_suspect"]++
				}
				if rec := nic.oldest(cn, path); rec != nil {
					nic.cnt["rto_retransmissions"]++
					nic.queueRetx(rec)
				}
				nic.copyOff(cn, path)
			case window.EventFailed:
				nic.cnt["timeouts"]++
				nic.cnt["paths_failed"]++
				for _, rec := range nic.unacked(cn, path) {
					if !rec.copied { // a copied packet was already resent elsewhere
						nic.cnt["moved"]++
						nic.move(cn, rec)
					}
				}
				nic.forget(cn, path)
			case window.EventProbe:
				nic.cnt["paths_probed"]++
				for _, rec := range nic.unacked(cn, path) {
					nic.move(cn, rec)
				}
				nic.forget(cn, path)
				nic.stx.Init(nic.index(cn.idx, path), nic.win.Path(cn.idx, path).NextPSN)
				cn.needInit[path] = true
			}
		}
		if nic.win.Conn(cn.idx).Inflight > 0 || len(cn.moved) > 0 || nic.startable(cn) || nic.hasFailed(cn) {
			busy = true
		}
	}
	nic.fill()
	if busy || len(nic.rtxQ) > 0 {
		nic.nw.net.Sim().After(nic.nw.cfg.TimerScan, nic.scan)
	} else {
		nic.timerOn = false
	}
}

// tailProbe resends a path's oldest unacknowledged packet when the path has been silent for
// max(2·SRTT, SRTT + 4·RTTVar) plus the ACK delay (at least TailProbeMin) since it left: the ACK the probe
// draws lets loss-by-send-time repair the tail that no later packet on the path revealed
// (a path of a slow connection may carry a single packet at a time). One probe per ACK; the
// window's RTO, which drives the suspect and failed states, is not touched.
func (nic *NIC) tailProbe(cn *conn, path int, ns uint32) {
	if cn.probed[path] || len(cn.recs[path]) == 0 {
		return
	}
	e := nic.win.Path(cn.idx, path)
	if e.State == window.Failed {
		return
	}
	// A connection's first packet (alone under the first-RTT gate, no RTT sample yet) waits
	// FirstProbe; other paths without a sample have no basis for a probe and wait for the RTO.
	pto := uint32(FirstProbe.NS())
	if !e.RTTValid && cn.heard {
		return
	}
	if e.RTTValid {
		pto = max(max(2*e.SRTT, e.SRTT+4*e.RTTVar)+uint32(nic.nw.cfg.AckDelay.NS()), uint32(TailProbeMin.NS()))
	}
	rec := nic.oldest(cn, path)
	if rec == nil || rec.queued || rec.inNIC {
		return
	}
	if d := ns - rec.sentAt; d < 1<<31 && d > pto {
		cn.probed[path] = true
		nic.cnt["tail_probes"]++
		nic.queueRetx(rec)
	}
}

// FirstProbe is the tail-probe timeout of a path with no RTT sample: a connection's first packet
// (held alone by the first-RTT gate) is resent after it rather than after the initial RTO
// (454 µs by default). It exceeds the first round trip of a 64:1 incast (about 30 µs).
const FirstProbe = 50 * fabric.Microsecond

// TailProbeMin is the shortest silence that triggers a tail-loss probe.
const TailProbeMin = 10 * fabric.Microsecond

// copyOff sends a copy of every unacknowledged packet of a path that timed out to the paths
// SendDecision picks (once per packet): the path keeps its packets (they stay counted in its
// window until acknowledged or until the path fails) and its RTO probe, but the connection does
// not wait for a path that may be dead. Placement makes the duplicate harmless, and whichever
// copy is acknowledged first completes the packet.
func (nic *NIC) copyOff(cn *conn, path int) {
	for _, rec := range nic.unacked(cn, path) {
		if rec.copied || rec.nakked {
			continue
		}
		rec.copied = true
		nic.cnt["rto_copies"]++
		cn.moved = append(cn.moved, &txPkt{conn: cn.idx, ms: rec.ms, idx: rec.idx})
	}
	if len(cn.moved) > 0 {
		nic.addWork(cn)
	}
}

func (nic *NIC) hasFailed(cn *conn) bool {
	for p := 0; p < nic.paths; p++ {
		if nic.win.Path(cn.idx, p).State != window.Active {
			return true
		}
	}
	return false
}

// oldest is the path's oldest unacknowledged packet.
func (nic *NIC) oldest(cn *conn, path int) *txPkt {
	idx := nic.index(cn.idx, path)
	una, nxt := nic.stx.Una(idx), nic.stx.Nxt(idx)
	for p := una; p != nxt; p = nic.psns.Add(p, 1) {
		if rec := cn.recs[path][p]; rec != nil && !rec.sacked {
			return rec
		}
	}
	return nil
}

// unacked lists a path's unacknowledged packets in PSN order (deterministic moves).
func (nic *NIC) unacked(cn *conn, path int) []*txPkt {
	idx := nic.index(cn.idx, path)
	una, nxt := nic.stx.Una(idx), nic.stx.Nxt(idx)
	var out []*txPkt
	for p := una; p != nxt; p = nic.psns.Add(p, 1) {
		if rec := cn.recs[path][p]; rec != nil && !rec.sacked {
			out = append(out, rec)
		}
	}
	return out
}

// forget drops every record a path still holds (its sequence is abandoned: the path failed or
// restarts): references to them, in the retransmit queue, are stale from now on.
func (nic *NIC) forget(cn *conn, path int) {
	for _, rec := range cn.recs[path] {
		rec.dead = true
	}
	clear(cn.recs[path])
}
