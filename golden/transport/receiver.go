package transport

import (
	"github.com/mrgen/mrgen/golden/acker"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/wire"
)

var fillPayload = traffic.Fill

// onData handles a WRITE or SEND packet for this host.
func (nic *NIC) onData(p *fabric.Packet, fr *frame) {
	w := fr.w
	nic.nw.ledger.ArrivedPacket(fr.msgID, fr.idx)
	c, path := int(w.BTH.ConnID), int(w.BTH.PathID)
	cn := nic.conns[c]
	idx := nic.index(c, path)
	ackReq, pathInit := w.BTH.Flags&wire.FlagAckReq != 0, w.BTH.Flags&wire.FlagPathInit != 0
	// Look before committing: a packet placement refuses as receiver-not-ready is answered by
	// its NAK alone and leaves the path as if it had not arrived (its PSN unacknowledged, no
	// ACK), so it is resent by loss recovery even when the NAK is lost.
	if nic.srx.PeekInit(idx, w.BTH.PSN, ackReq, pathInit).Class == sack.ClassNew {
		cn.rxMsg[uint64(w.BTH.StreamID)<<32|uint64(w.BTH.MSN)] = fr.msgID
		d, err := placement.DescFromPacket(w)
		if err != nil {
			nic.cnt["rx_not_data"]++
			return
		}
		pr := nic.pl.Place(d)
		if pr.DMA != nil {
			if nic.nw.CorruptDMA != nil {
				nic.nw.CorruptDMA(nic.host, pr.DMA)
			}
			nic.mem.Apply(pr.DMA)
			if nic.tap != nil {
				nic.tap.DMA(nic.now(), pr.DMA)
			}
			nic.nw.ledger.Placed(fr.msgID, len(pr.DMA.Data))
		}
		for _, cp := range pr.Completions {
			nic.complete(cn, cp)
		}
		if pr.Nak != 0 {
			nic.sendNak(p, w, pr.Nak, pr.RNRDelay)
		}
		if pr.Nak == wire.NakReceiverNotReady {
			return
		}
	}
	res := nic.srx.PacketInit(idx, w.BTH.PSN, ackReq, pathInit)
	if res.PathInit {
		nic.cnt["path_inits"]++
	}
	var ts uint32
	if w.Write != nil {
		ts = w.Write.Timestamp
	} else {
		ts = w.Send.Timestamp
	}
	if p.ECN == fabric.CE {
		nic.cnt["ce_received"]++
	}
	// The ACK goes back the way the path's latest packet came (its plane and 5-tuple).
	cn.reply[path] = p
	acks, err := nic.ack.Packet(nic.nowNS64(), acker.Input{Conn: c, Path: path, CE: p.ECN == fabric.CE, TS: ts, Res: res})
	if err != nil {
		nic.cnt["ack_scheduler_errors"]++
		return
	}
	nic.sendAcks(acks)
}

// ackerParams are the receive-side ACK scheduler's parameters (golden/acker) of a NIC.
func (nic *NIC) ackerParams() acker.Params {
	cfg := nic.nw.cfg
	p := acker.ParamsFrom(cfg.NIC)
	// The transport's own timers and hint switch (experiments set them), and the rate its
	// fabric ports really have.
	p.AckDelay, p.HintWindow, p.Scan = uint64(cfg.AckDelay.NS()), uint64(cfg.HintWindow.NS()), uint64(cfg.TimerScan.NS())
	p.Hints = acker.HintTable(p.Conns, nic.linkMb, cfg.RateHints)
	return p
}

// sendAcks sends the scheduler's ACKs and makes sure its next timer is scheduled.
func (nic *NIC) sendAcks(acks []acker.Ack) {
	for _, a := range acks {
		nic.cnt[a.Kind.String()+"_acks"]++
		nic.sendAck(a)
	}
	if t, ok := nic.ack.Next(); ok {
		at := fabric.Time(t) * fabric.Nanosecond
		if nic.ackWake == 0 || at < nic.ackWake {
			nic.ackWake = at
			nic.nw.net.Sim().At(at, nic.ackTimer)
		}
	}
}

// ackTimer runs the ACK scheduler's timers that are due.
func (nic *NIC) ackTimer() {
	now := nic.now()
	if now < nic.ackWake { // superseded by an earlier wake that rescheduled this one
		return
	}
	nic.ackWake = 0
	nic.sendAcks(nic.ack.Advance(nic.nowNS64()))
	nic.fill()
}

