package transport

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/wire"
)

// The send side's decisions are golden/sender's; this file is its fabric interface: the port
// queues it fills, the fabric events its timers become, and the ACKs and NAKs it is handed.
//
// Every timer of the sender is its own fabric event, scheduled when the sender arms it (the
// scan at Arm and Rearm, each pacing wake-up TakeWakes reports, each RNR retry Nak reports),
// and each event ends with a fill: so timers that fall due at one picosecond run in the order
// they were armed, among the fabric's other events at that time.

// senderParams are the send side's parameters of a NIC: the run's tables and timers on the
// fabric's picosecond clock, the FIFO depths of the configuration's sender section.
func (nic *NIC) senderParams() sender.Params {
	nw := nic.nw
	ids := make([]uint16, len(nic.conns))
	for i := range ids {
		ids[i] = uint16(ConnIndex(peerOf(nic.host, i), nic.host))
	}
	return sender.Params{Window: nw.winPrm, Sack: nw.sprm, Placement: nw.plPrm, WireConn: ids,
		TicksPerNS: uint64(fabric.Nanosecond / nic.tick), ScanTicks: uint64(nw.cfg.TimerScan / nic.tick),
		AckDelayNS: uint64(nw.cfg.AckDelay.NS()), FirstProbeNS: sender.DefaultFirstProbeNS, TailProbeMinNS: sender.DefaultTailProbeMinNS,
		Announce: nw.cfg.Announce, WriteOverhead: nic.dataOverhead(wire.OpWrite), SendOverhead: nic.dataOverhead(wire.OpSend),
	}.WithQueueDepths(nw.cfg.NIC.Sender)
}

// dataOverhead is the wire bytes of a data frame of op beyond its payload (DataOverhead).
func (nic *NIC) dataOverhead(op wire.Opcode) int { return DataOverhead(op, nic.nw.wprm) }

// DataOverhead is the wire bytes of a data frame of op beyond its payload, with codec
// parameters wp: the frame (headers, ICRC, FCS) and the wire's preamble and inter-frame gap
// (golden/sender's pacing unit).
func DataOverhead(op wire.Opcode, wp wire.Params) int {
	w := &wire.Packet{BTH: wire.BTH{Opcode: op}}
	if op == wire.OpWrite {
		w.Write = &wire.WriteExt{}
	} else {
		w.Send = &wire.SendExt{}
	}
	return frameBytes(w, wp) + fabric.WireOverhead
}

// frameBytes is a packet's length on the fabric: the frame wire.Encode builds plus the FCS.
// (No MetaRoCE frame is below the Ethernet minimum, so none is padded.)
func (nic *NIC) frameBytes(w *wire.Packet) int { return frameBytes(w, nic.nw.wprm) }

func frameBytes(w *wire.Packet, wp wire.Params) int { return wire.FrameLen(w, wp) + fabric.FCSBytes }

// roomy reports whether some port wants more data packets.
func (nic *NIC) roomy() bool {
	for _, q := range nic.dataQ {
		if len(q) < nic.nw.cfg.PortQueue {
			return true
		}
	}
	return false
}

