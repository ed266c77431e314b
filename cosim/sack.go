// The SACK unit driver: sack_unit (rx and tx sides) against golden/sack.

package cosim

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/hdl"
	hdlsack "github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/verilator"
)

// rxOut is everything sack_rx says about one data packet.
type rxOut struct {
	Conn, Path, PSN uint32
	Class           sack.Class
	Cum             uint32
	Bitmap          sack.Bitmap
	AckDue          bool
	GapValid        bool
	GapFirst        uint32 // compared only with GapValid
	GapCount        uint32 // compared only with GapValid
	PathInit        bool   // the path-init flag re-initialised the entry
	Peek            bool   // a peek's result: the entry as it stands
}

// matchRx is the fast comparison run on every output, straight from the output buffer;
// cmp.Diff renders the fields only once a mismatch is found. Gap position and length are
// compared only when a gap is reported.
func matchRx(pt *sackPorts, out []uint32, w *rxOut) bool {
	gapValid := pt.rxGapValid.Get(out) == 1
	if gapValid != w.GapValid {
		return false
	}
	if gapValid && (uint32(pt.rxGapFirst.Get(out)) != w.GapFirst || uint32(pt.rxGapCount.Get(out)) != w.GapCount) {
		return false
	}
	return uint32(pt.rxConn.Get(out)) == w.Conn && uint32(pt.rxPath.Get(out)) == w.Path &&
		uint32(pt.rxPSN.Get(out)) == w.PSN && sack.Class(pt.rxClass.Get(out)) == w.Class &&
		uint32(pt.rxCum.Get(out)) == w.Cum && (pt.rxAckDue.Get(out) == 1) == w.AckDue &&
		(pt.rxPathInit.Get(out) == 1) == w.PathInit && (pt.rxPeek.Get(out) == 1) == w.Peek && w.Bitmap.EqualWords32(pt.rxBitmap.View(out))
}

func matchTx(pt *sackPorts, out []uint32, w *txOut) bool {
	return uint32(pt.lossConn.Get(out)) == w.Conn && uint32(pt.lossPath.Get(out)) == w.Path &&
		sack.AckStatus(pt.lossStatus.Get(out)) == w.Status && uint32(pt.lossBase.Get(out)) == w.Base &&
		w.Lost.EqualWords32(pt.lossBitmap.View(out))
}

// txOut is sack_tx's verdict on one ACK.
type txOut struct {
	Conn, Path uint32
	Status     sack.AckStatus
	Base       uint32
	Lost       sack.Bitmap
}

var bitmapEqual = cmp.Comparer(func(a, b sack.Bitmap) bool { return a.Equal(b) })

// sackPorts are the layout fields of sack_unit the driver touches every cycle.
type sackPorts struct {
	rst                                                               verilator.Field
	pktValid, pktReady, pktInit, pktConn, pktPath, pktPSN, pktAckReq  verilator.Field
	pktPathInit, pktPeek, rxPeek                                      verilator.Field
	rxValid, rxReady, rxConn, rxPath, rxPSN, rxClass, rxCum, rxBitmap verilator.Field
	rxAckDue, rxGapValid, rxGapFirst, rxGapCount, rxPathInit          verilator.Field
	ackValid, ackReady, ackOp, ackConn, ackPath, ackPSN, ackBitmap    verilator.Field
	lossValid, lossReady, lossConn, lossPath, lossStatus, lossBase    verilator.Field
	lossBitmap, rxBusy                                                verilator.Field
	cntNew, cntDup, cntOld, cntBeyond                                 verilator.Field
	cntAccepted, cntAckDup, cntStale, cntInvalid                      verilator.Field
}

