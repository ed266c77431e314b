// The closed loop's send side: host 0's data packets, chosen by the RTL's send engine
// (loop_engine.go) and built by nic_tx inside nic_top when the fabric pulls them.

package cosim

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/transport"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/pipeline"
	"github.com/mrgen/mrgen/verilator"
)

// The send side in the loop. Host 0's golden sender chooses nothing for the RTL: every call it
// makes is replayed to the send engine (loop_engine.go), whose descriptors wait in a queue per
// port, as golden's packets wait in its port queues. When the fabric pulls a port of host 0 that
// has no control frame waiting, the shadow's Pull gives the packet golden sends next (stamped
// with now, its record told it left) and the harness hands the engine's descriptor for it to
// s_txd at that time; nic_top issues the payload's DMA read (served from host 0's send buffers,
// which the host wrote when the sender accepted the work request), builds the frame and emits
// it on m_axis. The RTL's frame, compared byte for byte with the shadow's, is what goes into the
// fabric.

// txPorts are the nic_top ports of the transmit data path.
type txPorts struct {
	dataECN                                            verilator.Field
	txdValid, txdReady                                 verilator.Field
	txd                                                map[string]verilator.Field
	rdValid, rdReady, rdAddr, rdLen, rdTag             verilator.Field
	rdData, rdKeep, rdDValid, rdDReady, rdLast, rdDTag verilator.Field
	txFrames, txReads, txErr                           verilator.Field
}

// bindTxPorts binds the transmit data path's ports of nic_top, its descriptor fields (s_txd_*)
// those of tx's.
func bindTxPorts(lay *verilator.Layout, tx *pipeline.Tx) (*txPorts, error) {
	var p txPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.dataECN, p.txdValid, p.txdReady = in("data_ecn"), in("s_txd_valid"), out("s_txd_ready")
	p.txd = map[string]verilator.Field{}
	for _, f := range tx.DescFields() {
		p.txd[f.Name] = in("s_txd_" + f.Name)
	}
	p.rdValid, p.rdReady, p.rdAddr, p.rdLen, p.rdTag = out("m_rd_valid"), in("m_rd_ready"), out("m_rd_addr"), out("m_rd_len"), out("m_rd_tag")
	p.rdData, p.rdKeep, p.rdDValid, p.rdDReady = in("s_rd_tdata"), in("s_rd_tkeep"), in("s_rd_tvalid"), out("s_rd_tready")
	p.rdLast, p.rdDTag = in("s_rd_tlast"), in("s_rd_tag")
	p.txFrames, p.txReads, p.txErr = out("tx_cnt_frames"), out("tx_cnt_reads"), out("tx_err_len_count")
	return &p, b.err
}

// txDesc is one s_txd descriptor.
type txDesc map[string]uint64

// descOf is the s_txd descriptor of the engine's descriptor p, or of the ANNOUNCE that goes
// ahead of it.
func descOf(p *sndPkt, announce bool) txDesc {
	d := txDesc{"conn": uint64(p.Conn), "opcode": uint64(p.Op), "path": uint64(p.Path), "udp_src": uint64(p.UDPSrc),
		"port": uint64(p.Port)}
	if announce {
		d["opcode"] = uint64(wire.OpAnnounce)
		return d
	}
	d["flags"], d["stream"], d["psn"], d["msn"] = uint64(p.Flags), uint64(p.Stream), uint64(p.PSN), uint64(p.MSN)
	d["msg_len"], d["rkey"], d["va"], d["offset"] = uint64(p.MsgLen), uint64(p.RKey), p.VA, uint64(p.Offset)
	d["addr"], d["len"] = p.Addr, uint64(p.Len)
	return d
}

// rdKey is a DMA read request compared between the shadow (the packet's buffer) and the RTL.
type rdKey struct {
	Addr uint64
	Len  uint32
}

// sendSide keeps what the host and golden's port queues hold for host 0's send side, from its
// sender's call log: an accepted post's bytes in the host's send buffer (the host writes them
// before it posts), and each packet Next gives, queued on its path's port.
func (h *loopHarness) sendSide(c sender.Call) {
	switch {
	case c.Op == sender.OpPost && !c.Full && c.Err == "":
		data := make([]byte, c.Work.Len)
		traffic.Fill(c.Work.ID, 0, data)
		h.sendMem.Write(c.Work.Local, data)
	case c.Op == sender.OpNext && c.OK:
		port := transport.PortOf(c.Packet.Path, h.net.Planes())
		h.dataPend[port] = append(h.dataPend[port], c.Packet)
		h.res.Counts["data_packets_"+c.Packet.Kind.String()]++
	}
}

