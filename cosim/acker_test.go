package cosim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runAckerTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunAcker(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

// ackerCoverage is what each scenario must exercise (Counts keys of RunAcker).
var ackerCoverage = map[string][]string{
	"random":       {"immediate", "delayed", "gathered", "newcomers", "expired"},
	"incast":       {"gathered", "newcomers", "expired", "immediate", "delayed"},
	"delayed":      {"immediate", "overflows"},
	"backpressure": {"immediate", "delayed", "gathered", "expired"},
	"saturate":     {"delayed"},
	"announce":     {"gathered", "newcomers", "expired", "immediate", "delayed"},
	// Line rate: the initiation interval checked on packets with no timer due before them.
	"line-rate":      {"immediate", "delayed", "gathered", "newcomers", "expired", "ii_checked"},
	"line-rate-one":  {"immediate", "gathered", "newcomers", "expired", "ii_checked"},
	"line-rate-gaps": {"immediate", "delayed", "gathered", "newcomers", "expired", "ii_checked"},
}

// ackerAnnounceCoverage is what each scenario must exercise of ANNOUNCEs with hints on (with
// hints off every ANNOUNCE is ignored).
var ackerAnnounceCoverage = map[string][]string{
	"random":         {"announces", "announces_ignored", "announce_answers"},
	"incast":         {"announces", "announces_ignored", "announce_answers"},
	"delayed":        {"announces", "announces_ignored"},
	"backpressure":   {"announces", "announces_ignored", "announce_answers"},
	"saturate":       {"announces"},
	"announce":       {"announces", "announces_ignored", "announce_answers", "refreshes"},
	"line-rate":      {"announces", "announces_ignored"},
	"line-rate-one":  {"announces", "announces_ignored"},
	"line-rate-gaps": {"announces", "announces_ignored", "announce_answers"},
}

// ackerTightConfig has short timers for its 8 connections: a gather window often runs into
// its cap (newcomers keep coming), and senders expire within the life of a told announce
// record, so that a refresh finds the share risen as well as fallen.
func ackerTightConfig() config.Config {
	c := config.Default()
	c.Name, c.Connections, c.PathsPerConnection = "c8-p2-tight", 8, 2
	c.MemoryRegions = max(c.MemoryRegions, c.Connections)
	c.AckPolicy.GatherNS, c.AckPolicy.MaxGatherNS = 2000, 6000
	c.RateHint.WindowNS, c.RateHint.ScanNS = 6000, 2000
	return c
}

// TestAckerScenarios runs every scenario on the default configuration, on a 3 x 3 table with
// hints off and on short timers, and requires each to reach the decisions it is for.
func TestAckerScenarios(t *testing.T) {
	odd := config.Default()
	odd.Name, odd.Connections, odd.PathsPerConnection, odd.RateHint.Enabled = "c3-p3-nohints", 3, 3, false
	for _, c := range []config.Config{config.Default(), odd, ackerTightConfig()} {
		for _, sc := range AckerScenarios() {
			t.Run(c.Name+"/"+sc, func(t *testing.T) {
				n := 20_000
				if sc == "saturate" {
					n = 150_000 // one burst of 70,000 marks past the 16-bit echo
				}
				res := runAckerTest(t, c, sc, 3, n, nil, "")
				requireClean(t, res)
				require.Equal(t, n, res.Packets)
				for _, k := range ackerCoverage[sc] {
					require.Positive(t, res.Counts[k], "scenario %s must exercise %s", sc, k)
				}
				if !c.RateHint.Enabled {
					require.Positive(t, res.Counts["announces"])
					require.Equal(t, res.Counts["announces"], res.Counts["announces_ignored"], "hints off: every ANNOUNCE ignored")
					return
				}
				for _, k := range ackerAnnounceCoverage[sc] {
					require.Positive(t, res.Counts[k], "scenario %s must exercise %s", sc, k)
				}
				t.Logf("%s: %v", sc, res.Counts)
			})
		}
	}
}

// TestAckerCatchesTemplateFaults breaks rx_acker's template in ways a reviewer could miss and
// requires the cosim to report each, with the field that differs.
func TestAckerCatchesTemplateFaults(t *testing.T) {
	faults := []struct {
		name, scenario, from, to, field string
		vcd                             bool
	}{
		{"gathered echo not advanced", "incast",
			"            out_tadd_next = t_op[31:16];",
			"            out_tadd_next = 16'd0;", "TS", true},
		{"ECN count does not saturate", "saturate",
			"wire [15:0] ecn_inc = (p_ce && s_ecn != 16'hFFFF) ? s_ecn + 16'd1 : s_ecn;",
			"wire [15:0] ecn_inc = p_ce ? s_ecn + 16'd1 : s_ecn;", "ECN", false},
		{"stale deadline not recognised", "random",
			"wire dq_hit = s_valid && !s_gathered && (dl_rd == dq_head_dl);",
			"wire dq_hit = s_valid && !s_gathered;", "", false},
		{"refresh bound twice the gather bound", "announce",
			"    t_lim_g <= {1'b0, g_end} - {1'b0, MAX_GATHER};",
			"    t_lim_g <= {1'b0, g_end} - {1'b0, MAX_GATHER[62:0], 1'b0};", "", false},
		{"refresh tells the hint it told before", "announce",
			"          out_hint_next = hint_now;\n          out_ts_next = ann_rd[A_TS +: 32];\n          out_tadd_next = 16'd0;\n          out_tc_next = 1'b0;\n          out_valid_next = r_emit;",
			"          out_hint_next = a_hint;\n          out_ts_next = ann_rd[A_TS +: 32];\n          out_tadd_next = 16'd0;\n          out_tc_next = 1'b0;\n          out_valid_next = r_emit;", "Hint", false},
		{"announce answer echo advanced by the hold", "announce",
			"            out_ts_next = ann_rd[A_TS +: 32];\n            out_tadd_next = 16'd0;\n            out_tc_next = 1'b0;\n            ev_ans_next",
			"            out_ts_next = ann_rd[A_TS +: 32] + t_op[31:0] - ann_rd[A_ARR +: 32];\n            out_tadd_next = 16'd0;\n            out_tc_next = 1'b0;\n            ev_ans_next", "TS", false},
		{"scan expires at the window, not after it", "incast",
			"wire expire = conn_rd[0] && !t_lim_w[64] && {% cmpSliced \"conn_last\" \"<\" \"lim_w\" 64 6 %};",
			"wire expire = conn_rd[0] && (conn_last <= lim_w + 64'd1000);", "", false},
		// The registered forms of the rate hint and of the refresh's bound (precomputed a cycle
		// before use), and the waits for the output register: each wrong must be caught.
		{"newcomer's immediate ACK carries the hint before it counted", "random",
			"out_hint_next = p_newcomer ? p_hint_plus : p_hint;",
			"out_hint_next = hint_now;", "Hint", false},
		{"refresh misses a share that rose by more than a tenth", "announce",
			"(hint_lo_ok && {1'b0, a_hint} <= hint_lo)",
			"(1'b0 && {1'b0, a_hint} <= hint_lo)", "", false},
		{"gather window capped from its latest newcomer", "incast",
			"g_cap_next = g_open ? g_cap : p_cap;",
			"g_cap_next = p_cap;", "", false},
		// The hazards of II 1: the next packet read beside PKT's write of the same entry, the
		// hint after a newcomer, and a timer the packet in PKT sets falling due first.
		{"slot control bypass disabled", "line-rate-one",
			"wire [CTL_WIDTH-1:0] ctl_rd = byp_ctl ? byp_ctl_d : ctl_q;",
			"wire [CTL_WIDTH-1:0] ctl_rd = (1'b0 && byp_ctl) ? byp_ctl_d : ctl_q;", "", false},
		{"connection bypass disabled", "line-rate-one",
			"wire [64:0] conn_rd = {conn_q[64:1], byp_conn ? byp_conn_d : conn_q[0]};",
			"wire [64:0] conn_rd = {conn_q[64:1], (1'b0 && byp_conn) ? byp_conn_d : conn_q[0]};", "", false},
		{"announce record bypass disabled", "line-rate-gaps",
			"wire [ANN_WIDTH-1:0] ann_rd = byp_ann ? byp_ann_d : ann_q;",
			"wire [ANN_WIDTH-1:0] ann_rd = (1'b0 && byp_ann) ? byp_ann_d : ann_q;", "", false},
		{"hint after a newcomer not one count up", "line-rate",
			"wire [15:0] p_hint = ev_new ? hint_plus : hint_now;",
			"wire [15:0] p_hint = (1'b0 && ev_new) ? hint_plus : hint_now;", "Hint", false},
		{"next packet taken before a timer the previous one set", "line-rate-gaps",
			"                  && now_before_early;",
			"                  && (1'b1 || now_before_early);", "", false},
		{"packet does not wait for the output register", "backpressure",
			"  wire pkt_go = out_free;",
			"  wire pkt_go = 1'b1;", "", false},
		{"delayed ACK does not wait for the output register", "backpressure",
			"        ctl_wdata = ctl_sent;\n        if (out_free) begin\n          out_kind_next = KIND_DELAYED;",
			"        ctl_wdata = ctl_sent;\n        if (1'b1) begin\n          out_kind_next = KIND_DELAYED;", "", false},
	}
	var tf []templateFault
	// These two are reachable only with short timers (ackerTightConfig): a window that runs
	// into its cap, a sender expiring while an announce record is told.
	tight := map[string]bool{"refresh misses a share that rose by more than a tenth": true,
		"gather window capped from its latest newcomer": true}
	for _, f := range faults {
		tf = append(tf, templateFault{Name: f.name, Module: "rx_acker", From: f.from, To: f.to, Field: f.field, VCD: f.vcd, Scenario: f.scenario})
	}
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		n := 20_000
		if f.Scenario == "saturate" {
			n = 150_000
		}
		c := config.Default()
		if tight[f.Name] {
			c = ackerTightConfig()
		}
		return runAckerTest(t, c, f.Scenario, 3, n, mutate, vcd)
	})
}

func TestAckerUnknownScenario(t *testing.T) {
	_, err := RunAcker(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown acker scenario")
}