func bindSackPorts(lay *verilator.Layout, resetPort string) (*sackPorts, error) {
	var p sackPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst = in(resetPort)
	p.pktValid, p.pktReady, p.pktInit = in("s_pkt_valid"), out("s_pkt_ready"), in("s_pkt_init")
	p.pktConn, p.pktPath, p.pktPSN, p.pktAckReq = in("s_pkt_conn"), in("s_pkt_path"), in("s_pkt_psn"), in("s_pkt_ack_req")
	p.pktPathInit, p.rxPathInit = in("s_pkt_path_init"), out("m_rx_path_init")
	p.pktPeek, p.rxPeek = in("s_pkt_peek"), out("m_rx_peek")
	p.rxValid, p.rxReady, p.rxConn, p.rxPath = out("m_rx_valid"), in("m_rx_ready"), out("m_rx_conn"), out("m_rx_path")
	p.rxPSN, p.rxClass, p.rxCum, p.rxBitmap = out("m_rx_psn"), out("m_rx_class"), out("m_rx_cum"), out("m_rx_bitmap")
	p.rxAckDue, p.rxGapValid, p.rxGapFirst, p.rxGapCount = out("m_rx_ack_due"), out("m_rx_gap_valid"), out("m_rx_gap_first"), out("m_rx_gap_count")
	p.ackValid, p.ackReady, p.ackOp, p.ackConn = in("s_ack_valid"), out("s_ack_ready"), in("s_ack_op"), in("s_ack_conn")
	p.ackPath, p.ackPSN, p.ackBitmap = in("s_ack_path"), in("s_ack_psn"), in("s_ack_bitmap")
	p.lossValid, p.lossReady, p.lossConn, p.lossPath = out("m_loss_valid"), in("m_loss_ready"), out("m_loss_conn"), out("m_loss_path")
	p.lossStatus, p.lossBase, p.lossBitmap = out("m_loss_status"), out("m_loss_base"), out("m_loss_bitmap")
	p.rxBusy = out("rx_busy")
	p.cntNew, p.cntDup, p.cntOld, p.cntBeyond = out("cnt_rx_new"), out("cnt_rx_duplicate"), out("cnt_rx_old"), out("cnt_rx_beyond")
	p.cntAccepted, p.cntAckDup, p.cntStale, p.cntInvalid = out("cnt_ack_accepted"), out("cnt_ack_duplicate"), out("cnt_ack_stale"), out("cnt_ack_invalid")
	return &p, b.err
}

// BuildSackModel generates the SACK unit for a configuration and builds (or reuses) its
// Verilated model.
func BuildSackModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *hdlsack.Unit, error) {
	return buildUnit(ctx, opt, hdlsack.New, (*hdlsack.Unit).UnitModule, trace)
}

// RunSack co-simulates the SACK unit against golden/sack.
func RunSack(ctx context.Context, opt Options) (*Result, error) {
	knobs, err := sackScenario(opt.Scenario)
	if err != nil {
		return nil, err
	}
	if knobs.LineRate {
		knobs.ports, knobs.interval = opt.Config.Ports, hdl.MinFrameBeats(opt.Config.DatapathWidth)
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *hdlsack.Unit, error) {
		return BuildSackModel(ctx, opt, trace)
	}, func(lib *verilator.Library, u *hdlsack.Unit, traceAt int64) (*Result, *Mismatch, error) {
		return runSack(ctx, lib, u, knobs, opt, traceAt)
	})
}

const vcdBefore, vcdAfter = 64, 8

