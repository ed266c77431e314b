// The placement-engine driver: placement_engine against golden/placement, down to the host
// memory image.
//
// The RTL's DMA commands carry a payload handle (the descriptor's tag), not the bytes: the
// driver resolves the tag to the packet's payload and writes it into its own host memory image
// at the RTL's address; golden's DMA writes go into a second image. Every output stream
// (verdicts, DMA commands, completions, control responses) is compared with golden's in order,
// the event counters at the end, and the two memory images byte for byte.
//
// Result.Counts keys: control_ops (control operations taken), dma_commands, dma_bytes,
// completions, walker_cycles (completions released behind another: the walker emits them while
// the input runs), messages (messages the source started), memory_pages (4 KiB pages of the
// image written), desc_wait_cycles (cycles a descriptor was offered and not taken),
// desc_ready_low (cycles out of reset with s_desc_ready low) split by its first cause:
// desc_low_clear (post-reset clear), desc_low_ctl (a control operation was taken),
// desc_low_backpressure (a verdict, DMA or control output held by its ready), desc_low_region
// (a region operation was taken in the last 4 cycles: nothing is taken while one is in
// flight), desc_low_hazard (the descriptor on the bus is on the stream table entry of the
// operation taken in the cycle before: one stream takes one operation every EntryII cycles) and
// desc_low_cpl_hold (none of those: e waits for the walker, which only a stream with more than
// D completions pending causes); cpl_backpressure (cycles m_cpl was valid and not ready);
// msn_wraps (completions of MSN 0 after a stream's MSN was set), tag_wraps (registrations whose
// tag wrapped to 1).

package cosim

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/wire"
	hdlpl "github.com/mrgen/mrgen/hdl/placement"
	"github.com/mrgen/mrgen/verilator"
)

// plRes is the verdict on one descriptor.
type plRes struct {
	Drop     placement.DropReason
	Nak      wire.NakCode
	RNRDelay uint16
	Tag      uint32
}

// plDMA is one DMA write command.
type plDMA struct {
	Addr uint64
	Len  int
	Tag  uint32
}

// plCtlOut is the response to one control operation.
type plCtlOut struct {
	Status int
	RKey   uint32
}

// plPorts are the layout fields of placement_engine the driver touches every cycle.
type plPorts struct {
	rst                                                           verilator.Field
	descValid, descReady, descOp, descConn, descStream, descMSN   verilator.Field
	descMsgLen, descRKey, descVA, descOffset, descLen, descTag    verilator.Field
	ctlValid, ctlReady, ctlOp, ctlConn, ctlStream, ctlAddr        verilator.Field
	ctlLen, ctlAccess, ctlRKey, ctlMSN                            verilator.Field
	resValid, resReady, resDrop, resNak, resRNR, resTag           verilator.Field
	dmaValid, dmaReady, dmaAddr, dmaLen, dmaTag                   verilator.Field
	cplValid, cplReady, cplConn, cplStream, cplMSN, cplOp, cplLen verilator.Field
	cplBytes, cplStatus, cplBufAddr, cplBufLen, cplRKey           verilator.Field
	octlValid, octlReady, octlStatus, octlRKey                    verilator.Field
	cntDrop, cntBytes, cntCompleted, cntFailed, busy              verilator.Field
}

