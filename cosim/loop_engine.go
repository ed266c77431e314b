// The closed loop's send engine: host 0's golden sender is observed (transport.ObserveSender)
// and every call it makes is replayed to tx_engine inside nic_top, in order, at its time; each
// answer is compared, and the engine's descriptors are what nic_tx builds frames from.

package cosim

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sender"
	hdlsender "github.com/mrgen/mrgen/hdl/sender"
	"github.com/mrgen/mrgen/pipeline"
	"github.com/mrgen/mrgen/verilator"
)

// bindEnginePorts binds tx_engine's ports as nic_top names them (pipeline.NIC: busy and
// counters prefixed eng_, pacing wake-ups m_pace_*; the clock, reset and now shared; s_ackin
// inside the top).
func bindEnginePorts(lay *verilator.Layout, u *hdlsender.Unit, nic *pipeline.NIC) (*sndPorts, error) {
	return bindEngine(lay, u, func(name string) string { return nic.TopName("eng", name) }, false)
}

// observe queues host 0's sender calls for replay, and replays them at the same fabric time
// once golden's event is over (an entry point of the harness may replay them earlier).
func (h *loopHarness) observe(now fabric.Time, c sender.Call) {
	h.sendSide(c)
	h.calls = append(h.calls, c)
	if !h.drainAt {
		h.drainAt = true
		h.sim.At(now, func() {
			h.drainAt = false
			h.drain()
		})
	}
}

// drain replays every queued call to the engine, in order.
func (h *loopHarness) drain() {
	for len(h.calls) > 0 && h.mm == nil && h.err == nil && !h.watchOver && !h.inGold {
		c := h.calls[0]
		h.calls = h.calls[1:]
		h.replay(c)
	}
}

// replay gives the engine call c at its time and compares the answer.
func (h *loopHarness) replay(c sender.Call) {
	want := engineAnswer(c, h.eu.Planes)
	what := fmt.Sprintf("%v at %d ns", c.Op, c.Now)
	h.eng.push(&h.eng.gold, pairItem{at: int64(c.Now), what: what, key: want})
	got := engAnswer{Op: want.Op}
	switch c.Op {
	case sender.OpAck, sender.OpNak:
		// The engine took the ACK or NAK from nic_rx when its frame went in.
		if len(h.ackRsp) == 0 {
			h.mismatch("send engine", h.eng.n, what, "golden's sender took an ACK or NAK that the RTL's engine did not answer")
			return
		}
		r := h.ackRsp[0]
		h.ackRsp = h.ackRsp[1:]
		got.Status, got.Done, got.TimerValid, got.TimerAt = r.Status, h.rtlDone, r.TimerValid, r.TimerAt
		if c.Op == sender.OpNak && r.Status == hdlsender.StatusOK {
			got.Time = r.Time
		}
		h.rtlDone = nil
	case sender.OpTakeWakes:
		got.Wakes, h.rtlWakes = h.rtlWakes, nil
	default:
		h.cmd, h.cmdRsp = &c, nil
		start := h.cycle
		h.run(fabric.Time(c.Now) * fabric.Nanosecond)
		h.res.Counts["engine_cycles_"+want.Op] += int(h.cycle - start)
		if h.mm != nil || h.err != nil || h.watchOver {
			return
		}
		if h.cmdRsp == nil {
			h.mismatch("send engine", h.eng.n, what, "the RTL's engine did not answer")
			return
		}
		got.Status, got.Time, got.Pkt = h.cmdRsp.Status, rtlTime(c.Op, h.cmdRsp.Status, h.cmdRsp.Time), h.cmdRsp.Pkt
		got.TimerValid, got.TimerAt = h.cmdRsp.TimerValid, h.cmdRsp.TimerAt
		if got.Pkt != nil {
			// The engine's descriptor waits for its port, as golden's packet waits in its queue.
			if got.Pkt.Announce {
				h.rtlAnn[got.Pkt.Port] = append(h.rtlAnn[got.Pkt.Port], got.Pkt)
			}
			h.rtlPend[got.Pkt.Port] = append(h.rtlPend[got.Pkt.Port], got.Pkt)
		}
	}
	h.eng.push(&h.eng.rtl, pairItem{at: int64(c.Now), key: got.tidy()})
	h.res.Counts["engine_"+want.Op]++
}

// driveEngine offers the pending command.
func (h *loopHarness) driveEngine(in []uint32) {
	ep := h.ep
	ep.rReady.Set(in, 1)
	ep.nReady.Set(in, 1)
	ep.wReady.Set(in, 1)
	if h.cmd == nil || h.cmdTaken {
		ep.cValid.Set(in, 0)
		return
	}
	c := h.cmd
	ep.offer(in, engCmds[c.Op], c.Conn, c.Time, c.Work, c.Ref)
}

// takeEngine takes the engine's handshakes of the cycle just run.
func (h *loopHarness) takeEngine(in, out []uint32) {
	ep := h.ep
	if ep.cValid.Get(in) == 1 && ep.cReady.Get(out) == 1 {
		h.cmdTaken = true
	}
	if ep.nValid.Get(out) == 1 {
		h.rtlDone = append(h.rtlDone, sender.Done{Conn: int(ep.nConn.Get(out)), Stream: int(ep.nStream.Get(out)),
			MSN: uint32(ep.nMSN.Get(out)), ID: ep.nID.Get(out)})
	}
	if ep.wValid.Get(out) == 1 {
		h.rtlWakes = append(h.rtlWakes, ep.wAt.Get(out))
	}
	if ep.rValid.Get(out) == 1 {
		// The timer output as the engine answers: golden's NextTimer after the call.
		r := &engAnswer{Status: int(ep.rStatus.Get(out)), Time: ep.rTime.Get(out)}
		r.TimerValid, r.TimerAt = ep.timer(out)
		if int(ep.rOp.Get(out)) == hdlsender.RspAckPort {
			h.ackRsp = append(h.ackRsp, *r)
			return
		}
		if h.cmd == nil || !h.cmdTaken {
			h.mismatch("send engine", h.eng.n, "", "the RTL's engine answered a command it was not given")
			return
		}
		if engCmds[h.cmd.Op] == hdlsender.CmdNext && r.Status == hdlsender.StatusOK {
			r.Pkt = ep.pkt(out)
		}
		h.cmdRsp, h.cmd, h.cmdTaken = r, nil, false
	}
}