// runSack is the lockstep loop. traceAt ≥ 0 dumps a VCD window around that cycle.
func runSack(ctx context.Context, lib *verilator.Library, u *hdlsack.Unit, k sackKnobs, opt Options, traceAt int64) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindSackPorts(lay, u.Reset.Port)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: sack_unit ports: %w", err)
	}
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	c := opt.Config
	tr := newSackTraffic(u.P, k, c.Connections, c.PathsPerConnection, opt.Seed)
	rng := rand.New(rand.NewPCG(opt.Seed, 0xc0de))
	res := &Result{Block: "sack", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: c.Hash(), Drops: map[string]int{},
		Counts:          map[string]int{},
		DeclaredLatency: map[string]int{"rx": u.RxLatency, "tx": u.TxLatency},
		MinLatency:      map[string]int{}, MaxLatency: map[string]int{}}
	cov := sackCoverage{counts: res.Counts, w: uint32(u.W)}
	var rxExp fifo[expected[rxOut]]
	var txExp fifo[expected[txOut]]
	rxN, txN := 0, 0

	resetActive := func(on bool) {
		v := uint64(0)
		if on != u.Reset.AsyncLow {
			v = 1
		}
		pt.rst.Set(in, v)
	}
	resetCycles := 3
	nextReset := int64(-1)
	if k.ResetEvery > 0 {
		nextReset = int64(k.ResetEvery/2 + rng.IntN(k.ResetEvery))
	}
	rxOffered, txOffered := false, false // AXI rule: an offered op stays offered until taken
	var cycle uint64
	watch := cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	latency := func(stream string, l int) {
		if v, ok := res.MinLatency[stream]; !ok || l < v {
			res.MinLatency[stream] = l
		}
		if l > res.MaxLatency[stream] {
			res.MaxLatency[stream] = l
		}
	}

	for {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return nil, nil, err
		} else if over {
			return res, nil, nil
		}
		done := res.Packets >= opt.Packets
		if done && rxExp.len() == 0 && txExp.len() == 0 && !rxOffered && !txOffered {
			if _, pending := tr.peekTx(); !pending {
				break
			}
		}

		// Reset in the middle of traffic.
		inReset := false
		if nextReset >= 0 && int64(cycle) >= nextReset {
			inReset = true
			if int64(cycle) >= nextReset+int64(resetCycles) {
				nextReset = int64(cycle) + int64(k.ResetEvery/2+rng.IntN(k.ResetEvery))
				inReset = false
			} else if int64(cycle) == nextReset {
				tr.reset()
				rxExp.clear()
				txExp.clear()
				rxOffered, txOffered = false, false
				cov.reset()
				res.Resets++
			}
		}
		resetActive(inReset)

		// Inputs for this cycle.
		var rop rxOp
		var top txOp
		if !inReset && (rxOffered || (!done && !tr.rxPaused() && k.offers(cycle) && rng.Float64() < k.InValid)) {
			rop = tr.peekRx()
			rxOffered = true
		} else if inReset {
			rxOffered = false
		}
		if rxOffered {
			pt.pktValid.Set(in, 1)
			pt.pktInit.Set(in, b2u(rop.init))
			pt.pktConn.Set(in, uint64(rop.conn))
			pt.pktPath.Set(in, uint64(rop.path))
			pt.pktPSN.Set(in, uint64(rop.psn))
			pt.pktAckReq.Set(in, b2u(rop.ackReq))
			pt.pktPathInit.Set(in, b2u(rop.pathInit))
			pt.pktPeek.Set(in, b2u(rop.peek))
		} else {
			pt.pktValid.Set(in, 0)
		}
		if !inReset && (txOffered || rng.Float64() < k.InValid) {
			var ok bool
			top, ok = tr.peekTx()
			txOffered = ok
		} else if inReset {
			txOffered = false
		}
		if txOffered {
			pt.ackValid.Set(in, 1)
			pt.ackOp.Set(in, uint64(top.op))
			pt.ackConn.Set(in, uint64(top.conn))
			pt.ackPath.Set(in, uint64(top.path))
			pt.ackPSN.Set(in, uint64(top.psn))
			top.bitmap.PutWords32(pt.ackBitmap.View(in))
		} else {
			pt.ackValid.Set(in, 0)
		}
		rxReady := k.OutReady >= 1 || rng.Float64() < k.OutReady
		txReady := k.OutReady >= 1 || rng.Float64() < k.OutReady
		pt.rxReady.Set(in, b2u(rxReady))
		pt.lossReady.Set(in, b2u(txReady))

		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
		now := cycle
		cycle++
		if inReset {
			continue
		}

		// Outputs first: they belong to operations accepted in earlier cycles.
		if rxReady && pt.rxValid.Get(outb) == 1 {
			if rxExp.len() == 0 {
				return res, &Mismatch{Stream: "rx", Transaction: rxN, Cycle: now, Input: "(none)", Diff: "RTL produced an output the golden model did not expect"}, nil
			}
			e := rxExp.pop()
			if !matchRx(pt, outb, &e.out) {
				got := readRx(pt, outb, u.W)
				if !e.out.GapValid || !got.GapValid {
					got.GapFirst, got.GapCount = 0, 0
				}
				return res, &Mismatch{Stream: "rx", Transaction: rxN, Cycle: now, Input: e.input.String(),
					Diff: cmp.Diff(e.out, got, bitmapEqual)}, nil
			}
			latency("rx", int(now-e.cycle))
			rxN++
			res.Compared++
		}
		if txReady && pt.lossValid.Get(outb) == 1 {
			if txExp.len() == 0 {
				return res, &Mismatch{Stream: "tx", Transaction: txN, Cycle: now, Input: "(none)", Diff: "RTL produced an output the golden model did not expect"}, nil
			}
			e := txExp.pop()
			if !matchTx(pt, outb, &e.out) {
				return res, &Mismatch{Stream: "tx", Transaction: txN, Cycle: now, Input: e.input.String(),
					Diff: cmp.Diff(e.out, readTx(pt, outb, u.W), bitmapEqual)}, nil
			}
			latency("tx", int(now-e.cycle))
			txN++
			res.Compared++
		}

		// Handshakes on the inputs. A cycle in which an offered operation is not taken, outside
		// the post-reset table clear, is a stall.
		if rxOffered && pt.pktReady.Get(outb) == 0 && pt.rxBusy.Get(outb) == 0 {
			res.Counts["rx_stall_cycles"]++
		}
		if rxOffered && pt.pktReady.Get(outb) == 1 {
			tr.popRx()
			rxOffered = false
			offset := tr.sp.Dist(tr.rx.Cum(rop.idx), rop.psn) // psn - cum before the packet
			if r := tr.acceptRx(rop); r != nil {
				res.Packets++
				cov.data(now, rop, r, offset)
				rxExp.push(expected[rxOut]{cycle: now, input: rop, out: rxOut{
					Conn: rop.conn, Path: rop.path, PSN: rop.psn, Class: r.Class, Cum: r.Cum, Bitmap: r.Bitmap,
					AckDue: r.AckDue, GapValid: r.GapValid, GapFirst: r.GapFirst, GapCount: r.GapCount,
					PathInit: r.PathInit, Peek: rop.peek}})
				if rop.peek {
					cov.peek(r)
				} else if r.Class != sack.ClassNew {
					res.Drops["rx_"+r.Class.String()]++
				}
			}
		}
		if txOffered && pt.ackReady.Get(outb) == 1 {
			tr.popTx()
			txOffered = false
			if r := tr.acceptTx(top); r != nil {
				res.Acks++
				txExp.push(expected[txOut]{cycle: now, input: top, out: txOut{
					Conn: top.conn, Path: top.path, Status: r.Status, Base: r.Base, Lost: r.Lost}})
				if r.Status != sack.AckAccepted {
					res.Drops["ack_"+r.Status.String()]++
				}
			}
		}
	}
	res.RTLCycles = cycle
	// Counters update as outputs are handed over; two idle cycles let the last updates land.
	pt.pktValid.Set(in, 0)
	pt.ackValid.Set(in, 0)
	pt.rxReady.Set(in, 1)
	pt.lossReady.Set(in, 1)
	for i := 0; i < 2; i++ {
		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
	}
	if opt.Progress != nil {
		opt.Progress(res.Packets, opt.Packets)
	}
	// The event counters must agree too (they do not reset with the golden tables' traffic
	// counts unless a reset happened, and both sides reset together).
	gotCnt := [8]uint64{pt.cntNew.Get(outb), pt.cntDup.Get(outb), pt.cntOld.Get(outb), pt.cntBeyond.Get(outb),
		pt.cntAccepted.Get(outb), pt.cntAckDup.Get(outb), pt.cntStale.Get(outb), pt.cntInvalid.Get(outb)}
	rc, tc := tr.rx.Counters, tr.tx.Counters
	wantCnt := [8]uint64{rc.New, rc.Duplicate, rc.Old, rc.Beyond, tc.Accepted, tc.Duplicate, tc.Stale, tc.Invalid}
	if d := cmp.Diff(wantCnt, gotCnt); d != "" {
		return res, &Mismatch{Stream: "counters", Transaction: 0, Cycle: cycle,
			Input: "[new dup old beyond | accepted dup stale invalid]", Diff: d}, nil
	}
	return res, nil, nil
}

