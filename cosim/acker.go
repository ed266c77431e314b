// The ACK-scheduler driver: rx_acker against golden/acker.

package cosim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/golden/acker"
	"github.com/mrgen/mrgen/golden/sack"
	hdlacker "github.com/mrgen/mrgen/hdl/acker"
	"github.com/mrgen/mrgen/verilator"
)

// ackerKnobs shape the stimulus of an rx_acker scenario.
type ackerKnobs struct {
	DtMax     uint64  // ns between events: uniform in 0..DtMax
	Idle      float64 // an event is a pure passage of time (no packet)
	Jump      float64 // the clock jumps past the hint window (senders expire)
	New       float64 // a packet is classified new (else duplicate, old or beyond)
	Due       float64 // a new packet's ACK is due (the policy)
	CE        float64 // a packet is CE-marked
	Conns     int     // connections that send (0: all)
	Paths     int     // paths used per connection (0: all)
	OutReady  float64 // the ACK output is ready in a given cycle
	Saturate  float64 // a path receives a burst of 70,000 CE-marked packets (ECN saturation)
	WrapClock bool    // the clock starts just below 2^32 ns (32-bit timestamps and arrivals wrap)
	Announce  float64 // a packet event is an ANNOUNCE instead (its path's latest cum, or a random one)
	// LineRate offers each packet as soon as the previous one is taken, without waiting for
	// the scheduler to go idle, and checks the initiation interval: with the output always
	// ready, a packet with no timer due before it and less than MinTimer ns after the previous
	// one is taken hdlacker.Cycles cycles after it.
	LineRate bool
	// Gap: a packet follows the previous one by MinTimer to twice that (a timer the previous
	// packet set falls due first).
	Gap float64
}

var ackerScenarios = map[string]ackerKnobs{
	"random": {DtMax: 900, Idle: 0.1, Jump: 0.002, New: 0.75, Due: 0.3, CE: 0.2, OutReady: 0.8, WrapClock: true, Announce: 0.05},
	// Incast: newcomers arrive in bursts (gather windows with many entries), then go quiet
	// long enough to expire and come back.
	"incast": {DtMax: 300, Idle: 0.05, Jump: 0.01, New: 0.9, Due: 0.5, CE: 0.3, OutReady: 1, Announce: 0.05},
	// Delayed ACKs: mostly new packets the policy does not answer, with immediate ACKs in
	// between on the same few paths, so stale deadlines fill the queue until it overflows.
	"delayed": {DtMax: 16, Idle: 0.02, New: 0.6, Due: 0.02, CE: 0.1, Conns: 2, Paths: 2, OutReady: 1, Announce: 0.01},
	// Backpressure: the ACK output is ready a third of the time.
	"backpressure": {DtMax: 600, Idle: 0.1, Jump: 0.002, New: 0.75, Due: 0.3, CE: 0.2, OutReady: 0.33, Announce: 0.05},
	// ECN saturation: bursts of 70,000 CE-marked packets beyond the window on one path (counted,
	// never answered) before its next ACK.
	"saturate": {DtMax: 2, Idle: 0, New: 1, Due: 0, CE: 1, Conns: 1, Paths: 1, OutReady: 1, Saturate: 0.5, Announce: 0.001},
	// Announce: incast waves led by ANNOUNCEs, newcomers spaced about a gather window apart (so
	// windows close between waves and earlier answers are refreshed), quiet spells long enough
	// for every sender to expire and announce again, the output ready most of the time.
	"announce": {DtMax: 2500, Idle: 0.1, Jump: 0.05, New: 0.8, Due: 0.4, CE: 0.2, OutReady: 0.7, Announce: 0.35},
	// Line rate: packets back to back, a few ns apart, on every path; now and then the clock
	// jumps past the hint window (senders expire and come back as newcomers).
	"line-rate": {DtMax: 6, Jump: 0.0005, New: 0.75, Due: 0.3, CE: 0.2, OutReady: 1, Announce: 0.02, LineRate: true},
	// Line rate on one connection and path: every packet reads the entry the previous one wrote.
	"line-rate-one": {DtMax: 6, Jump: 0.0005, New: 0.75, Due: 0.2, CE: 0.3, Conns: 1, Paths: 1, OutReady: 1, Announce: 0.02, LineRate: true},
	// Line rate on two connections of two paths with many ANNOUNCEs, broken by gaps just long
	// enough for the previous packet's timers to fall due and by jumps that expire the senders
	// (an ANNOUNCE then often leads its connection back, its data right behind it).
	"line-rate-gaps": {DtMax: 6, Jump: 0.01, Gap: 0.3, New: 0.75, Due: 0.3, CE: 0.2, Conns: 2, Paths: 2, OutReady: 1, Announce: 0.3, LineRate: true},
}

