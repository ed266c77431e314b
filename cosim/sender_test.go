package cosim

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	hdlsender "github.com/mrgen/mrgen/hdl/sender"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runSenderTest(t *testing.T, c config.Config, scenario string, seed uint64, n int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunSender(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: n,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

// senderCoverage is what each scenario must exercise (Counts keys of RunSender).
var senderCoverage = map[string][]string{
	"clean":    {"completions", "announces", "data_sent"},
	"ack-rate": {"completions", "data_sent", "cmd_ack"},
	"loss":     {"completions", "retransmissions", "sack_losses", "time_losses"},
	"reorder":  {"sack_losses", "ecn_echoes", "blocked_conn_window"},
	"paced":    {"blocked_rate_cap", "cmd_woke", "ecn_echoes"},
	"random":   {"queue_full", "completions", "retransmissions"},
	"rnr":      {"naks", "messages_failed", "cmd_retry", "rnr_retries", "completions"},
	"wrap":     {"blocked_rate_cap", "cmd_woke", "rnr_retries", "cmd_scan", "completions"},
	"overflow": {"retx_overflows", "moved_overflows", "retry_overflows", "rnr_retries", "retransmissions",
		"moved_sent", "completions", "blocked_records"},
	"failure": {"tail_probes", "timeouts", "paths_suspect", "paths_failed", "paths_probed", "rto_retransmissions",
		"rto_copies", "moved", "moved_sent", "cmd_scan", "completions"},
}

// TestSenderScenarios runs every scenario on the default configuration and on a small 3 x 3
// one with 3 streams and 16-bit PSNs.
func TestSenderScenarios(t *testing.T) {
	odd := config.Default()
	odd.Name, odd.Connections, odd.PathsPerConnection, odd.StreamsPerConnection = "c3-p3-s3", 3, 3, 3
	odd.PSNWidth, odd.SackWidth, odd.Ports = 16, 128, 3
	for _, c := range []config.Config{config.Default(), odd} {
		for _, sc := range SenderScenarios() {
			t.Run(c.Name+"/"+sc, func(t *testing.T) {
				n := 10_000
				if sc == "failure" {
					n = 30_000 // failures take a few RTOs to come, probes a millisecond more
				}
				res := runSenderTest(t, c, sc, 5, n, nil, "")
				requireClean(t, res)
				require.Equal(t, n, res.Compared)
				for _, k := range senderCoverage[sc] {
					require.Positive(t, res.Counts[k], "scenario %s must exercise %s", sc, k)
				}
				t.Logf("%s: %v", sc, res.Counts)
			})
		}
	}
}

// TestSenderCatchesTemplateFaults breaks tx_engine's template in ways a reviewer could miss
// and requires the cosim to report each, with the field that differs.
func TestSenderCatchesTemplateFaults(t *testing.T) {
	faults := []struct {
		name, scenario, from, to, field string
		vcd                             bool
	}{
		{"first-RTT packets without ACK request", "clean",
			"(cs[C_HEARD] ? 8'h00 : 8'h20)", "8'h00", "Flags", true},
		{"stream round robin does not advance", "clean",
			"? {STREAM_WIDTH{1'b0}} : c_stream + {% $SW %}'d1;", "? {STREAM_WIDTH{1'b0}} : c_stream;", "", false},
		{"newly SACKed packets not taken out of flight", "reorder",
			".s_ack_newly_sacked((sk_cnt[31:16] != 16'd0) ? 16'hFFFF : sk_cnt[15:0]),",
			".s_ack_newly_sacked(16'd0),", "", false},
		{"loss by time includes packets in the NIC", "loss",
			"&& !rec_rd[R_INNIC];   // and rq_before_ts", ";   // and rq_before_ts", "", false},
		{"pacing without the catch-up floor", "paced",
			"pc_t_n = (pc_b || pc_gt) ? cs_next_send : pc_t;", "pc_t_n = cs_next_send;", "", false},
		{"pacing rounds down (the numerator without the hint)", "paced",
			"dv_num_n = {dv_num[26:0], 5'd0} + {16'd0, cs[C_HINT +: 16]};",
			"dv_num_n = {dv_num[26:0], 5'd0};", "", false},
		{"completion before the last packet", "clean",
			"if (ring_acked + {% .D.NW %}'d1 == ring_n) begin\n            st_n = S_K2;",
			"if (ring_acked + {% .D.NW %}'d2 >= ring_n) begin\n            st_n = S_K2;", "Done", false},
		{"a fatal NAK queues a retry too", "rnr",
			"if (k_code != NAK_RNR) begin", "if (1'b0) begin", "", false},
		{"retry due ignores the RNR delay's unit", "rnr",
			"k_dly_n = {10'd0, k_rnr} * 26'd1000;", "k_dly_n = {10'd0, k_rnr} * 26'd1024;", "Time", false},
		{"a NAK updates the window as an ACK", "rnr",
			".s_ack_op(k_nak ? 2'd2 : 2'd0),", ".s_ack_op(2'd0),", "", false},
		{"a refused packet waits unqueued (loss recovery resends it early)", "rnr",
			"            rec_wd[R_QUEUED] = 1'b1;\n            rec_wd[R_WAITING] = 1'b1;",
			"            rec_wd[R_WAITING] = 1'b1;", "", false},
		{"a NAK of a packet about to leave queues a retry too", "rnr",
			"end else if (rec_rd[R_QUEUED] || rec_rd[R_INNIC] || rec_rd[R_SACKED]) begin",
			"end else if (1'b0) begin", "", false},
		{"one RNR retry per timer event (a later-due head holds back a due one)", "rnr",
			"        // Back to S_RETRY0, whose rt_rd holds the new head by then.\n        st_n = S_RETRY0;",
			"        st_n = S_RSP;", "", false},
		{"an RNR retry decided on the old head's due time", "rnr",
			"        // Back to S_RETRY0, whose rt_rd holds the new head by then.\n        st_n = S_RETRY0;",
			"        st_n = S_RETRY;", "", false},
		{"the loss-by-time walk queues the PSN it reads next", "loss",
			"retx_wd = {c_conn, c_path, q_psn[SLOT_WIDTH-1:0], rec_q[R_GEN +: 16]};\n        if (lb_go && rq_before_ts) begin",
			"retx_wd = {c_conn, c_path, w_p[SLOT_WIDTH-1:0], rec_q[R_GEN +: 16]};\n        if (lb_go && rq_before_ts) begin", "", false},
		{"the tail probe stops at a packet waiting for its RNR retry", "rnr",
			"if (rd_valid && rd_at_wp && !rec_rd[R_SACKED] && !rec_rd[R_WAITING]) begin",
			"if (rd_valid && rd_at_wp && !rec_rd[R_SACKED]) begin", "", false},
		{"a retry refused by a full retransmit FIFO leaves its packet queued (never resent)", "overflow",
			"        ct_retx_overflows_n = ct_retx_overflows + 32'd1;\n        rec_wd[R_QUEUED] = 1'b0;",
			"        ct_retx_overflows_n = ct_retx_overflows + 32'd1;", "", false},
		{"failed path moves copied packets again", "failure",
			"if (!rec_rd[R_SACKED] && (sc_ev == EV_PROBE || !rec_rd[R_COPIED])) begin",
			"if (!rec_rd[R_SACKED]) begin", "", false},
		{"probe restart without PathInit", "failure",
			"cs_wd[C_NEED_INIT +: PATH_SLOTS] = cs_need_init | c_path_hot;",
			"cs_wd[C_NEED_INIT +: PATH_SLOTS] = cs_need_init;", "", false},
		{"scan idle while a path is not active", "failure",
			"|| cs_pstate != {(2*PATH_SLOTS){1'b0}}) begin", ") begin", "", false},
		{"tail probe without the ACK delay", "clean",
			"tp_a_n = tp_a + ACK_DELAY;", "tp_a_n = tp_a;", "", false},
		{"tail probe timeout without its floor (a step skipped)", "clean",
			"tp_a_n = tp_a + ACK_DELAY;\n        st_n = S_TP4;", "tp_a_n = tp_a + ACK_DELAY;\n        st_n = S_TP5;", "", false},
		{"a completion overwrites one not yet taken", "failure",
			"        if (!dn_valid || m_done_ready) begin\n          dn_valid_n = 1'b1;",
			"        if (1'b1) begin\n          dn_valid_n = 1'b1;", "Done", false},
		{"a full record table does not block its connection", "overflow",
			"pr_full_n = |sh_full[", "pr_full_n = 1'b0 && |sh_full[", "", false},
		{"a record table stays full once it was", "overflow",
			"sh_full[pp_wb_a] <= pp_wb_d[P_LIVE + SLOT_WIDTH];", "sh_full[pp_wb_a] <= sh_full[pp_wb_a] | pp_wb_d[P_LIVE + SLOT_WIDTH];", "", false},
		{"the ACK walk takes a record before its registered read lands", "loss",
			"st_n = S_RDW;   // S_AW1, with the registered read", "st_n = S_AW1;", "", false},
		{"the ACK walk takes its first record before the registered read lands", "clean",
			"st_n = S_RDW;   // S_AW1, with the first record's registered read", "st_n = S_AW1;", "", false},
		{"a completion reads its ring entry before the registered read lands", "clean",
			"st_n = rec_rd[R_NAKKED] ? S_AW0 : S_RDW;   // S_RDW: S_K1's read",
			"st_n = rec_rd[R_NAKKED] ? S_AW0 : S_K1;", "", false},
		{"a SACKed packet's completion reads its ring entry before the registered read lands", "reorder",
			"st_n = rec_q[R_NAKKED] ? k_ret : S_RDW;", "st_n = rec_q[R_NAKKED] ? k_ret : S_K1;", "", false},
		{"the ACK walk's end found one record late", "clean",
			"l_bm1_n = loss_base - {% $P %}'d1;", "l_bm1_n = loss_base;", "", false},
		{"the loss walk's next record not read ahead", "overflow",
			"rec_ra = {c_conn, c_path, w_slot_inc};", "", "", false},
		{"the loss walk skipped as if [una, nxt) were empty", "loss",
			"l_empty_n = (loss_base == loss_nxt);", "l_empty_n = 1'b1;", "", false},
		{"the loss walk after the bitmap reads its first record at the bitmap's PSN", "overflow",
			"          rec_ra = {c_conn, c_path, l_base[SLOT_WIDTH-1:0]};", "", "", false},
		{"an ACK on a failed path still asks sack_tx's verdict", "failure",
			"(st[I_S_A0] && k_ack && k_ok && !c_failed)", "(st[I_S_A0] && k_ack && k_ok)", "", false},
		{"an acknowledged connection not put back in the work list", "random",
			"|| conn_startable) && !cs[C_IN_WORK]) begin", "|| conn_startable) && 1'b0) begin", "", false},
		{"a completion walk reads its stream before the head's write lands", "clean",
			"          st_n = S_RDW;\n          rw_ret_n = S_K3;", "          st_n = S_K3;", "", false},
		{"ring full one entry early", "random",
			"wire sq_ring_full = (sq_tslot == sq_hslot)", "wire sq_ring_full = (sq_tslot_inc == sq_hslot)", "Status", false},
		{"a stream's started count kept at its completed head", "random",
			"          sm_wd[M_NSTART +: M_NSTART_W] = sq_nstart - {% .D.NStartW %}'d1;\n", "", "", false},
		// Registers that replaced a same-cycle compare or table read: each read one cycle
		// stale must be caught.
		{"a lost bit's send-time test on the previous record", "loss",
			"rq_before_ts <= before32(rec_rd[R_SENT_AT +: 32], k_ts);", "rq_before_ts <= before32(rec_q[R_SENT_AT +: 32], k_ts);", "", false},
		{"a stream's startable bit from its entry before the write", "random",
			"st_able[sm_wb_a] <= able(sm_wb_d);", "st_able[sm_wb_a] <= able(sm_q);", "", false},
		{"the bitmap walk skips the SACKed bits", "reorder",
			"w_rem_n = k_sack | loss_bitmap;", "w_rem_n = loss_bitmap;", "", false},
		{"a completion compares the previous ring entry's MSN", "clean",
			"ring_at_qmsn <= (ring_ram[E_MSN +: 32] == rec_q[R_MSN +: 32]);", "ring_at_qmsn <= (ring_rd[E_MSN +: 32] == rec_q[R_MSN +: 32]);", "", false},
		{"pacing's next send without the carry into the high half", "wrap",
			"cs_wd[C_NEXT_SEND +: 64] = {pc_t[63:32] + {31'd0, pc_c}, pc_t[31:0]};", "cs_wd[C_NEXT_SEND +: 64] = pc_t;", "", false},
		{"the pacing floor without the borrow from the low half", "wrap",
			"{pc_b_n, pc_t_n[63:32]} = {1'b0, now[63:32]} - {31'd0, dv_q[31:30]} - {32'd0, pc_c};",
			"{pc_b_n, pc_t_n[63:32]} = {1'b0, now[63:32]} - {31'd0, dv_q[31:30]};", "", false},
		{"the RNR due time without the carry into the high half", "wrap",
			"wire [63:0] nak_due = {nd_lo[32] ? nd_hi1 : nd_hi0, nd_lo[31:0]};", "wire [63:0] nak_due = {nd_hi0, nd_lo[31:0]};", "", false},
		{"the next scan time without the carry into the high half", "wrap",
			"wire [63:0] scan_later = {sl_lo[32] ? sl_hi1 : sl_hi0, sl_lo[31:0]};", "wire [63:0] scan_later = {sl_hi0, sl_lo[31:0]};", "", false},
		{"a packet's local address without the carry into the high half", "wrap",
			"d_addr_n = {da_c ? eq_local_hi1 : ent_q[E_LOCAL + 32 +: 32], da_lo};",
			"d_addr_n = {ent_q[E_LOCAL + 32 +: 32], da_lo};", "", false},
		{"a packet's remote address without the carry into the high half", "wrap",
			"d_va_n = d_write ? {dv_c ? eq_va_hi1 : ent_q[E_VA + 32 +: 32], dv_lo} : 64'd0;",
			"d_va_n = d_write ? {ent_q[E_VA + 32 +: 32], dv_lo} : 64'd0;", "", false},
		{"a failed path's moved packets left in flight", "failure",
			"st[I_S_FLI]: begin\n        cs_we = 1'b1;", "st[I_S_FLI]: begin\n        cs_we = 1'b0;", "", false},
		// (The window's early result read a stage early or late is not a fault here: the engine
		// holds the ACK's inputs on the window's port for the whole ACK, so the stages around
		// the operation compute the same result.)
		{"the window's early RTT estimator never valid", "clean",
			"assign m_rtt_sample_valid = s3_flags[8];", "assign m_rtt_sample_valid = 1'b0;", "", false},
		{"a Ref's generation compared with the previous record", "clean",
			"rd_at_gen <= (rec_ram[R_GEN +: 16] == c_gen);", "rd_at_gen <= (rec_rd[R_GEN +: 16] == c_gen);", "", false},
	}
	var tf []templateFault
	for _, f := range faults {
		module := "tx_engine"
		if strings.HasPrefix(f.from, "assign m_early_") || strings.HasPrefix(f.from, "assign m_rtt_") {
			module = "tx_window_unit"
		}
		tf = append(tf, templateFault{Name: f.name, Module: module, From: f.from, To: f.to, Field: f.field, VCD: f.vcd, Scenario: f.scenario})
	}
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		n := 10_000
		if f.Scenario == "failure" {
			n = 30_000 // failures take a few RTOs to come, probes a millisecond more
		}
		return runSenderTest(t, config.Default(), f.Scenario, 5, n, mutate, vcd)
	})
}