// sackCoverage counts what the path-init traffic exercised (Result.Counts keys):
//
//	path_init_fresh         packets whose path-init flag re-initialised the entry
//	path_init_stale         flagged packets behind cum (old, entry untouched)
//	path_init_at_cum        fresh inits exactly at cum
//	path_init_beyond        fresh inits beyond the receive window (psn - cum ≥ W)
//	path_init_back_to_back  flagged packets taken in the cycle right after, or right before, a
//	                        packet to the same entry (the forwarding path)
//	peeks, peeks_new        peeks (s_pkt_peek), and those that found the packet new
//	peek_back_to_back       a packet taken in the cycle right after a peek of the same entry
type sackCoverage struct {
	counts   map[string]int
	w        uint32
	prev     rxOp   // the data packet taken last
	prevAt   uint64 // the cycle it was taken
	prevSeen bool
}

func (c *sackCoverage) data(cycle uint64, op rxOp, r *sack.RxResult, offset uint32) {
	switch {
	case op.peek: // the commit that follows is counted
	case r.PathInit:
		c.counts["path_init_fresh"]++
		if offset == 0 {
			c.counts["path_init_at_cum"]++
		}
		if offset >= c.w {
			c.counts["path_init_beyond"]++
		}
	case op.pathInit:
		c.counts["path_init_stale"]++
	}
	if c.prevSeen && c.prevAt+1 == cycle && c.prev.idx == op.idx {
		if op.pathInit || c.prev.pathInit {
			c.counts["path_init_back_to_back"]++
		}
		if c.prev.peek {
			c.counts["peek_back_to_back"]++
		}
	}
	c.prev, c.prevAt, c.prevSeen = op, cycle, true
}

