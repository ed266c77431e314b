// The closed loop's send side: host 0's data packets, chosen by its golden shadow's sender and
// built by the RTL (nic_tx inside nic_top) when the fabric pulls them, and the ACKs and NAKs the
// RTL hands to its send side (m_ackin).

package cosim

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/transport"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/verilator"
)

// The send side in the loop. Until the send engine's RTL joins the top, golden/sender (in host
// 0's golden shadow) chooses every data packet; that choice is the one input the harness takes
// from the shadow (docs/pipeline.md, "Events from the shadow"). Everything after it is the
// RTL's: when the fabric pulls a port of host 0 that has no control frame waiting, the shadow's
// Pull gives the packet the port sends next (stamped with now, its record told it left), the
// harness hands its descriptor to s_txd at that time, and nic_top issues the payload's DMA
// read (served from host 0's send buffers, which the host wrote when the sender accepted the
// work request), builds the frame and emits it on m_axis; the RTL's frame, compared byte for
// byte with the shadow's, is what goes into the fabric.

// txPorts are the nic_top ports of the transmit data path and of m_ackin's fields.
type txPorts struct {
	dataECN                                                    verilator.Field
	txdValid, txdReady                                         verilator.Field
	txd                                                        map[string]verilator.Field
	rdValid, rdReady, rdAddr, rdLen, rdTag                     verilator.Field
	rdData, rdKeep, rdDValid, rdDReady, rdLast, rdDTag         verilator.Field
	aiOp, aiConn, aiPath, aiPSN, aiStream, aiMSN, aiTS, aiECN  verilator.Field
	aiHint, aiSack, aiNakCode, aiRNR, txFrames, txReads, txErr verilator.Field
}

// txdFields are nic_tx's descriptor fields (s_txd_<name>).
var txdFields = []string{"conn", "opcode", "flags", "path", "stream", "psn", "msn", "msg_len", "rkey", "va", "offset",
	"addr", "len", "udp_src", "port"}

func bindTxPorts(lay *verilator.Layout) (*txPorts, error) {
	var p txPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.dataECN, p.txdValid, p.txdReady = in("data_ecn"), in("s_txd_valid"), out("s_txd_ready")
	p.txd = map[string]verilator.Field{}
	for _, f := range txdFields {
		p.txd[f] = in("s_txd_" + f)
	}
	p.rdValid, p.rdReady, p.rdAddr, p.rdLen, p.rdTag = out("m_rd_valid"), in("m_rd_ready"), out("m_rd_addr"), out("m_rd_len"), out("m_rd_tag")
	p.rdData, p.rdKeep, p.rdDValid, p.rdDReady = in("s_rd_tdata"), in("s_rd_tkeep"), in("s_rd_tvalid"), out("s_rd_tready")
	p.rdLast, p.rdDTag = in("s_rd_tlast"), in("s_rd_tag")
	p.aiOp, p.aiConn, p.aiPath, p.aiPSN = out("m_ackin_opcode"), out("m_ackin_conn"), out("m_ackin_path"), out("m_ackin_psn")
	p.aiStream, p.aiMSN, p.aiTS, p.aiECN = out("m_ackin_stream"), out("m_ackin_msn"), out("m_ackin_ts_echo"), out("m_ackin_ecn_echo")
	p.aiHint, p.aiSack, p.aiNakCode, p.aiRNR = out("m_ackin_rate_hint"), out("m_ackin_sack"), out("m_ackin_nak_code"), out("m_ackin_rnr_delay")
	p.txFrames, p.txReads, p.txErr = out("tx_cnt_frames"), out("tx_cnt_reads"), out("tx_err_len_count")
	return &p, b.err
}

// txDesc is one s_txd descriptor.
type txDesc map[string]uint64

// descOf is the descriptor of the packet the shadow pulled: data packet pk, or the ANNOUNCE
// that goes ahead of it.
func descOf(pk sender.Packet, w *wire.Packet, port int) txDesc {
	d := txDesc{"conn": uint64(pk.Conn), "opcode": uint64(w.BTH.Opcode), "path": uint64(pk.Path), "udp_src": uint64(pk.Entropy),
		"port": uint64(port)}
	if w.BTH.Opcode == wire.OpAnnounce {
		return d
	}
	d["flags"], d["stream"], d["psn"], d["msn"] = uint64(pk.Flags), uint64(pk.Stream), uint64(pk.PSN), uint64(pk.MSN)
	d["msg_len"], d["rkey"], d["va"], d["offset"] = uint64(pk.MsgLen), uint64(pk.RKey), pk.VA, uint64(pk.Offset)
	d["addr"], d["len"] = pk.Local, uint64(pk.Len)
	return d
}

// rdKey is a DMA read request compared between the shadow (the packet's buffer) and the RTL.
type rdKey struct {
	Addr uint64
	Len  uint32
}

// ackinKey is an ACK or NAK as the send side receives it (m_ackin; golden: the decoded frame).
type ackinKey struct {
	Op                  wire.Opcode
	Conn, Path          uint64
	PSN, MSN, TSEcho    uint32
	Stream              uint8
	ECN, Hint, RNRDelay uint16
	NakCode             wire.NakCode
	Sack                string // the SACK bits, as a hex string of the bitmap words
}