// pullData is the fabric pulling port with no RTL control frame waiting: the shadow's next
// packet of the port, built by the RTL now from the engine's descriptor.
func (h *loopHarness) pullData(now fabric.Time, port int) *fabric.Packet {
	if h.inRun || h.inGold {
		// A pull from inside an RTL run (a control frame's kick) or from inside golden's handling
		// of a frame the RTL has not seen yet: come back once it is over.
		h.sim.At(now, func() { h.net.Kick(dut, port) })
		return nil
	}
	h.drain() // the engine's descriptors of every Next golden made so far
	if h.mm != nil || h.err != nil || h.watchOver {
		return nil
	}
	p := h.gold.Pull(now, port)
	if p == nil {
		return nil
	}
	w := transport.WireOf(p)
	announce := w.BTH.Opcode == wire.OpAnnounce
	q := *p
	q.Src = dut
	gold, err := frameOf(&q, w, h.prm)
	if err != nil {
		h.err = err
		return nil
	}
	what := fmt.Sprintf("%v conn %d path %d psn %d", w.BTH.Opcode, w.BTH.ConnID, w.BTH.PathID, w.BTH.PSN)
	h.data.push(&h.data.gold, pairItem{at: now.NS(), what: what, key: ctlFrame{Port: port, Bytes: gold}})
	if !announce {
		if len(h.dataPend[port]) == 0 {
			h.err = fmt.Errorf("cosim: host 0's shadow sent %v on port %d that its sender did not choose", w.BTH.Opcode, port)
			return nil
		}
		pk := h.dataPend[port][0]
		h.dataPend[port] = h.dataPend[port][1:]
		if pk.Len > 0 {
			h.reads.push(&h.reads.gold, pairItem{at: now.NS(), what: what, key: rdKey{Addr: pk.Local, Len: pk.Len}})
		}
	}
	// The engine's descriptor for this packet: the head of its port's queue.
	pend := &h.rtlPend[port]
	if announce {
		pend = &h.rtlAnn[port]
	}
	if len(*pend) == 0 {
		h.mismatch("data frames", h.data.n, what, fmt.Sprintf("golden sends %v on port %d; the RTL's engine has no descriptor queued there", w.BTH.Opcode, port))
		return nil
	}
	d := (*pend)[0]
	*pend = (*pend)[1:]
	h.txds = append(h.txds, descOf(d, announce))
	h.answered = true // the latency of a frame's answer counts control frames only
	h.run(now)
	if h.mm != nil || h.err != nil || h.watchOver {
		return nil
	}
	if h.txOut == nil {
		h.mismatch("data frames", h.data.n, what, "the RTL built no frame for the descriptor")
		return nil
	}
	f := h.txOut
	h.txOut = nil
	h.logFrame(now, f.bytes, fmt.Sprintf("from host 0's RTL on port %d", f.port))
	h.data.push(&h.data.rtl, pairItem{at: now.NS(), key: ctlFrame{Port: f.port, Bytes: f.bytes}})
	if h.mm != nil {
		return nil
	}
	rw, reason := wire.Decode(f.bytes, h.prm)
	if reason != wire.DropNone {
		h.mismatch("data frames", h.data.n, what, fmt.Sprintf("the RTL's frame does not decode: %v", reason))
		return nil
	}
	h.res.Counts["data_frames_out"]++
	h.drain() // golden's Left and the Next pulls that refill the port
	return transport.Carrying(p, rw)
}

// txFrame is a frame nic_tx built (a data packet or an ANNOUNCE) and its port.
type txFrame struct {
	port  int
	bytes []byte
}

// isTxFrame reports whether a frame from m_axis is the transmit path's (data or ANNOUNCE), by
// its BTH opcode; nic_rx sends only ACKs and NAKs.
func (h *loopHarness) isTxFrame(f []byte) bool {
	w, reason := wire.Decode(f, h.prm)
	return reason == wire.DropNone && (w.BTH.Opcode.IsData() || w.BTH.Opcode == wire.OpAnnounce)
}

// driveTx sets the transmit path's inputs for the next cycle.
func (h *loopHarness) driveTx(in []uint32, ready func() uint64) {
	tp := h.tp
	tp.dataECN.Set(in, uint64(h.dataECN))
	if len(h.txds) > 0 {
		tp.txdValid.Set(in, 1)
		for name, f := range tp.txd {
			f.Set(in, h.txds[0][name])
		}
	} else {
		tp.txdValid.Set(in, 0)
	}
	tp.rdReady.Set(in, ready())
	if len(h.rdBeats) > 0 && ready() == 1 {
		b := h.rdBeats[0]
		tp.rdDValid.Set(in, 1)
		tp.rdData.SetWords(in, b.data)
		tp.rdKeep.Set(in, b.keep)
		tp.rdLast.Set(in, b2u(b.last))
		tp.rdDTag.Set(in, uint64(b.port)) // the read's tag
	} else {
		tp.rdDValid.Set(in, 0)
	}
}

// takeTx takes the transmit path's handshakes of the cycle just run.
func (h *loopHarness) takeTx(in, out []uint32, now int64) {
	tp := h.tp
	// Outputs are sampled with the handshakes, before the edge: a descriptor or read beat taken
	// this cycle is not yet in idle, so the run goes on for a cycle more.
	h.txTook = false
	if tp.txdValid.Get(in) == 1 && tp.txdReady.Get(out) == 1 {
		h.txds = h.txds[1:]
		h.txTook = true
	}

	if tp.rdValid.Get(out) == 1 && tp.rdReady.Get(in) == 1 {
		addr, n, tag := tp.rdAddr.Get(out), int(tp.rdLen.Get(out)), int(tp.rdTag.Get(out))
		h.reads.push(&h.reads.rtl, pairItem{at: now, key: rdKey{Addr: addr, Len: uint32(n)}})
		for _, b := range beatsOf(h.sendMem.Read(addr, n), h.nb) {
			b.port = tag
			h.rdBeats = append(h.rdBeats, b)
		}
	}
	if tp.rdDValid.Get(in) == 1 && tp.rdDReady.Get(out) == 1 {
		h.rdBeats = h.rdBeats[1:]
		h.txTook = true
	}
}