// AckerScenarios lists the scenario names, sorted.
func AckerScenarios() []string {
	out := make([]string, 0, len(ackerScenarios))
	for n := range ackerScenarios {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ackerOp is one stimulus event, rendered in mismatch reports.
type ackerOp struct {
	now uint64
	pkt *acker.Input
	ann bool // pkt is an ANNOUNCE: its Conn, Path, TS and Res.Cum only
}

func (o ackerOp) String() string {
	if o.pkt == nil {
		return fmt.Sprintf("time passes to %d ns", o.now)
	}
	if o.ann {
		return fmt.Sprintf("ANNOUNCE at %d ns: conn %d path %d cum %d ts %d", o.now, o.pkt.Conn, o.pkt.Path, o.pkt.Res.Cum, o.pkt.TS)
	}
	p := o.pkt
	return fmt.Sprintf("packet at %d ns: conn %d path %d class %d cum %d due %v ce %v ts %d", o.now, p.Conn, p.Path,
		p.Res.Class, p.Res.Cum, p.Res.AckDue, p.CE, p.TS)
}

type ackerPorts struct {
	rst, now                                                   verilator.Field
	pValid, pReady, pConn, pPath, pCE, pTS, pClass, pCum, pBM  verilator.Field
	pDue, aValid, aReady, aKind, aConn, aPath, aCum, aBM, aECN verilator.Field
	aHint, aTS, wValid, wAt, idle, busy, active                verilator.Field
	cImm, cDel, cGat, cNew, cExp, cOvf                         verilator.Field
	pAnn, cAnn, cIgn, cAns, cRef                               verilator.Field
}

func bindAckerPorts(lay *verilator.Layout, resetPort string) (*ackerPorts, error) {
	var p ackerPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst, p.now = in(resetPort), in("now")
	p.pValid, p.pReady, p.pConn, p.pPath = in("s_pkt_valid"), out("s_pkt_ready"), in("s_pkt_conn"), in("s_pkt_path")
	p.pCE, p.pTS, p.pClass, p.pCum = in("s_pkt_ce"), in("s_pkt_ts"), in("s_pkt_class"), in("s_pkt_cum")
	p.pBM, p.pDue = in("s_pkt_bitmap"), in("s_pkt_ack_due")
	p.aValid, p.aReady, p.aKind, p.aConn = out("m_ack_valid"), in("m_ack_ready"), out("m_ack_kind"), out("m_ack_conn")
	p.aPath, p.aCum, p.aBM, p.aECN = out("m_ack_path"), out("m_ack_cum"), out("m_ack_bitmap"), out("m_ack_ecn")
	p.aHint, p.aTS, p.wValid, p.wAt = out("m_ack_hint"), out("m_ack_ts"), out("m_wake_valid"), out("m_wake_at")
	p.idle, p.busy, p.active = out("idle"), out("busy"), out("active")
	p.cImm, p.cDel, p.cGat = out("cnt_immediate"), out("cnt_delayed"), out("cnt_gathered")
	p.cNew, p.cExp, p.cOvf = out("cnt_newcomers"), out("cnt_expired"), out("cnt_overflows")
	p.pAnn, p.cAnn, p.cIgn = in("s_pkt_announce"), out("cnt_announces"), out("cnt_announces_ignored")
	p.cAns, p.cRef = out("cnt_announce_answers"), out("cnt_refreshes")
	return &p, b.err
}

// ackerOut is one ACK as the comparison sees it (the bitmap as 32-bit words).
type ackerOut struct {
	Kind       acker.Kind
	Conn, Path int
	Cum        uint32
	Bitmap     []uint32
	ECN, Hint  uint16
	TS         uint32
}

func ackerOutOf(a acker.Ack) ackerOut {
	return ackerOut{Kind: a.Kind, Conn: a.Conn, Path: a.Path, Cum: a.Cum, Bitmap: a.Bitmap.Words32(), ECN: a.ECN, Hint: a.Hint, TS: a.TS}
}

func (pt *ackerPorts) read(out []uint32) ackerOut {
	return ackerOut{Kind: acker.Kind(pt.aKind.Get(out)), Conn: int(pt.aConn.Get(out)), Path: int(pt.aPath.Get(out)),
		Cum: uint32(pt.aCum.Get(out)), Bitmap: pt.aBM.GetWords(out), ECN: uint16(pt.aECN.Get(out)),
		Hint: uint16(pt.aHint.Get(out)), TS: uint32(pt.aTS.Get(out))}
}

// BuildAckerModel generates rx_acker for a configuration and builds (or reuses) its model.
func BuildAckerModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *hdlacker.Unit, error) {
	return buildUnit(ctx, opt, hdlacker.New, (*hdlacker.Unit).Module, trace)
}

// RunAcker co-simulates rx_acker against golden/acker. Packets counts classified data packets
// and ANNOUNCEs; Counts holds the ACKs by kind, newcomers, expiries, deadline-queue overflows,
// ANNOUNCEs (taken, ignored, answered, refreshed), the cycles the scheduler spent per event
// (docs/acker.md) and, at line rate, the packets whose interval was checked (ii_checked) and
// the cycles per packet (cycles_per_packet_x100).
func RunAcker(ctx context.Context, opt Options) (*Result, error) {
	k, ok := ackerScenarios[opt.Scenario]
	if !ok {
		return nil, fmt.Errorf("unknown acker scenario %q; scenarios: %s", opt.Scenario, strings.Join(AckerScenarios(), ", "))
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *hdlacker.Unit, error) {
		return BuildAckerModel(ctx, opt, trace)
	}, func(lib *verilator.Library, u *hdlacker.Unit, traceAt int64) (*Result, *Mismatch, error) {
		return runAcker(ctx, lib, u, k, opt, traceAt)
	})
}