// ackinOf is what m_ackin should carry for a decoded ACK or NAK.
func ackinOf(w *wire.Packet, sackW int) ackinKey {
	k := ackinKey{Op: w.BTH.Opcode, Conn: uint64(w.BTH.ConnID), Path: uint64(w.BTH.PathID), PSN: w.BTH.PSN}
	switch {
	case w.Ack != nil:
		k.TSEcho, k.ECN, k.Hint = w.Ack.TimestampEcho, w.Ack.ECNEcho, w.Ack.RateHint
		words := make([]uint32, (sackW+31)/32)
		for i := 0; i < sackW; i++ {
			if w.Ack.SackBit(i) {
				words[i/32] |= 1 << (i % 32)
			}
		}
		k.Sack = fmt.Sprintf("%08x", words)
	case w.Nak != nil:
		k.Stream, k.MSN, k.TSEcho, k.NakCode, k.RNRDelay = w.BTH.StreamID, w.BTH.MSN, w.Nak.TimestampEcho, w.Nak.Code, w.Nak.RNRDelay
	}
	return k
}

// readAckin is the ACK or NAK m_ackin offers.
func (pt *txPorts) readAckin(out []uint32, sackW int) ackinKey {
	k := ackinKey{Op: wire.Opcode(pt.aiOp.Get(out)), Conn: pt.aiConn.Get(out), Path: pt.aiPath.Get(out), PSN: uint32(pt.aiPSN.Get(out)),
		TSEcho: uint32(pt.aiTS.Get(out))}
	if k.Op == wire.OpAck {
		k.ECN, k.Hint = uint16(pt.aiECN.Get(out)), uint16(pt.aiHint.Get(out))
		words := pt.aiSack.GetWords(out)
		k.Sack = fmt.Sprintf("%08x", words[:(sackW+31)/32])
	} else {
		k.Stream, k.MSN = uint8(pt.aiStream.Get(out)), uint32(pt.aiMSN.Get(out))
		k.NakCode, k.RNRDelay = wire.NakCode(pt.aiNakCode.Get(out)), uint16(pt.aiRNR.Get(out))
	}
	return k
}

func (t *loopTap) Work(now fabric.Time, wr sender.WorkRequest) {
	h := (*loopHarness)(t)
	data := make([]byte, wr.Len)
	traffic.Fill(wr.ID, 0, data)
	h.sendMem.Write(wr.Local, data)
}

func (t *loopTap) Data(now fabric.Time, port int, pk sender.Packet) {
	h := (*loopHarness)(t)
	if pk.Announce {
		h.annPend[port] = append(h.annPend[port], pk)
	}
	h.dataPend[port] = append(h.dataPend[port], pk)
	h.res.Counts["data_packets_"+pk.Kind.String()]++
}

// pullData is the fabric pulling port with no RTL control frame waiting: the shadow's next
// packet of the port, built by the RTL now.
func (h *loopHarness) pullData(now fabric.Time, port int) *fabric.Packet {
	if h.inRun {
		// A pull from inside an RTL run (a control frame's kick): come back once it is over.
		h.sim.At(now, func() { h.net.Kick(dut, port) })
		return nil
	}
	p := h.gold.Pull(now, port)
	if p == nil {
		return nil
	}
	w := transport.WireOf(p)
	var pk sender.Packet
	pend := &h.dataPend[port]
	if w.BTH.Opcode == wire.OpAnnounce {
		pend = &h.annPend[port]
	}
	if len(*pend) == 0 {
		h.err = fmt.Errorf("cosim: host 0's shadow sent %v on port %d that its sender did not choose", w.BTH.Opcode, port)
		return nil
	}
	pk, *pend = (*pend)[0], (*pend)[1:]
	q := *p
	q.Src = dut
	gold, err := frameOf(&q, w, h.prm)
	if err != nil {
		h.err = err
		return nil
	}
	what := fmt.Sprintf("%v conn %d path %d psn %d (%v, message %d packet %d)", w.BTH.Opcode, pk.Conn, pk.Path, pk.PSN, pk.Kind, pk.ID, pk.Index)
	h.data.push(&h.data.gold, pairItem{at: now.NS(), what: what, key: ctlFrame{Port: port, Bytes: gold}})
	d := descOf(pk, w, port)
	if w.BTH.Opcode != wire.OpAnnounce && pk.Len > 0 {
		h.reads.push(&h.reads.gold, pairItem{at: now.NS(), what: what, key: rdKey{Addr: pk.Local, Len: pk.Len}})
	}
	h.txds = append(h.txds, d)
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
		for _, f := range txdFields {
			tp.txd[f].Set(in, h.txds[0][f])
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

// ackin takes one ACK or NAK the RTL hands its send side.
func (h *loopHarness) ackin(out []uint32, now int64) {
	k := h.tp.readAckin(out, h.opt.Config.SackWidth)
	h.acks.push(&h.acks.rtl, pairItem{at: now, key: k})
}

// goldAckin is an ACK or NAK reaching host 0 that its shadow's send side takes.
func (h *loopHarness) goldAckin(now fabric.Time, w *wire.Packet) {
	if w.BTH.Opcode != wire.OpAck && w.BTH.Opcode != wire.OpNak {
		return
	}
	h.acks.push(&h.acks.gold, pairItem{at: now.NS(), what: fmt.Sprintf("%v conn %d path %d psn %d", w.BTH.Opcode, w.BTH.ConnID, w.BTH.PathID, w.BTH.PSN),
		key: ackinOf(w, h.opt.Config.SackWidth)})
}

// newSendMem is host 0's memory of send buffers.
func newSendMem() *placement.HostMemory { return placement.NewHostMemory() }
