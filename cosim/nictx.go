// The transmit data path driver: nic_tx against the frames golden/transport's sender builds,
// frame by frame and read request by read request.

package cosim

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/google/go-cmp/cmp"

	goldenpl "github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/wire"
	hdldeparser "github.com/mrgen/mrgen/hdl/deparser"
	"github.com/mrgen/mrgen/pipeline"
	"github.com/mrgen/mrgen/verilator"
)

// nicTxKnobs shape one nic_tx scenario.
type nicTxKnobs struct {
	TxdValid float64 // probability that the next descriptor is offered in a cycle
	RdReady  float64 // probability of m_rd_ready in a cycle
	RdValid  float64 // probability that a due read data beat is offered in a cycle
	OutReady float64 // probability of m_axis_tready in a cycle
	// LatMin and LatMax bound the DMA read latency: cycles from a request's handshake to its
	// first data beat being offered.
	LatMin, LatMax int
	Len            int // txLenMixed, txLenZero or txLenMax
	// Gapless: require an output beat in every cycle after the first frame's last beat.
	Gapless bool
}

var nicTxScenarios = map[string]nicTxKnobs{
	// Every opcode and flag combination, payloads 0..mtu; gaps and backpressure everywhere.
	"random": {TxdValid: 0.7, RdReady: 0.8, RdValid: 0.85, OutReady: 0.8, LatMin: 2, LatMax: 40, Len: txLenMixed},
	// Always valid and ready, a fixed read latency: frames back to back, one beat per cycle.
	"back-to-back": {TxdValid: 1, RdReady: 1, RdValid: 1, OutReady: 1, LatMin: 16, LatMax: 16, Len: txLenMixed, Gapless: true},
	// Mostly low ready on m_rd and m_axis, gappy read data, long read latencies.
	"backpressure": {TxdValid: 0.9, RdReady: 0.3, RdValid: 0.5, OutReady: 0.3, LatMin: 0, LatMax: 120, Len: txLenMixed},
	// Empty messages only: no read may be issued. Descriptors are sparse (one in 20 cycles on
	// average, where a header-only frame takes 9 to 28 beats at 64 bits), so that many find
	// nic_tx idle and show its header latency.
	"header-only": {TxdValid: 0.05, RdReady: 0.8, RdValid: 0.85, OutReady: 0.8, LatMin: 2, LatMax: 40, Len: txLenZero},
	// Full-mtu payloads only, at line rate after the first read.
	"max-length": {TxdValid: 1, RdReady: 1, RdValid: 1, OutReady: 1, LatMin: 16, LatMax: 16, Len: txLenMax, Gapless: true},
}

// NicTxScenarios lists nic_tx's scenarios.
func NicTxScenarios() []string { return slices.Sorted(maps.Keys(nicTxScenarios)) }

// nicTxPorts are the layout fields the driver touches.
type nicTxPorts struct {
	rst, now, localMAC, localIP, ecn                  verilator.Field
	peerValid, peerReady, peerConn, peerRemote        verilator.Field
	peerMAC, peerIP, peerIPv6                         verilator.Field
	txdValid, txdReady                                verilator.Field
	txd                                               map[string]verilator.Field
	rdValid, rdReady, rdAddr, rdLen, rdTag            verilator.Field
	dData, dKeep, dValid, dReady, dLast, dTag         verilator.Field
	oData, oKeep, oValid, oReady, oLast, oDest, oUser verilator.Field
	idle, cntFrames, cntReads, errLen, errTag         verilator.Field
}

