// The header builder driver: tx_deparser against golden/wire.Encode, frame by frame.

package cosim

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/golden/wire"
	hdldeparser "github.com/mrgen/mrgen/hdl/deparser"
	"github.com/mrgen/mrgen/verilator"
)

// deparserKnobs shape one deparser scenario.
type deparserKnobs struct {
	HdrValid float64 // probability that the next descriptor is offered in a cycle
	PayValid float64 // probability that a payload beat is offered in a cycle (gaps between beats)
	OutReady float64 // probability of m_axis_tready in a cycle
	BadShare float64 // fraction of data packets whose payload length disagrees with the descriptor
	Small    bool    // payloads of at most 16 bytes
}

var deparserScenarios = map[string]deparserKnobs{
	// Every opcode, IPv4/IPv6, tagged or not, payload 0..mtu; gaps on both inputs, backpressure.
	"random": {HdrValid: 0.9, PayValid: 0.85, OutReady: 0.8},
	// Random ready on the output (mostly low) and gaps on the payload input.
	"backpressure": {HdrValid: 1, PayValid: 0.6, OutReady: 0.3},
	// No gaps and no backpressure: after the first beat the output must be valid every cycle.
	"line-rate": {HdrValid: 1, PayValid: 1, OutReady: 1},
	// Minimum-size frames back to back, no gaps, no backpressure.
	"line-rate-small": {HdrValid: 1, PayValid: 1, OutReady: 1, Small: true},
	// A third of the data packets carry a payload of the wrong length (short or long).
	"length-error": {HdrValid: 0.9, PayValid: 0.85, OutReady: 0.8, BadShare: 0.35},
	// Descriptors seldom offered, so most arrive with the builder idle: each is taken exactly
	// deparser.AcceptDelay cycles after it is first offered (its decode registered first), and
	// a decode that does not wait for the descriptor shows.
	"sparse": {HdrValid: 0.02, PayValid: 1, OutReady: 1},
}

