// The closed loop's RTL side: host 0's endpoint on the fabric, the tap on its golden shadow,
// and the cycle loop that drives nic_rx.

package cosim

import (
	"errors"
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/transport"
	"github.com/mrgen/mrgen/golden/wire"
)

// loopEndpoint is host 0 on the fabric: frames in go to the RTL (and the shadow), the RTL's
// control frames go out.
type loopEndpoint loopHarness

func (e *loopEndpoint) Receive(now fabric.Time, port int, p *fabric.Packet) {
	h := (*loopHarness)(e)
	if h.mm != nil || h.err != nil || h.watchOver {
		return
	}
	w := transport.WireOf(p)
	if w == nil {
		h.err = fmt.Errorf("cosim: host 0 received a packet that is not MetaRoCE")
		return
	}
	frame, err := frameOf(p, w, h.prm)
	if err != nil {
		h.err = err
		return
	}
	if w.BTH.Opcode.IsData() && w.BTH.Flags&wire.FlagPathInit != 0 {
		h.res.Counts["path_init_frames"]++
	}
	if w.BTH.Opcode == wire.OpAnnounce {
		h.res.Counts["announce_frames"]++
	}
	copies := 1
	if h.rng.Float64() < h.k.Duplicate {
		copies = 2
		h.res.Counts["duplicated_frames"]++
	}
	h.drain() // the sender calls of earlier events first
	// One copy at a time: golden takes it, then the RTL, then the sender calls golden made for
	// it are replayed (an ACK's reach the engine through nic_rx).
	for i := 0; i < copies; i++ {
		f := frame
		if h.rng.Float64() < h.k.Corrupt {
			f = append([]byte(nil), frame...)
			f[14+h.rng.IntN(len(f)-14)] ^= byte(1 + h.rng.IntN(255))
			h.res.Counts["corrupted_frames"]++
		}
		h.res.Packets++
		h.logFrame(now, f, fmt.Sprintf("to host 0 on port %d", port))
		if _, reason := wire.Decode(f, h.prm); reason != wire.DropNone {
			h.drops.push(&h.drops.gold, pairItem{at: now.NS(), what: "a corrupted frame", key: reason.String()})
			h.res.Drops[reason.String()]++
		} else {
			h.inGold = true
			h.gold.Receive(now, port, p)
			h.inGold = false
		}
		for _, b := range beatsOf(f, h.nb) {
			b.port = port
			h.frames = append(h.frames, b)
		}
		h.run(now)
		h.drain()
	}
}

func (e *loopEndpoint) Pull(now fabric.Time, port int) *fabric.Packet {
	h := (*loopHarness)(e)
	if len(h.outQ[port]) == 0 {
		if h.mm != nil || h.err != nil || h.watchOver {
			return nil
		}
		return h.pullData(now, port)
	}
	p := h.outQ[port][0]
	h.outQ[port] = h.outQ[port][1:]
	return p
}

// loopTap receives the golden shadow's outputs.
type loopTap loopHarness

func (t *loopTap) Control(now fabric.Time, p *fabric.Packet, w *wire.Packet) {
	h := (*loopHarness)(t)
	f, err := frameOf(p, w, h.prm)
	if err != nil {
		h.err = err
		return
	}
	h.ctl.push(&h.ctl.gold, pairItem{at: now.NS(), what: fmt.Sprintf("%v on conn %d path %d", w.BTH.Opcode, w.BTH.ConnID, w.BTH.PathID),
		key: ctlFrame{Port: p.Plane, Bytes: f}})
}

func (t *loopTap) DMA(now fabric.Time, d *placement.DMAWrite) {
	h := (*loopHarness)(t)
	dbgf("gold dma addr %#x len %d", d.Addr, len(d.Data))
	h.dma.push(&h.dma.gold, pairItem{at: now.NS(), what: fmt.Sprintf("write of %d bytes at %#x", len(d.Data), d.Addr),
		key: dmaKey{Addr: d.Addr, Data: append([]byte(nil), d.Data...)}})
}

func (t *loopTap) Completion(now fabric.Time, conn int, cp placement.Completion, addr uint64) {
	h := (*loopHarness)(t)
	k := cplKeyOf(conn, cp)
	if addr != 0 {
		k.Data = h.gold.Memory().Read(addr, int(cp.MsgLen))
		h.cplAddr[[3]uint64{uint64(conn), uint64(cp.Stream), uint64(cp.MSN)}] = addr
	}
	h.cpl.push(&h.cpl.gold, pairItem{at: now.NS(), what: fmt.Sprintf("completion conn %d stream %d msn %d", conn, cp.Stream, cp.MSN), key: k})
}

