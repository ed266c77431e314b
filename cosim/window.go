// The window-unit driver: window_unit against golden/window.

package cosim

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/golden/window"
	hdlwindow "github.com/mrgen/mrgen/hdl/window"
	"github.com/mrgen/mrgen/verilator"
)

// winAckOut is everything window_unit says about one ACK update: golden's AckResult and the
// state it left (the path's window and estimator, the connection's window, rate cap and base
// RTT).
type winAckOut struct {
	Conn, Path   int
	Res          window.AckResult
	Cwnd         uint32
	SRTT, RTTVar uint32
	RTO          uint32
	ConnCwnd     uint32
	RateCap      uint32
	MinRTT       uint32
	MinValid     bool
}

// winSendOut is one send decision.
type winSendOut struct {
	Conn int
	D    window.Decision
}

// winTmrOut is one timer event.
type winTmrOut struct {
	Conn, Path int
	X          window.Expiry
}

// windowPorts are the layout fields of window_unit the driver touches every cycle.
type windowPorts struct {
	rst, now                                                          verilator.Field
	ackValid, ackReady, ackOp, ackConn, ackPath, ackCum, ackSacked    verilator.Field
	ackECN, ackTS, ackHint, ackPSN                                    verilator.Field
	mAckValid, mAckReady, mAckConn, mAckPath, mAckIgnored, mAckSValid verilator.Field
	mAckSample, mAckAcked, mAckInc, mAckDec, mAckCInc, mAckCDec       verilator.Field
	mAckReact, mAckCwnd, mAckSRTT, mAckRTTVar, mAckRTO, mAckConnCwnd  verilator.Field
	mAckRateCap, mAckMinRTT, mAckMinValid                             verilator.Field
	sendValid, sendReady, sendConn                                    verilator.Field
	mSendValid, mSendReady, mSendConn, mSendOK, mSendReason           verilator.Field
	mSendPath, mSendEntropy, mSendPSN                                 verilator.Field
	mTmrValid, mTmrReady, mTmrConn, mTmrPath, mTmrEvent               verilator.Field
	mTmrOutstanding, mTmrMoved, mTmrTimeouts, mTmrEntropy             verilator.Field
	busy                                                              verilator.Field
}

func bindWindowPorts(lay *verilator.Layout, resetPort string) (*windowPorts, error) {
	var p windowPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst, p.now = in(resetPort), in("now")
	p.ackValid, p.ackReady, p.ackOp = in("s_ack_valid"), out("s_ack_ready"), in("s_ack_op")
	p.ackConn, p.ackPath, p.ackCum = in("s_ack_conn"), in("s_ack_path"), in("s_ack_cum_advance")
	p.ackSacked, p.ackECN, p.ackTS = in("s_ack_newly_sacked"), in("s_ack_ecn_echo"), in("s_ack_ts_echo")
	p.ackHint, p.ackPSN = in("s_ack_rate_hint"), in("s_ack_psn")
	p.mAckValid, p.mAckReady, p.mAckConn = out("m_ack_valid"), in("m_ack_ready"), out("m_ack_conn")
	p.mAckPath, p.mAckIgnored, p.mAckSValid = out("m_ack_path"), out("m_ack_ignored"), out("m_ack_sample_valid")
	p.mAckSample, p.mAckAcked, p.mAckInc = out("m_ack_sample"), out("m_ack_acked"), out("m_ack_increased")
	p.mAckDec, p.mAckCInc, p.mAckCDec = out("m_ack_decreased"), out("m_ack_conn_increased"), out("m_ack_conn_decreased")
	p.mAckReact, p.mAckCwnd, p.mAckSRTT = out("m_ack_reactivated"), out("m_ack_cwnd"), out("m_ack_srtt")
	p.mAckRTTVar, p.mAckRTO, p.mAckConnCwnd = out("m_ack_rttvar"), out("m_ack_rto"), out("m_ack_conn_cwnd")
	p.mAckRateCap, p.mAckMinRTT, p.mAckMinValid = out("m_ack_rate_cap"), out("m_ack_min_rtt"), out("m_ack_min_valid")
	p.sendValid, p.sendReady, p.sendConn = in("s_send_valid"), out("s_send_ready"), in("s_send_conn")
	p.mSendValid, p.mSendReady, p.mSendConn = out("m_send_valid"), in("m_send_ready"), out("m_send_conn")
	p.mSendOK, p.mSendReason, p.mSendPath = out("m_send_ok"), out("m_send_reason"), out("m_send_path")
	p.mSendEntropy, p.mSendPSN = out("m_send_entropy"), out("m_send_psn")
	p.mTmrValid, p.mTmrReady, p.mTmrConn = out("m_tmr_valid"), in("m_tmr_ready"), out("m_tmr_conn")
	p.mTmrPath, p.mTmrEvent, p.mTmrOutstanding = out("m_tmr_path"), out("m_tmr_event"), out("m_tmr_outstanding")
	p.mTmrMoved, p.mTmrTimeouts, p.mTmrEntropy = out("m_tmr_moved"), out("m_tmr_timeouts"), out("m_tmr_entropy")
	p.busy = out("busy")
	return &p, b.err
}