// complete verifies a released message against what its sender wrote, frees its buffer and
// posts a new receive in its place.
func (nic *NIC) complete(cn *conn, cp placement.Completion) {
	key := uint64(cp.Stream)<<32 | uint64(cp.MSN)
	id := cn.rxMsg[key]
	delete(cn.rxMsg, key)
	if cp.Status != 0 {
		nic.cnt["completions_failed"]++
		if nic.tap != nil {
			nic.tap.Completion(nic.now(), cn.idx, cp, 0)
		}
		return
	}
	addr := cp.Buf.Addr
	if cp.Op == wire.OpWrite {
		addr = nic.nw.slotAddr(writeBase, cn.idx, int(cp.Stream), cp.MSN)
	}
	if nic.tap != nil {
		nic.tap.Completion(nic.now(), cn.idx, cp, addr)
	}
	data := nic.mem.Read(addr, int(cp.MsgLen))
	if err := nic.nw.ledger.Delivered(nic.now(), id, data); err != nil {
		nic.cnt["verify_failures"]++
	}
	nic.cnt["completions"]++
	nic.mem.Free(addr, nic.nw.slot)
	if nic.tap != nil {
		nic.tap.Freed(nic.now(), addr, nic.nw.slot)
	}
	next := cp.MSN + uint32(nic.nw.plPrm.Depth)
	if d := nic.nw.cfg.RepostDelay; d > 0 {
		nic.nw.net.Sim().At(nic.now()+d, func() { nic.repost(cn, int(cp.Stream), next) })
		return
	}
	nic.repost(cn, int(cp.Stream), next)
}

// repost posts the receive of message msn of a stream (its ring slot's buffer).
func (nic *NIC) repost(cn *conn, stream int, msn uint32) {
	addr := nic.nw.slotAddr(sendBase, cn.idx, stream, msn)
	if err := nic.pl.PostReceive(cn.idx, stream, addr, uint32(nic.nw.slot)); err != nil {
		nic.cnt["repost_failed"]++
	} else if nic.tap != nil {
		nic.tap.Op(nic.now(), SetupOp{Conn: cn.idx, Stream: stream, Addr: addr, Len: nic.nw.slot})
	}
}

// sendAck sends one of the scheduler's ACKs: the path's cumulative PSN and bitmap.
func (nic *NIC) sendAck(a acker.Ack) {
	cn := nic.conns[a.Conn]
	words := nic.nw.sprm.Width / wire.SackWordBits
	ack := &wire.Ack{TimestampEcho: a.TS, ECNEcho: a.ECN, RateHint: a.Hint, Sack: make([]uint64, words)}
	for i := 1; i < a.Bitmap.Len(); i++ {
		if a.Bitmap.Get(i) {
			ack.SetSackBit(i, true)
		}
	}
	w := &wire.Packet{BTH: wire.BTH{Opcode: wire.OpAck, ConnID: uint16(ConnIndex(cn.peer, nic.host)), PathID: uint8(a.Path), PSN: a.Cum}, Ack: ack}
	nic.cnt["acks_sent"]++
	nic.sendCtrl(cn.reply[a.Path], w)
}

func (nic *NIC) sendNak(p *fabric.Packet, data *wire.Packet, code wire.NakCode, delay uint16) {
	var ts uint32
	if data.Write != nil {
		ts = data.Write.Timestamp
	} else {
		ts = data.Send.Timestamp
	}
	cn := nic.conns[data.BTH.ConnID]
	w := &wire.Packet{BTH: wire.BTH{Opcode: wire.OpNak, ConnID: uint16(ConnIndex(cn.peer, nic.host)), PathID: data.BTH.PathID,
		StreamID: data.BTH.StreamID, PSN: data.BTH.PSN, MSN: data.BTH.MSN}, Nak: &wire.Nak{Code: code, RNRDelay: delay, TimestampEcho: ts}}
	nic.cnt["naks_sent"]++
	nic.sendCtrl(p, w)
}

// sendCtrl queues a control packet back to p's sender, on p's plane with p's entropy (so it
// follows the path's route in reverse when ECMP is symmetric).
func (nic *NIC) sendCtrl(p *fabric.Packet, w *wire.Packet) {
	k := p.Plane
	cp := nic.nw.ControlPacket(nic.host, p.Src, k, p.SrcPort, p.DstPort, w)
	if nic.tap != nil {
		nic.tap.Control(nic.now(), cp, w)
		return
	}
	nic.ctrlQ[k] = append(nic.ctrlQ[k], cp)
	nic.nw.net.Kick(nic.host, k)
}
