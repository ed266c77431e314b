package transport

import (
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/wire"
)

// Announcing a connection (docs/wire-format.md §10.1).
//
// A connection that starts sending toward a receiver it has not heard from sends one ANNOUNCE
// on the path of its first data packet, just ahead of it (Config.Announce). Control packets
// travel in the switches' strict-priority class, so at an incast the ANNOUNCEs (74-byte frames)
// reach the receiver together, while the first data packets (one mtu each) still queue behind
// each other at its link. The receiver's ACK scheduler (golden/acker.Announce) counts an
// announced connection for the rate hint at once and answers it, in the same gather window as
// data newcomers, with an ACK carrying the share of every sender counted by then; an announced
// sender whose share a later window moves by more than a tenth is answered again. The ANNOUNCE
// and its answer change no PSN or SACK state: the ANNOUNCE is never classified by the SACK
// receiver, and the answer carries the path's cumulative PSN with no SACK bits, which the
// sender takes as a duplicate (or, if the path has advanced since, as true news). A lost
// ANNOUNCE or answer costs only the head start: the first data packet counts the sender as it
// did before, and its ACK brings the hint.

// announce queues the ANNOUNCE golden/sender asked for ahead of data packet pk (the control
// queue is served first, so it leaves before it).
func (nic *NIC) announce(pk sender.Packet) {
	w := pk.AnnounceHeader()
	k := nic.portOf(pk.Path)
	nic.ctrlQ[k] = append(nic.ctrlQ[k], nic.nw.ControlPacket(nic.host, peerOf(nic.host, pk.Conn), k, pk.Entropy, uint16(nic.nw.cfg.NIC.UDPDestPort), w))
}

// onAnnounce hands an ANNOUNCE to the ACK scheduler with the announced path's cumulative PSN.
// Its answer goes back the way the ANNOUNCE came, as every ACK of the path goes back the way
// the path's latest packet came.
func (nic *NIC) onAnnounce(p *fabric.Packet, w *wire.Packet) {
	nic.cnt["announces_received"]++
	c, path := int(w.BTH.ConnID), int(w.BTH.PathID)
	cn := nic.conns[c]
	cn.reply[path] = p
	acks, err := nic.ack.Announce(nic.nowNS64(), c, path, w.Announce.Timestamp, nic.srx.Cum(nic.index(c, path)))
	if err != nil {
		nic.cnt["ack_scheduler_errors"]++
		return
	}
	nic.sendAcks(acks)
}
