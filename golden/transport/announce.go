package transport

import (
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

// Announcing a connection (docs/wire-format.md §10.1).
//
// A connection that starts sending toward a receiver it has not heard from sends one ANNOUNCE
// on the path of its first data packet, just ahead of it. Control packets travel in the
// switches' strict-priority class, so at an incast the ANNOUNCEs (74-byte frames) reach the
// receiver together, while the first data packets (one mtu each) still queue behind each other
// at its link. The receiver counts an announced connection for the rate hint at once and
// answers it, in the same gather window as data newcomers, with an ACK carrying the share of
// every sender counted by then. The ANNOUNCE and its answer change no PSN or SACK state: the
// ANNOUNCE is never classified by the SACK receiver, and the answer carries the path's
// cumulative PSN with no SACK bits, which the sender takes as a duplicate (or, if the path has
// advanced since, as true news). A lost ANNOUNCE or answer costs only the head start: the first
// data packet counts the sender as it did before, and its ACK brings the hint.

// announce queues the ANNOUNCE of cn on path, ahead of the connection's first data packet (the
// control queue is served first, so it leaves before it).
func (nic *NIC) announce(cn *conn, path int) {
	w := &wire.Packet{BTH: wire.BTH{Opcode: wire.OpAnnounce, ConnID: uint16(ConnIndex(cn.peer, nic.host)), PathID: uint8(path)},
		Announce: &wire.Announce{}}
	k := nic.portOf(path)
	nic.ctrlQ[k] = append(nic.ctrlQ[k], &fabric.Packet{Dst: cn.peer, SrcPort: nic.win.Path(cn.idx, path).Entropy,
		DstPort: uint16(nic.nw.cfg.NIC.UDPDestPort), Proto: 17, Bytes: nic.frameBytes(w), Control: true, Payload: &frame{w: w}})
	nic.cnt["announces_sent"]++
}

// onAnnounce counts an announced connection as a newcomer for the rate hint and holds its
// answer in the gather window. A receiver without rate hints has nothing to tell and ignores
// ANNOUNCEs; an ANNOUNCE from a connection already counted is not answered (its data ACKs carry
// the hint).
func (nic *NIC) onAnnounce(p *fabric.Packet, w *wire.Packet) {
	nic.cnt["announces_received"]++
	cn := nic.conns[w.BTH.ConnID]
	if !nic.nw.cfg.RateHints || cn.active {
		nic.cnt["announces_unanswered"]++
		return
	}
	now := nic.now()
	cn.lastData = now
	cn.active = true
	nic.active++
	nic.gather(now)
	nic.gathered = append(nic.gathered, &owedAck{p: p, cn: cn, path: int(w.BTH.PathID), ts: w.Announce.Timestamp,
		arrived: now, announce: true})
}

// answerAnnounce sends the answer to a gathered ANNOUNCE: an ACK of the announced path with its
// cumulative PSN, no SACK bits and no ECN echo (both stay with the path's data ACKs, whose state
// this answer does not touch), the rate hint, and the ANNOUNCE's own timestamp as echo. The echo
// is not advanced by the hold: a header-only packet crosses every store-and-forward hop faster
// than a data frame, so its round trip without the hold would be shorter than the path's, and
// the sender's base RTT (a minimum, which sizes the rate cap) would keep it; with the hold (at
// least Gather) the sample is longer, and the first data sample replaces it.
func (nic *NIC) answerAnnounce(o *owedAck) {
	if !o.told {
		nic.announced = append(nic.announced, o)
	}
	o.told, o.hint = true, nic.rateHint()
	words := nic.nw.sprm.Width / wire.SackWordBits
	cum := nic.srx.Cum(nic.index(o.cn.idx, o.path))
	w := &wire.Packet{BTH: wire.BTH{Opcode: wire.OpAck, ConnID: uint16(ConnIndex(o.cn.peer, nic.host)), PathID: uint8(o.path), PSN: cum},
		Ack: &wire.Ack{TimestampEcho: o.ts, RateHint: o.hint, Sack: make([]uint64, words)}}
	nic.cnt["announces_answered"]++
	nic.sendCtrl(o.p, w)
}

// refreshAnnounced runs when a gather window closes, before its newcomers are answered: an
// announced connection answered in an earlier window within MaxGather, whose share the
// newcomers since then moved by more than a tenth, is answered again with the new share. The
// newcomers of an incast arrive in waves a propagation difference apart (the receiver's leaf
// first, the senders behind the spines 2 µs later), so a window can close between two waves;
// without the refresh the first wave would keep its larger share until its next data ACK, which
// queues behind every second-wave first packet. The answer is the same as the first one, the
// ANNOUNCE's echo included, so it is as safe: nothing on the path left before the ANNOUNCE.
func (nic *NIC) refreshAnnounced(now fabric.Time) {
	hint := nic.rateHint()
	keep := nic.announced[:0]
	for _, o := range nic.announced {
		if now-o.arrived > MaxGather {
			continue
		}
		keep = append(keep, o)
		if d := int(o.hint) - int(hint); 10*d > int(hint) || -10*d > int(hint) {
			nic.cnt["announces_refreshed"]++
			nic.answerAnnounce(o)
		}
	}
	clear(nic.announced[len(keep):])
	nic.announced = keep
}
