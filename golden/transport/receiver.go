package transport

import (
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
	now := nic.now()
	cn.lastData = now
	newcomer := !cn.active
	if newcomer {
		cn.active = true
		nic.active++
		nic.gather(now)
	}
	if p.ECN == fabric.CE && cn.ecn[path] < 0xFFFF {
		cn.ecn[path]++
		nic.cnt["ce_received"]++
	}
	idx := nic.index(c, path)
	if w.BTH.Flags&wire.FlagPathInit != 0 && !nic.psns.Negative(nic.psns.Dist(nic.srx.Cum(idx), w.BTH.PSN)) {
		nic.srx.Init(idx, w.BTH.PSN)
		nic.cnt["path_inits"]++
	}
	res := nic.srx.Packet(idx, w.BTH.PSN, w.BTH.Flags&wire.FlagAckReq != 0)
	if res.Class == sack.ClassNew {
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
			nic.nw.ledger.Placed(fr.msgID, len(pr.DMA.Data))
		}
		for _, cp := range pr.Completions {
			nic.complete(cn, cp)
		}
		if pr.Nak != 0 {
			nic.sendNak(p, w, pr.Nak, pr.RNRDelay)
		}
	}
	var ts uint32
	if w.Write != nil {
		ts = w.Write.Timestamp
	} else {
		ts = w.Send.Timestamp
	}
	switch {
	case newcomer && res.Class == sack.ClassNew:
		// A newcomer's first answer carries its share: wait until the senders arriving with it
		// have been counted (the gather window), then answer all of them at once.
		nic.gathered = append(nic.gathered, &owedAck{p: p, cn: cn, path: path, res: res, ts: ts, arrived: now})
	case res.AckDue:
		nic.sendAck(p, cn, path, res, ts)
	case res.Class == sack.ClassNew:
		nic.owe(p, cn, path, res, ts)
	}
}

// Gather is how long a receiver waits after the last newcomer (a connection that starts sending
// to it) before answering the newcomers, and MaxGather bounds the wait from the first one. An
// incast's first packets arrive back to back; answering each at once would hand the early
// senders the share of the few counted so far, and they would correct only a round trip later.
const (
	Gather    = 2 * fabric.Microsecond
	MaxGather = 25 * fabric.Microsecond
)

// gather opens or extends the gather window at a newcomer's arrival.
func (nic *NIC) gather(now fabric.Time) {
	if nic.gatherStart == 0 {
		nic.gatherStart = now
		nic.nw.net.Sim().At(now+Gather, nic.answerNewcomers)
	}
	nic.gatherEnd = min(now+Gather, nic.gatherStart+MaxGather)
}

// answerNewcomers sends the gathered first ACKs once the window has closed, each with the
// state after the path's latest packet and the share of every sender counted by then.
func (nic *NIC) answerNewcomers() {
	now := nic.now()
	if now < nic.gatherEnd {
		nic.nw.net.Sim().At(nic.gatherEnd, nic.answerNewcomers)
		return
	}
	nic.gatherStart = 0
	nic.refreshAnnounced(now) // announce.go
	for _, o := range nic.gathered {
		nic.cnt["gathered_acks"]++
		if o.announce {
			nic.answerAnnounce(o) // announce.go
			continue
		}
		if o.cn.owed[o.path] != nil { // a later packet on the path left a fresher held-back ACK
			o = o.cn.owed[o.path]
		}
		// The echo is advanced by the time the ACK was held, so that the sender's RTT sample
		// (and its base RTT, which sizes the rate cap) leaves the gather window out.
		held := uint32((now - o.arrived).NS())
		nic.sendAck(o.p, o.cn, o.path, o.res, o.ts+held)
	}
	nic.gathered = nic.gathered[:0]
}

// owedAck is an ACK the policy has not made due yet: the state after the path's latest packet.
type owedAck struct {
	p    *fabric.Packet
	cn   *conn
	path int
	res  sack.RxResult
	ts   uint32
	at   fabric.Time // when it must go at the latest
	// arrived is when the packet it answers arrived (gathered first ACKs).
	arrived fabric.Time
	// announce: it answers an ANNOUNCE (announce.go), not a data packet; told: it was
	// answered, with rate hint hint.
	announce, told bool
	hint           uint16
}