func bindNicTxPorts(lay *verilator.Layout, t *pipeline.Tx) (*nicTxPorts, error) {
	var p nicTxPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst, p.now, p.localMAC, p.localIP, p.ecn = in(t.Reset.Port), in("now"), in("local_mac"), in("local_ip"), in("data_ecn")
	p.peerValid, p.peerReady, p.peerConn, p.peerRemote = in("s_peer_valid"), out("s_peer_ready"), in("s_peer_conn"), in("s_peer_remote_conn")
	p.peerMAC, p.peerIP, p.peerIPv6 = in("s_peer_mac"), in("s_peer_ip"), in("s_peer_ipv6")
	p.txdValid, p.txdReady = in("s_txd_valid"), out("s_txd_ready")
	p.txd = map[string]verilator.Field{}
	for _, f := range t.DescFields() {
		p.txd[f.Name] = in("s_txd_" + f.Name)
	}
	p.rdValid, p.rdReady, p.rdAddr, p.rdLen, p.rdTag = out("m_rd_valid"), in("m_rd_ready"), out("m_rd_addr"), out("m_rd_len"), out("m_rd_tag")
	p.dData, p.dKeep, p.dValid, p.dReady, p.dLast, p.dTag = in("s_rd_tdata"), in("s_rd_tkeep"), in("s_rd_tvalid"), out("s_rd_tready"), in("s_rd_tlast"), in("s_rd_tag")
	p.oData, p.oKeep, p.oValid, p.oReady, p.oLast = out("m_axis_tdata"), out("m_axis_tkeep"), out("m_axis_tvalid"), in("m_axis_tready"), out("m_axis_tlast")
	p.oDest, p.oUser = out("m_axis_tdest"), out("m_axis_tuser")
	p.idle, p.cntFrames, p.cntReads, p.errLen, p.errTag = out("idle"), out("cnt_frames"), out("cnt_reads"), out("err_len_count"), out("err_tag_count")
	return &p, b.err
}

// setTxd drives the s_txd ports with d.
func (pt *nicTxPorts) setTxd(in []uint32, d *nicTxDesc) {
	p := d.pkt
	var msgLen, rkey, offset uint32
	var va uint64
	if p.Write != nil {
		msgLen, rkey, va = p.Write.MsgLen, p.Write.RKey, p.Write.VA
	} else {
		msgLen, offset = p.Send.MsgLen, p.Send.Offset
	}
	for name, v := range map[string]uint64{
		"conn": uint64(d.conn), "opcode": uint64(p.BTH.Opcode), "flags": uint64(p.BTH.Flags),
		"path": uint64(p.BTH.PathID), "stream": uint64(p.BTH.StreamID), "psn": uint64(p.BTH.PSN),
		"msn": uint64(p.BTH.MSN), "msg_len": uint64(msgLen), "rkey": uint64(rkey), "va": va,
		"offset": uint64(offset), "addr": d.addr, "len": uint64(len(p.Payload)),
		"udp_src": uint64(p.UDP.SrcPort), "port": uint64(d.port),
	} {
		pt.txd[name].Set(in, v)
	}
}

// txRead is one DMA read request as the RTL issued it (compared with the descriptor's).
type txRead struct {
	Addr uint64
	Len  int
	Tag  int
}

// txDMA is a read the DMA model has taken: its data, offered from cycle due on.
type txDMA struct {
	req  txRead
	data []byte
	off  int
	due  uint64
}

// BuildNicTxModel generates nic_tx for a configuration and builds (or reuses) its model.
func BuildNicTxModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *pipeline.Tx, error) {
	return buildUnit(ctx, opt, pipeline.NewTx, (*pipeline.Tx).Module, trace)
}

// RunNicTx co-simulates the transmit data path: every frame on m_axis is compared byte for byte
// (and its tdest, its tuser bit) with wire.Encode of the packet golden/transport's sender builds
// for the descriptor, its payload the host memory at the descriptor's address and its send
// timestamp the one the RTL stamped (checked to be now at a cycle between the descriptor's
// handshake and the frame's first beat, strictly increasing frame by frame); every DMA read
// request is compared (address, length, tag, order) and the reads outstanding must stay within
// the declared depth. Result.Counts holds: frames, op_<name>, flag_<name>, ipv6, header_only,
// max_length, reads, read_beats, out_beats, output_idle (cycles after the first frame's last
// beat without an output beat while frames remained), txd_waits (cycles a descriptor was offered
// and not taken), max_outstanding (the most reads outstanding at once).
func RunNicTx(ctx context.Context, opt Options) (*Result, error) {
	k, ok := nicTxScenarios[opt.Scenario]
	if !ok {
		return nil, fmt.Errorf("cosim: unknown nictx scenario %q; scenarios: %v", opt.Scenario, NicTxScenarios())
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *pipeline.Tx, error) {
		return BuildNicTxModel(ctx, opt, trace)
	}, func(lib *verilator.Library, t *pipeline.Tx, traceAt int64) (*Result, *Mismatch, error) {
		return runNicTx(ctx, lib, t, k, opt, traceAt)
	})
}

