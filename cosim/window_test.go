package cosim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	hdlwindow "github.com/mrgen/mrgen/hdl/window"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runWindowTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunWindow(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

func loadMatrixConfig(t *testing.T, name string) config.Config {
	t.Helper()
	c, err := config.Load(filepath.Join("..", "configs", name))
	require.NoError(t, err)
	return c
}

// windowCoverage is what each directed scenario must exercise (Counts and Drops keys of
// RunWindow), so a scenario that silently stops reaching its transitions fails.
var windowCoverage = map[string][]string{
	"random": {"path_increase", "path_decrease", "conn_increase", "conn_decrease", "ecn_same_epoch",
		"rtt_sample_discarded", "acked_clamped", "rate_hint", "set_psn", "timer_timeout", "timer_suspect",
		"reactivated", "urgent_scans", "send_ok", "send_conn_window", "send_rate_cap", "min_rtt_first",
		"min_rtt_lowered", "naks"},
	"back-to-back": {"send_ok", "path_increase", "path_decrease", "urgent_scans", "min_rtt_lowered", "naks"},
	"ecn":          {"path_decrease", "conn_decrease", "ecn_same_epoch", "path_increase"},
	"failure": {"timer_timeout", "timer_suspect", "timer_failed", "timer_failed_siblings_heard", "timer_probe", "reactivated",
		"ack_ignored_failed_path", "send_no_path", "naks", "nak_reactivated", "nak_ignored_failed_path"},
	"rate-cap":     {"rate_hint", "send_rate_cap", "min_rtt_lowered", "rate_cap_rtt_clamped"},
	"wraparound":   {"set_psn", "timer_timeout", "timer_failed", "timer_probe", "path_decrease"},
	"saturate":     {"acked_clamped", "rtt_sample_discarded", "ecn_same_epoch", "rate_hint"},
	"backpressure": {"send_ok", "path_decrease"},
	"reset":        {"send_ok", "timer_timeout"},
}

func requireWindowCoverage(t *testing.T, res *Result, keys []string) {
	t.Helper()
	for _, k := range keys {
		require.Positive(t, res.Counts[k]+res.Drops[k], "%s: scenario %s must exercise %s", res.Block, res.Scenario, k)
	}
}

// TestWindowDirectedScenarios runs every scenario on the default configuration (4 connections x
// 8 paths) and requires each to reach the transitions it is for.
func TestWindowDirectedScenarios(t *testing.T) {
	c := config.Default()
	for _, sc := range WindowScenarios() {
		t.Run(sc, func(t *testing.T) {
			n := 20_000
			if sc == "random" {
				n = 50_000
			}
			res := runWindowTest(t, c, sc, 7, n, nil, "")
			requireClean(t, res)
			require.Equal(t, n, res.Packets)
			requireWindowCoverage(t, res, windowCoverage[sc])
			if sc == "reset" {
				require.Greater(t, res.Resets, 2)
			}
		})
	}
}

// TestWindowMatrix co-simulates 1 and 64 paths (configs/matrix), a narrow-PSN, async-reset
// configuration and 3 x 3 paths (padding entries, non-default window parameters) with every
// path-state transition and the clock and PSN wraparound.
func TestWindowMatrix(t *testing.T) {
	for _, name := range []string{"matrix/w1024-1path.yaml", "matrix/w256-64paths.yaml", "matrix/w64-4paths-asic.yaml",
		"matrix/w256-3x3-window.yaml", "matrix/nic-w256-2ports.yaml"} {
		t.Run(name, func(t *testing.T) {
			c := loadMatrixConfig(t, name)
			for _, sc := range []string{"random", "failure", "wraparound", "back-to-back"} {
				res := runWindowTest(t, c, sc, 5, 15_000, nil, "")
				requireClean(t, res)
				if sc == "failure" {
					requireWindowCoverage(t, res, []string{"timer_timeout", "timer_suspect", "timer_failed",
						"timer_probe", "reactivated", "ack_ignored_failed_path"})
				}
			}
		})
	}
}

// TestWindowSeeds runs the mixed scenario under several seeds.
func TestWindowSeeds(t *testing.T) {
	c := config.Default()
	for _, seed := range []uint64{11, 12, 13} {
		requireClean(t, runWindowTest(t, c, "random", seed, 20_000, nil, ""))
	}
}

// TestWindowInitiationIntervalAndLatency shows the II: in back-to-back every cycle brings an
// operation on connection 0 (an ACK to path 0, a send, or a starved scan) into F but for the
// cycles a send waits (behind X's operation, or behind an operation on its connection in F: one
// that is not a send at send II 1, any at send II 2) and a check waits for X, and each output
// comes exactly its stream's latency after its input. At the default configuration (send II 2),
// at two 256-bit ports (send II 1) and at 64 paths (send II 2, the staged pick: a send also
// waits for P's bitmaps of its connection).
func TestWindowInitiationIntervalAndLatency(t *testing.T) {
	for _, c := range []config.Config{config.Default(), loadMatrixConfig(t, "matrix/nic-w256-2ports.yaml"),
		loadMatrixConfig(t, "matrix/w256-64paths.yaml")} {
		t.Run(c.Name, func(t *testing.T) {
			const n = 5_000
			res := runWindowTest(t, c, "back-to-back", 3, n, nil, "")
			requireClean(t, res)
			for _, s := range []string{"ack", "send"} {
				require.Equal(t, res.DeclaredLatency[s], res.MinLatency[s], "%s latency", s)
				require.Equal(t, res.DeclaredLatency[s], res.MaxLatency[s], "%s latency without backpressure", s)
			}
			require.Zero(t, res.Counts["stall_cycles"])
			require.Equal(t, c.Derived().PathTableDepth, res.Counts["busy_cycles"])
			// One operation enters F per cycle; the cycles F stays empty are the held sends' and the
			// checks' (a check enters X only when X is empty), none else. (An operation still in X
			// at the end never entered F.)
			ops := uint64(res.Packets + res.Acks + res.Counts["scans"] - res.Counts["x_at_end"])
			idle := uint64(res.Counts["f_idle"])
			require.Equal(t, res.RTLCycles, ops+idle+3+uint64(res.Counts["busy_cycles"]),
				"%d cycles for %d operations and %d idle", res.RTLCycles, ops, idle)
			require.LessOrEqual(t, idle, uint64(res.Counts["send_held"]+res.Counts["scans"]))
			require.Positive(t, res.Counts["send_held"])
		})
	}
}

// TestWindowCosimCatchesFaults breaks the RTL on purpose and requires cosim to notice, with a
// report that names the stream and the differing field, and a VCD around it.
func TestWindowCosimCatchesFaults(t *testing.T) {
	faults := []windowFault{
		{"no hold behind a send on the connection (send II 2)",
			"assign send_hold = f_valid && (f_conn == s_send_conn);",
			"assign send_hold = f_valid && (f_op != OP_SEND) && (f_conn == s_send_conn);", "arbitration", "", "back-to-back", false},
		{"no hold at all (send II 2)",
			"assign send_hold = f_valid && (f_conn == s_send_conn);", "assign send_hold = 1'b0;", "", "", "back-to-back", false},
		{"fast-table forwarding disabled",
			"wire f_fwd = fp_valid && (fp_idx == f_idx);", "wire f_fwd = 1'b0;", "", "", "back-to-back", false},
		{"X's forwarding disabled",
			"x_fwd <= f_valid && (f_idx == (ack_fire ? {s_ack_conn, s_ack_path} : scan_idx));",
			"x_fwd <= 1'b0;", "", "", "back-to-back", false},
		{"the PSN table's forwarding of W2's write disabled",
			"wire sd_w2fwd = w2_valid && (w2_idx == f_idx);", "wire sd_w2fwd = 1'b0;", "send", "", "failure", false},
		{"a set-PSN not written to the PSN table",
			"w_valid <= f_valid && ((f_op == OP_INIT) || (f_op == OP_SET_PSN)",
			"w_valid <= f_valid && ((f_op == OP_INIT) || 1'b0", "send", "", "wraparound", false},
		{"the decrease's time ignores S2's own decrease of the entry",
			"wire dec_due = !am_dec_valid || ((s2_fwd && s2_last_dec) ? fwd_ge : dd_ge);",
			"wire dec_due = !am_dec_valid || dd_ge;", "ack", "", "ecn", false},
		{"the decrease's time compared without its wrap",
			"wire dd_ge = (s2_now >= dd_ld) ? dd_r[33] : (dd_r[33] || dd_r[32]);",
			"wire dd_ge = dd_r[33] || dd_r[32];", "ack", "", "ecn", false},
		{"a timeout while siblings are heard only counted",
			"wire x_failing = heard_v_q[x_conn] && x_arm_before_heard && !xc_marked;",
			"wire x_failing = 1'b0;", "tmr", "", "failure", false},
		{"an ECN mark does not excuse a silent path",
			"wire x_failing = heard_v_q[x_conn] && x_arm_before_heard && !xc_marked;",
			"wire x_failing = heard_v_q[x_conn] && x_arm_before_heard;", "tmr", "", "failure", false},
		{"the RTT table's two-ahead forwarding disabled",
			"f_rfwd <= s1_rtt_w && (s1_idx == x_idx);", "f_rfwd <= 1'b0;", "ack", "", "back-to-back", false},
		{"the connection AIMD entry's one-ahead forwarding disabled (S2 loads the older view)",
			"s2_cam <= s1_cfwd1 ? caimd_wdata : cam_pre;", "s2_cam <= cam_pre;", "ack", "", "back-to-back", false},
		{"the AIMD table's two-ahead forwarding disabled",
			"s1_afwd <= s2_valid && (s2_slow != SL_NONE) && (s2_idx == f_idx);", "s1_afwd <= 1'b0;",
			"ack", "", "back-to-back", false},
		{"the RTO table's forwarding disabled",
			"s4_fwd <= s4_valid && (s4_idx == s3_idx);", "s4_fwd <= 1'b0;", "ack", "RTO", "failure", false},
		{"the rate cap table's forwarding disabled",
			"s6_fwd <= s6_valid && (s6_conn == s5_conn);", "s6_fwd <= 1'b0;", "", "", "back-to-back", false},
		{"rttvar gain off by one",
			"wire [31:0] rv_y = s2_ad >> RTTVAR_SHIFT;",
			"wire [31:0] rv_y = s2_ad >> (RTTVAR_SHIFT + 1);", "ack", "RTTVar", "random", false},
		{"entropy LFSR taps wrong",
			"wire [15:0] lfsr_next = cur_lfsr[0] ? (lfsr_shift ^ LFSR_TAPS) : lfsr_shift;",
			"wire [15:0] lfsr_next = cur_lfsr[0] ? (lfsr_shift ^ 16'hB401) : lfsr_shift;", "", "Entropy", "failure", false},
		{"base RTT read past the connection forwarding",
			"wire [CBASE_W-1:0] cb = s1_cfwd ? s1_clast : s1_cb_pre;",
			"wire [CBASE_W-1:0] cb = s1_cb_pre;", "ack", "MinRTT", "back-to-back", false},
		{"send gate rounds the window down",
			">= pubc_q[gate_i*PUB_CONN_WIDTH + 1 +: 27];",
			">= {pubc_q[gate_i*PUB_CONN_WIDTH + 9 +: 19], 8'd0};", "send", "Reason", "rate-cap", false},
		{"NAK taken as an ACK",
			"a_op = s_ack_op[1] ? OP_HEARD : s_ack_op[0] ? OP_SET_PSN : OP_ACK;",
			"a_op = s_ack_op[0] ? OP_SET_PSN : OP_ACK;", "ack", "", "failure", false},
		{"a NAK skips the liveness step",
			"if ((f_op == OP_ACK || f_op == OP_HEARD) && !f_failed) begin",
			"if (f_op == OP_ACK && !f_failed) begin", "", "", "failure", false},
		{"published window read past the previous cycle's write",
			"wire [10:0] pub_w_cls = f_pw_hit ? pw_path_last_data[10:0] : fx_pub_path[10:0];",
			"wire [10:0] pub_w_cls = fx_pub_path[10:0];", "", "", "back-to-back", false},
		{"the connection's published window not updated by the pop",
			"if (pub_conn_we && (f_conn == CONN_ID)) begin", "if (1'b0) begin", "send", "", "ecn", false},
		{"a refused send rewrites its path's class",
			"assign f_touches = !(f_op_send && !f_send_ok);", "assign f_touches = 1'b1;", "", "", "back-to-back", false},
		{"a timer event does not floor the class",
			"ncx_w = f_op_init ? INIT_CWND[18:8] : w_floor ? MIN_CWND[18:8] : pub_w_cls;",
			"ncx_w = f_op_init ? INIT_CWND[18:8] : pub_w_cls;", "send", "", "failure", false},
		{"the publication lag one operation short",
			"assign ring_raddr = x_valid ? {x_conn, x_slot} : {a_conn, a_slot};",
			"assign ring_raddr = x_valid ? {x_conn, x_slot + {% .D.PubLagW %}'d1} : {a_conn, a_slot + {% .D.PubLagW %}'d1};",
			"", "", "random", false},
		{"an output taken during a stall offered again",
			"      if (m_ack_ready) begin\n        out_ack_valid <= 1'b0;\n      end",
			"", "", "", "backpressure", false},
		{"scan starvation guard removed",
			"wire scan_urgent = (scan_wait == 4'd{% .D.ScanStarve %});", "wire scan_urgent = 1'b0;", "arbitration", "", "back-to-back", false},
	}
	// The send II 1 logic (both picks in A, F's send forwarded to the next) is generated only
	// where line rate needs II 1 on one connection: two 256-bit ports.
	sendII1 := []windowFault{
		{"pick ignores the send in F",
			"wire pick_fwd = f_is_send && (f_conn == s_send_conn);", "wire pick_fwd = 1'b0;",
			"send", "", "back-to-back", true},
		{"a send's class one packet fuller ignored",
			"assign pick_cls_taken[2*slot_i +: 2] = f_path_hot[slot_i] ? cls_inc_conn_q",
			"assign pick_cls_taken[2*slot_i +: 2] = 1'b0 ? cls_inc_conn_q", "send", "", "back-to-back", false},
		{"a send's gate ignores the send before it on its connection (the registers' edge)",
			"gs_same_q <= send_fire && pick_fwd;", "gs_same_q <= 1'b0;", "send", "", "rate-cap", false},
		{"the gate after a send ignores whether it was taken",
			"(gs_ok_q ? gs_taken_q : gs_kept_q)", "(1'b0 ? gs_taken_q : gs_kept_q)", "send", "", "rate-cap", false},
		{"the gate after a taken send ignores the publication it applied",
			"gs_taken_q <= f_pop ? gr_taken : gate_taken_all[f_conn];", "gs_taken_q <= gate_taken_all[f_conn];",
			"send", "", "rate-cap", false},
		{"the gate after a refused send ignores the publication it applied",
			"gs_kept_q <= f_pop ? gr_kept : gate_full_all[f_conn];", "gs_kept_q <= gate_full_all[f_conn];",
			"send", "", "rate-cap", false},
		{"the gate with one packet more against the ring's rate cap rounds it down",
			"wire [28:0] gr_cap_t = {2'b00, cc_inflight, 8'd0} + {2'b11, ~ring_cap} + 29'd257;",
			"wire [28:0] gr_cap_t = {2'b00, cc_inflight, 8'd0} + {2'b11, ~ring_cap} + 29'd256;", "send", "", "rate-cap", false},
		{"F's path from A's operation, not the pick's, for a send",
			"wire [PATH_WIDTH-1:0] f_path_d = send_fire ? pick_path : x_valid ? x_path : a_path_x;",
			"wire [PATH_WIDTH-1:0] f_path_d = x_valid ? x_path : a_path_x;", "send", "", "back-to-back", false},
		{"no hold behind an operation on the connection",
			"assign send_hold = f_valid && (f_op != OP_SEND) && (f_conn == s_send_conn);",
			"assign send_hold = 1'b0;", "", "", "back-to-back", false},
		{"the PSN table's forwarding of W's write disabled",
			"wire sd_wfwd = w_valid && (w_idx == f_idx);", "wire sd_wfwd = 1'b0;", "send", "", "back-to-back", false},
		{"a send's next class full one packet late (the sign of w - inflight - 2)",
			"+ {2'b11, ~sdc_inflight} + 13'h1ffe;", "+ {2'b11, ~sdc_inflight} + 13'h1fff;", "", "", "random", false},
	}
	// The staged pick (P registers the requested connection's class bitmaps) is generated where
	// the pick searches at least hdlwindow.PickStageMinSlots slots at send II 2: 64 paths.
	staged := []windowFault{
		{"staged pick: F's taken send not forwarded to P",
			"wire p_fwd = f_valid && f_op_send && f_send_ok && (f_conn == s_send_conn);", "wire p_fwd = 1'b0;",
			"send", "", "back-to-back", false},
		{"staged pick: a refused send forwarded to P as taken",
			"wire p_fwd = f_valid && f_op_send && f_send_ok && (f_conn == s_send_conn);",
			"wire p_fwd = f_valid && f_op_send && (f_conn == s_send_conn);", "send", "", "rate-cap", false},
		{"staged pick: the pointer not moved by the forwarded send",
			"wire [PATH_WIDTH-1:0] p_rr = p_fwd ? rr_next : rr_rd;", "wire [PATH_WIDTH-1:0] p_rr = rr_rd;",
			"send", "", "back-to-back", false},
		{"staged pick: the bitmaps at or after the pointer searched after the whole class",
			"pv_q <= {p_c1, p_c1 & p_after, p_c2, p_c2 & p_after, p_c3, p_c3 & p_after};",
			"pv_q <= {p_c1 & p_after, p_c1, p_c2 & p_after, p_c2, p_c3 & p_after, p_c3};", "send", "", "random", false},
		{"staged pick: bitmaps stale after F's operation on the connection taken as fresh",
			"p_fresh_q <= !(adv && f_valid && !f_op_send && (f_conn == s_send_conn));", "p_fresh_q <= 1'b1;",
			"arbitration", "", "back-to-back", false},
		{"staged pick: P reads past the class write-behind",
			"assign pick_cls_table[2*cw_i +: 2] = (cw_conn_hit && cw_hot[cw_i]) ? cw_cls",
			"assign pick_cls_table[2*cw_i +: 2] = 1'b0 ? cw_cls", "send", "", "random", false},
		{"staged pick: a change of s_send_conn not waited for",
			"assign pick_ready = p_fresh_q && (p_conn_q == s_send_conn);", "assign pick_ready = p_fresh_q;",
			"arbitration", "", "random", false},
	}
	// An aliasing ACK count on a path more than half full, then a pick it changes: rare.
	long := []windowFault{
		{"an ACK count of 2^11 or more not taken as emptying the path (the class's 14-bit sums)",
			"wire ci_sat = (f_op_ack && f_sum_big) || ci_x[13];", "wire ci_sat = ci_x[13];", "", "", "saturate", false},
	}
	twoPorts := "matrix/nic-w256-2ports.yaml"
	paths64 := "matrix/w256-64paths.yaml"
	u64, err := hdlwindow.New(loadMatrixConfig(t, paths64))
	require.NoError(t, err)
	require.True(t, u64.PickStage, "%s must generate the staged pick", paths64)
	c2 := loadMatrixConfig(t, twoPorts)
	require.Equal(t, 1, hdlwindow.SendIIFor(c2.DatapathWidth, c2.Ports))
	require.Equal(t, 2, hdlwindow.SendIIFor(config.Default().DatapathWidth, config.Default().Ports))
	var tf []templateFault
	add := func(fs []windowFault, cfg string, packets int) {
		for _, f := range fs {
			tf = append(tf, templateFault{Name: f.name, Module: "window_unit", From: f.from, To: f.to, Stream: f.stream,
				Field: f.field, VCD: f.vcd, Scenario: f.scenario, Config: cfg, Packets: packets})
		}
	}
	add(faults, "", 0)
	add(sendII1, twoPorts, 0)
	add(staged, paths64, 0)
	add(long, "", 300_000)
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		c := config.Default()
		if f.Config != "" {
			c = loadMatrixConfig(t, f.Config)
		}
		return runWindowTest(t, c, f.Scenario, 1, f.RunLength(20_000), mutate, vcd)
	})
}