func (t *loopTap) Freed(now fabric.Time, addr, n uint64) {
	(*loopHarness)(t).frees[addr] = n
}

func (t *loopTap) Op(now fabric.Time, op transport.SetupOp) {
	h := (*loopHarness)(t)
	if now == 0 || op.Register {
		h.ctlOps = append(h.ctlOps, op)
		return
	}
	// A repost follows golden's completion of a message on the stream: the RTL's host posts it
	// once the RTL has released that completion too (its receive queue has room only then).
	// With a repost delay the RTL has released it already, and the repost goes in now, in its
	// own run, ahead of any later frame.
	id := [2]int{op.Conn, op.Stream}
	if h.released[id] == 0 {
		h.reposts[id] = append(h.reposts[id], op)
		return
	}
	h.released[id]--
	h.ctlOps = append(h.ctlOps, op)
	if !h.inRun && !h.inGold {
		h.drain()
		h.run(now)
	}
}

func cplKeyOf(conn int, cp placement.Completion) cplKey {
	return cplKey{Conn: conn, Stream: int(cp.Stream), Op: int(cp.Op), Status: int(cp.Status), MSN: cp.MSN,
		MsgLen: cp.MsgLen, Bytes: cp.Bytes, BufAddr: cp.Buf.Addr, BufLen: cp.Buf.Length, RKey: cp.RKey}
}

var errHung = errors.New("cosim: nic_rx did not become idle")

// reset resets the model and waits for its table clears.
func (h *loopHarness) reset() error {
	pt := h.pt
	pt.rst.Set(h.in, b2u(!h.asyncLow))
	for i := 0; i < 3; i++ {
		if err := h.step(); err != nil {
			return err
		}
	}
	pt.rst.Set(h.in, b2u(h.asyncLow))
	pt.localMAC.Set(h.in, macBits(hostMAC(dut)))
	pt.localIP.SetWords(h.in, ipWords(hostIP(dut)))
	for i := 0; ; i++ {
		if err := h.step(); err != nil {
			return err
		}
		if pt.busy.Get(h.out) == 0 && h.ep.busy.Get(h.out) == 0 {
			break
		}
		if i > 1<<20 {
			return errHung
		}
	}
	// The peer table: connection i's peer, its id for this host, its addresses.
	for i := 0; i < h.opt.Config.Connections; i++ {
		peer := transport.PeerOf(dut, i)
		pt.peerValid.Set(h.in, 1)
		pt.peerConn.Set(h.in, uint64(i))
		pt.peerRemote.Set(h.in, uint64(transport.ConnIndex(peer, dut)))
		pt.peerMAC.Set(h.in, macBits(hostMAC(peer)))
		pt.peerIP.SetWords(h.in, ipWords(hostIP(peer)))
		pt.peerV6.Set(h.in, 0)
		if err := h.step(); err != nil {
			return err
		}
	}
	pt.peerValid.Set(h.in, 0)
	return nil
}

// advance steps the RTL one cycle; false when the run must end (an error, kept in h.err, or
// the end of a --watch trace).
func (h *loopHarness) advance() bool {
	if err := h.step(); err != nil {
		if errors.Is(err, errTraceDone) {
			h.watchOver = true
		} else {
			h.err = err
		}
		return false
	}
	return true
}

// runsSoFar numbers the RTL runs (frame and timer), for a mismatch on the idle stream.
func (h *loopHarness) runsSoFar() int {
	return h.res.Counts["rtl_runs_frame"] + h.res.Counts["rtl_runs_timer"]
}

// quiet reports nic_top idle with no output offered.
func (h *loopHarness) quiet() bool {
	return h.pt.idle.Get(h.out) == 1 && h.pt.dmaValid.Get(h.out) == 0 && h.pt.cplValid.Get(h.out) == 0 &&
		h.pt.pvdValid.Get(h.out) == 0 && h.pt.payValid.Get(h.out) == 0 && h.pt.outValid.Get(h.out) == 0 &&
		h.tp.rdValid.Get(h.out) == 0
}

// settle runs the RTL at the current time until it is idle.
func (h *loopHarness) settle() error {
	h.run(h.sim.Now())
	return h.err
}