// DeparserScenarios lists the deparser's scenarios.
func DeparserScenarios() []string {
	out := make([]string, 0, len(deparserScenarios))
	for k := range deparserScenarios {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// deparserPorts are the layout fields the driver touches every cycle.
type deparserPorts struct {
	rst                                        verilator.Field
	hdrValid, hdrReady                         verilator.Field
	hdr                                        []verilator.Field // in Unit.Fields order
	tdata, tkeep, tvalid, tready, tlast        verilator.Field
	oData, oKeep, oValid, oReady, oLast, oUser verilator.Field
	errCount                                   verilator.Field
}

func bindDeparserPorts(lay *verilator.Layout, u *hdldeparser.Unit) (*deparserPorts, error) {
	var p deparserPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst = in(u.Reset.Port)
	p.hdrValid, p.hdrReady = in("s_hdr_valid"), out("s_hdr_ready")
	for _, f := range u.Fields {
		p.hdr = append(p.hdr, in("s_hdr_"+f.Name))
	}
	p.tdata, p.tkeep, p.tvalid, p.tready, p.tlast = in("s_axis_tdata"), in("s_axis_tkeep"), in("s_axis_tvalid"), out("s_axis_tready"), in("s_axis_tlast")
	p.oData, p.oKeep, p.oValid, p.oReady, p.oLast, p.oUser = out("m_axis_tdata"), out("m_axis_tkeep"), out("m_axis_tvalid"), in("m_axis_tready"), out("m_axis_tlast"), out("m_axis_tuser")
	p.errCount = out("err_len_count")
	return &p, b.err
}

// beWords packs big-endian bytes (byte 0 most significant) into little-endian 32-bit words.
func beWords(b []byte) []uint32 {
	w := make([]uint32, (len(b)+3)/4)
	for i := range b {
		bit := 8 * (len(b) - 1 - i)
		w[bit/32] |= uint32(b[i]) << (bit % 32)
	}
	return w
}

// setDescriptor drives the s_hdr_* ports with p's fields (Unit.Fields order and meaning).
func setDescriptor(pt *deparserPorts, u *hdldeparser.Unit, in []uint32, p *wire.Packet) error {
	var ext struct {
		ts, msgLen, rkey, offset, tsEcho uint32
		va                               uint64
		ecnEcho, rate, rnr               uint16
		nak                              uint8
		sack                             []uint32
	}
	switch {
	case p.Write != nil:
		ext.ts, ext.msgLen, ext.rkey, ext.va = p.Write.Timestamp, p.Write.MsgLen, p.Write.RKey, p.Write.VA
	case p.Send != nil:
		ext.ts, ext.msgLen, ext.offset = p.Send.Timestamp, p.Send.MsgLen, p.Send.Offset
	case p.Ack != nil:
		ext.tsEcho, ext.ecnEcho, ext.rate = p.Ack.TimestampEcho, p.Ack.ECNEcho, p.Ack.RateHint
		for _, w := range p.Ack.Sack {
			ext.sack = append(ext.sack, uint32(w), uint32(w>>32))
		}
	case p.Nak != nil:
		ext.nak, ext.rnr, ext.tsEcho = uint8(p.Nak.Code), p.Nak.RNRDelay, p.Nak.TimestampEcho
	case p.Announce != nil:
		ext.ts = p.Announce.Timestamp
	}
	var vlan, pcp, dei, vid uint64
	if v := p.Eth.VLAN; v != nil {
		vlan, pcp, vid = 1, uint64(v.PCP), uint64(v.VID)
		dei = b2u(v.DEI)
	}
	for i, f := range u.Fields {
		fld := pt.hdr[i]
		var v uint64
		switch f.Name {
		case "dst_mac":
			fld.SetWords(in, beWords(p.Eth.Dst[:]))
			continue
		case "src_mac":
			fld.SetWords(in, beWords(p.Eth.Src[:]))
			continue
		case "vlan":
			v = vlan
		case "vlan_pcp":
			v = pcp
		case "vlan_dei":
			v = dei
		case "vlan_vid":
			v = vid
		case "ipv6":
			v = b2u(p.IP.Version == 6)
		case "ip_src":
			fld.SetWords(in, beWords(p.IP.Src[:]))
			continue
		case "ip_dst":
			fld.SetWords(in, beWords(p.IP.Dst[:]))
			continue
		case "dscp":
			v = uint64(p.IP.DSCP)
		case "ecn":
			v = uint64(p.IP.ECN)
		case "ttl":
			v = uint64(p.IP.TTL)
		case "flow_label":
			v = uint64(p.IP.FlowLabel)
		case "ip_id":
			v = uint64(p.IP.ID)
		case "ip_df":
			v = b2u(p.IP.DontFragment)
		case "udp_src_port":
			v = uint64(p.UDP.SrcPort)
		case "udp_checksum":
			v = uint64(p.UDP.Checksum)
		case "opcode":
			v = uint64(p.BTH.Opcode)
		case "flags":
			v = uint64(p.BTH.Flags)
		case "conn_id":
			v = uint64(p.BTH.ConnID)
		case "path_id":
			v = uint64(p.BTH.PathID)
		case "stream_id":
			v = uint64(p.BTH.StreamID)
		case "psn":
			v = uint64(p.BTH.PSN)
		case "msn":
			v = uint64(p.BTH.MSN)
		case "timestamp":
			v = uint64(ext.ts)
		case "msg_len":
			v = uint64(ext.msgLen)
		case "rkey":
			v = uint64(ext.rkey)
		case "va":
			v = ext.va
		case "offset":
			v = uint64(ext.offset)
		case "ts_echo":
			v = uint64(ext.tsEcho)
		case "ecn_echo":
			v = uint64(ext.ecnEcho)
		case "rate_hint":
			v = uint64(ext.rate)
		case "sack":
			fld.SetWords(in, ext.sack)
			continue
		case "nak_code":
			v = uint64(ext.nak)
		case "rnr_delay":
			v = uint64(ext.rnr)
		case "payload_len":
			v = uint64(len(p.Payload))
		default:
			return fmt.Errorf("cosim: tx_deparser descriptor field %q has no driver", f.Name)
		}
		fld.Set(in, v)
	}
	return nil
}

// BuildDeparserModel generates the deparser for a configuration and builds (or reuses) its
// Verilated model.
func BuildDeparserModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *hdldeparser.Unit, error) {
	return buildUnit(ctx, opt, hdldeparser.New, (*hdldeparser.Unit).DeparserModule, trace)
}

// RunDeparser co-simulates the header builder against golden/wire.Encode: every frame on
// m_axis is compared byte for byte (and its tuser bit) with the frame Encode builds for the
// descriptor's packet. Result.Counts holds: frames (compared), by opcode op_<name>, ipv6,
// vlan, payload_packets, payload_beats (taken), out_beats, bad_frames (payload length
// mismatched on purpose), output_idle (cycles after the first output beat with m_axis_tvalid
// low while frames remained), hdr_waits (cycles a descriptor was offered and not taken).
func RunDeparser(ctx context.Context, opt Options) (*Result, error) {
	return runDeparserWith(ctx, opt, nil)
}

// runDeparserWith is RunDeparser with a hook that sees every frame the RTL emitted.
func runDeparserWith(ctx context.Context, opt Options, onFrame func(f *deparserFrame, got []byte)) (*Result, error) {
	k, ok := deparserScenarios[opt.Scenario]
	if !ok {
		return nil, fmt.Errorf("cosim: unknown deparser scenario %q; scenarios: %v", opt.Scenario, DeparserScenarios())
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *hdldeparser.Unit, error) {
		return BuildDeparserModel(ctx, opt, trace)
	}, func(lib *verilator.Library, u *hdldeparser.Unit, traceAt int64) (*Result, *Mismatch, error) {
		return runDeparser(ctx, lib, u, k, opt, traceAt, onFrame)
	})
}

