// The header parser driver: rx_parser against golden/parser, frame by frame.

package cosim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/golden/parser"
	"github.com/mrgen/mrgen/golden/wire"
	hdlparser "github.com/mrgen/mrgen/hdl/parser"
	"github.com/mrgen/mrgen/verilator"
)

// parserKnobs shape one parser scenario.
type parserKnobs struct {
	Malformed float64  // fraction of malformed frames
	InValid   float64  // probability that a beat is offered in a cycle (gaps between beats)
	OutReady  float64  // probability of m_hdr_ready and m_axis_tready in a cycle
	Small     bool     // minimum-size frames only
	Stall     uint64   // if > 0, both outputs are also held not ready for Stall cycles of every 2·Stall
	Kinds     []string // malformed frame classes (all when empty)
}

var parserScenarios = map[string]parserKnobs{
	// Everything mixed: a third malformed, gaps on the input, backpressure on both outputs.
	"random": {Malformed: 0.35, InValid: 0.85, OutReady: 0.75},
	// Valid traffic only, with gaps and backpressure.
	"valid": {Malformed: 0, InValid: 0.9, OutReady: 0.8},
	// Malformed traffic only.
	"malformed": {Malformed: 1, InValid: 0.9, OutReady: 0.8},
	// Minimum-size frames back to back, no gaps, no backpressure: the line-rate claim.
	"line-rate": {Malformed: 0.2, InValid: 1, OutReady: 1, Small: true},
	// Full-speed input, heavy backpressure: the input must stall, never lose a frame.
	"backpressure": {Malformed: 0.3, InValid: 1, OutReady: 0.3},
	// Full-speed runts behind accepted frames, against outputs that stop for long bursts: the
	// drops queue up behind a descriptor that waits, the outcome queue fills, and the input must
	// wait for room.
	"stall-bursts": {Malformed: 0.95, InValid: 1, OutReady: 0.9, Small: true, Stall: 200, Kinds: []string{"runt"}},
}