func bindPlPorts(lay *verilator.Layout, resetPort string) (*plPorts, error) {
	var p plPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst = in(resetPort)
	p.descValid, p.descReady, p.descOp, p.descConn = in("s_desc_valid"), out("s_desc_ready"), in("s_desc_op"), in("s_desc_conn")
	p.descStream, p.descMSN, p.descMsgLen, p.descRKey = in("s_desc_stream"), in("s_desc_msn"), in("s_desc_msg_len"), in("s_desc_rkey")
	p.descVA, p.descOffset, p.descLen, p.descTag = in("s_desc_va"), in("s_desc_offset"), in("s_desc_len"), in("s_desc_tag")
	p.ctlValid, p.ctlReady, p.ctlOp, p.ctlConn = in("s_ctl_valid"), out("s_ctl_ready"), in("s_ctl_op"), in("s_ctl_conn")
	p.ctlStream, p.ctlAddr, p.ctlLen, p.ctlAccess, p.ctlRKey = in("s_ctl_stream"), in("s_ctl_addr"), in("s_ctl_len"), in("s_ctl_access"), in("s_ctl_rkey")
	p.ctlMSN = in("s_ctl_msn")
	p.resValid, p.resReady, p.resDrop, p.resNak = out("m_res_valid"), in("m_res_ready"), out("m_res_drop"), out("m_res_nak")
	p.resRNR, p.resTag = out("m_res_rnr_delay"), out("m_res_tag")
	p.dmaValid, p.dmaReady, p.dmaAddr, p.dmaLen, p.dmaTag = out("m_dma_valid"), in("m_dma_ready"), out("m_dma_addr"), out("m_dma_len"), out("m_dma_tag")
	p.cplValid, p.cplReady, p.cplConn, p.cplStream = out("m_cpl_valid"), in("m_cpl_ready"), out("m_cpl_conn"), out("m_cpl_stream")
	p.cplMSN, p.cplOp, p.cplLen, p.cplBytes = out("m_cpl_msn"), out("m_cpl_op"), out("m_cpl_msg_len"), out("m_cpl_bytes")
	p.cplStatus, p.cplBufAddr, p.cplBufLen, p.cplRKey = out("m_cpl_status"), out("m_cpl_buf_addr"), out("m_cpl_buf_len"), out("m_cpl_rkey")
	p.octlValid, p.octlReady, p.octlStatus, p.octlRKey = out("m_ctl_valid"), in("m_ctl_ready"), out("m_ctl_status"), out("m_ctl_rkey")
	p.cntDrop, p.cntBytes, p.cntCompleted, p.cntFailed = out("cnt_drop"), out("cnt_bytes"), out("cnt_completed"), out("cnt_failed")
	p.busy = out("busy")
	return &p, b.err
}

// BuildPlacementModel generates the placement engine for a configuration and builds (or
// reuses) its Verilated model.
func BuildPlacementModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *hdlpl.Unit, error) {
	return buildUnit(ctx, opt, hdlpl.New, (*hdlpl.Unit).Module, trace)
}

// RunPlacement co-simulates the placement engine against golden/placement.
func RunPlacement(ctx context.Context, opt Options) (*Result, error) {
	knobs, err := plScenario(opt.Scenario)
	if err != nil {
		return nil, err
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *hdlpl.Unit, error) {
		return BuildPlacementModel(ctx, opt, trace)
	}, func(lib *verilator.Library, u *hdlpl.Unit, traceAt int64) (*Result, *Mismatch, error) {
		return runPlacement(ctx, lib, u, knobs, opt, traceAt)
	})
}

// stallLimit is the number of cycles without any handshake after which a block's RTL is
// declared stuck (the longest legitimate pause is a post-reset clear).
const stallLimit = 100_000