func (pt *windowPorts) readAck(out []uint32) winAckOut {
	return winAckOut{
		Conn: int(pt.mAckConn.Get(out)), Path: int(pt.mAckPath.Get(out)),
		Res: window.AckResult{
			Ignored: pt.mAckIgnored.Get(out) == 1, SampleValid: pt.mAckSValid.Get(out) == 1,
			Sample: uint32(pt.mAckSample.Get(out)), Acked: uint32(pt.mAckAcked.Get(out)),
			Increased: pt.mAckInc.Get(out) == 1, Decreased: pt.mAckDec.Get(out) == 1,
			ConnIncreased: pt.mAckCInc.Get(out) == 1, ConnDecreased: pt.mAckCDec.Get(out) == 1,
			Reactivated: pt.mAckReact.Get(out) == 1,
		},
		Cwnd: uint32(pt.mAckCwnd.Get(out)), SRTT: uint32(pt.mAckSRTT.Get(out)),
		RTTVar: uint32(pt.mAckRTTVar.Get(out)), RTO: uint32(pt.mAckRTO.Get(out)),
		ConnCwnd: uint32(pt.mAckConnCwnd.Get(out)), RateCap: uint32(pt.mAckRateCap.Get(out)),
		MinRTT: uint32(pt.mAckMinRTT.Get(out)), MinValid: pt.mAckMinValid.Get(out) == 1,
	}
}

func (pt *windowPorts) readSend(out []uint32) winSendOut {
	return winSendOut{Conn: int(pt.mSendConn.Get(out)), D: window.Decision{
		OK: pt.mSendOK.Get(out) == 1, Reason: window.Reason(pt.mSendReason.Get(out)),
		Path: int(pt.mSendPath.Get(out)), Entropy: uint16(pt.mSendEntropy.Get(out)),
		PSN: uint32(pt.mSendPSN.Get(out)),
	}}
}

func (pt *windowPorts) readTmr(out []uint32) winTmrOut {
	return winTmrOut{Conn: int(pt.mTmrConn.Get(out)), Path: int(pt.mTmrPath.Get(out)), X: window.Expiry{
		Event: window.Event(pt.mTmrEvent.Get(out)), Outstanding: uint32(pt.mTmrOutstanding.Get(out)),
		Moved: uint32(pt.mTmrMoved.Get(out)), Timeouts: uint8(pt.mTmrTimeouts.Get(out)),
		Entropy: uint16(pt.mTmrEntropy.Get(out)),
	}}
}

// BuildWindowModel generates the window unit for a configuration and builds (or reuses) its
// Verilated model.
func BuildWindowModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *hdlwindow.Unit, error) {
	return buildUnit(ctx, opt, hdlwindow.New, (*hdlwindow.Unit).UnitModule, trace)
}