// fill tops up the ports' data queues with the sender's packets while a port has room.
func (nic *NIC) fill() {
	kick := false
	for nic.roomy() {
		c, _ := nic.send(sender.Call{Op: sender.OpNext}) // Next has no error
		if !c.OK {
			break
		}
		nic.emit(c.Packet)
		kick = true
	}
	wakes, _ := nic.send(sender.Call{Op: sender.OpTakeWakes})
	for _, t := range wakes.Wakes {
		nic.nw.net.Sim().At(nic.timeOf(t), func() {
			nic.send(sender.Call{Op: sender.OpWoke, Time: t})
			nic.fill()
		})
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

// emit queues the sender's packet pk (and the ANNOUNCE ahead of it) on its path's port; its
// payload is read from the host's buffer (traffic.Byte of its message).
func (nic *NIC) emit(pk sender.Packet) {
	nic.nw.ledger.SentPacket(pk.ID, pk.Index, pk.Kind != sender.KindNew)
	if pk.Announce {
		nic.announce(pk) // announce.go: ahead of the first data packet
	}
	w := pk.Header()
	if pk.Len > 0 {
		w.Payload = make([]byte, pk.Len)
		fillPayload(pk.ID, pk.Offset, w.Payload)
	}
	ecn := nic.nw.DataECN()
	peer := peerOf(nic.host, pk.Conn)
	p := &fabric.Packet{Dst: peer, SrcPort: pk.Entropy, DstPort: uint16(nic.nw.cfg.NIC.UDPDestPort), Proto: 17,
		Bytes: nic.frameBytes(w), ECN: ecn, Payload: &frame{w: w, msgID: pk.ID, idx: pk.Index, sent: true, ref: pk.Ref}}
	k := nic.portOf(pk.Path)
	nic.dataQ[k] = append(nic.dataQ[k], p)
}

// onAck hands an ACK for one of our paths to the sender.
func (nic *NIC) onAck(w *wire.Packet) {
	bm := sack.NewBitmap(nic.nw.sprm.Width)
	for i := 0; i < nic.nw.sprm.Width; i++ {
		if w.Ack.SackBit(i) {
			bm.Set(i)
		}
	}
	c, err := nic.send(sender.Call{Op: sender.OpAck, Ack: sender.AckIn{Conn: int(w.BTH.ConnID), Path: int(w.BTH.PathID), Cum: w.BTH.PSN,
		Bitmap: bm, ECN: w.Ack.ECNEcho, TSEcho: w.Ack.TimestampEcho, Hint: w.Ack.RateHint}})
	if err != nil {
		nic.cnt["sender_errors"]++
		return
	}
	nic.completed(c.Done)
}

// onNak hands a receiver's refusal to the sender; an RNR retry becomes a fabric event.
func (nic *NIC) onNak(w *wire.Packet) {
	c, err := nic.send(sender.Call{Op: sender.OpNak, Nak: sender.NakIn{Conn: int(w.BTH.ConnID), Path: int(w.BTH.PathID), PSN: w.BTH.PSN,
		Code: w.Nak.Code, RNRDelay: w.Nak.RNRDelay}})
	if err != nil {
		nic.cnt["sender_errors"]++
		return
	}
	if c.OK {
		nic.nw.net.Sim().At(nic.timeOf(c.At), func() {
			nic.send(sender.Call{Op: sender.OpRetry})
			nic.fill()
		})
	}
}

// startTimer arms the sender's periodic scan if it is not running.
func (nic *NIC) startTimer() {
	if c, _ := nic.send(sender.Call{Op: sender.OpArm}); c.OK {
		nic.nw.net.Sim().At(nic.timeOf(c.At), nic.scan)
	}
}

// scan runs the sender's timer scan, takes the packets it made ready, and schedules the next.
func (nic *NIC) scan() {
	nic.send(sender.Call{Op: sender.OpScan})
	nic.fill()
	if c, _ := nic.send(sender.Call{Op: sender.OpRearm}); c.OK {
		nic.nw.net.Sim().At(nic.timeOf(c.At), nic.scan)
	}
}

// SenderClock runs host h's sender on a clock of period tick (fabric.Picosecond, the default, or
// fabric.Nanosecond: the NIC's timestamp counter, as the send engine's RTL counts time), so that
// a tapped NIC's shadow takes its send decisions at the resolution the RTL does. It must be set
// before the NIC is given work: it rebuilds the sender.
func (n *Network) SenderClock(h int, tick fabric.Time) error {
	nic := n.nics[h]
	if tick != fabric.Picosecond && tick != fabric.Nanosecond {
		return fmt.Errorf("transport: sender clock of %d ps: want 1 ps or 1 ns", tick)
	}
	if n.cfg.TimerScan%tick != 0 {
		return fmt.Errorf("transport: timer scan %d ps is not a whole number of %d ps ticks", n.cfg.TimerScan, tick)
	}
	for _, cn := range nic.conns {
		for _, k := range cn.posted {
			if k != 0 {
				return fmt.Errorf("transport: host %d's sender already has work: its clock cannot change", h)
			}
		}
	}
	old := nic.tick
	nic.tick = tick
	snd, err := sender.New(nic.senderParams())
	if err != nil {
		nic.tick = old
		return fmt.Errorf("transport: host %d: %w", h, err)
	}
	nic.snd = snd
	return nil
}

// DataECN is the IP ECN field of the run's data packets: ECT(0) when the transport is
// ECN-capable, else Not-ECT.
func (n *Network) DataECN() uint8 {
	if n.cfg.ECN {
		return fabric.ECT0
	}
	return fabric.NotECT
}