// runPlacement is the lockstep loop. traceAt ≥ 0 dumps a VCD window around that cycle.
func runPlacement(ctx context.Context, lib *verilator.Library, u *hdlpl.Unit, k plKnobs, opt Options, traceAt int64) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindPlPorts(lay, u.Reset.Port)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: placement_engine ports: %w", err)
	}
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	c := opt.Config
	tr := newPlTraffic(u.P, k, opt.Seed)
	rng := rand.New(rand.NewPCG(opt.Seed, 0xd3a))
	res := &Result{Block: "placement", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: c.Hash(), Drops: map[string]int{},
		Counts:          map[string]int{},
		DeclaredLatency: map[string]int{"res": u.Latency, "ctl": u.Latency},
		MinLatency:      map[string]int{}, MaxLatency: map[string]int{}}
	var resExp fifo[expected[plRes]]
	var dmaExp fifo[expected[placement.DMAWrite]]
	var cplExp fifo[expected[placement.Completion]]
	var ctlExp fifo[expected[plCtlOut]]
	payloads := map[uint32][]byte{} // tag -> payload of an expected DMA command
	rtlMem, goldMem := placement.NewHostMemory(), placement.NewHostMemory()
	resN, dmaN, cplN, ctlN := 0, 0, 0, 0

	resetActive := func(on bool) {
		v := uint64(0)
		if on != u.Reset.AsyncLow {
			v = 1
		}
		pt.rst.Set(in, v)
	}
	const resetCycles = 3
	nextReset := int64(-1)
	if k.ResetEvery > 0 {
		nextReset = int64(k.ResetEvery/2 + rng.IntN(k.ResetEvery))
	}
	descOffered, ctlOffered := false, false
	var dop plDesc
	var cop plCtl
	// What the RTL's accept stage knows of the operations taken before: the stream table entry
	// (conn × streams + stream, in SIW bits) of the one taken in the cycle before, and when the
	// last region operation was taken.
	sidx := func(conn uint16, stream uint8) int { return u.StreamIndex(int(conn), int(stream)) }
	busSidx, prevSidx := -1, -1
	regionTaken := int64(-100)
	var cycle, lastProgress uint64
	watch := cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	latency := func(stream string, l int) {
		if v, ok := res.MinLatency[stream]; !ok || l < v {
			res.MinLatency[stream] = l
		}
		if l > res.MaxLatency[stream] {
			res.MaxLatency[stream] = l
		}
	}
	unexpected := func(stream string, n int, now uint64) *Mismatch {
		return &Mismatch{Stream: stream, Transaction: n, Cycle: now, Input: "(none)",
			Diff: "RTL produced an output the golden model did not expect"}
	}

	for {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return nil, nil, err
		} else if over {
			return res, nil, nil
		}
		done := res.Packets >= opt.Packets
		if done && resExp.len() == 0 && dmaExp.len() == 0 && cplExp.len() == 0 && ctlExp.len() == 0 && !descOffered && !ctlOffered {
			break
		}
		if cycle-lastProgress > stallLimit {
			return res, &Mismatch{Stream: "stall", Cycle: cycle, Input: "(none)", Diff: fmt.Sprintf(
				"no handshake for %d cycles; golden still expects %d verdicts, %d DMA commands, %d completions, %d control responses",
				stallLimit, resExp.len(), dmaExp.len(), cplExp.len(), ctlExp.len())}, nil
		}

		// Reset in the middle of traffic: both sides start over; the host memory stays.
		inReset := false
		if nextReset >= 0 && int64(cycle) >= nextReset {
			inReset = true
			if int64(cycle) >= nextReset+resetCycles {
				nextReset = int64(cycle) + int64(k.ResetEvery/2+rng.IntN(k.ResetEvery))
				inReset = false
			} else if int64(cycle) == nextReset {
				tr.setup()
				resExp.clear()
				dmaExp.clear()
				cplExp.clear()
				ctlExp.clear()
				clear(payloads)
				descOffered, ctlOffered = false, false
				res.Resets++
			}
		}
		resetActive(inReset)
		if inReset {
			lastProgress = cycle
		}

		// Inputs for this cycle. An offered operation stays offered until it is taken.
		if !inReset && !ctlOffered && rng.Float64() < k.InValid {
			cop, ctlOffered = tr.peekCtl()
		}
		if ctlOffered {
			pt.ctlValid.Set(in, 1)
			pt.ctlOp.Set(in, uint64(cop.op))
			pt.ctlConn.Set(in, uint64(cop.conn))
			pt.ctlStream.Set(in, uint64(cop.stream))
			pt.ctlAddr.Set(in, cop.addr)
			pt.ctlLen.Set(in, cop.length)
			pt.ctlAccess.Set(in, uint64(cop.access))
			pt.ctlRKey.Set(in, uint64(cop.rkey))
			pt.ctlMSN.Set(in, uint64(cop.msn))
		} else {
			pt.ctlValid.Set(in, 0)
		}
		tr.now = cycle
		if !inReset && !descOffered && !done && rng.Float64() < k.InValid {
			dop, descOffered = tr.peekDesc()
		}
		if descOffered {
			d := &dop.d
			pt.descValid.Set(in, 1)
			pt.descOp.Set(in, uint64(d.Op))
			pt.descConn.Set(in, uint64(d.Conn))
			pt.descStream.Set(in, uint64(d.Stream))
			pt.descMSN.Set(in, uint64(d.MSN))
			pt.descMsgLen.Set(in, uint64(d.MsgLen))
			pt.descRKey.Set(in, uint64(d.RKey))
			pt.descVA.Set(in, d.VA)
			pt.descOffset.Set(in, uint64(d.Offset))
			pt.descLen.Set(in, uint64(len(d.Payload)))
			pt.descTag.Set(in, uint64(dop.tag))
			busSidx = sidx(d.Conn, d.Stream)
		} else {
			pt.descValid.Set(in, 0)
		}
		ready := func() bool { return k.OutReady >= 1 || rng.Float64() < k.OutReady }
		resReady, dmaReady, cplReady, ctlReady := ready(), ready(), ready(), ready()
		if k.CplReady > 0 {
			cplReady = k.CplReady >= 1 || rng.Float64() < k.CplReady
		}
		pt.resReady.Set(in, b2u(resReady))
		pt.dmaReady.Set(in, b2u(dmaReady))
		pt.cplReady.Set(in, b2u(cplReady))
		pt.octlReady.Set(in, b2u(ctlReady))

		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
		now := cycle
		cycle++
		if inReset {
			continue
		}

		// Outputs first: they belong to operations taken in earlier cycles.
		if resReady && pt.resValid.Get(outb) == 1 {
			if resExp.len() == 0 {
				return res, unexpected("res", resN, now), nil
			}
			e := resExp.pop()
			got := plRes{Drop: placement.DropReason(pt.resDrop.Get(outb)), Nak: wire.NakCode(pt.resNak.Get(outb)),
				RNRDelay: uint16(pt.resRNR.Get(outb)), Tag: uint32(pt.resTag.Get(outb))}
			if got != e.out {
				return res, &Mismatch{Stream: "res", Transaction: resN, Cycle: now, Input: e.input.String(), Diff: cmp.Diff(e.out, got)}, nil
			}
			latency("res", int(now-e.cycle))
			resN++
			res.Compared++
			lastProgress = now
		}
		if dmaReady && pt.dmaValid.Get(outb) == 1 {
			if dmaExp.len() == 0 {
				return res, unexpected("dma", dmaN, now), nil
			}
			e := dmaExp.pop()
			got := plDMA{Addr: pt.dmaAddr.Get(outb), Len: int(pt.dmaLen.Get(outb)), Tag: uint32(pt.dmaTag.Get(outb))}
			want := plDMA{Addr: e.out.Addr, Len: len(e.out.Data), Tag: e.input.(plDesc).tag}
			if got != want {
				return res, &Mismatch{Stream: "dma", Transaction: dmaN, Cycle: now, Input: e.input.String(), Diff: cmp.Diff(want, got)}, nil
			}
			// The RTL's command, its payload resolved from its own tag, into the RTL's image;
			// golden's command into golden's.
			data := payloads[got.Tag]
			if got.Len > len(data) {
				return res, &Mismatch{Stream: "dma", Transaction: dmaN, Cycle: now, Input: e.input.String(),
					Diff: fmt.Sprintf("DMA of %d bytes for tag %d, whose payload has %d", got.Len, got.Tag, len(data))}, nil
			}
			rtlMem.Write(got.Addr, data[:got.Len])
			delete(payloads, got.Tag)
			goldMem.Apply(&e.out)
			res.Counts["dma_commands"]++
			res.Counts["dma_bytes"] += got.Len
			dmaN++
			res.Compared++
			lastProgress = now
		}
		if cplReady && pt.cplValid.Get(outb) == 1 {
			if cplExp.len() == 0 {
				return res, unexpected("cpl", cplN, now), nil
			}
			e := cplExp.pop()
			got := placement.Completion{Conn: uint16(pt.cplConn.Get(outb)), Stream: uint8(pt.cplStream.Get(outb)),
				MSN: uint32(pt.cplMSN.Get(outb)), Op: wire.Opcode(pt.cplOp.Get(outb)), MsgLen: uint32(pt.cplLen.Get(outb)),
				Bytes: uint32(pt.cplBytes.Get(outb)), Status: wire.NakCode(pt.cplStatus.Get(outb)),
				Buf:  placement.Buffer{Addr: pt.cplBufAddr.Get(outb), Length: uint32(pt.cplBufLen.Get(outb))},
				RKey: uint32(pt.cplRKey.Get(outb))}
			if got != e.out {
				return res, &Mismatch{Stream: "cpl", Transaction: cplN, Cycle: now, Input: e.input.String(), Diff: cmp.Diff(e.out, got)}, nil
			}
			res.Counts["completions"]++
			cplN++
			res.Compared++
			lastProgress = now
		}
		if ctlReady && pt.octlValid.Get(outb) == 1 {
			if ctlExp.len() == 0 {
				return res, unexpected("ctl", ctlN, now), nil
			}
			e := ctlExp.pop()
			got := plCtlOut{Status: int(pt.octlStatus.Get(outb)), RKey: uint32(pt.octlRKey.Get(outb))}
			if got != e.out {
				return res, &Mismatch{Stream: "ctl", Transaction: ctlN, Cycle: now, Input: e.input.String(), Diff: cmp.Diff(e.out, got)}, nil
			}
			latency("ctl", int(now-e.cycle))
			ctlN++
			res.Compared++
			lastProgress = now
		}

		// Why s_desc_ready is low in this cycle (the first cause that applies).
		if pt.descReady.Get(outb) == 0 {
			res.Counts["desc_ready_low"]++
			blocked := func(v verilator.Field, ready bool) bool { return v.Get(outb) == 1 && !ready }
			switch {
			case pt.busy.Get(outb) == 1:
				res.Counts["desc_low_clear"]++
			case ctlOffered && pt.ctlReady.Get(outb) == 1:
				res.Counts["desc_low_ctl"]++
			case blocked(pt.resValid, resReady) || blocked(pt.dmaValid, dmaReady) || blocked(pt.octlValid, ctlReady):
				res.Counts["desc_low_backpressure"]++
			case int64(now)-regionTaken <= hdlpl.RegionHold:
				res.Counts["desc_low_region"]++
			case busSidx >= 0 && busSidx == prevSidx:
				res.Counts["desc_low_hazard"]++
			default:
				res.Counts["desc_low_cpl_hold"]++
			}
		}
		if pt.cplValid.Get(outb) == 1 && !cplReady {
			res.Counts["cpl_backpressure"]++
		}

		// Handshakes on the inputs (at most one: control operations take priority).
		prevSidx = -1
		if ctlOffered && pt.ctlReady.Get(outb) == 1 {
			switch cop.op {
			case hdlpl.CtlPost, hdlpl.CtlSetMSN:
				prevSidx = sidx(cop.conn, cop.stream)
			case hdlpl.CtlRegister, hdlpl.CtlDeregister, hdlpl.CtlRestoreGen:
				regionTaken = int64(now)
			}
			tr.popCtl()
			ctlOffered = false
			ctlExp.push(expected[plCtlOut]{cycle: now, input: cop, out: tr.acceptCtl(cop)})
			res.Counts["control_ops"]++
			lastProgress = now
		}
		if descOffered && pt.descReady.Get(outb) == 0 {
			res.Counts["desc_wait_cycles"]++
		}
		if descOffered && pt.descReady.Get(outb) == 1 {
			prevSidx = busSidx
			tr.popDesc()
			descOffered = false
			r := tr.acceptDesc(dop)
			res.Packets++
			resExp.push(expected[plRes]{cycle: now, input: dop, out: plRes{Drop: r.Drop, Nak: r.Nak, RNRDelay: r.RNRDelay, Tag: dop.tag}})
			if r.DMA != nil {
				dmaExp.push(expected[placement.DMAWrite]{cycle: now, input: dop, out: *r.DMA})
				payloads[dop.tag] = dop.d.Payload
			}
			for _, cp := range r.Completions {
				cplExp.push(expected[placement.Completion]{cycle: now, input: dop, out: cp})
			}
			if r.Drop != placement.DropNone {
				res.Drops[r.Drop.String()]++
			}
			lastProgress = now
		}
	}
	res.RTLCycles = cycle
	res.Counts["walker_cycles"] = tr.walks
	res.Counts["msn_wraps"] = tr.msnWraps
	res.Counts["tag_wraps"] = tr.tagWraps
	res.Counts["msn_sets"] = tr.msnSets
	res.Counts["messages"] = tr.msgs
	if opt.Progress != nil {
		opt.Progress(res.Packets, opt.Packets)
	}
	// Two idle cycles let the last counter updates land (they count one cycle late).
	pt.descValid.Set(in, 0)
	pt.ctlValid.Set(in, 0)
	for range 2 {
		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
	}
	gc := tr.gold.Counters()
	want := make([]uint32, 0, placement.NumDropReasons+3)
	for _, n := range gc.Drops {
		want = append(want, uint32(n))
	}
	want = append(want, uint32(gc.BytesPlaced), uint32(gc.Completed), uint32(gc.Failed))
	got := append([]uint32(nil), pt.cntDrop.View(outb)...)
	got = append(got, uint32(pt.cntBytes.Get(outb)), uint32(pt.cntCompleted.Get(outb)), uint32(pt.cntFailed.Get(outb)))
	if d := cmp.Diff(want, got); d != "" {
		return res, &Mismatch{Stream: "counters", Cycle: cycle,
			Input: "[drops by reason (0 placed) ... | bytes completed failed]", Diff: d}, nil
	}
	res.Counts["memory_pages"] = len(rtlMem.Pages())
	if d := goldMem.Diff(rtlMem); d != "" {
		return res, &Mismatch{Stream: "memory", Cycle: cycle, Input: "host memory image, golden vs RTL", Diff: d}, nil
	}
	return res, nil, nil
}