// run drives the RTL at time now until every queued frame and control operation is in, it is
// idle and every output has been taken; then it schedules the RTL's next timer.
func (h *loopHarness) run(now fabric.Time) {
	if h.mm != nil || h.err != nil || h.watchOver {
		return
	}
	h.nowNS = uint64(now.NS())
	h.pt.now.Set(h.in, h.nowNS)
	h.inRun = true
	defer func() { h.inRun = false }()
	limit := 64 + 8*len(h.frames) + 64*len(h.ctlOps) + 8*len(h.txds) + maxSenderCycles(h.eu)*(1+len(h.frames)) + 8*h.opt.Config.Connections*h.opt.Config.PathsPerConnection
	// The profile of the loop's cycles: runs that take frames in, and runs only timers start.
	kind := "timer"
	if len(h.frames) > 0 {
		kind = "frame"
	}
	h.res.Counts["rtl_runs_"+kind]++
	start := h.cycle
	defer func() { h.res.Counts["rtl_cycles_"+kind] += int(h.cycle - start) }()
	for n := 0; ; n++ {
		if !h.advance() || h.mm != nil {
			return
		}
		if h.framePos == len(h.frames) && len(h.ctlOps) == 0 && len(h.ctlWait) == 0 && h.quiet() &&
			len(h.txds) == 0 && len(h.rdBeats) == 0 && !h.txTook && h.cmd == nil {
			// idle is a promise: with the inputs held, nothing moves. One more cycle checks it
			// (an idle that comes early, before a timer due at this time has fired, shows here).
			if !h.advance() {
				return
			}
			if h.mm == nil && !h.quiet() {
				h.mismatch("idle", h.runsSoFar(), "end of an RTL run",
					fmt.Sprintf("idle was high with no input, and the next cycle was not quiet: idle %d, dma %d, completion %d, verdict %d, payload %d, frame out %d, read %d",
						h.pt.idle.Get(h.out), h.pt.dmaValid.Get(h.out), h.pt.cplValid.Get(h.out), h.pt.pvdValid.Get(h.out),
						h.pt.payValid.Get(h.out), h.pt.outValid.Get(h.out), h.tp.rdValid.Get(h.out)))
			}
			break
		}
		if n > limit+1<<16 {
			h.err = fmt.Errorf("%w at %d ns after %d cycles", errHung, h.nowNS, n)
			return
		}
	}
	h.frames, h.framePos = h.frames[:0], 0
	h.answered = true // a timer's ACKs answer no frame
	if h.pt.wakeValid.Get(h.out) == 1 {
		at := fabric.Time(h.pt.wakeAt.Get(h.out)) * fabric.Nanosecond
		if at < h.sim.Now() {
			at = h.sim.Now()
		}
		if h.wakeAt == 0 || at < h.wakeAt {
			h.wakeAt = at
			h.sim.At(at, func() {
				if h.wakeAt == at {
					h.wakeAt = 0
					h.drain()
					h.run(h.sim.Now())
				}
			})
		}
	}
}