func (c *sackCoverage) peek(r *sack.RxResult) {
	c.counts["peeks"]++
	if r.Class == sack.ClassNew {
		c.counts["peeks_new"]++
	}
}

func (c *sackCoverage) reset() { c.prevSeen = false }

func readRx(pt *sackPorts, out []uint32, w int) rxOut {
	return rxOut{
		Conn: uint32(pt.rxConn.Get(out)), Path: uint32(pt.rxPath.Get(out)), PSN: uint32(pt.rxPSN.Get(out)),
		Class: sack.Class(pt.rxClass.Get(out)), Cum: uint32(pt.rxCum.Get(out)),
		Bitmap: sack.BitmapFromWords32(w, pt.rxBitmap.View(out)),
		AckDue: pt.rxAckDue.Get(out) == 1, GapValid: pt.rxGapValid.Get(out) == 1,
		GapFirst: uint32(pt.rxGapFirst.Get(out)), GapCount: uint32(pt.rxGapCount.Get(out)),
		PathInit: pt.rxPathInit.Get(out) == 1, Peek: pt.rxPeek.Get(out) == 1,
	}
}

func readTx(pt *sackPorts, out []uint32, w int) txOut {
	return txOut{
		Conn: uint32(pt.lossConn.Get(out)), Path: uint32(pt.lossPath.Get(out)),
		Status: sack.AckStatus(pt.lossStatus.Get(out)), Base: uint32(pt.lossBase.Get(out)),
		Lost: sack.BitmapFromWords32(w, pt.lossBitmap.View(out)),
	}
}

func (op rxOp) String() string {
	if op.init {
		return fmt.Sprintf("init conn %d path %d first psn %d", op.conn, op.path, op.psn)
	}
	return fmt.Sprintf("data conn %d path %d psn %d ack_req %v path_init %v peek %v", op.conn, op.path, op.psn, op.ackReq, op.pathInit, op.peek)
}

func (op txOp) String() string {
	return fmt.Sprintf("ack conn %d path %d cum %d sack %v", op.conn, op.path, op.psn, op.bitmap)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
