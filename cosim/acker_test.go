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
}

// ackerAnnounceCoverage is what each scenario must exercise of ANNOUNCEs with hints on (with
// hints off every ANNOUNCE is ignored).
var ackerAnnounceCoverage = map[string][]string{
	"random":       {"announces", "announces_ignored", "announce_answers"},
	"incast":       {"announces", "announces_ignored", "announce_answers"},
	"delayed":      {"announces", "announces_ignored"},
	"backpressure": {"announces", "announces_ignored", "announce_answers"},
	"saturate":     {"announces"},
	"announce":     {"announces", "announces_ignored", "announce_answers", "refreshes"},
}

// TestAckerScenarios runs every scenario on the default configuration and on a 3 x 3 table
// with hints off, and requires each to reach the decisions it is for.
func TestAckerScenarios(t *testing.T) {
	odd := config.Default()
	odd.Name, odd.Connections, odd.PathsPerConnection, odd.RateHint.Enabled = "c3-p3-nohints", 3, 3, false
	for _, c := range []config.Config{config.Default(), odd} {
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
			"wire [31:0] g_echo = slot_rd[S_TS +: 32] + (t_op[31:0] - slot_rd[S_ARR +: 32]);",
			"wire [31:0] g_echo = slot_rd[S_TS +: 32];", "TS", true},
		{"ECN count does not saturate", "saturate",
			"wire [15:0] ecn_inc = (p_ce && s_ecn != 16'hFFFF) ? s_ecn + 16'd1 : s_ecn;",
			"wire [15:0] ecn_inc = p_ce ? s_ecn + 16'd1 : s_ecn;", "ECN", false},
		{"stale deadline not recognised", "random",
			"wire dq_hit = s_valid && !s_gathered && (slot_rd[S_DL +: 64] == dq_head_dl);",
			"wire dq_hit = s_valid && !s_gathered;", "", false},
		{"refresh bound twice the gather bound", "announce",
			"wire a_stale = (t_op - ann_rd[A_ARR +: 64]) > MAX_GATHER;",
			"wire a_stale = (t_op - ann_rd[A_ARR +: 64]) > {MAX_GATHER[62:0], 1'b0};", "", false},
		{"refresh tells the hint it told before", "announce",
			"            out_hint_next = hint_now;\n            out_ts_next = ann_rd[A_TS +: 32];\n            cnt_ref_next",
			"            out_hint_next = a_hint;\n            out_ts_next = ann_rd[A_TS +: 32];\n            cnt_ref_next", "Hint", false},
		{"announce answer echo advanced by the hold", "announce",
			"            out_ts_next = ann_rd[A_TS +: 32];\n            cnt_ans_next",
			"            out_ts_next = ann_rd[A_TS +: 32] + (t_op[31:0] - ann_rd[A_ARR +: 32]);\n            cnt_ans_next", "TS", false},
		{"scan expires at the window, not after it", "incast",
			"wire expire = conn_rd[0] && (idle_for > HINT_WINDOW);",
			"wire expire = conn_rd[0] && (idle_for >= HINT_WINDOW - 64'd1000);", "", false},
	}
	var tf []templateFault
	for _, f := range faults {
		tf = append(tf, templateFault{Name: f.name, Module: "rx_acker", From: f.from, To: f.to, Field: f.field, VCD: f.vcd, Scenario: f.scenario})
	}
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		n := 20_000
		if f.Scenario == "saturate" {
			n = 150_000
		}
		return runAckerTest(t, config.Default(), f.Scenario, 3, n, mutate, vcd)
	})
}

func TestAckerUnknownScenario(t *testing.T) {
	_, err := RunAcker(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown acker scenario")
}