// ParserScenarios lists the parser's scenarios.
func ParserScenarios() []string {
	out := make([]string, 0, len(parserScenarios))
	for k := range parserScenarios {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parserOut is the parser's verdict on one frame: a descriptor, or a drop reason.
type parserOut struct {
	Reason     wire.DropReason
	Descriptor parser.Descriptor
}

// parserPorts are the layout fields the driver touches every cycle.
type parserPorts struct {
	rst                                       verilator.Field
	tdata, tkeep, tvalid, tready, tlast       verilator.Field
	hdrValid, hdrReady, dropValid, dropReason verilator.Field
	hdr                                       []verilator.Field // in Unit.Fields order
	pData, pKeep, pValid, pReady, pLast       verilator.Field
	cntIdx, cntData                           verilator.Field
}

func bindParserPorts(lay *verilator.Layout, u *hdlparser.Unit) (*parserPorts, error) {
	var p parserPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst = in(u.Reset.Port)
	p.tdata, p.tkeep, p.tvalid, p.tready, p.tlast = in("s_axis_tdata"), in("s_axis_tkeep"), in("s_axis_tvalid"), out("s_axis_tready"), in("s_axis_tlast")
	p.hdrValid, p.hdrReady, p.dropValid, p.dropReason = out("m_hdr_valid"), in("m_hdr_ready"), out("m_drop_valid"), out("m_drop_reason")
	for _, f := range u.Fields {
		p.hdr = append(p.hdr, out("m_hdr_"+f.Name))
	}
	p.pData, p.pKeep, p.pValid, p.pReady, p.pLast = out("m_axis_tdata"), out("m_axis_tkeep"), out("m_axis_tvalid"), in("m_axis_tready"), out("m_axis_tlast")
	p.cntIdx, p.cntData = in("cnt_rd_idx"), out("cnt_rd_data")
	return &p, b.err
}

// readDescriptor reads the m_hdr_* ports into a golden descriptor (field order of Unit.Fields).
func readDescriptor(pt *parserPorts, out []uint32, sackWidth int) parser.Descriptor {
	g := func(i int) uint64 { return pt.hdr[i].Get(out) }
	d := parser.Descriptor{
		Opcode: uint8(g(0)), Flags: uint8(g(1)), ConnID: uint16(g(2)), PathID: uint8(g(3)), PSN: uint32(g(4)),
		StreamID: uint8(g(5)), MSN: uint32(g(6)), IPv6: g(7) == 1, VLAN: g(8) == 1, ECN: uint8(g(9)),
		UDPSrcPort: uint16(g(10)), Timestamp: uint32(g(11)), MsgLen: uint32(g(12)), RKey: uint32(g(13)),
		VA: g(14), Offset: uint32(g(15)), PayloadLen: uint16(g(16)), TimestampEcho: uint32(g(17)),
		ECNEcho: uint16(g(18)), RateHint: uint16(g(19)), NakCode: uint8(g(21)), RNRDelay: uint16(g(22)),
	}
	if wire.Opcode(d.Opcode) == wire.OpAck {
		w := pt.hdr[20].View(out)
		d.Sack = make([]uint64, sackWidth/64)
		for i := range d.Sack {
			d.Sack[i] = uint64(w[2*i]) | uint64(w[2*i+1])<<32
		}
	} else {
		for _, w := range pt.hdr[20].View(out) {
			if w != 0 { // a SACK bitmap on another opcode: show it in the diff
				d.Sack = []uint64{uint64(w)}
				break
			}
		}
	}
	return d
}

// BuildParserModel generates the parser for a configuration and builds (or reuses) its
// Verilated model.
func BuildParserModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *hdlparser.Unit, error) {
	return buildUnit(ctx, opt, hdlparser.New, (*hdlparser.Unit).ParserModule, trace)
}

// RunParser co-simulates the header parser against golden/parser. Result.Counts holds: valid
// and malformed (frames generated), kind_<class> per generator class, accepted, beats (input
// beats), payload_beats (output beats), payload_packets, input_stalls (cycles a beat was
// offered and not taken), input_idle (cycles the driver offered nothing, by its gap
// probability, while frames remained) and init_cycles (from reset to the first cycle with
// s_axis_tready high: the parser's counter sweep; neither stall count includes them).
func RunParser(ctx context.Context, opt Options) (*Result, error) {
	return RunParserTap(ctx, opt, nil)
}

// FrameTap receives one input frame of a co-simulation: the cycle the block took its last
// beat, the bytes the block judged, and a one-line note (frame number, generator class,
// golden verdict). An error stops the run.
type FrameTap func(cycle uint64, frame []byte, note string) error

// RunParserTap is RunParser that also hands every input frame to tap (nil: none), in input
// order, once: not again on the trace rerun after a mismatch. `mrgen cosim --pcap` records
// them with internal/pcapout.
func RunParserTap(ctx context.Context, opt Options, tap FrameTap) (*Result, error) {
	k, ok := parserScenarios[opt.Scenario]
	if !ok {
		return nil, fmt.Errorf("cosim: unknown parser scenario %q; scenarios: %v", opt.Scenario, ParserScenarios())
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *hdlparser.Unit, error) {
		return BuildParserModel(ctx, opt, trace)
	}, func(lib *verilator.Library, u *hdlparser.Unit, traceAt int64) (*Result, *Mismatch, error) {
		if traceAt >= 0 {
			tap = nil
		}
		return runParser(ctx, lib, u, k, opt, traceAt, tap)
	})
}

// note is the frame's one-line description for a FrameTap.
func (f *parserFrame) note(r wire.DropReason) string {
	s := fmt.Sprintf("frame %d %s", f.seq, f.kind)
	if f.hole >= 0 && f.hole < len(f.data) {
		s += fmt.Sprintf(" (null lane at byte %d of %d: the rest is not recorded)", f.hole, len(f.data))
	}
	if r == wire.DropNone {
		return s + ": accepted"
	}
	return s + ": dropped " + r.String()
}

// payloadExp is one expected payload packet.
type payloadExp struct {
	data  []byte
	off   int
	frame *parserFrame
}