// RunWindow co-simulates the window unit against golden/window. Packets counts send requests
// (each the placement of one new packet); Acks counts ACK-port operations. Counts holds the
// number of each decision reason, timer event and ACK effect (keys in docs/window.md).
func RunWindow(ctx context.Context, opt Options) (*Result, error) {
	knobs, err := windowScenario(opt.Scenario)
	if err != nil {
		return nil, err
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *hdlwindow.Unit, error) {
		return BuildWindowModel(ctx, opt, trace)
	}, func(lib *verilator.Library, u *hdlwindow.Unit, traceAt int64) (*Result, *Mismatch, error) {
		return runWindow(ctx, lib, u, knobs, opt, traceAt)
	})
}

// runWindow is the lockstep loop. traceAt ≥ 0 dumps a VCD window around that cycle.
//
// The driver models the unit's arbitration exactly (docs/window.md): with adv = every output
// register empty or taken this cycle, the ACK port is ready when adv, not busy and the scan is
// not urgent; the send port additionally when no ACK-port operation is offered; and in every
// other advancing, non-busy cycle the timer scan checks one entry (golden Tick). The scan is
// urgent after ScanStarve advancing cycles without a scan. The predicted readies are compared
// with the RTL's every cycle.
func runWindow(ctx context.Context, lib *verilator.Library, u *hdlwindow.Unit, k windowKnobs, opt Options, traceAt int64) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindWindowPorts(lay, u.Reset.Port)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: window_unit ports: %w", err)
	}
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	c := opt.Config
	rng := rand.New(rand.NewPCG(opt.Seed, 0x77d0))
	res := &Result{Block: "window", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: c.Hash(), Drops: map[string]int{},
		Counts:          map[string]int{},
		DeclaredLatency: map[string]int{"ack": hdlwindow.LatencyAck, "send": hdlwindow.LatencySend, "tmr": hdlwindow.LatencyTmr},
		MinLatency:      map[string]int{}, MaxLatency: map[string]int{}}
	var ackExp fifo[expected[winAckOut]]
	var sendExp fifo[expected[winSendOut]]
	var tmrExp fifo[expected[winTmrOut]]
	nAck, nSend, nTmr := 0, 0, 0

	resetActive := func(on bool) {
		v := uint64(0)
		if on != u.Reset.AsyncLow {
			v = 1
		}
		pt.rst.Set(in, v)
	}
	const resetCycles = 3
	// A fresh model's registers are zero, which is not the tables' reset state: reset first.
	nextReset := int64(0)
	now := uint32(rng.Uint32())
	if k.NearWrap {
		now = -uint32(20_000 + rng.IntN(200_000))
	}
	tr := newWindowTraffic(u.P, k, opt.Seed, now)
	var ackOp winAckOp
	var sendOp winSendOp
	ackOffered, sendOffered := false, false
	scanWait := 0
	inX := false // an ACK-port operation or a timer check is in X: no send (docs/window.md)
	// The operation in F, as far as the arbitration cares: a send waits behind an operation
	// on its connection that is not a send (docs/window.md, "Pipeline").
	type fOp struct {
		valid, send bool
		conn        int
	}
	var inF fOp
	xConn := 0    // the connection of X's operation (an ACK-port operation or a check)
	clearIdx := 0 // the initialisation's next index
	pinConn := 0  // s_send_conn as last driven
	// The staged pick (PickStage): P registers the bitmaps of the connection on s_send_conn, so
	// a send is accepted only if its connection was on s_send_conn the cycle before and no
	// operation of F on it but a send ended at that edge.
	pConn, pFresh := 0, false
	pathBits := u.P.PathBits
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
	mismatch := func(stream string, n int, input fmt.Stringer, diff string) *Mismatch {
		s := "(none)"
		if input != nil {
			s = input.String()
		}
		return &Mismatch{Stream: stream, Transaction: n, Cycle: cycle - 1, Input: s, Diff: diff}
	}

	for {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return nil, nil, err
		} else if over {
			return res, nil, nil
		}
		done := res.Packets >= opt.Packets
		if done && ackExp.len() == 0 && sendExp.len() == 0 && tmrExp.len() == 0 && !ackOffered && !sendOffered {
			break
		}

		inReset := false
		if nextReset >= 0 && int64(cycle) >= nextReset {
			inReset = true
			if int64(cycle) >= nextReset+resetCycles {
				nextReset = -1
				if k.ResetEvery > 0 {
					nextReset = int64(cycle) + int64(k.ResetEvery/2+rng.IntN(k.ResetEvery))
				}
				inReset = false
			} else if int64(cycle) == nextReset && cycle > 0 {
				tr.reset()
				ackExp.clear()
				sendExp.clear()
				tmrExp.clear()
				scanWait = 0
				inX = false
				inF = fOp{}
				clearIdx = 0
				res.Resets++
			}
		}
		resetActive(inReset)
		pt.now.Set(in, uint64(now))

		// Inputs for this cycle. An offered operation stays offered until taken (AXI rule).
		if inReset {
			ackOffered, sendOffered = false, false
		} else {
			if !ackOffered && !done && rng.Float64() < k.AckRate {
				ackOp, ackOffered = tr.nextAck(now)
			}
			if !sendOffered && !done && rng.Float64() < k.SendRate {
				sendOp, sendOffered = tr.nextSend(), true
			}
		}
		if ackOffered {
			pt.ackValid.Set(in, 1)
			pt.ackOp.Set(in, uint64(ackOp.op))
			pt.ackConn.Set(in, uint64(ackOp.conn))
			pt.ackPath.Set(in, uint64(ackOp.path))
			pt.ackCum.Set(in, uint64(ackOp.ack.CumAdvance))
			pt.ackSacked.Set(in, uint64(ackOp.ack.NewlySacked))
			pt.ackECN.Set(in, uint64(ackOp.ack.ECNEcho))
			pt.ackTS.Set(in, uint64(ackOp.ack.TimestampEcho))
			pt.ackHint.Set(in, uint64(ackOp.ack.RateHint))
			pt.ackPSN.Set(in, uint64(ackOp.psn))
		} else {
			pt.ackValid.Set(in, 0)
		}
		if sendOffered {
			pt.sendValid.Set(in, 1)
			pt.sendConn.Set(in, uint64(sendOp.conn))
			pinConn = sendOp.conn
		} else {
			pt.sendValid.Set(in, 0)
		}
		ackReady := k.OutReady >= 1 || rng.Float64() < k.OutReady
		sendReady := k.OutReady >= 1 || rng.Float64() < k.OutReady
		tmrReady := k.OutReady >= 1 || rng.Float64() < k.OutReady
		pt.mAckReady.Set(in, b2u(ackReady))
		pt.mSendReady.Set(in, b2u(sendReady))
		pt.mTmrReady.Set(in, b2u(tmrReady))

		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
		t := now
		cycle++
		now += tr.dt()
		if inReset {
			pConn, pFresh = pinConn, false
			continue
		}

		// Outputs first: they belong to operations accepted in earlier cycles.
		mAckValid, mSendValid, mTmrValid := pt.mAckValid.Get(outb) == 1, pt.mSendValid.Get(outb) == 1, pt.mTmrValid.Get(outb) == 1
		if ackReady && mAckValid {
			if ackExp.len() == 0 {
				return res, mismatch("ack", nAck, nil, "RTL produced an ACK result the golden model did not expect"), nil
			}
			e := ackExp.pop()
			if got := pt.readAck(outb); got != e.out {
				return res, mismatch("ack", nAck, e.input, cmp.Diff(e.out, got)), nil
			}
			latency("ack", int(cycle-1-e.cycle))
			nAck++
			res.Compared++
		}
		if sendReady && mSendValid {
			if sendExp.len() == 0 {
				return res, mismatch("send", nSend, nil, "RTL produced a send decision the golden model did not expect"), nil
			}
			e := sendExp.pop()
			if got := pt.readSend(outb); got != e.out {
				return res, mismatch("send", nSend, e.input, cmp.Diff(e.out, got)), nil
			}
			latency("send", int(cycle-1-e.cycle))
			nSend++
			res.Compared++
		}
		if tmrReady && mTmrValid {
			if tmrExp.len() == 0 {
				return res, mismatch("tmr", nTmr, nil, "RTL produced a timer event the golden model did not expect"), nil
			}
			e := tmrExp.pop()
			if got := pt.readTmr(outb); got != e.out {
				return res, mismatch("tmr", nTmr, e.input, cmp.Diff(e.out, got)), nil
			}
			latency("tmr", int(cycle-1-e.cycle))
			nTmr++
			res.Compared++
		}

		// The arbitration, modelled, and checked against the RTL's readies.
		adv := (!mAckValid || ackReady) && (!mSendValid || sendReady) && (!mTmrValid || tmrReady)
		busy := pt.busy.Get(outb) == 1
		open := adv && !busy
		urgent := scanWait == hdlwindow.ScanStarve
		wantAckReady := open && !urgent
		// A send waits behind an operation on its connection in F: behind a send too at SendII 2.
		hold := inF.valid && (!inF.send || u.SendII == 2) && inF.conn == pinConn
		pickReady := !u.PickStage || (pFresh && pConn == pinConn)
		wantSendReady := wantAckReady && !ackOffered && !hold && !inX && pickReady
		gotAckReady, gotSendReady := pt.ackReady.Get(outb) == 1, pt.sendReady.Get(outb) == 1
		if gotAckReady != wantAckReady || gotSendReady != wantSendReady {
			return res, mismatch("arbitration", int(cycle-1), nil, fmt.Sprintf(
				"s_ack_ready/s_send_ready: golden %v/%v, rtl %v/%v (adv %v busy %v scan_wait %d)",
				wantAckReady, wantSendReady, gotAckReady, gotSendReady, adv, busy, scanWait)), nil
		}
		switch {
		case busy:
			res.Counts["busy_cycles"]++
		case !adv:
			res.Counts["stall_cycles"]++
		}
		ackFire := ackOffered && wantAckReady
		sendFire := sendOffered && wantSendReady
		scanFire := open && !inX && !ackFire && !sendFire && (urgent || !sendOffered)
		if held := sendOffered && (hold || inX || !pickReady) && open && !urgent && !ackOffered; held {
			res.Counts["send_held"]++
		}
		pConn, pFresh = pinConn, !(adv && inF.valid && !inF.send && inF.conn == pinConn)
		if open {
			switch {
			case scanFire:
				scanWait = 0
			case !urgent:
				scanWait++
			}
		}
		if adv {
			switch {
			case busy:
				inF = fOp{valid: true, conn: clearIdx >> pathBits}
				clearIdx++
			case inX:
				inF = fOp{valid: true, conn: xConn}
			case sendFire:
				inF = fOp{valid: true, send: true, conn: sendOp.conn}
			default:
				inF = fOp{}
				res.Counts["f_idle"]++
			}
			inX = scanFire || ackFire
			if ackFire {
				xConn = ackOp.conn
			}
		}
		cyc := cycle - 1
		switch {
		case ackFire:
			ackOffered = false
			res.Acks++
			if ackOp.op == hdlwindow.AckOpSetPSN {
				tr.tb.SetNextPSN(ackOp.conn, ackOp.path, ackOp.psn)
				res.Counts["set_psn"]++
				break
			}
			before := tr.tb.Conn(ackOp.conn)
			heard := ackOp.op == hdlwindow.AckOpHeard
			var r window.AckResult
			if heard {
				r = tr.tb.Heard(ackOp.conn, ackOp.path, t)
				countHeard(res, r)
			} else {
				r = tr.tb.AckUpdate(ackOp.conn, ackOp.path, ackOp.ack, t)
				countAck(res, r, ackOp.ack)
			}
			e := tr.tb.Path(ackOp.conn, ackOp.path)
			ce := tr.tb.Conn(ackOp.conn)
			ackExp.push(expected[winAckOut]{cycle: cyc, input: ackOp, out: winAckOut{
				Conn: ackOp.conn, Path: ackOp.path, Res: r, Cwnd: e.Cwnd, SRTT: e.SRTT, RTTVar: e.RTTVar,
				RTO: e.RTO, ConnCwnd: ce.Cwnd, RateCap: ce.RateCap, MinRTT: ce.MinRTT, MinValid: ce.MinValid}})
			if !heard {
				countBaseRTT(res, before, ce, ackOp.ack, e.RTTValid)
			}
		case sendFire:
			sendOffered = false
			res.Packets++
			d := tr.tb.SendDecision(sendOp.conn, t)
			tr.sent(sendOp.conn, d)
			sendExp.push(expected[winSendOut]{cycle: cyc, input: sendOp, out: winSendOut{Conn: sendOp.conn, D: d}})
			if d.OK {
				res.Counts["send_ok"]++
			} else {
				res.Drops["send_"+d.Reason.String()]++
			}
		case scanFire:
			res.Counts["scans"]++
			conn, path, x := tr.tb.Tick(t)
			xConn = conn
			if x.Event != window.EventNone {
				tmrExp.push(expected[winTmrOut]{cycle: cyc, input: winScan{now: t}, out: winTmrOut{Conn: conn, Path: path, X: x}})
				res.Counts["timer_"+x.Event.String()]++
				if x.Event == window.EventFailed && x.Timeouts < tr.tb.Params().FailedTimeouts {
					// Failed at a timeout while the connection's other paths were heard.
					res.Counts["timer_failed_siblings_heard"]++
				}
			}
			if urgent {
				res.Counts["urgent_scans"]++
			}
		}
	}
	res.RTLCycles = cycle
	if inX {
		// The run ended with an operation in X (a check with no event expects no output): it
		// never reached F.
		res.Counts["x_at_end"]++
	}
	if opt.Progress != nil {
		opt.Progress(res.Packets, opt.Packets)
	}
	return res, nil, nil
}