// owe records (or refreshes) the path's held-back ACK and makes sure a flush is scheduled.
func (nic *NIC) owe(p *fabric.Packet, cn *conn, path int, res sack.RxResult, ts uint32) {
	if o := cn.owed[path]; o != nil {
		o.p, o.res, o.ts = p, res, ts
		return
	}
	o := &owedAck{p: p, cn: cn, path: path, res: res, ts: ts, at: nic.now() + nic.nw.cfg.AckDelay}
	cn.owed[path] = o
	nic.owedQ = append(nic.owedQ, o)
	if !nic.flushOn {
		nic.flushOn = true
		nic.nw.net.Sim().At(o.at, nic.flushAcks)
	}
}

// flushAcks sends every held-back ACK whose delay has run out.
func (nic *NIC) flushAcks() {
	now := nic.now()
	for len(nic.owedQ) > 0 && nic.owedQ[0].at <= now {
		o := nic.owedQ[0]
		nic.owedQ = nic.owedQ[1:]
		if o.cn.owed[o.path] == o {
			nic.cnt["delayed_acks"]++
			nic.sendAck(o.p, o.cn, o.path, o.res, o.ts)
		}
	}
	if len(nic.owedQ) > 0 {
		nic.nw.net.Sim().At(nic.owedQ[0].at, nic.flushAcks)
	} else {
		nic.flushOn = false
	}
}

// complete verifies a released message against what its sender wrote, frees its buffer and
// posts a new receive in its place.
func (nic *NIC) complete(cn *conn, cp placement.Completion) {
	key := uint64(cp.Stream)<<32 | uint64(cp.MSN)
	id := cn.rxMsg[key]
	delete(cn.rxMsg, key)
	if cp.Status != 0 {
		nic.cnt["completions_failed"]++
		return
	}
	addr := cp.Buf.Addr
	if cp.Op == wire.OpWrite {
		addr = nic.nw.slotAddr(writeBase, cn.idx, int(cp.Stream), cp.MSN)
	}
	data := nic.mem.Read(addr, int(cp.MsgLen))
	if err := nic.nw.ledger.Delivered(nic.now(), id, data); err != nil {
		nic.cnt["verify_failures"]++
	}
	nic.cnt["completions"]++
	nic.mem.Free(addr, nic.nw.slot)
	next := cp.MSN + uint32(nic.nw.plPrm.Depth)
	if err := nic.pl.PostReceive(cn.idx, int(cp.Stream), nic.nw.slotAddr(sendBase, cn.idx, int(cp.Stream), next), uint32(nic.nw.slot)); err != nil {
		nic.cnt["repost_failed"]++
	}
}

// rateHint is the fair share of this host's link rate for one active connection, in
// RateHintUnitMbps units (0: no limit, when hints are off).
func (nic *NIC) rateHint() uint16 {
	if !nic.nw.cfg.RateHints || nic.active == 0 {
		return 0
	}
	u := nic.linkMb / float64(nic.active) / wire.RateHintUnitMbps
	return uint16(min(max(u, 1), 0xFFFF))
}

// sendAck answers data packet p on (cn, path) with the path's cumulative PSN and bitmap.
func (nic *NIC) sendAck(p *fabric.Packet, cn *conn, path int, res sack.RxResult, ts uint32) {
	words := nic.nw.sprm.Width / wire.SackWordBits
	a := &wire.Ack{TimestampEcho: ts, ECNEcho: cn.ecn[path], RateHint: nic.rateHint(), Sack: make([]uint64, words)}
	for i := 1; i < res.Bitmap.Len(); i++ {
		if res.Bitmap.Get(i) {
			a.SetSackBit(i, true)
		}
	}
	cn.ecn[path] = 0
	cn.owed[path] = nil
	w := &wire.Packet{BTH: wire.BTH{Opcode: wire.OpAck, ConnID: uint16(ConnIndex(cn.peer, nic.host)), PathID: uint8(path), PSN: res.Cum}, Ack: a}
	nic.cnt["acks_sent"]++
	nic.sendCtrl(p, w)
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
	nic.ctrlQ[k] = append(nic.ctrlQ[k], &fabric.Packet{Dst: p.Src, SrcPort: p.SrcPort, DstPort: p.DstPort, Proto: 17,
		Bytes: nic.frameBytes(w), Control: true, Payload: &frame{w: w}})
	nic.nw.net.Kick(nic.host, k)
}