// deparserWindow holds the frames between the oldest one still expected on the output and the
// newest one generated.
type deparserWindow struct {
	tr     *deparserTraffic
	frames []*deparserFrame
	base   int // index of frames[0]
	total  int
}

// at returns frame i (generating it if needed), or nil past the run's end.
func (w *deparserWindow) at(i int) (*deparserFrame, error) {
	if i >= w.total {
		return nil, nil
	}
	for w.base+len(w.frames) <= i {
		f, err := w.tr.next()
		if err != nil {
			return nil, err
		}
		w.frames = append(w.frames, f)
	}
	return w.frames[i-w.base], nil
}

// trim forgets the frames before index i.
func (w *deparserWindow) trim(i int) {
	if n := i - w.base; n > 1024 && 2*n > len(w.frames) {
		w.frames = append(w.frames[:0], w.frames[n:]...)
		w.base = i
	}
}

// runDeparser is the lockstep loop. traceAt ≥ 0 dumps a VCD window around that cycle.
func runDeparser(ctx context.Context, lib *verilator.Library, u *hdldeparser.Unit, k deparserKnobs, opt Options,
	traceAt int64, onFrame func(f *deparserFrame, got []byte)) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindDeparserPorts(lay, u)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: tx_deparser ports: %w", err)
	}
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	win := &deparserWindow{tr: newDeparserTraffic(u.Prm, opt.Seed, k.BadShare, k.Small), total: opt.Packets}
	rng := rand.New(rand.NewPCG(opt.Seed, 0xdea7))
	c := opt.Config
	res := &Result{Block: "deparser", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: c.Hash(),
		Drops: map[string]int{}, Counts: map[string]int{},
		DeclaredLatency: map[string]int{"frame": hdldeparser.Latency(u.W), "accept": hdldeparser.AcceptDelay},
		MinLatency:      map[string]int{}, MaxLatency: map[string]int{}}
	B := u.B
	resetOn := func(on bool) {
		v := uint64(0)
		if on != u.Reset.AsyncLow {
			v = 1
		}
		pt.rst.Set(in, v)
	}

	hdrIdx := 0              // next descriptor to offer
	hdrOffered := false      // AXI: an offered descriptor stays offered until taken
	var offeredAt uint64     // the cycle the descriptor on offer was first offered
	payIdx, payOff := 0, 0   // payload packet on s_axis and its next byte
	payOffered := false      // a payload beat is offered and not yet taken
	outN := 0                // frames compared
	var got []byte           // the frame being received
	outStarted := false      // the first output beat has left
	wantErrs := uint64(0)    // frames with a mismatched payload
	tdata := make([]byte, B) // payload beat being offered
	var cycle uint64
	watch := cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	const resetCycles = 3

	for {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return nil, nil, err
		} else if over {
			return res, nil, nil
		}
		if outN >= opt.Packets {
			break
		}
		inReset := cycle < resetCycles
		resetOn(inReset)

		// Descriptor.
		var hf *deparserFrame
		if !inReset && hdrIdx < opt.Packets && (hdrOffered || rng.Float64() < k.HdrValid) {
			if hf, err = win.at(hdrIdx); err != nil {
				return nil, nil, err
			}
			if !hdrOffered {
				if err := setDescriptor(pt, u, in, hf.pkt); err != nil {
					return nil, nil, err
				}
				offeredAt = cycle
			}
			hdrOffered = true
		}
		pt.hdrValid.Set(in, b2u(hdrOffered))

		// Payload: the packets in frame order, skipping frames without one; at most two frames
		// ahead of the descriptors.
		var pf *deparserFrame
		for !inReset && payIdx < opt.Packets && payIdx <= hdrIdx+1 {
			if pf, err = win.at(payIdx); err != nil {
				return nil, nil, err
			}
			if len(pf.sent) > 0 {
				break
			}
			pf = nil
			payIdx++
		}
		if pf != nil && (payOffered || rng.Float64() < k.PayValid) {
			if !payOffered {
				driveBeat(in, pt.tdata, pt.tkeep, pt.tlast, tdata, pf.sent, payOff)
			}
			payOffered = true
		}
		pt.tvalid.Set(in, b2u(payOffered))
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

		// Output beat.
		ov := pt.oValid.Get(outb) == 1
		if outStarted && !ov {
			res.Counts["output_idle"]++
		}
		if ov && ready {
			outStarted = true
			res.Counts["out_beats"]++
			f, err := win.at(outN)
			if err != nil {
				return nil, nil, err
			}
			if f == nil || f.hdrAt == 0 {
				return res, &Mismatch{Stream: "frame", Transaction: outN, Cycle: now, Input: "(none)",
					Diff: "RTL emitted a beat before the descriptor of its frame was taken"}, nil
			}
			if len(got) == 0 {
				res.NoteLatency("frame", int(now-f.hdrAt))
			}
			last := pt.oLast.Get(outb) == 1
			var bad string
			if got, bad = takeBeat(outb, pt.oData, pt.oKeep, last, B, got); bad != "" {
				return res, &Mismatch{Stream: "frame", Transaction: outN, Cycle: now, Input: f.String(), Diff: bad}, nil
			}
			if last || len(got) > len(f.want)+B {
				user := pt.oUser.Get(outb) == 1
				if !last || user != f.bad || !bytes.Equal(got, f.want) {
					diff := cmp.Diff(hexLines(f.want), hexLines(got))
					if i := firstDiff(f.want, got); i >= 0 {
						diff = fmt.Sprintf("first difference at frame byte %d (of %d expected, %d emitted)\n%s", i, len(f.want), len(got), diff)
					}
					if user != f.bad {
						diff = fmt.Sprintf("m_axis_tuser %v, want %v\n%s", user, f.bad, diff)
					}
					return res, &Mismatch{Stream: "frame", Transaction: outN, Cycle: now, Input: f.String(), Diff: diff}, nil
				}
				if onFrame != nil {
					onFrame(f, got)
				}
				res.Compared++
				res.Counts["frames"]++
				res.Counts["op_"+f.pkt.BTH.Opcode.String()]++
				if f.pkt.IP.Version == 6 {
					res.Counts["ipv6"]++
				}
				if f.pkt.Eth.VLAN != nil {
					res.Counts["vlan"]++
				}
				if f.bad {
					res.Counts["bad_frames"]++
				}
				got = got[:0]
				outN++
				win.trim(min(outN, payIdx, hdrIdx))
			}
		}

		// Input handshakes.
		if hdrOffered && pt.hdrReady.Get(outb) == 1 {
			hf.hdrAt = now
			res.NoteLatency("accept", int(now-offeredAt))
			if hf.bad {
				wantErrs++
			}
			hdrOffered = false
			hdrIdx++
			res.Packets++
		} else if hdrOffered {
			res.Counts["hdr_waits"]++
		}
		if payOffered && pt.tready.Get(outb) == 1 {
			payOffered = false
			res.Counts["payload_beats"]++
			payOff += B
			if payOff >= len(pf.sent) {
				res.Counts["payload_packets"]++
				payIdx++
				payOff = 0
			}
		}
	}
	res.RTLCycles = cycle
	if opt.Progress != nil {
		opt.Progress(res.Packets, opt.Packets)
	}
	if got := pt.errCount.Get(outb); got != wantErrs {
		return res, &Mismatch{Stream: "counters", Transaction: outN, Cycle: cycle, Input: "err_len_count",
			Diff: cmp.Diff(wantErrs, got)}, nil
	}
	return res, nil, nil
}