// runParser is the lockstep loop. traceAt ≥ 0 dumps a VCD window around that cycle.
func runParser(ctx context.Context, lib *verilator.Library, u *hdlparser.Unit, k parserKnobs, opt Options, traceAt int64, tap FrameTap) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindParserPorts(lay, u)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: rx_parser ports: %w", err)
	}
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	prm := u.Prm
	tr, err := newParserTraffic(prm, opt.Seed, k.Malformed, k.Small, k.Kinds)
	if err != nil {
		return nil, nil, err
	}
	gold, err := parser.New(prm)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0xbea7))
	c := opt.Config
	res := &Result{Block: "parser", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: c.Hash(),
		Drops: map[string]int{}, Counts: map[string]int{},
		DeclaredLatency: map[string]int{"hdr": u.Latency},
		MinLatency:      map[string]int{}, MaxLatency: map[string]int{}}
	var outExp fifo[expected[parserOut]]
	var payExp fifo[payloadExp]
	outN, payN := 0, 0
	B := u.B
	latency := func(l int) { res.NoteLatency("hdr", l) }
	resetOn := func(on bool) {
		v := uint64(0)
		if on != u.Reset.AsyncLow {
			v = 1
		}
		pt.rst.Set(in, v)
	}

	var cur *parserFrame // the frame on the bus
	beat, beats := 0, 0  // current beat and beats of cur
	offered := false     // AXI: an offered beat stays offered until taken
	sent := 0
	tdata := make([]byte, B)
	var cycle uint64
	watch := cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	const resetCycles = 3
	// After reset the parser clears its outcome counters (s_axis_tready low); nothing is
	// offered until it first shows ready, so that the stall counts measure traffic only.
	started := false
	const maxInitCycles = 1000
	var lastProgress uint64

	for {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return nil, nil, err
		} else if over {
			return res, nil, nil
		}
		if cur == nil && sent >= opt.Packets && outExp.len() == 0 && payExp.len() == 0 {
			break
		}
		if cycle-lastProgress > stallLimit {
			return res, &Mismatch{Stream: "stall", Cycle: cycle, Input: "(none)", Diff: fmt.Sprintf(
				"no handshake for %d cycles; golden still expects %d outcomes and %d payloads",
				stallLimit, outExp.len(), payExp.len())}, nil
		}
		inReset := cycle < resetCycles
		resetOn(inReset)
		wasStarted := started // the cycle the parser first shows ready offers nothing yet

		// Input beat.
		if started && cur == nil && sent < opt.Packets {
			f := tr.next()
			cur = &f
			beat, beats = 0, max(1, (len(f.data)+B-1)/B)
			sent++
		}
		if cur != nil && started && (offered || rng.Float64() < k.InValid) {
			offered = true
			clear(tdata)
			var keep uint64
			for j := 0; j < B; j++ {
				i := beat*B + j
				if i < len(cur.data) {
					tdata[j] = cur.data[i]
					if i != cur.hole {
						keep |= 1 << j
					}
				}
			}
			w := pt.tdata.View(in)
			for i := range w {
				w[i] = uint32(tdata[4*i]) | uint32(tdata[4*i+1])<<8 | uint32(tdata[4*i+2])<<16 | uint32(tdata[4*i+3])<<24
			}
			pt.tkeep.Set(in, keep)
			pt.tlast.Set(in, b2u(beat == beats-1))
			pt.tvalid.Set(in, 1)
		} else {
			pt.tvalid.Set(in, 0)
		}
		hdrReady := k.OutReady >= 1 || rng.Float64() < k.OutReady
		payReady := k.OutReady >= 1 || rng.Float64() < k.OutReady
		if k.Stall > 0 && cycle%(2*k.Stall) < k.Stall {
			hdrReady, payReady = false, false
		}
		pt.hdrReady.Set(in, b2u(hdrReady))
		pt.pReady.Set(in, b2u(payReady))

		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
		now := cycle
		cycle++
		if inReset {
			continue
		}
		if !started {
			if pt.tready.Get(outb) == 1 {
				started = true
				res.Counts["init_cycles"] = int(now - resetCycles)
			} else if now > resetCycles+maxInitCycles {
				return nil, nil, fmt.Errorf("rx_parser: s_axis_tready still low %d cycles after reset", maxInitCycles)
			}
		}

		// Outputs: descriptor or drop.
		hv, dv := pt.hdrValid.Get(outb) == 1, pt.dropValid.Get(outb) == 1
		if (hv && hdrReady) || dv {
			if hv && dv {
				return res, &Mismatch{Stream: "hdr", Transaction: outN, Cycle: now, Input: "(both)", Diff: "m_hdr_valid and m_drop_valid at once"}, nil
			}
			if outExp.len() == 0 {
				return res, &Mismatch{Stream: "hdr", Transaction: outN, Cycle: now, Input: "(none)", Diff: "RTL produced an outcome the golden model did not expect"}, nil
			}
			e := outExp.pop()
			got := parserOut{Reason: wire.DropReason(pt.dropReason.Get(outb))}
			if hv {
				got.Reason = wire.DropNone
				got.Descriptor = readDescriptor(pt, outb, u.S)
			}
			if got.Reason != e.out.Reason || !reflect.DeepEqual(got.Descriptor, e.out.Descriptor) {
				return res, &Mismatch{Stream: "hdr", Transaction: outN, Cycle: now, Input: e.input.String(),
					Diff: cmp.Diff(e.out, got)}, nil
			}
			latency(int(now - e.cycle))
			lastProgress = now
			outN++
			res.Compared++
		}
		// Payload beats.
		if payReady && pt.pValid.Get(outb) == 1 {
			res.Counts["payload_beats"]++
			if payExp.len() == 0 {
				return res, &Mismatch{Stream: "payload", Transaction: payN, Cycle: now, Input: "(none)", Diff: "RTL produced a payload beat the golden model did not expect"}, nil
			}
			e := &payExp.items[payExp.head]
			want := e.data[e.off:min(len(e.data), e.off+B)]
			last := e.off+B >= len(e.data)
			gotKeep := pt.pKeep.Get(outb)
			wantKeep := uint64(1)<<len(want) - 1
			if len(want) == 64 {
				wantKeep = ^uint64(0)
			}
			gw := pt.pData.View(outb)
			got := make([]byte, len(want))
			for i := range got {
				got[i] = byte(gw[i/4] >> (8 * (i % 4)))
			}
			if gotKeep != wantKeep || (pt.pLast.Get(outb) == 1) != last || !slices.Equal(got, want) {
				return res, &Mismatch{Stream: "payload", Transaction: payN, Cycle: now, Input: e.frame.String(),
					Diff: fmt.Sprintf("beat at payload byte %d of %d: tkeep %#x want %#x, tlast %v want %v\n-golden % x\n+rtl    % x",
						e.off, len(e.data), gotKeep, wantKeep, pt.pLast.Get(outb) == 1, last, want, got)}, nil
			}
			e.off += B
			lastProgress = now
			if last {
				payExp.pop()
				payN++
				res.Compared++
			}
		}

		// Input handshake.
		if wasStarted && !offered && sent < opt.Packets {
			res.Counts["input_idle"]++
		}
		if offered && pt.tready.Get(outb) == 0 {
			res.Counts["input_stalls"]++
		}
		if offered && pt.tready.Get(outb) == 1 {
			offered = false
			lastProgress = now
			res.Counts["beats"]++
			beat++
			if beat == beats {
				desc, payload, reason := gold.Parse(cur.bytesSeen())
				res.Packets++
				if cur.kind == "valid" {
					res.Counts["valid"]++
				} else {
					res.Counts["malformed"]++
					res.Counts["kind_"+cur.kind]++
				}
				if reason == wire.DropNone {
					res.Counts["accepted"]++
				} else {
					res.Drops[reason.String()]++
				}
				if tap != nil {
					if err := tap(now, cur.bytesSeen(), cur.note(reason)); err != nil {
						return nil, nil, fmt.Errorf("cosim: frame tap: %w", err)
					}
				}
				outExp.push(expected[parserOut]{cycle: now, input: cur, out: parserOut{Reason: reason, Descriptor: desc}})
				if len(payload) > 0 {
					payExp.push(payloadExp{data: payload, frame: cur})
					res.Counts["payload_packets"]++
				}
				cur = nil
			}
		}
	}
	res.RTLCycles = cycle
	if opt.Progress != nil {
		opt.Progress(res.Packets, opt.Packets)
	}
	// The outcome counters must agree with golden's: two idle cycles let the last update land,
	// then cnt_rd_idx walks every counter (each read shows one cycle later).
	pt.tvalid.Set(in, 0)
	got := make([]uint64, u.Outcomes)
	want := make([]uint64, u.Outcomes)
	want[0] = gold.Counters.Accepted
	for r := 1; r < u.Outcomes; r++ {
		want[r] = gold.Counters.Dropped[r]
	}
	for i := -2; i <= u.Outcomes; i++ {
		pt.cntIdx.Set(in, uint64(max(0, min(i, u.Outcomes-1))))
		if err := m.Step(in, outb); err != nil {
			return nil, nil, err
		}
		if i >= 1 {
			got[i-1] = pt.cntData.Get(outb)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		return res, &Mismatch{Stream: "counters", Cycle: cycle, Input: "cnt_rd_data [accepted, reason 1, ...]", Diff: d}, nil
	}
	return res, nil, nil
}