// TestSenderSixtyFourPaths runs the engine at 64 paths per connection (nic-w512-64paths), where
// the window's spraying pick is staged and the timer scan's skip takes a state of its own
// (S_SPK): every scenario that scans, and faults on the skip.
func TestSenderSixtyFourPaths(t *testing.T) {
	c := loadMatrixConfig(t, "matrix/nic-w512-64paths.yaml")
	for _, sc := range []string{"clean", "failure"} {
		t.Run(sc, func(t *testing.T) {
			n := 10_000
			if sc == "failure" {
				n = 20_000
			}
			res := runSenderTest(t, c, sc, 5, n, nil, "")
			requireClean(t, res)
			require.Equal(t, n, res.Compared)
			for _, k := range senderCoverage[sc] {
				require.Positive(t, res.Counts[k], "scenario %s must exercise %s", sc, k)
			}
		})
	}
	faults := []templateFault{
		{Name: "the scan's skip ends the connection's scan", Module: "tx_engine", Scenario: "failure",
			From: "// S_SP0's skip, over its candidates registered (sc_can_q).\n        sc_p_n = sc_next_any ? {1'b0, sc_next} : PATHS;",
			To:   "// S_SP0's skip, over its candidates registered (sc_can_q).\n        sc_p_n = PATHS;"},
		{Name: "the scan's skip passes over its first candidate", Module: "tx_engine", Scenario: "failure",
			From: "sc_can_q <= sc_can;", To: "sc_can_q <= sc_can & (sc_can - {{PATH_SLOTS-1{1'b0}}, 1'b1});"},
	}
	requireFaultsCaught(t, faults, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		return runSenderTest(t, c, f.Scenario, 5, 20_000, mutate, vcd)
	})
}