var errTraceDone = errors.New("cosim: trace window written")

// maxAckerCycles bounds the cycles one event may take besides its scans (a gather close of
// every connection, the whole deadline queue): beyond it, and one scan of every connection per
// scan period the clock moved, the RTL is hung.
func maxAckerCycles(u *hdlacker.Unit) int { return 16 + 4*(2*u.P.Conns+u.DQ+u.GQ) }

func runAcker(ctx context.Context, lib *verilator.Library, u *hdlacker.Unit, k ackerKnobs, opt Options, traceAt int64) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindAckerPorts(lay, u.Reset.Port)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: rx_acker ports: %w", err)
	}
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	gold, err := acker.New(u.P)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0xac4e))
	res := &Result{Block: "acker", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: opt.Config.Hash(),
		Drops: map[string]int{}, Counts: map[string]int{},
		DeclaredLatency: map[string]int{"ack": 2}, MinLatency: map[string]int{}, MaxLatency: map[string]int{}}
	var cycle uint64
	watch := cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	var exp fifo[expected[ackerOut]]
	nAck := 0
	mismatch := func(n int, input fmt.Stringer, diff string) *Mismatch {
		s := "(none)"
		if input != nil {
			s = input.String()
		}
		return &Mismatch{Stream: "ack", Transaction: n, Cycle: cycle - 1, Input: s, Diff: diff}
	}
	// step runs one cycle and takes an offered ACK when the output is ready. errTraceDone ends
	// a trace rerun once the VCD window is written.
	step := func(op fmt.Stringer) (*Mismatch, error) {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return nil, err
		} else if over {
			return nil, errTraceDone
		}
		ready := k.OutReady >= 1 || rng.Float64() < k.OutReady
		pt.aReady.Set(in, b2u(ready))
		if err := m.Step(in, outb); err != nil {
			return nil, err
		}
		cycle++
		if ready && pt.aValid.Get(outb) == 1 {
			if exp.len() == 0 {
				return mismatch(nAck, op, "RTL sent an ACK the golden model did not"), nil
			}
			e := exp.pop()
			if got := pt.read(outb); !cmp.Equal(e.out, got) {
				return mismatch(nAck, e.input, cmp.Diff(e.out, got)), nil
			}
			nAck++
			res.Compared++
		}
		return nil, nil
	}

	// Reset, then wait for the table clear.
	pt.rst.Set(in, b2u(!u.Reset.AsyncLow))
	for i := 0; i < 3; i++ {
		if _, err := step(nil); err != nil {
			return nil, nil, err
		}
	}
	pt.rst.Set(in, b2u(u.Reset.AsyncLow))
	now := uint64(1_000)
	if k.WrapClock {
		now = 1<<32 - 200_000 + uint64(rng.IntN(100_000))
	}
	pt.now.Set(in, now)
	for i := 0; ; i++ {
		if _, err := step(nil); err != nil {
			return nil, nil, err
		}
		if pt.busy.Get(outb) == 0 {
			break
		}
		if i > 1<<20 {
			return nil, nil, fmt.Errorf("cosim: rx_acker stayed busy after reset")
		}
	}

	firstCycle := cycle
	// wakeDiff compares the RTL's wake time and active count with golden's ("" when equal).
	wakeDiff := func() string {
		t, pending := gold.Next()
		gotPending := pt.wValid.Get(outb) == 1
		if gotPending != pending || pending && pt.wAt.Get(outb) != t || int(pt.active.Get(outb)) != gold.Active() {
			return fmt.Sprintf("wake (valid %v at %d) active %d, golden wake (valid %v at %d) active %d",
				gotPending, pt.wAt.Get(outb), pt.active.Get(outb), pending, t, gold.Active())
		}
		return ""
	}
	conns, paths := u.P.Conns, u.P.Paths
	if k.Conns > 0 {
		conns = min(conns, k.Conns)
	}
	if k.Paths > 0 {
		paths = min(paths, k.Paths)
	}
	burst := 0                   // CE-marked packets left in a saturation burst
	cumOf := map[[2]int]uint32{} // each path's latest cum, for its ANNOUNCEs
	cycles := 0
	base := maxAckerCycles(u)
	prev := now
	var lastTaken, lastTakenAt uint64 // cycle and time of the last packet taken (line rate)
	for res.Packets < opt.Packets {
		// The next event.
		switch {
		case burst > 0:
			now += uint64(rng.IntN(int(k.DtMax) + 1))
		case rng.Float64() < k.Jump:
			now += u.P.HintWindow + uint64(rng.IntN(int(2*u.P.HintWindow)))
		case rng.Float64() < k.Gap:
			now += u.MinTimer() + uint64(rng.IntN(int(u.MinTimer())+1))
		default:
			now += uint64(rng.IntN(int(k.DtMax) + 1))
		}
		op := ackerOp{now: now}
		if burst == 0 && k.Saturate > 0 && rng.Float64() < k.Saturate/1000 {
			burst = 70_000
		}
		if burst > 0 || rng.Float64() >= k.Idle {
			p := acker.Input{Conn: rng.IntN(conns), Path: rng.IntN(paths), CE: burst > 0 || rng.Float64() < k.CE,
				TS: rng.Uint32()}
			cls := sack.ClassNew
			if rng.Float64() >= k.New {
				cls = sack.Class(1 + rng.IntN(3))
			}
			bm := sack.NewBitmap(u.W)
			for i := 1; i < u.W; i++ {
				if rng.IntN(4) == 0 {
					bm.Set(i)
				}
			}
			due := cls == sack.ClassDuplicate || cls == sack.ClassOld || cls == sack.ClassNew && rng.Float64() < k.Due
			p.Res = sack.RxResult{Class: cls, Cum: rng.Uint32() & uint32(1<<u.PW-1), Bitmap: bm, AckDue: due}
			if burst > 0 {
				// Beyond-window packets: counted for the ECN echo, answered by nothing, so the
				// count runs into its 16-bit ceiling before the next ACK of the path.
				burst--
				p.Conn, p.Path = 0, 0
				p.Res.Class, p.Res.AckDue = sack.ClassBeyond, false
			} else if k.Announce > 0 && rng.Float64() < k.Announce {
				// An ANNOUNCE carries the path's current cum (sometimes any value).
				op.ann = true
				if c, ok := cumOf[[2]int{p.Conn, p.Path}]; ok && rng.IntN(8) != 0 {
					p.Res.Cum = c
				}
			}
			if !op.ann {
				cumOf[[2]int{p.Conn, p.Path}] = p.Res.Cum
			}
			op.pkt = &p
		}
		// At line rate: whether a timer falls due before this packet (golden fires it first).
		tNext, tPending := gold.Next()
		timerFirst := tPending && tNext <= now
		var acks []acker.Ack
		if op.pkt != nil {
			if op.ann {
				acks, err = gold.Announce(now, op.pkt.Conn, op.pkt.Path, op.pkt.TS, op.pkt.Res.Cum)
			} else {
				acks, err = gold.Packet(now, *op.pkt)
			}
			if err != nil {
				return nil, nil, err
			}
			res.Packets++
		} else {
			acks = gold.Advance(now)
		}
		for _, a := range acks {
			exp.push(expected[ackerOut]{out: ackerOutOf(a), cycle: cycle, input: op})
		}
		// Drive the RTL: offer the packet until taken, then run until idle with every ACK out.
		pt.now.Set(in, now)
		if p := op.pkt; p != nil {
			pt.pValid.Set(in, 1)
			pt.pConn.Set(in, uint64(p.Conn))
			pt.pPath.Set(in, uint64(p.Path))
			pt.pCE.Set(in, b2u(p.CE))
			pt.pTS.Set(in, uint64(p.TS))
			pt.pClass.Set(in, uint64(p.Res.Class))
			pt.pCum.Set(in, uint64(p.Res.Cum))
			pt.pBM.SetWords(in, p.Res.Bitmap.Words32())
			pt.pDue.Set(in, b2u(p.Res.AckDue))
			pt.pAnn.Set(in, b2u(op.ann))
		}
		// The scans the clock jumped over run one after another.
		limit := base + int((now-prev)/u.P.Scan+1)*(u.P.Conns+2)
		prev = now
		for n := 0; ; n++ {
			if n > limit {
				msg := fmt.Sprintf("RTL did not finish the event in %d cycles", limit)
				if exp.len() > 0 {
					e := exp.pop()
					msg = fmt.Sprintf("RTL sent no ACK in %d cycles; golden sent %+v", limit, e.out)
				}
				return res, mismatch(nAck, op, msg), nil
			}
			if mm, err := step(op); errors.Is(err, errTraceDone) {
				return res, nil, nil
			} else if err != nil || mm != nil {
				return res, mm, err
			}
			cycles++
			if pt.pValid.Get(in) == 1 && pt.pReady.Get(outb) == 1 {
				pt.pValid.Set(in, 0)
				if k.LineRate {
					// The interval since the previous packet was taken.
					if lastTaken > 0 && !timerFirst && k.OutReady >= 1 && now-lastTakenAt < u.MinTimer() {
						if gap := cycle - lastTaken; gap != uint64(hdlacker.Cycles) {
							return res, mismatch(nAck, op, fmt.Sprintf("initiation interval: taken %d cycles after the previous packet with no timer due, want %d",
								gap, hdlacker.Cycles)), nil
						}
						res.Counts["ii_checked"]++
					}
					lastTaken, lastTakenAt = cycle, now
					break
				}
				continue
			}
			if pt.pValid.Get(in) == 0 && pt.idle.Get(outb) == 1 && exp.len() == 0 {
				break
			}
		}
		if k.LineRate {
			continue
		}
		// Between events the RTL's wake time and active count equal golden's.
		if diff := wakeDiff(); diff != "" {
			return res, mismatch(nAck, op, "after the event: "+diff), nil
		}
	}
	// At line rate the last packets are still in flight: run until idle with every ACK out,
	// then the wake time and active count are golden's.
	if k.LineRate {
		for n := 0; pt.idle.Get(outb) == 0 || exp.len() > 0; n++ {
			if n > base {
				return res, mismatch(nAck, nil, fmt.Sprintf("RTL did not finish the last packet in %d cycles", base)), nil
			}
			if mm, err := step(nil); errors.Is(err, errTraceDone) {
				return res, nil, nil
			} else if err != nil || mm != nil {
				return res, mm, err
			}
		}
		if diff := wakeDiff(); diff != "" {
			return res, mismatch(nAck, nil, "at the end: "+diff), nil
		}
	}
	// The counters count an event one cycle after it: one more cycle, then they are golden's.
	if mm, err := step(nil); errors.Is(err, errTraceDone) {
		return res, nil, nil
	} else if err != nil || mm != nil {
		return res, mm, err
	}
	c := gold.Counters
	counters := []struct {
		name string
		rtl  verilator.Field
		gold uint64
	}{{"immediate", pt.cImm, c.Immediate}, {"delayed", pt.cDel, c.Delayed}, {"gathered", pt.cGat, c.Gathered},
		{"newcomers", pt.cNew, c.Newcomers}, {"expired", pt.cExp, c.Expired}, {"overflows", pt.cOvf, c.Overflows},
		{"announces", pt.cAnn, c.Announces}, {"announces_ignored", pt.cIgn, c.AnnouncesIgnored},
		{"announce_answers", pt.cAns, c.Announced}, {"refreshes", pt.cRef, c.Refreshed}}
	for _, x := range counters {
		if got := x.rtl.Get(outb); got != x.gold&0xffffffff {
			return res, &Mismatch{Stream: "counters", Transaction: 0, Cycle: cycle, Input: "end of run",
				Diff: fmt.Sprintf("cnt_%s: golden %d, rtl %d", x.name, x.gold, got)}, nil
		}
		res.Counts[x.name] = int(x.gold)
	}
	res.Acks = nAck
	res.RTLCycles = cycle
	res.Counts["cycles_per_event_x100"] = cycles * 100 / max(res.Packets, 1)
	if k.LineRate {
		res.Counts["cycles_per_packet_x100"] = int(cycle-firstCycle) * 100 / max(res.Packets, 1)
	}
	return res, nil, nil
}
