package cosim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/placement"
	hdlpl "github.com/mrgen/mrgen/hdl/placement"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runPlacementTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunPlacement(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

// TestPlacementDirectedScenarios runs every scenario on the default configuration and checks
// that each exercised what it is for.
func TestPlacementDirectedScenarios(t *testing.T) {
	c := config.Default()
	for _, sc := range PlacementScenarios() {
		t.Run(sc, func(t *testing.T) {
			n := 20_000
			if sc == "random" {
				n = 50_000
			}
			res := runPlacementTest(t, c, sc, 7, n, nil, "")
			requireClean(t, res)
			require.Equal(t, n, res.Packets)
			require.Positive(t, res.Counts["dma_commands"])
			require.Positive(t, res.Counts["completions"])
			switch sc {
			case "msn-wrap":
				require.Positive(t, res.Counts["msn_wraps"], "no stream crossed the 2^32 MSN wrap")
				require.Greater(t, res.Counts["msn_sets"], res.Resets*16+1, "idle streams were set again")
			case "tag-wrap":
				require.Positive(t, res.Counts["tag_wraps"], "no registration wrapped the rkey tag")
			}
			t.Logf("%s: drops %v counts %v cycles %d", sc, res.Drops, res.Counts, res.RTLCycles)
		})
	}
}

// TestPlacementInitiationIntervalAndLatency: with every output ready, s_desc_ready is low only
// in the cycles a control operation (which has priority) is taken, a region operation is in
// flight, or the descriptor is on the stream of the operation taken right before it (one
// operation per clock over streams, one every EntryII = 2 on one stream), however many
// completions a packet releases; every verdict and control response leaves exactly the
// declared latency after its input.
func TestPlacementInitiationIntervalAndLatency(t *testing.T) {
	c := config.Default()
	require.Equal(t, 2, hdlpl.EntryII)
	for _, sc := range []string{"back-to-back", "in-order", "reorder", "long-messages", "tag-wrap"} {
		res := runPlacementTest(t, c, sc, 3, 5000, nil, "")
		requireClean(t, res)
		for _, s := range []string{"res", "ctl"} {
			require.Equal(t, res.DeclaredLatency[s], res.MinLatency[s], "%s: %s latency", sc, s)
			require.Equal(t, res.DeclaredLatency[s], res.MaxLatency[s], "%s: %s latency without backpressure", sc, s)
		}
		require.Equal(t, res.Counts["desc_ready_low"],
			res.Counts["desc_low_ctl"]+res.Counts["desc_low_clear"]+res.Counts["desc_low_region"]+res.Counts["desc_low_hazard"],
			"%s: II=1 apart from control operations and same-stream pairs: %v", sc, res.Counts)
		require.Zero(t, res.Counts["desc_low_cpl_hold"], sc)
		// A same-stream hold lasts one cycle: at most one per operation taken.
		require.LessOrEqual(t, res.Counts["desc_low_hazard"], res.Packets+res.Counts["control_ops"], sc)
		if sc == "back-to-back" {
			require.Positive(t, res.Counts["desc_low_hazard"], "one stream: every second cycle holds")
		}
		if sc == "reorder" {
			require.Positive(t, res.Counts["walker_cycles"], "reordering must release completions behind the head")
		}
	}
}

// TestPlacementCompletionHold: under heavy m_cpl backpressure the walker falls behind and in_q
// waits for it (a stream with more than D completions pending), and nothing is lost.
func TestPlacementCompletionHold(t *testing.T) {
	res := runPlacementTest(t, config.Default(), "cpl-backpressure", 4, 20_000, nil, "")
	requireClean(t, res)
	require.Positive(t, res.Counts["desc_low_cpl_hold"], "%v", res.Counts)
	require.Zero(t, res.Counts["desc_low_backpressure"], "only m_cpl is held")
	t.Logf("counts %v", res.Counts)
}

// TestPlacementSeeds runs the mixed scenario under several seeds.
func TestPlacementSeeds(t *testing.T) {
	c := config.Default()
	for _, seed := range []uint64{11, 12, 13} {
		requireClean(t, runPlacementTest(t, c, "random", seed, 20_000, nil, ""))
	}
}

// TestPlacementCoverage: the mixed and directed scenarios exercise every drop reason, region
// churn, resets and the walker.
func TestPlacementCoverage(t *testing.T) {
	c := config.Default()
	seen := map[string]int{}
	for _, sc := range []string{"violations", "reset", "duplicates", "missing-receives"} {
		res := runPlacementTest(t, c, sc, 21, 20_000, nil, "")
		requireClean(t, res)
		for k, v := range res.Drops {
			seen[k] += v
		}
		if sc == "reset" {
			require.Greater(t, res.Resets, 2)
		}
	}
	for _, r := range placement.AllDropReasons()[1:] {
		require.Positive(t, seen[r.String()], "no descriptor was dropped for %s", r)
	}
}

// TestPlacementConfigMatrix co-simulates the corners of the placement fields: one connection
// and stream with D=2, async reset, a region count that is not a power of two, a small mtu
// and many streams.
func TestPlacementConfigMatrix(t *testing.T) {
	matrix := map[string]func(*config.Config){
		"c1-s1-d2-r3-mtu256-async": func(c *config.Config) {
			c.Connections, c.StreamsPerConnection, c.PostedReceivesPerStream = 1, 1, 2
			c.MemoryRegions, c.MTU, c.ResetStyle = 3, 256, config.ResetAsyncLow
		},
		"c3-s5-d4-r10-mtu512": func(c *config.Config) {
			c.Connections, c.StreamsPerConnection, c.PostedReceivesPerStream = 3, 5, 4
			c.MemoryRegions, c.MTU = 10, 512
		},
		"c2-s16-d32-r64-mtu1024-async": func(c *config.Config) {
			c.Connections, c.StreamsPerConnection, c.PostedReceivesPerStream = 2, 16, 32
			c.MemoryRegions, c.MTU, c.ResetStyle = 64, 1024, config.ResetAsyncLow
		},
	}
	for name, mutate := range matrix {
		t.Run(name, func(t *testing.T) {
			c := config.Default()
			c.Name = name
			mutate(&c)
			require.NoError(t, c.Validate())
			for _, sc := range []string{"random", "back-to-back", "violations", "reorder"} {
				requireClean(t, runPlacementTest(t, c, sc, 5, 10_000, nil, ""))
			}
		})
	}
}

// TestPlacementCosimCatchesFaults breaks the RTL on purpose and requires cosim to notice, with
// a report naming the stream, the cycle and the differing field, and a VCD around it.
func TestPlacementCosimCatchesFaults(t *testing.T) {
	faults := []struct {
		name, scenario, from, to, field string
		vcd                             bool
	}{
		{"slot forwarding from the write stage disabled", "back-to-back",
			"wire q_fwd_sl = e_v && e_has_sl && (e_slot == in_q_slot);",
			"wire q_fwd_sl = 1'b0 && e_v && e_has_sl && (e_slot == in_q_slot);", "", true},
		{"stream forwarding from the write stage disabled", "reorder",
			"wire q_fwd_st = e_v && e_has_st && (e_sidx == in_q_sidx);",
			"wire q_fwd_st = 1'b0 && e_v && e_has_st && (e_sidx == in_q_sidx);", "", false},
		{"slot merge of the write being done disabled", "random",
			"wire q_wb_sl = wb_v && wb_has_sl && (wb_slot == in_q_slot);",
			"wire q_wb_sl = 1'b0 && wb_v && wb_has_sl && (wb_slot == in_q_slot);", "", false},
		{"slot merge of the last write disabled", "random",
			"wire q_last_sl = last_sl_valid && (last_sl_idx == in_q_slot);",
			"wire q_last_sl = 1'b0 && last_sl_valid && (last_sl_idx == in_q_slot);", "", false},
		{"stream merge of the last write disabled", "reorder",
			"wire q_last_st = last_st_valid && (last_st_idx == in_q_sidx);",
			"wire q_last_st = 1'b0 && last_st_valid && (last_st_idx == in_q_sidx);", "", false},
		{"same-stream hold removed", "back-to-back",
			"wire hz_desc = in_q_valid && in_q_has_st && (desc_sidx == in_q_sidx);",
			"wire hz_desc = 1'b0 && in_q_valid && in_q_has_st && (desc_sidx == in_q_sidx);", "", false},
		{"region operations not serialized", "tag-wrap",
			"wire acc_open = adv && !clear_busy && !rg_inflight;",
			"wire acc_open = adv && !clear_busy;", "", false},
		{"wrong-connection check removed", "violations",
			"wire wrong_conn = c_conn != rg_conn;",
			"wire wrong_conn = 1'b0 && (c_conn != rg_conn);", "Drop", false},
		{"release ignores the done messages behind the head", "reorder",
			"wire [DEPTH-1:0] run_vec = {1'b1, ~st_done};",
			"wire [DEPTH-1:0] run_vec = {DEPTH{1'b1}};", "", false},
		{"walker repeats a completion", "reorder",
			"w_idx <= w_idx + {% dec (add .D.LgD 1) 1 %};",
			"w_idx <= w_idx;", "MSN", false},
		{"SEND placed one byte off", "in-order",
			"wire [32:0] send_lo = {1'b0, sl_addr_lo} + {1'b0, c_offset};",
			"wire [32:0] send_lo = {1'b0, sl_addr_lo} + {1'b0, c_offset} + 33'd1;", "Addr", false},
		{"receive match high part ignores the low part's borrow", "msn-wrap",
			"wire k_hi_zero = k_lo_full[KL] ? (c_msn_hi_m1 == st_comp[31:KL])",
			"wire k_hi_zero = 1'b0 ? (c_msn_hi_m1 == st_comp[31:KL])", "", false},
	}
	var tf []templateFault
	for _, f := range faults {
		tf = append(tf, templateFault{Name: f.name, Module: hdlpl.Top, From: f.from, To: f.to, Field: f.field, VCD: f.vcd, Scenario: f.scenario})
	}
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		return runPlacementTest(t, config.Default(), f.Scenario, 1, 20_000, mutate, vcd)
	})
}

func TestPlacementUnknownScenario(t *testing.T) {
	_, err := RunPlacement(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown placement scenario")
}