// runNicTx is the lockstep loop. traceAt ≥ 0 dumps a VCD window around that cycle.
func runNicTx(ctx context.Context, lib *verilator.Library, t *pipeline.Tx, k nicTxKnobs, opt Options,
	traceAt int64) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindNicTxPorts(lay, t)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: nic_tx ports: %w", err)
	}
	c := opt.Config
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	tr := newNicTxTraffic(wire.ParamsFrom(c), goldenpl.ParamsFrom(c), opt.Seed, k.Len)
	rng := rand.New(rand.NewPCG(opt.Seed, 0x7c0de))
	res := &Result{Block: "nictx", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: c.Hash(),
		Drops: map[string]int{}, Counts: map[string]int{},
		DeclaredLatency: map[string]int{"read_request": 1, "header_frame": t.HeaderLatency(), "deparser": hdldeparser.Latency(c.DatapathWidth)},
		MinLatency:      map[string]int{}, MaxLatency: map[string]int{}}
	lat := res.NoteLatency
	B := t.B
	resetOn := func(on bool) {
		v := uint64(0)
		if on != t.Reset.AsyncLow {
			v = 1
		}
		pt.rst.Set(in, v)
	}
	const resetCycles = 3
	peerStart := uint64(resetCycles)
	trafficStart := peerStart + uint64(len(tr.peers))
	nowBase := rng.Uint64() >> 1
	if rng.IntN(2) == 0 {
		nowBase = 1<<32 - 5000 + nowBase%1000 // the timestamp wraps early in the run
	}

	// Static inputs.
	pt.localMAC.Set(in, macBits(tr.localMAC))
	pt.localIP.SetWords(in, beWords(tr.localIP[:]))
	pt.ecn.Set(in, uint64(tr.ecn))

	var (
		descs      []*nicTxDesc // taken on s_txd, frames not yet compared (descs[0] is frame outN)
		next       *nicTxDesc   // drawn, not yet taken
		txdN       int          // descriptors taken
		offered    bool
		wantReads  fifo[*nicTxDesc] // taken descriptors whose read is still to be requested
		readN      int              // reads requested
		dma        fifo[*txDMA]     // requests taken by the DMA model
		rdOffered  bool
		outN       int
		got        []byte
		firstAt    uint64 // cycle of the frame's first beat
		lastD      uint32 // the previous frame's stamp, relative to nowBase
		firstDone  bool   // the first frame's last beat has left
		dbuf       = make([]byte, B)
		cycle      uint64
		idleChecks int
	)
	watch := cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	mismatch := func(stream string, n int, at uint64, input fmt.Stringer, diff string) (*Result, *Mismatch, error) {
		s := "(none)"
		if input != nil {
			s = input.String()
		}
		return res, &Mismatch{Stream: stream, Transaction: n, Cycle: at, Input: s, Diff: diff}, nil
	}

	for {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return nil, nil, err
		} else if over {
			return res, nil, nil
		}
		if outN >= opt.Packets {
			// Drain: the RTL must go idle within a few cycles of the last beat.
			if pt.idle.Get(outb) == 1 {
				break
			}
			if idleChecks++; idleChecks > 8 {
				return mismatch("counters", outN, cycle, nil, "idle stays low after the last frame")
			}
		}
		inReset := cycle < resetCycles
		resetOn(inReset)
		pt.now.Set(in, nowBase+cycle)

		// Peer table: one entry per connection after reset.
		peerIdx := int(cycle - peerStart)
		if !inReset && cycle < trafficStart {
			p := tr.peers[peerIdx]
			pt.peerValid.Set(in, 1)
			pt.peerConn.Set(in, uint64(peerIdx))
			pt.peerRemote.Set(in, uint64(p.remote))
			pt.peerMAC.Set(in, macBits(p.mac))
			pt.peerIP.SetWords(in, beWords(p.ip[:]))
			pt.peerIPv6.Set(in, b2u(p.ipv6))
		} else {
			pt.peerValid.Set(in, 0)
		}

		// Descriptor.
		if cycle >= trafficStart && txdN < opt.Packets && !offered && rng.Float64() < k.TxdValid {
			if next == nil {
				next = tr.next()
			}
			pt.setTxd(in, next)
			offered = true
		}
		pt.txdValid.Set(in, b2u(offered))

		// DMA model: read data of the oldest request once due.
		pt.rdReady.Set(in, b2u(k.RdReady >= 1 || rng.Float64() < k.RdReady))
		var head *txDMA
		if dma.len() > 0 {
			head = dma.items[dma.head]
		}
		if head != nil && !rdOffered && cycle >= head.due && (k.RdValid >= 1 || rng.Float64() < k.RdValid) {
			driveBeat(in, pt.dData, pt.dKeep, pt.dLast, dbuf, head.data, head.off)
			pt.dTag.Set(in, uint64(head.req.Tag))
			rdOffered = true
		}
		pt.dValid.Set(in, b2u(rdOffered))
		ready := k.OutReady >= 1 || rng.Float64() < k.OutReady
		pt.oReady.Set(in, b2u(ready))

		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
		now := cycle
		cycle++
		if inReset {
			continue
		}
		if peerIdx >= 0 && now < trafficStart && pt.peerReady.Get(outb) != 1 {
			return mismatch("peer", peerIdx, now, nil, "s_peer_ready low")
		}

		// Read request.
		if pt.rdValid.Get(outb) == 1 && pt.rdReady.Get(in) == 1 {
			got := txRead{Addr: pt.rdAddr.Get(outb), Len: int(pt.rdLen.Get(outb)), Tag: int(pt.rdTag.Get(outb))}
			if wantReads.len() == 0 {
				return mismatch("read", readN, now, nil, fmt.Sprintf("read request %+v with no descriptor asking for one", got))
			}
			d := wantReads.pop()
			want := txRead{Addr: d.addr, Len: len(d.pkt.Payload), Tag: readN % t.RdDepth}
			if diff := cmp.Diff(want, got); diff != "" {
				return mismatch("read", readN, now, d, diff)
			}
			if dma.len() >= t.RdDepth {
				return mismatch("read", readN, now, d, fmt.Sprintf("read requested with %d outstanding (depth %d)", dma.len(), t.RdDepth))
			}
			lat("read_request", int(now-d.txdAt))
			rd := &txDMA{req: got, data: make([]byte, got.Len), due: now + uint64(k.LatMin+rng.IntN(k.LatMax-k.LatMin+1))}
			tr.mem.read(got.Addr, rd.data)
			dma.push(rd)
			readN++
			res.Counts["reads"]++
			res.Counts["max_outstanding"] = max(res.Counts["max_outstanding"], dma.len())
		}

		// Output beat.
		ov := pt.oValid.Get(outb) == 1
		if firstDone && !ov && outN < opt.Packets {
			res.Counts["output_idle"]++
		}
		if ov && ready {
			res.Counts["out_beats"]++
			if len(descs) == 0 {
				return mismatch("frame", outN, now, nil, "RTL emitted a beat before the descriptor of its frame was taken")
			}
			d := descs[0]
			if len(got) == 0 {
				firstAt = now
				if len(d.pkt.Payload) == 0 {
					lat("header_frame", int(now-d.txdAt))
				}
			}
			if dest := int(pt.oDest.Get(outb)); dest != d.port {
				return mismatch("frame", outN, now, d, fmt.Sprintf("m_axis_tdest at frame byte %d: %s", len(got), cmp.Diff(d.port, dest)))
			}
			last := pt.oLast.Get(outb) == 1
			var bad string
			if got, bad = takeBeat(outb, pt.oData, pt.oKeep, last, B, got); bad != "" {
				return mismatch("frame", outN, now, d, bad)
			}
			if last || len(got) > wire.FrameLen(d.pkt, tr.prm)+B {
				if mm := nicTxCheckFrame(tr, res, d, got, last, pt.oUser.Get(outb) == 1, nowBase, firstAt, &lastD, outN, now); mm != nil {
					return res, mm, nil
				}
				lat("deparser", int(uint32(firstAt)-lastD))
				lat("queue", int(lastD-uint32(d.txdAt)))
				got = got[:0]
				descs = descs[1:]
				outN++
				firstDone = true
			}
		}

		// Input handshakes.
		if offered && pt.txdReady.Get(outb) == 1 {
			next.txdAt = now
			descs = append(descs, next)
			if len(next.pkt.Payload) > 0 {
				wantReads.push(next)
			}
			next, offered = nil, false
			txdN++
			res.Packets++
		} else if offered {
			res.Counts["txd_waits"]++
		}
		if rdOffered && pt.dReady.Get(outb) == 1 {
			rdOffered = false
			res.Counts["read_beats"]++
			head.off += B
			if head.off >= len(head.data) {
				dma.pop()
			}
		}
	}
	res.RTLCycles = cycle
	if opt.Progress != nil {
		opt.Progress(res.Packets, opt.Packets)
	}
	want := map[string]uint64{"cnt_frames": uint64(outN), "cnt_reads": uint64(readN), "err_len_count": 0, "err_tag_count": 0}
	gotc := map[string]uint64{"cnt_frames": pt.cntFrames.Get(outb), "cnt_reads": pt.cntReads.Get(outb),
		"err_len_count": pt.errLen.Get(outb), "err_tag_count": pt.errTag.Get(outb)}
	if diff := cmp.Diff(want, gotc); diff != "" {
		return mismatch("counters", outN, cycle, nil, diff)
	}
	return res, nil, nil
}

