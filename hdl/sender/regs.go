package sender

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl/deparser"
	"github.com/mrgen/mrgen/hdl/window"
)

// Reg is one scalar register of the engine: declared with a _n twin, copied every clock, and
// reset to Init when Reset (control and valid state, and the answer's fields on m_rsp).
type Reg struct {
	Name  string
	Width int
	Reset bool
	Init  string
}

// Decl is the register's range for its declaration ("" for one bit).
func (r Reg) Decl() string {
	if r.Width == 1 {
		return ""
	}
	return fmt.Sprintf("[%d:0] ", r.Width-1)
}

// States are the state machine's states, in encoding order (docs/sender.md).
func (u *Unit) States() []string {
	s := []string{"S_CLEAR", "S_IDLE", "S_RSP", "S_RDW", "S_POST", "S_POST_N", "S_POST_W", "S_BELL", "S_ADDW",
		"S_LEFT", "S_LEFT2", "S_WOKE", "S_N0", "S_N1", "S_N2", "S_N3", "S_PR0", "S_PR1", "S_PR2", "S_PR3",
		"S_PR4", "S_WAKE", "S_PR_SD", "S_PR5", "S_SN0", "S_NN0", "S_NNC", "S_NN1", "S_SN_REC", "S_SN_REC2",
		"S_SN_SENT", "S_SN_MSG", "S_DESC", "S_PG0", "S_PG1", "S_PG2", "S_DIV", "S_PACE", "S_PACE1", "S_PACE2", "S_PACE3", "S_PACE4", "S_PACE5", "S_A0", "S_A1", "S_A2", "S_AW0", "S_AW1",
		"S_AS0", "S_AS1", "S_AS2", "S_LB0", "S_LB1", "S_LB2", "S_AU0", "S_AU1", "S_AFIN", "S_K0", "S_K1", "S_K2", "S_K3", "S_K4",
		"S_NK1", "S_NK2", "S_RETRY0", "S_RETRY", "S_RETRY2", "S_ARM", "S_REARM", "S_SCAN", "S_SCC", "S_SP0", "S_SP1",
		"S_OW0", "S_OW1", "S_TP1", "S_TP2", "S_TP3", "S_TP4", "S_TP5", "S_TP6", "S_EX0", "S_EX1", "S_RT1", "S_CP0", "S_CP1", "S_MV0", "S_MV1", "S_PI0", "S_SPN", "S_FLI"}
	if u.ScanStage() {
		s = append(s, "S_SPK")
	}
	return s
}

// ScanStage says whether the timer scan's skip to the next path it can act on takes a cycle of
// its own (S_SPK, over the candidates registered in S_SP0): where a connection has at least
// window.PickStageMinSlots path slots, whose search does not fit S_SP0's cycle with the
// candidates' selection before it.
func (u *Unit) ScanStage() bool { return u.SlotsP() >= window.PickStageMinSlots }

// NWaitW is the width of a stream's count of posted messages not started (tail - start, at
// most the work ring's depth), NStartW of its started ones not completed (start - head, at most
// the posted receives D): the small counters its startable bit is computed from.
func (u *Unit) NWaitW() int { return clog2(u.WD + 1) }

// NStartW: see NWaitW.
func (u *Unit) NStartW() int { return clog2(u.D + 1) }

// StateW is the width of the state register (and of the return-state registers): one bit per
// state, one-hot, so that no state decode stands between a register and the logic it steers.
func (u *Unit) StateW() int { return len(u.States()) }