// driveBeat offers the bytes of payload from off (at most one beat, len(buf) bytes) on a stream
// input: first byte in lane 0, the kept lanes leading, tlast when they are the payload's last.
func driveBeat(in []uint32, data, keep, last verilator.Field, buf, payload []byte, off int) {
	clear(buf)
	n := copy(buf, payload[off:])
	w := data.View(in)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(buf[4*i:])
	}
	keep.Set(in, keepMask(n))
	last.Set(in, b2u(off+len(buf) >= len(payload)))
}

// takeBeat appends the kept lanes of an output beat (lanes wide) to frame. bad explains a beat
// whose kept lanes do not lead or that is partial without being the last.
func takeBeat(out []uint32, data, keep verilator.Field, last bool, lanes int, frame []byte) (_ []byte, bad string) {
	kv := keep.Get(out)
	n := leadingOnes(kv, lanes)
	frame = appendBeat(frame, data.View(out), kv, lanes)
	if kv != keepMask(n) || (!last && n != lanes) {
		bad = fmt.Sprintf("beat at frame byte %d: tkeep %#x (tlast %v): kept lanes must lead, and only a last beat may be partial",
			len(frame)-n, kv, last)
	}
	return frame, bad
}

// keepMask is the tkeep of a beat whose first n lanes are kept.
func keepMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// leadingOnes counts the kept lanes before the first null lane.
func leadingOnes(keep uint64, lanes int) int {
	n := 0
	for n < lanes && keep>>n&1 == 1 {
		n++
	}
	return n
}

// firstDiff is the first index where a and b differ (-1 when equal).
func firstDiff(a, b []byte) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