// nicTxCheckFrame compares a complete frame with golden's, stamped with the RTL's timestamp once
// that is checked; lastD is the previous frame's stamp relative to nowBase (updated).
func nicTxCheckFrame(tr *nicTxTraffic, res *Result, d *nicTxDesc, got []byte, last, user bool,
	nowBase, firstAt uint64, lastD *uint32, n int, cycle uint64) *Mismatch {
	mm := func(diff string) *Mismatch {
		return &Mismatch{Stream: "frame", Transaction: n, Cycle: cycle, Input: d.String(), Diff: diff}
	}
	off := timestampOff(d.pkt.IP.Version == 6)
	var ts uint32
	if len(got) >= off+4 {
		ts = binary.BigEndian.Uint32(got[off:])
	}
	want, err := tr.frame(d, ts)
	if err != nil {
		return mm(err.Error())
	}
	if !last || user || !bytes.Equal(got, want) {
		diff := cmp.Diff(hexLines(want), hexLines(got))
		if i := firstDiff(want, got); i >= 0 {
			diff = fmt.Sprintf("first difference at frame byte %d (of %d expected, %d emitted)\n%s", i, len(want), len(got), diff)
		}
		if user {
			diff = "m_axis_tuser set: the read data had another length than asked\n" + diff
		}
		return mm(diff)
	}
	// The stamp is now[31:0] at the cycle tx_deparser took the header: after the descriptor's
	// handshake, at least deparser.Latency cycles before the first beat, after the previous
	// frame's.
	dc := ts - uint32(nowBase) // that cycle, mod 2^32
	sinceTxd, toFirst := int32(dc-uint32(d.txdAt)), int32(uint32(firstAt)-dc)
	if sinceTxd < 1 || toFirst < int32(res.DeclaredLatency["deparser"]) || (n > 0 && int32(dc-*lastD) < 1) {
		return mm(fmt.Sprintf("timestamp %#x: cycle %d, descriptor taken at %d, first beat at %d, previous frame's stamp at cycle %d",
			ts, dc, uint32(d.txdAt), uint32(firstAt), *lastD))
	}
	*lastD = dc
	res.Compared++
	res.Counts["frames"]++
	p := d.pkt
	res.Counts["op_"+p.BTH.Opcode.String()]++
	for _, f := range []wire.Flags{wire.FlagFirst, wire.FlagLast, wire.FlagAckReq, wire.FlagRetx, wire.FlagPathInit} {
		if p.BTH.Flags&f != 0 {
			res.Counts["flag_"+f.String()]++
		}
	}
	if p.IP.Version == 6 {
		res.Counts["ipv6"]++
	}
	switch len(p.Payload) {
	case 0:
		res.Counts["header_only"]++
	case tr.prm.MTU:
		res.Counts["max_length"]++
	}
	return nil
}
