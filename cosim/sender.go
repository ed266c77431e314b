// The send-engine driver: tx_engine against golden/sender, one command at a time.

package cosim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"math/rand/v2"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/transport"
	"github.com/mrgen/mrgen/golden/wire"
	hdlsender "github.com/mrgen/mrgen/hdl/sender"
	"github.com/mrgen/mrgen/verilator"
)

// SenderScenarios lists the scenario names, sorted.
func SenderScenarios() []string {
	out := make([]string, 0, len(senderScenarios))
	for n := range senderScenarios {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sndPkt is a data-packet descriptor as the comparison sees it.
type sndPkt struct {
	Kind               sender.Kind
	Announce           bool
	Conn, Path, Stream int
	Op                 uint8
	Flags              uint8
	PSN, MSN, MsgLen   uint32
	Offset, RKey       uint32
	VA, Addr           uint64
	Len                uint32
	UDPSrc             uint16
	Port               int
	Slot               int
	Gen                uint16
	ID                 uint64
	Index              uint32
}

// engAnswer is the answer to one call of the sender, as both of the engine's co-simulations
// compare it: golden's from engineAnswer, the RTL's from tx_engine's outputs.
type engAnswer struct {
	Op     string
	Status int
	Time   uint64 // a NAK's RNR retry due time; Arm and Rearm: the scan's time
	Pkt    *sndPkt
	Done   []sender.Done
	Wakes  []uint64
	// The earliest pending timer after the call (golden NextTimer, the engine's m_timer_at
	// when it answers); none for TakeWakes, which the engine does not answer.
	TimerValid bool
	TimerAt    uint64
}

// engCmds maps a sender call to tx_engine's command opcode. The others are not commands: an
// ACK or NAK (the s_ackin port), TakeWakes (the engine answers it on its wake-up output).
var engCmds = map[sender.Op]int{
	sender.OpPost: hdlsender.CmdPost, sender.OpDoorbell: hdlsender.CmdDoorbell,
	sender.OpNext: hdlsender.CmdNext, sender.OpLeft: hdlsender.CmdLeft, sender.OpWoke: hdlsender.CmdWoke,
	sender.OpRetry: hdlsender.CmdRetry, sender.OpArm: hdlsender.CmdArm, sender.OpScan: hdlsender.CmdScan,
	sender.OpRearm: hdlsender.CmdRearm,
}

// engineAnswer is what golden's applied call c answered, in the engine's terms (planes: the
// NIC's ports, for a descriptor's port).
func engineAnswer(c sender.Call, planes int) engAnswer {
	a := engAnswer{Op: c.Op.String()}
	switch c.Op {
	case sender.OpPost:
		if c.Full {
			a.Status = hdlsender.StatusNone
		}
	case sender.OpNext:
		if c.OK {
			a.Pkt = sndPktOf(c.Packet, planes)
		} else {
			a.Status = hdlsender.StatusNone
		}
	case sender.OpAck:
		a.Done = c.Done
	case sender.OpNak, sender.OpArm, sender.OpRearm:
		if c.OK {
			a.Time = c.At
		} else {
			a.Status = hdlsender.StatusNone
		}
	case sender.OpTakeWakes:
		a.Wakes = c.Wakes
	}
	if c.Err != "" {
		a.Status, a.Time = hdlsender.StatusError, 0
	}
	if c.Op != sender.OpTakeWakes && c.TimerOK {
		a.TimerValid, a.TimerAt = true, c.Timer
	}
	return a.tidy()
}

// rtlTime is the time an answer of the engine carries: only a NAK's, an Arm's or a Rearm's
// with status ok.
func rtlTime(op sender.Op, status int, t uint64) uint64 {
	if status == hdlsender.StatusOK && (op == sender.OpNak || op == sender.OpArm || op == sender.OpRearm) {
		return t
	}
	return 0
}

// tidy makes empty completion and wake-up lists nil, so that answers compare equal.
func (a engAnswer) tidy() engAnswer {
	if len(a.Done) == 0 {
		a.Done = nil
	}
	if len(a.Wakes) == 0 {
		a.Wakes = nil
	}
	return a
}

func sndPktOf(pk sender.Packet, planes int) *sndPkt {
	return &sndPkt{Kind: pk.Kind, Announce: pk.Announce, Conn: pk.Conn, Path: pk.Path, Stream: pk.Stream, Op: uint8(pk.Op),
		Flags: uint8(pk.Flags), PSN: pk.PSN, MSN: pk.MSN, MsgLen: pk.MsgLen, Offset: pk.Offset, RKey: pk.RKey, VA: pk.VA,
		Addr: pk.Local, Len: pk.Len, UDPSrc: pk.Entropy, Port: transport.PortOf(pk.Path, planes), Slot: pk.Ref.Slot, Gen: pk.Ref.Gen,
		ID: pk.ID, Index: pk.Index}
}

type sndPorts struct {
	rst, now                                                       verilator.Field
	cValid, cReady, cOp, cConn, cStream, cWrOp, cLen, cLocal, cVA  verilator.Field
	cRKey, cID, cPath, cSlot, cGen, cTime                          verilator.Field
	aValid, aReady, aOpcode, aConn, aPath, aPSN, aTS, aECN, aHint  verilator.Field
	aSack                                                          verilator.Field
	rValid, rReady, rOp, rStatus                                   verilator.Field
	dConn, dOpcode, dFlags, dPath, dStream, dPSN, dMSN, dMsgLen    verilator.Field
	dRKey, dVA, dOffset, dAddr, dLen, dUDP, dPort, dSlot, dGen     verilator.Field
	dKind, dAnn, dID, dIndex                                       verilator.Field
	nValid, nReady, nConn, nStream, nMSN, nID, wValid, wReady, wAt verilator.Field
	aCode, aRNR, rTime, tValid, tAt                                verilator.Field
	busy                                                           verilator.Field
	cnt                                                            []verilator.Field
}

// bindSenderPorts binds tx_engine's ports on its own.
func bindSenderPorts(lay *verilator.Layout, u *hdlsender.Unit) (*sndPorts, error) {
	return bindEngine(lay, u, func(name string) string { return name }, true)
}

// bindEngine binds tx_engine's ports by the names top gives them (the identity on the engine's
// own model; nic_top's names in the closed loop), with its ACK input when ackin (inside
// nic_top, nic_rx drives it).
func bindEngine(lay *verilator.Layout, u *hdlsender.Unit, top func(string) string, ackin bool) (*sndPorts, error) {
	var p sndPorts
	b := portBinder{lay: lay}
	in := func(name string) verilator.Field { return b.in(top(name)) }
	out := func(name string) verilator.Field { return b.out(top(name)) }
	p.rst, p.now = in(u.Reset.Port), in("now")
	p.cValid, p.cReady, p.cOp, p.cConn, p.cStream = in("s_cmd_valid"), out("s_cmd_ready"), in("s_cmd_op"), in("s_cmd_conn"), in("s_cmd_stream")
	p.cWrOp, p.cLen, p.cLocal, p.cVA, p.cRKey = in("s_cmd_wr_op"), in("s_cmd_len"), in("s_cmd_local"), in("s_cmd_va"), in("s_cmd_rkey")
	p.cID, p.cPath, p.cSlot, p.cGen, p.cTime = in("s_cmd_id"), in("s_cmd_path"), in("s_cmd_slot"), in("s_cmd_gen"), in("s_cmd_time")
	if ackin {
		p.aValid, p.aReady, p.aOpcode, p.aConn, p.aPath = in("s_ackin_valid"), out("s_ackin_ready"), in("s_ackin_opcode"), in("s_ackin_conn"), in("s_ackin_path")
		p.aPSN, p.aTS, p.aECN, p.aHint, p.aSack = in("s_ackin_psn"), in("s_ackin_ts_echo"), in("s_ackin_ecn_echo"), in("s_ackin_rate_hint"), in("s_ackin_sack")
		p.aCode, p.aRNR = in("s_ackin_nak_code"), in("s_ackin_rnr_delay")
	}
	p.rValid, p.rReady, p.rOp, p.rStatus = out("m_rsp_valid"), in("m_rsp_ready"), out("m_rsp_op"), out("m_rsp_status")
	p.dConn, p.dOpcode, p.dFlags, p.dPath, p.dStream = out("m_rsp_conn"), out("m_rsp_opcode"), out("m_rsp_flags"), out("m_rsp_path"), out("m_rsp_stream")
	p.dPSN, p.dMSN, p.dMsgLen, p.dRKey, p.dVA = out("m_rsp_psn"), out("m_rsp_msn"), out("m_rsp_msg_len"), out("m_rsp_rkey"), out("m_rsp_va")
	p.dOffset, p.dAddr, p.dLen, p.dUDP, p.dPort = out("m_rsp_offset"), out("m_rsp_addr"), out("m_rsp_len"), out("m_rsp_udp_src"), out("m_rsp_port")
	p.dSlot, p.dGen, p.dKind, p.dAnn, p.dID, p.dIndex = out("m_rsp_slot"), out("m_rsp_gen"), out("m_rsp_kind"), out("m_rsp_announce"), out("m_rsp_id"), out("m_rsp_index")
	p.nValid, p.nReady, p.nConn, p.nStream, p.nMSN, p.nID = out("m_done_valid"), in("m_done_ready"), out("m_done_conn"), out("m_done_stream"), out("m_done_msn"), out("m_done_id")
	p.wValid, p.wReady, p.wAt, p.busy = out("m_wake_valid"), in("m_wake_ready"), out("m_wake_at"), out("busy")
	p.rTime = out("m_rsp_time")
	p.tValid, p.tAt = out("m_timer_valid"), out("m_timer_at")
	for _, c := range u.Counters {
		p.cnt = append(p.cnt, out("cnt_"+c.Name))
	}
	return &p, b.err
}

// offer sets command op on s_cmd: conn (Doorbell), t (Woke), the work request (PostWork), the
// record reference (Left).
func (pt *sndPorts) offer(in []uint32, op, conn int, t uint64, wr sender.WorkRequest, ref sender.Ref) {
	pt.cValid.Set(in, 1)
	pt.cOp.Set(in, uint64(op))
	pt.cConn.Set(in, uint64(conn))
	pt.cTime.Set(in, t)
	switch op {
	case hdlsender.CmdPost:
		pt.cConn.Set(in, uint64(wr.Conn))
		pt.cStream.Set(in, uint64(wr.Stream))
		pt.cWrOp.Set(in, uint64(wr.Op))
		pt.cLen.Set(in, uint64(wr.Len))
		pt.cLocal.Set(in, wr.Local)
		pt.cVA.Set(in, wr.RemoteVA)
		pt.cRKey.Set(in, uint64(wr.RKey))
		pt.cID.Set(in, wr.ID)
	case hdlsender.CmdLeft:
		pt.cConn.Set(in, uint64(ref.Conn))
		pt.cPath.Set(in, uint64(ref.Path))
		pt.cSlot.Set(in, uint64(ref.Slot))
		pt.cGen.Set(in, uint64(ref.Gen))
	}
}

// timer is the engine's timer output (m_timer_valid, m_timer_at; the time 0 when not valid).
func (pt *sndPorts) timer(o []uint32) (bool, uint64) {
	if pt.tValid.Get(o) == 0 {
		return false, 0
	}
	return true, pt.tAt.Get(o)
}

func (pt *sndPorts) pkt(o []uint32) *sndPkt {
	return &sndPkt{Kind: sender.Kind(pt.dKind.Get(o)), Announce: pt.dAnn.Get(o) == 1, Conn: int(pt.dConn.Get(o)),
		Path: int(pt.dPath.Get(o)), Stream: int(pt.dStream.Get(o)), Op: uint8(pt.dOpcode.Get(o)), Flags: uint8(pt.dFlags.Get(o)),
		PSN: uint32(pt.dPSN.Get(o)), MSN: uint32(pt.dMSN.Get(o)), MsgLen: uint32(pt.dMsgLen.Get(o)), Offset: uint32(pt.dOffset.Get(o)),
		RKey: uint32(pt.dRKey.Get(o)), VA: pt.dVA.Get(o), Addr: pt.dAddr.Get(o), Len: uint32(pt.dLen.Get(o)),
		UDPSrc: uint16(pt.dUDP.Get(o)), Port: int(pt.dPort.Get(o)), Slot: int(pt.dSlot.Get(o)), Gen: uint16(pt.dGen.Get(o)),
		ID: pt.dID.Get(o), Index: uint32(pt.dIndex.Get(o))}
}

// BuildSenderModel generates tx_engine for opt.Config and builds (or reuses) its model.
func BuildSenderModel(ctx context.Context, opt Options, trace bool) (*verilator.Library, *hdlsender.Unit, error) {
	return buildUnit(ctx, opt, hdlsender.New, (*hdlsender.Unit).Module, trace)
}

// RunSender co-simulates tx_engine against golden/sender. Packets counts commands (posts,
// doorbells, Next pulls, Lefts, wake-ups and ACKs); Counts holds golden's counters at the end,
// the packets sent, the completions and the cycles per command by kind (docs/sender.md).
func RunSender(ctx context.Context, opt Options) (*Result, error) {
	k, ok := senderScenarios[opt.Scenario]
	if !ok {
		return nil, fmt.Errorf("unknown sender scenario %q; scenarios: %s", opt.Scenario, strings.Join(SenderScenarios(), ", "))
	}
	if k.Sender != (config.Sender{}) {
		// The scenario's FIFO depths: golden and the engine are built from one configuration.
		opt.Config.Sender = k.Sender
		if opt.Stamp.ConfigHash != "" {
			opt.Stamp.ConfigHash = opt.Config.Hash()
		}
	}
	return runUnit(opt, func(trace bool) (*verilator.Library, *hdlsender.Unit, error) {
		return BuildSenderModel(ctx, opt, trace)
	}, func(lib *verilator.Library, u *hdlsender.Unit, traceAt int64) (*Result, *Mismatch, error) {
		return runSender(ctx, lib, u, k, opt, traceAt)
	})
}

// maxSenderCycles bounds one command: walks over a record table and a bitmap, the work list,
// the streams of a connection, the divider.
func maxSenderCycles(u *hdlsender.Unit) int {
	return 1000 + 8*(u.R+u.W+u.MP+u.C*(u.S+8)) + 4*u.RetxD
}

func runSender(ctx context.Context, lib *verilator.Library, u *hdlsender.Unit, k senderKnobs, opt Options, traceAt int64) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindSenderPorts(lay, u)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: tx_engine ports: %w", err)
	}
	in := make([]uint32, lay.InWords())
	outb := make([]uint32, lay.OutWords())
	gold, err := sender.New(u.P)
	if err != nil {
		return nil, nil, err
	}
	tr := newSenderTraffic(k, u.P, opt.Seed)
	res := &Result{Block: "sender", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: opt.Config.Hash(),
		Drops: map[string]int{}, Counts: map[string]int{},
		DeclaredLatency: map[string]int{}, MinLatency: map[string]int{}, MaxLatency: map[string]int{}}
	var cycle uint64
	watch := cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	var got engAnswer
	// Output backpressure: each of the answer, completion and wake-up outputs is ready in a
	// cycle with probability OutReady (always when 0); outputs are as just before the edge, so
	// valid and ready in one Step is a transfer.
	orng := rand.New(rand.NewPCG(opt.Seed, 0x0ead))
	ready := func() uint64 { return b2u(k.OutReady == 0 || orng.Float64() < k.OutReady) }
	step := func() error {
		if over, err := watch.at(cycle, res.Packets); err != nil {
			return err
		} else if over {
			return errTraceDone
		}
		pt.rReady.Set(in, ready())
		pt.nReady.Set(in, ready())
		pt.wReady.Set(in, ready())
		if err := m.Step(in, outb); err != nil {
			return err
		}
		cycle++
		if pt.nValid.Get(outb) == 1 && pt.nReady.Get(in) == 1 {
			got.Done = append(got.Done, sender.Done{Conn: int(pt.nConn.Get(outb)), Stream: int(pt.nStream.Get(outb)),
				MSN: uint32(pt.nMSN.Get(outb)), ID: pt.nID.Get(outb)})
		}
		if pt.wValid.Get(outb) == 1 && pt.wReady.Get(in) == 1 {
			got.Wakes = append(got.Wakes, pt.wAt.Get(outb))
		}
		return nil
	}
	pt.rReady.Set(in, 1)
	pt.nReady.Set(in, 1)
	pt.wReady.Set(in, 1)
	pt.rst.Set(in, b2u(!u.Reset.AsyncLow))
	for i := 0; i < 3; i++ {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	pt.rst.Set(in, b2u(u.Reset.AsyncLow))
	for i := 0; ; i++ {
		if err := step(); err != nil {
			return nil, nil, err
		}
		if pt.busy.Get(outb) == 0 {
			break
		}
		if i > 1<<22 {
			return nil, nil, fmt.Errorf("cosim: tx_engine stayed busy after reset")
		}
	}
	limit := maxSenderCycles(u)
	cycles := map[string]int{}
	counts := map[string]int{}
	sent, done := 0, 0
	for res.Packets < opt.Packets {
		call := tr.next()
		// Golden.
		call.Apply(gold)
		tr.applied(call)
		want := engineAnswer(call, u.Planes)
		if call.OK && call.Op == sender.OpNext {
			sent++
		}
		want.Wakes = gold.TakeWakes()
		want = want.tidy()
		tr.wakes = append(tr.wakes, want.Wakes...)
		done += len(want.Done)
		// RTL.
		got = engAnswer{Op: want.Op}
		pt.now.Set(in, call.Now)
		switch call.Op {
		case sender.OpAck:
			a := call.Ack
			pt.aValid.Set(in, 1)
			pt.aOpcode.Set(in, uint64(wire.OpAck))
			pt.aConn.Set(in, uint64(a.Conn))
			pt.aPath.Set(in, uint64(a.Path))
			pt.aPSN.Set(in, uint64(a.Cum))
			pt.aTS.Set(in, uint64(a.TSEcho))
			pt.aECN.Set(in, uint64(a.ECN))
			pt.aHint.Set(in, uint64(a.Hint))
			pt.aSack.SetWords(in, a.Bitmap.Words32())
		case sender.OpNak:
			n := call.Nak
			pt.aValid.Set(in, 1)
			pt.aOpcode.Set(in, uint64(wire.OpNak))
			pt.aConn.Set(in, uint64(n.Conn))
			pt.aPath.Set(in, uint64(n.Path))
			pt.aPSN.Set(in, uint64(n.PSN))
			pt.aCode.Set(in, uint64(n.Code))
			pt.aRNR.Set(in, uint64(n.RNRDelay))
		default:
			pt.offer(in, engCmds[call.Op], call.Conn, call.Time, call.Work, call.Ref)
		}
		mismatch := func(diff string) *Mismatch {
			return &Mismatch{Stream: "rsp", Transaction: res.Packets, Cycle: cycle - 1, Input: call.String(), Diff: diff}
		}
		start := cycle
		var status int
		for n := 0; ; n++ {
			if n > limit {
				return res, mismatch(fmt.Sprintf("RTL did not answer in %d cycles", limit)), nil
			}
			if err := step(); errors.Is(err, errTraceDone) {
				return res, nil, nil
			} else if err != nil {
				return nil, nil, err
			}
			if pt.cValid.Get(in) == 1 && pt.cReady.Get(outb) == 1 {
				pt.cValid.Set(in, 0)
			}
			if pt.aValid.Get(in) == 1 && pt.aReady.Get(outb) == 1 {
				pt.aValid.Set(in, 0)
			}
			if pt.rValid.Get(outb) == 1 && pt.rReady.Get(in) == 1 {
				status = int(pt.rStatus.Get(outb))
				got.Time = rtlTime(call.Op, status, pt.rTime.Get(outb))
				if call.Op == sender.OpNext && status == hdlsender.StatusOK {
					got.Pkt = pt.pkt(outb)
				}
				break
			}
		}
		// A completion or wake-up still waiting to be taken belongs to this command.
		for n := 0; pt.nValid.Get(outb) == 1 && !(pt.nReady.Get(in) == 1) || pt.wValid.Get(outb) == 1 && !(pt.wReady.Get(in) == 1); n++ {
			if n > limit {
				return res, mismatch("a completion or wake-up was never taken"), nil
			}
			if err := step(); errors.Is(err, errTraceDone) {
				return res, nil, nil
			} else if err != nil {
				return nil, nil, err
			}
		}
		got.Status = status
		got.TimerValid, got.TimerAt = pt.timer(outb)
		got = got.tidy()
		if !cmp.Equal(want, got) {
			return res, mismatch(cmp.Diff(want, got)), nil
		}
		name := want.Op
		cycles[name] += int(cycle - start)
		counts[name]++
		res.Packets++
		res.Compared++
	}
	gc := hdlsender.CounterValues(gold.Counters)
	for i, c := range u.Counters {
		if got := pt.cnt[i].Get(outb); got != gc[i]&0xffffffff {
			return res, &Mismatch{Stream: "counters", Cycle: cycle, Input: "end of run",
				Diff: fmt.Sprintf("cnt_%s: golden %d, rtl %d", c.Name, gc[i], got)}, nil
		}
		res.Counts[c.Name] = int(gc[i])
	}
	for name, n := range counts {
		res.Counts["cmd_"+name] = n
		res.Counts["cycles_per_"+name+"_x100"] = cycles[name] * 100 / n
	}
	res.Counts["packets_sent"] = sent
	res.Counts["completions"] = done
	res.RTLCycles = cycle
	return res, nil, nil
}