// Regs are the engine's scalar registers.
func (u *Unit) Regs() []Reg {
	ctl := func(name string, w int, init string) Reg { return Reg{Name: name, Width: w, Reset: true, Init: init} }
	zero := func(name string, w int) Reg { return ctl(name, w, fmt.Sprintf("%d'd0", w)) }
	data := func(name string, w int) Reg { return Reg{Name: name, Width: w} }
	cw, aw, sw, pw := u.CW, u.AW, u.SW, u.PW
	rs := []Reg{
		ctl("st", u.StateW(), "S_CLEAR"), zero("clr_idx", u.ClearW), data("aw_ret", u.StateW()), data("k_ret", u.StateW()), data("rw_ret", u.StateW()),
		data("c_op", 4), data("c_conn", cw), data("c_stream", sw), data("c_path", aw), data("c_gen", 16),
		data("c_wrop", wire.OpcodeBits), data("c_len", 32), data("c_local", 64), data("c_va", 64),
		data("c_rkey", 32), data("c_id", 64), data("c_time", 64), data("tries", cw+1), data("pr_paced", 1),
		data("pr_wake_le", 1), data("pr_leave", 1), data("pr_gate", 1), data("pr_full", 1), data("nn_start", 1),
		data("k_ok", 1), data("k_ack", 1), data("k_nak", 1), data("k_code", 8), data("k_rnr", 16), data("k_cum", pw), data("k_sack", u.W), data("k_ecn", 16),
		data("k_ts", 32), data("k_hint", 16), data("k_dly", 26), data("psn_q", pw),
		data("l_base", pw), data("l_nxt", pw), data("l_empty", 1), data("l_bm1", pw),
		data("w_p", pw), data("w_i", u.IW), data("w_rem", u.W), data("w_hit", 1), data("w_sack", 1), data("cum_adv", 32), data("sk_cnt", 32),
		data("rec_q", u.RecW), data("ent_q", u.EntW), data("mv_q", u.SW+32+u.WSW+u.IXW),
		data("ring_a", u.CW+u.SW+u.WSW), data("pn", u.NW), data("prem", 34),
		zero("wl_head", cw), zero("wl_tail", cw), zero("wl_cur", cw), zero("wl_prev", cw),
		ctl("wl_prev_none", 1, "1'b1"), ctl("wl_at_end", 1, "1'b1"), zero("wl_len", cw+1),
		data("sd_path", aw), data("sd_psn", pw), data("nn_k", sw+1), data("wk_t", 64),
		zero("wake_at", 64), zero("wk_valid", 1), data("wk_at", 64),
		zero("dn_valid", 1), data("dn_conn", cw), data("dn_stream", sw), data("dn_msn", 32), data("dn_id", 64),
		// The answer's fields are reset too: an answer before the first descriptor carries the
		// descriptor fields it does not use, and a 4-state simulation (the handoff's replays)
		// must not see them unknown.
		zero("rsp_valid", 1), zero("rsp_op", 4), zero("rsp_status", 2), zero("rsp_time", 64),
		zero("d_conn", cw), zero("d_opcode", 8), zero("d_flags", 8), zero("d_path", aw), zero("d_stream", 8),
		zero("d_psn", pw), zero("d_msn", 32), zero("d_msg_len", 32), zero("d_rkey", 32), zero("d_va", 64),
		zero("d_offset", 32), zero("d_addr", 64), zero("d_len", deparser.PayloadLenBits), zero("d_udp_src", 16),
		zero("d_port", PortW), zero("d_slot", u.RW), zero("d_gen", 16), zero("d_kind", 2),
		zero("d_announce", 1), zero("d_id", 64), zero("d_index", u.IXW),
		data("dv_num", 32), data("dv_den", 24), data("dv_rem", 32), data("dv_q", 32), data("dv_cnt", 6),
		data("pc_t", 64), data("pc_b", 1), data("pc_c", 1), data("pc_gt", 1), data("sd_ent", 16), data("rt_go", 1), data("lb_go", 1), data("d_off_q", 32),
		zero("retx_head", u.RetxW), zero("retx_tail", u.RetxW), zero("retx_count", u.RetxW+1),
		zero("scan_on", 1), data("scan_at", 64), zero("scan_busy", 1), data("sc_c", cw+1), data("sc_p", aw+1),
		data("sc_ev", 3), data("sc_found", 1), data("moved_any", 1), data("ow_ret", u.StateW()),
		data("tp_a", 32), data("tp_v", 1),
		zero("retry_head", u.RetryW), zero("retry_tail", u.RetryW), zero("retry_count", u.RetryW+1),
		zero("retry_seen", 2),
	}
	for _, c := range u.Counters {
		rs = append(rs, zero("ct_"+c.Name, 32))
	}
	return rs
}

// Zext renders expr (from bits) zero-extended to to bits.
// (Widths may come as int or, from template arithmetic, int64.)
func (u *Unit) Zext(expr string, from, to any) string {
	f, t := toInt(from), toInt(to)
	if t <= f {
		return expr
	}
	return fmt.Sprintf("{%d'd0, %s}", t-f, expr)
}

func toInt(x any) int {
	switch v := x.(type) {
	case int:
		return v
	case int64:
		return int(v)
	}
	return 0
}

// Template helpers.

// SlotsS is the padded number of streams per connection, 2^SW.
func (u *Unit) SlotsS() int { return 1 << u.SW }

// SlotsP is the padded number of paths per connection, 2^AW.
func (u *Unit) SlotsP() int { return 1 << u.AW }

// RecAW1 is the record RAM's highest address bit.
func (u *Unit) RecAW1() int { return u.CW + u.AW + u.RW - 1 }

// SAW1 is the stream table's highest address bit.
func (u *Unit) SAW1() int { return u.CW + u.SW - 1 }

// PAW1 is the path table's highest address bit.
func (u *Unit) PAW1() int { return u.CW + u.AW - 1 }

// PortW is the egress port width, for templates.
func (u *Unit) PortW() int { return PortW }

// Command codes, for templates.
func (u *Unit) CmdPost() int     { return CmdPost }
func (u *Unit) CmdDoorbell() int { return CmdDoorbell }
func (u *Unit) CmdNext() int     { return CmdNext }
func (u *Unit) CmdLeft() int     { return CmdLeft }
func (u *Unit) CmdWoke() int     { return CmdWoke }
func (u *Unit) CmdRetry() int    { return CmdRetry }
func (u *Unit) CmdArm() int      { return CmdArm }
func (u *Unit) CmdScan() int     { return CmdScan }
func (u *Unit) CmdRearm() int    { return CmdRearm }

// RspAckPort is the answer's op for the ACK port, for templates.
func (u *Unit) RspAckPort() int { return RspAckPort }

// NakRNR is the receiver-not-ready NAK code, for templates.
func (u *Unit) NakRNR() int { return int(wire.NakReceiverNotReady) }