// windowFault is one row of the window's fault table.
type windowFault struct {
	name, from, to, stream, field, scenario string
	vcd                                     bool
}

func TestUnknownWindowScenario(t *testing.T) {
	_, err := RunWindow(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown window scenario")
	_, err = RunWindow(context.Background(), Options{Config: config.Default(), Scenario: "random"})
	require.ErrorContains(t, err, "packets must be positive")
}

// BenchmarkCosimWindow measures end-to-end co-simulation throughput (RTL + golden table +
// stimulus + comparison) in send requests per second.
func BenchmarkCosimWindow(b *testing.B) {
	tooltest.Require(b, "verilator")
	c := config.Default()
	for _, sc := range []string{"random", "back-to-back"} {
		b.Run(sc, func(b *testing.B) {
			opt := Options{Config: c, Scenario: sc, Seed: 1, Packets: 200_000, Stamp: stamp(c)}
			_, err := RunWindow(context.Background(), opt) // build or load the model outside the timer
			require.NoError(b, err)
			b.ResetTimer()
			packets, seconds := 0, 0.0
			for i := 0; i < b.N; i++ {
				res, err := RunWindow(context.Background(), opt)
				require.NoError(b, err)
				require.Nil(b, res.Mismatch)
				packets += res.Packets
				seconds += res.WallSeconds
			}
			b.ReportMetric(float64(packets)/seconds, "packets/s")
			b.ReportMetric(seconds/float64(packets)*1e9, "ns/packet")
		})
	}
}