// countBaseRTT tallies the connection base-RTT cases of an ACK (before and after are the
// connection entry around it): MinRTT set by the connection's first sample or lowered by a later
// one, and a rate cap computed from 1.5 x MinRTT at or above the 2^24 ns clamp.
func countBaseRTT(res *Result, before, after window.ConnEntry, a window.Ack, rttValid bool) {
	switch {
	case after.MinValid && !before.MinValid:
		res.Counts["min_rtt_first"]++
	case after.MinRTT < before.MinRTT:
		res.Counts["min_rtt_lowered"]++
	}
	if a.RateHint > 0 && rttValid && uint64(after.MinRTT)+uint64(after.MinRTT>>1) >= 1<<window.RTTCapBits {
		res.Counts["rate_cap_rtt_clamped"]++
	}
}

// countAck tallies what an ACK did, for the scenario coverage checks.
func countAck(res *Result, r window.AckResult, a window.Ack) {
	if r.Ignored {
		res.Drops["ack_ignored_failed_path"]++
		return
	}
	for _, f := range []struct {
		on   bool
		name string
	}{
		{!r.SampleValid, "rtt_sample_discarded"}, {r.Increased, "path_increase"}, {r.Decreased, "path_decrease"},
		{r.ConnIncreased, "conn_increase"}, {r.ConnDecreased, "conn_decrease"}, {r.Reactivated, "reactivated"},
		{a.ECNEcho > 0 && !r.Decreased, "ecn_same_epoch"}, {a.RateHint > 0, "rate_hint"},
		{uint32(a.CumAdvance)+uint32(a.NewlySacked) > r.Acked, "acked_clamped"},
	} {
		if f.on {
			res.Counts[f.name]++
		}
	}
}

// countHeard counts a NAK's outcome.
func countHeard(res *Result, r window.AckResult) {
	switch {
	case r.Ignored:
		res.Drops["nak_ignored_failed_path"]++
	case r.Reactivated:
		res.Counts["nak_reactivated"]++
	default:
		res.Counts["naks"]++
	}
}