// TestSenderAckRate requires the engine to keep up with one ACK per packet: on average at most
// hdlsender.AckRateCycles cycles per ACK, at the default configuration and at 64 paths with
// 512-bit ports, with (about) one ACK per packet sent.
func TestSenderAckRate(t *testing.T) {
	for _, c := range []config.Config{config.Default(), loadMatrixConfig(t, "matrix/nic-w512-64paths.yaml")} {
		t.Run(c.Name, func(t *testing.T) {
			res := runSenderTest(t, c, "ack-rate", 7, 20_000, nil, "")
			requireClean(t, res)
			require.Greater(t, 10*res.Counts["cmd_ack"], 9*res.Counts["packets_sent"], "an ACK per packet")
			require.LessOrEqual(t, res.Counts["cycles_per_ack_x100"], 100*hdlsender.AckRateCycles,
				"cycles per ACK (x100), %d ACKs", res.Counts["cmd_ack"])
			t.Logf("%s: %d ACKs, %d packets, %.2f cycles per ACK", c.Name, res.Counts["cmd_ack"],
				res.Counts["packets_sent"], float64(res.Counts["cycles_per_ack_x100"])/100)
		})
	}
}

func TestSenderUnknownScenario(t *testing.T) {
	_, err := RunSender(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown sender scenario")
}