func (d plDesc) String() string {
	x := d.d
	s := fmt.Sprintf("%v conn %d stream %d msn %d len %d payload %d tag %d", x.Op, x.Conn, x.Stream, x.MSN, x.MsgLen, len(x.Payload), d.tag)
	if x.Op == wire.OpWrite {
		return s + fmt.Sprintf(" rkey 0x%08x va 0x%016x", x.RKey, x.VA)
	}
	return s + fmt.Sprintf(" offset %d", x.Offset)
}

func (op plCtl) String() string {
	switch op.op {
	case hdlpl.CtlRegister:
		return fmt.Sprintf("register conn %d base 0x%x len 0x%x access %d", op.conn, op.addr, op.length, op.access)
	case hdlpl.CtlDeregister:
		return fmt.Sprintf("deregister rkey 0x%08x", op.rkey)
	case hdlpl.CtlPost:
		return fmt.Sprintf("post conn %d stream %d addr 0x%x len %d", op.conn, op.stream, op.addr, op.length)
	case hdlpl.CtlSetMSN:
		return fmt.Sprintf("set msn conn %d stream %d msn %d", op.conn, op.stream, op.msn)
	case hdlpl.CtlRestoreGen:
		return fmt.Sprintf("restore generation rkey 0x%08x", op.rkey)
	}
	return fmt.Sprintf("control op %d", op.op)
}