// step drives one cycle: inputs from the queues, random readiness of the host interfaces,
// then every output handshake of the cycle.
func (h *loopHarness) step() error {
	if over, err := h.watch.at(h.cycle, h.res.Packets); err != nil {
		return err
	} else if over {
		return errTraceDone
	}
	pt, in := h.pt, h.in
	// Frames.
	if h.framePos < len(h.frames) {
		b := h.frames[h.framePos]
		pt.inValid.Set(in, 1)
		pt.inData.SetWords(in, b.data)
		pt.inKeep.Set(in, b.keep)
		pt.inLast.Set(in, b2u(b.last))
		pt.inUser.Set(in, uint64(b.port))
	} else {
		pt.inValid.Set(in, 0)
	}
	// Control operations: one at a time.
	if len(h.ctlOps) > 0 && len(h.ctlWait) == 0 {
		op := h.ctlOps[0]
		pt.ctlValid.Set(in, 1)
		code := uint64(2)
		if op.Register {
			code = 0
		}
		pt.ctlOp.Set(in, code)
		pt.ctlConn.Set(in, uint64(op.Conn))
		pt.ctlStream.Set(in, uint64(op.Stream))
		pt.ctlAddr.Set(in, op.Addr)
		pt.ctlLen.Set(in, op.Len)
		pt.ctlAccess.Set(in, uint64(op.Access))
		pt.ctlRKey.Set(in, 0)
	} else {
		pt.ctlValid.Set(in, 0)
	}
	ready := func() uint64 { return b2u(h.k.HostReady >= 1 || h.rng.Float64() < h.k.HostReady) }
	pt.payReady.Set(in, ready())
	pt.pvdReady.Set(in, ready())
	// The host's DMA engine keeps writes in order: a completion is taken only when no DMA
	// command is waiting (so a message's bytes are in memory before its completion).
	// (placement may offer both in one cycle: the completion waits until it has been offered
	// for a cycle with no command beside it).
	pt.cplReady.Set(in, b2u(ready() == 1 && h.pt.cplValid.Get(h.out) == 1 && h.pt.dmaValid.Get(h.out) == 0))
	pt.mCtlReady.Set(in, 1)
	pt.outReady.Set(in, 1)
	h.driveTx(in, ready)
	h.driveEngine(in)
	// A DMA command is taken only once its payload has fully arrived (its tag is stable while
	// it is offered, so the previous cycle's outputs name it).
	dmaOK := h.pt.dmaValid.Get(h.out) == 1 && h.payDone[h.pt.dmaTag.Get(h.out)]
	pt.dmaReady.Set(in, b2u(dmaOK && ready() == 1))

	if err := h.m.Step(in, h.out); err != nil {
		return err
	}
	h.cycle++
	out := h.out
	now := int64(h.nowNS)
	if pt.inValid.Get(in) == 1 && pt.inReady.Get(out) == 1 {
		if h.frames[h.framePos].last {
			h.lastIn, h.answered = h.cycle, false
		}
		h.framePos++
	}
	h.takeTx(in, out, now)
	h.takeEngine(in, out)
	if pt.ctlValid.Get(in) == 1 && pt.ctlReady.Get(out) == 1 {
		h.ctlWait = append(h.ctlWait, h.ctlOps[0])
		h.ctlOps = h.ctlOps[1:]
	}
	if pt.mCtlValid.Get(out) == 1 {
		op := h.ctlWait[0]
		h.ctlWait = h.ctlWait[1:]
		if st := pt.mCtlStatus.Get(out); st != 0 {
			h.mismatch("host control", 0, fmt.Sprintf("%+v", op), fmt.Sprintf("RTL refused it with status %d", st))
		} else if op.Register && uint32(pt.mCtlRKey.Get(out)) != op.RKey {
			h.mismatch("host control", 0, fmt.Sprintf("%+v", op), fmt.Sprintf("rkey: golden %#x, RTL %#x", op.RKey, pt.mCtlRKey.Get(out)))
		}
	}
	if pt.payValid.Get(out) == 1 && pt.idle.Get(out) == 1 && h.mm == nil {
		// idle says no packet is in the pipeline: a payload beat on offer is one still owed
		// (under host backpressure the beats trail their header by many cycles).
		h.mismatch("idle", h.runsSoFar(), "a payload on m_pay",
			fmt.Sprintf("idle was high while m_pay offered a beat of the payload tagged %d", pt.payTag.Get(out)))
	}
	if pt.payValid.Get(out) == 1 && pt.payReady.Get(in) == 1 {
		h.payCur = appendBeat(h.payCur, pt.payData.GetWords(out), pt.payKeep.Get(out), h.nb)
		if pt.payLast.Get(out) == 1 {
			tag := pt.payTag.Get(out)
			dbgf("%d pay tag %d len %d", h.cycle, tag, len(h.payCur))
			h.pay[tag], h.payDone[tag] = h.payCur, true
			h.payCur = nil
		}
	}
	if pt.pvdValid.Get(out) == 1 && pt.pvdReady.Get(in) == 1 && pt.pvdPlaced.Get(out) == 0 {
		tag := pt.pvdTag.Get(out)
		dbgf("%d discard tag %d", h.cycle, tag)
		delete(h.pay, tag)
		delete(h.payDone, tag)
	}
	if pt.dmaValid.Get(out) == 1 && pt.dmaReady.Get(in) == 1 {
		tag, n := pt.dmaTag.Get(out), int(pt.dmaLen.Get(out))
		d := &placement.DMAWrite{Addr: pt.dmaAddr.Get(out), Data: append([]byte(nil), h.pay[tag][:min(n, len(h.pay[tag]))]...)}
		delete(h.pay, tag)
		delete(h.payDone, tag)
		h.rtlMem.Apply(d)
		dbgf("%d rtl dma tag %d len %d addr %#x have %d", h.cycle, tag, n, d.Addr, len(d.Data))
		h.dma.push(&h.dma.rtl, pairItem{at: now, key: dmaKey{Addr: d.Addr, Data: d.Data}})
	}
	if pt.cplValid.Get(out) == 1 && pt.cplReady.Get(in) == 1 {
		k := cplKey{Conn: int(pt.cplConn.Get(out)), Stream: int(pt.cplStream.Get(out)), Op: int(pt.cplOp.Get(out)),
			Status: int(pt.cplStatus.Get(out)), MSN: uint32(pt.cplMSN.Get(out)), MsgLen: uint32(pt.cplMsgLen.Get(out)),
			Bytes: uint32(pt.cplBytes.Get(out)), BufAddr: pt.cplBufAddr.Get(out), BufLen: uint32(pt.cplBufLen.Get(out)),
			RKey: uint32(pt.cplRKey.Get(out))}
		// The application reads the message where golden's host found it, then frees it.
		id := [3]uint64{uint64(k.Conn), uint64(k.Stream), uint64(k.MSN)}
		if addr, ok := h.cplAddr[id]; ok {
			delete(h.cplAddr, id)
			k.Data = h.rtlMem.Read(addr, int(k.MsgLen))
			if n, ok := h.frees[addr]; ok {
				h.rtlMem.Free(addr, n)
				delete(h.frees, addr)
			}
		}
		dbgf("%d rtl cpl %+v", h.cycle, k)
		h.cpl.push(&h.cpl.rtl, pairItem{at: now, key: k})
		if id := [2]int{k.Conn, k.Stream}; k.Status == 0 && len(h.reposts[id]) > 0 {
			h.ctlOps = append(h.ctlOps, h.reposts[id][0])
			h.reposts[id] = h.reposts[id][1:]
		} else if k.Status == 0 {
			h.released[id]++
		}
	}
	if pt.outValid.Get(out) == 1 && pt.outReady.Get(in) == 1 {
		if len(h.outBuf) == 0 && !h.answered && h.lastIn > 0 {
			// The first control frame after a frame's last beat, in the same event: its answer.
			h.answered = true
			h.latency("frame_to_control", int(h.cycle-h.lastIn))
		}
		h.outBuf = appendBeat(h.outBuf, pt.outData.GetWords(out), pt.outKeep.Get(out), h.nb)
		if pt.outLast.Get(out) == 1 {
			if h.isTxFrame(h.outBuf) {
				if h.txOut != nil {
					h.mismatch("data frames", h.data.n, "", "the RTL built two frames for one descriptor")
				}
				h.txOut = &txFrame{port: int(pt.outDest.Get(out)), bytes: append([]byte(nil), h.outBuf...)}
			} else {
				h.sendFrame(int(pt.outDest.Get(out)), h.outBuf)
			}
			h.outBuf = nil
		}
	}
	if pt.dropValid.Get(out) == 1 {
		r := wire.DropReason(pt.dropReason.Get(out))
		h.drops.push(&h.drops.rtl, pairItem{at: now, key: r.String()})
	}
	return nil
}

// sendFrame decodes one control frame of the RTL, compares it, and sends it into the fabric.
func (h *loopHarness) sendFrame(port int, f []byte) {
	b := append([]byte(nil), f...)
	h.logFrame(h.sim.Now(), b, fmt.Sprintf("from host 0's RTL on port %d", port))
	h.ctl.push(&h.ctl.rtl, pairItem{at: int64(h.nowNS), key: ctlFrame{Port: port, Bytes: b}})
	w, reason := wire.Decode(b, h.prm)
	if reason != wire.DropNone {
		h.mismatch("control frames", h.ctl.n, "", fmt.Sprintf("the RTL's frame does not decode: %v", reason))
		return
	}
	dst := hostOfIP(w.IP.DstAddr())
	if dst < 0 || dst >= h.net.Hosts() {
		h.mismatch("control frames", h.ctl.n, "", fmt.Sprintf("the RTL's frame goes to %v, not a host", w.IP.DstAddr()))
		return
	}
	p := h.tn.ControlPacket(dut, dst, port, w.UDP.SrcPort, h.prm.UDPDestPort, w)
	h.outQ[port] = append(h.outQ[port], p)
	h.net.Kick(dut, port)
}

var dbgf = func(string, ...any) {}

// latency records one measured latency in cycles.
func (h *loopHarness) latency(stream string, l int) {
	h.res.NoteLatency(stream, l)
}
