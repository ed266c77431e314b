package cosim

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	hdlsack "github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func stamp(c config.Config) gen.Stamp {
	return gen.Stamp{Version: "test", Command: "go test ./cosim", ConfigName: c.Name, ConfigHash: c.Hash()}
}

func runSackTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunSack(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

func requireClean(t *testing.T, res *Result) {
	t.Helper()
	if res.Mismatch != nil {
		t.Fatalf("%s seed %d: %v", res.Scenario, res.Seed, res.Mismatch)
	}
	require.Zero(t, res.Mismatches)
	require.Positive(t, res.Compared)
}

// TestSackDirectedScenarios runs every directed case of the verification plan and the mixed
// random scenario on the default configuration.
func TestSackDirectedScenarios(t *testing.T) {
	c := config.Default()
	for _, sc := range SackScenarios() {
		t.Run(sc, func(t *testing.T) {
			n := 20_000
			if sc == "path-init" {
				n = 30_000 // enough of each kind of path init for the coverage below
			}
			if sc == "random" {
				n = 100_000 // the ≥100k-packet run of `make test`
			}
			res := runSackTest(t, c, sc, 7, n, nil, "")
			requireClean(t, res)
			require.Equal(t, n, res.Packets)
			switch sc {
			case "random":
				require.Positive(t, res.Resets, "random resets in the middle of traffic")
				for _, d := range []string{"rx_beyond", "rx_duplicate", "rx_old", "ack_stale", "ack_duplicate", "ack_invalid"} {
					require.Positive(t, res.Drops[d], "random must exercise %s", d)
				}
				for _, k := range []string{"path_init_fresh", "path_init_stale", "path_init_back_to_back"} {
					require.Positive(t, res.Counts[k], "random must exercise %s", k)
				}
			case "path-init":
				for _, k := range []string{"path_init_fresh", "path_init_stale", "path_init_at_cum", "path_init_beyond", "path_init_back_to_back"} {
					require.Greater(t, res.Counts[k], 50, "path-init must exercise %s", k)
				}
			case "peek":
				for _, k := range []string{"peeks", "peeks_new", "peek_back_to_back", "path_init_fresh"} {
					require.Greater(t, res.Counts[k], 50, "peek must exercise %s", k)
				}
			case "reset":
				require.Greater(t, res.Resets, 2)
			case "window-edge":
				require.Positive(t, res.Drops["rx_beyond"])
			case "ack-loss":
				require.Positive(t, res.Drops["ack_stale"]+res.Drops["ack_duplicate"])
			}
		})
	}
}

// TestSackInitiationIntervalAndLatency shows the initiation intervals the module headers state:
// back to back on one (connection, path), sack_rx takes an operation every RxEntryII cycles
// (each waits in its input stage: the latency the header states plus RxEntryII-1), and sack_tx
// one every TxEntryII cycles: every cycle where it forwards (its two-stage recurrence computes
// the verdict on both outcomes of the operation one ahead), every 3 where it holds (an operation
// waits TxEntryII-1 cycles in stage pre, and the one behind it as long again in in_q).
func TestSackInitiationIntervalAndLatency(t *testing.T) {
	for _, c := range []config.Config{config.Default(), sackWideConfig(), sackForwardingConfig()} {
		t.Run(c.Name, func(t *testing.T) {
			u, err := hdlsack.New(c)
			require.NoError(t, err)
			ii, txII := u.RxEntryII(), u.TxEntryII()
			const n = 1000
			res := runSackTest(t, c, "back-to-back", 3, n, nil, "")
			requireClean(t, res)
			require.GreaterOrEqual(t, res.MinLatency["tx"], res.DeclaredLatency["tx"], "tx latency")
			require.Equal(t, res.DeclaredLatency["tx"]+2*(txII-1), res.MaxLatency["tx"], "tx latency without backpressure, entry II %d", txII)
			require.GreaterOrEqual(t, res.MinLatency["rx"], res.DeclaredLatency["rx"], "rx latency")
			require.Equal(t, res.DeclaredLatency["rx"]+ii-1, res.MaxLatency["rx"], "rx latency behind an operation on its entry")
			d := c.Derived()
			// Packets at the entry's II + pipeline latency + the post-reset table clear + one init per path.
			budget := uint64(ii*n + res.DeclaredLatency["rx"] + d.PathTableDepth + c.Connections*c.PathsPerConnection + 8)
			require.LessOrEqual(t, res.RTLCycles, budget, "entry II=%d: %d cycles for %d packets", ii, res.RTLCycles, n)
			require.Positive(t, res.Counts["rx_stall_cycles"], "back to back on one entry, sack_rx holds")
		})
	}
}

// TestSackLineRate offers one operation per port per minimum-frame time, every port's all to
// one (connection, path), at the widest datapath (a frame every 2 cycles) and at 256 bits, on
// one port and on two, and at 64 bits on one (where both sides hold, entry II 3): sack_rx takes
// every one the cycle it is offered (on two ports at 512 bits, one per cycle: II=1 across
// entries), each at the latency its header states.
func TestSackLineRate(t *testing.T) {
	for _, tc := range []struct{ width, ports int }{{512, 1}, {512, 2}, {256, 1}, {256, 2}, {64, 1}} {
		t.Run(fmt.Sprintf("w%d-ports%d", tc.width, tc.ports), func(t *testing.T) {
			c := config.Default()
			c.DatapathWidth, c.Ports = tc.width, tc.ports
			c.Name = fmt.Sprintf("line-rate-w%d-ports%d", tc.width, tc.ports)
			require.NoError(t, c.Validate())
			const n = 4000
			res := runSackTest(t, c, "line-rate", 9, n, nil, "")
			requireClean(t, res)
			require.Zero(t, res.Counts["rx_stall_cycles"], "an operation waited: below line rate")
			require.Equal(t, res.DeclaredLatency["rx"], res.MinLatency["rx"], "rx latency")
			require.Equal(t, res.DeclaredLatency["rx"], res.MaxLatency["rx"], "rx latency at line rate")
			beats := hdl.MinFrameBeats(tc.width)
			d := c.Derived()
			// At one packet per cycle (512 bits, two ports) the send side's feedback (a sent
			// record per packet and the ACKs) is more than its one operation per cycle, and the
			// source pauses now and then: hence the 3/2.
			budget := uint64(n*beats/tc.ports*3/2 + res.DeclaredLatency["rx"] + 2*d.PathTableDepth + 64)
			require.LessOrEqual(t, res.RTLCycles, budget, "%d cycles for %d packets at %d cycles per frame per port", res.RTLCycles, n, beats)
		})
	}
}

// TestSackSeeds runs the mixed scenario under several seeds.
func TestSackSeeds(t *testing.T) {
	c := config.Default()
	for _, seed := range []uint64{11, 12, 13} {
		requireClean(t, runSackTest(t, c, "random", seed, 30_000, nil, ""))
	}
}

// TestSackConfigMatrix co-simulates the corners of the configuration space: narrow and wide
// bitmaps, 1 to 64 paths, both reset styles, every ACK policy, short PSNs that wrap often and
// pipelined rotators.
func TestSackConfigMatrix(t *testing.T) {
	matrix := map[string]func(*config.Config){
		"w64-4paths-async-psn10-ongap": func(c *config.Config) {
			c.SackWidth, c.PathsPerConnection, c.Connections = 64, 4, 2
			c.ResetStyle, c.PSNWidth, c.AckPolicy.Mode = config.ResetAsyncLow, 10, config.AckOnGap
		},
		"w1024-1path-everypacket-tree3": func(c *config.Config) {
			c.SackWidth, c.PathsPerConnection, c.Connections = 1024, 1, 2
			c.AckPolicy.Mode, c.Pipeline.TreeRegisterEvery = config.AckEveryPacket, 3
		},
		"w256-64paths-async-every8-tree2": func(c *config.Config) {
			c.SackWidth, c.PathsPerConnection, c.Connections = 256, 64, 2
			c.ResetStyle, c.AckPolicy.EveryN, c.Pipeline.TreeRegisterEvery = config.ResetAsyncLow, 8, 2
		},
	}
	for name, mutate := range matrix {
		t.Run(name, func(t *testing.T) {
			c := config.Default()
			c.Name = name
			mutate(&c)
			require.NoError(t, c.Validate())
			for _, sc := range []string{"random", "back-to-back", "wraparound"} {
				requireClean(t, runSackTest(t, c, sc, 5, 15_000, nil, ""))
			}
		})
	}
}

// TestSackCosimCatchesFaults breaks the RTL on purpose and requires cosim to notice, with a
// report that names the output, the cycle and the differing field, and a VCD around it.
func TestSackCosimCatchesFaults(t *testing.T) {
	faults := []struct {
		name, module, from, to, field string
		vcd                           bool
		scenario                      string
	}{
		// Where line rate needs entry II 2 (a 512-bit datapath; at the default 64 bits the rx
		// holds instead, entry II 3).
		{"rx forwarding disabled", "sack_rx",
			"wire fwd_hit = c_fwd;", "wire fwd_hit = 1'b0 && c_fwd;", "Cum", true, "random"},
		{"tx re-reports old losses", "sack_tx",
			"wire [SACK_WIDTH-1:0] newly_lost = o_lost & report_mask;", "wire [SACK_WIDTH-1:0] newly_lost = o_lost;", "Lost", false, "random"},
		// A stale INIT copy behind cum must not re-initialise the entry.
		{"rx path init ignores cum", "sack_rx",
			"wire path_reinit_next = c_path_init && !is_old;", "wire path_reinit_next = c_path_init;", "Cum", false, "path-init"},
		// A peek must leave the entry as it was.
		{"rx peek writes the entry", "sack_rx",
			"wire [ENTRY_WIDTH-1:0] entry_next = a_peek ? a_entry :", "wire [ENTRY_WIDTH-1:0] entry_next = 1'b0 ? a_entry :", "Bitmap", false, "peek"},
		{"rx path init ignored", "sack_rx",
			"wire path_reinit_next = c_path_init && !is_old;", "wire path_reinit_next = 1'b0 && c_path_init;", "PathInit", false, "random"},
		// The hazard paths of the two-stage recurrence: the hold of an operation right behind
		// one on its entry, and the merges of the two results the table read cannot see.
		{"rx same-entry hold disabled", "sack_rx",
			"wire one_ahead = in_q_valid && (new_idx == in_q_idx);", "wire one_ahead = 1'b0 && in_q_valid && (new_idx == in_q_idx);", "Cum", false, "back-to-back"},
		{"rx merge of the result being written disabled", "sack_rx",
			"wire merge_e_next = a_valid && ", "wire merge_e_next = 1'b0 && a_valid && ", "Cum", false, "random"},
		{"rx merge of the result just written disabled", "sack_rx",
			"wire merge_w_next = e_valid && ", "wire merge_w_next = 1'b0 && e_valid && ", "Cum", false, "random"},
		// sack_tx's two-stage recurrence: the operation one ahead (its verdict not yet known,
		// so every field's flags are computed on both of its outcomes) and the one two ahead.
		// (at a 512-bit datapath: at the default's 64 bits sack_tx holds instead, entry II 3)
		{"tx forwarding of the operation one ahead disabled", "sack_tx",
			"wire fwd1_hit = m_fwd1;", "wire fwd1_hit = 1'b0 && m_fwd1;", "Status", false, "back-to-back"},
		{"tx forwarding of the operation two ahead disabled", "sack_tx",
			"wire fwd2_hit = m_fwd2;", "wire fwd2_hit = 1'b0 && m_fwd2;", "Status", false, "back-to-back"},
		{"tx one-ahead ACK taken as accepted whatever its verdict", "sack_tx",
			"wire take_acked = ack_ahead && accept;", "wire take_acked = ack_ahead;", "Status", false, "back-to-back"},
		{"tx one-ahead sent record's nxt ignored", "sack_tx",
			"wire [2:0] nxt_pick = n_nxt_from_psn ? 3'd3 : n_nxt_from_inc ? 3'd4 : 3'd2;",
			"wire [2:0] nxt_pick = n_nxt_from_psn ? 3'd3 : 3'd2;", "Status", false, "back-to-back"},
		{"tx merge of the result being written disabled", "sack_tx",
			"wire merge_e_next = n_valid && ", "wire merge_e_next = 1'b0 && n_valid && ", "Status", false, "back-to-back"},
		{"tx merge of the result just written disabled", "sack_tx",
			"wire merge_w_next = e_valid && ", "wire merge_w_next = 1'b0 && e_valid && ", "Status", false, "random"},
		// Where a minimum frame leaves 3 cycles per operation (the default's 64 bits) the rx
		// holds an operation behind either of the two ahead on its entry...
		{"rx hold behind the operation two ahead disabled", "sack_rx",
			"wire two_ahead = c_valid && ", "wire two_ahead = 1'b0 && c_valid && ", "Cum", false, "back-to-back"},
		// There the search starts in stage c, from the packet's slot with its bit forced set (the
		// packet at head fills it), and whether the slot's bit is set is ORed from 16-slot groups.
		{"rx search without the packet's own bit", "sack_rx",
			"wire [SACK_WIDTH-1:0] clear_bits = ~(merged_bitmap | slot_onehot);",
			"wire [SACK_WIDTH-1:0] clear_bits = ~merged_bitmap;", "Cum", false, "in-order"},
		{"rx duplicate test misses the top group", "sack_rx",
			"wire slot_set = |c_slot_hits;", "wire slot_set = |c_slot_hits[{% sub (div $W 16) 2 %}:0];", "Class", false, "random"},
		// ... and the tx an operation in stage pre behind either of the two ahead on its entry.
		{"tx hold behind the operation one ahead disabled", "sack_tx",
			"wire one_ahead = !hold && ", "wire one_ahead = 1'b0 && !hold && ", "Status", false, "back-to-back"},
		{"tx hold behind the operation two ahead disabled", "sack_tx",
			"wire two_ahead = hold ? ", "wire two_ahead = 1'b0 && hold ? ", "Status", false, "random"},
		// There the report's start is a subtraction in two halves, over stages m and n.
		{"tx report start without the low half's borrow", "sack_tx",
			"- {{% sub (sub $P .D.TxStartLow) 1 %}'d0, n_start_borrow};", "- {% sub $P .D.TxStartLow %}'d0;", "Lost", false, "random"},
		// ... or, with a 1024-bit bitmap where the line needs entry II 2 (a 512-bit datapath),
		// searches both candidate entries: the forwarded one's result must be the one taken.
		{"rx search of the table's entry taken when forwarding", "sack_rx",
			"wire [SLOT_WIDTH-1:0] upper_idx = fwd_hit ? g_search[1].upper_idx : g_search[0].upper_idx;",
			"wire [SLOT_WIDTH-1:0] upper_idx = g_search[0].upper_idx;", "Cum", false, "random"},
	}
	var tf []templateFault
	for _, f := range faults {
		tf = append(tf, templateFault{Name: f.name, Module: f.module, From: f.from, To: f.to, Field: f.field, VCD: f.vcd, Scenario: f.scenario})
	}
	// The forwarding fault needs a 512-bit datapath (entry II 2; the default's 64 bits hold
	// instead, entry II 3), the dual search a 1024-bit bitmap at 512 bits.
	wideDP512 := sackWideConfig()
	wideDP512.Name, wideDP512.DatapathWidth = "w1024-1path-dp512", 512
	forwarding := sackForwardingConfig()
	configOf := map[string]config.Config{
		"rx forwarding disabled":                                  forwarding,
		"tx forwarding of the operation one ahead disabled":       forwarding,
		"tx forwarding of the operation two ahead disabled":       forwarding,
		"tx one-ahead ACK taken as accepted whatever its verdict": forwarding,
		"tx one-ahead sent record's nxt ignored":                  forwarding,
		"rx search of the table's entry taken when forwarding":    wideDP512,
	}
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		c, ok := configOf[f.Name]
		if !ok {
			c = config.Default()
		}
		return runSackTest(t, c, f.Scenario, 1, 20_000, mutate, vcd)
	})
}

func TestUnknownScenario(t *testing.T) {
	_, err := RunSack(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown sack scenario")
}

// sackForwardingConfig is the default configuration at a 512-bit datapath, where a minimum
// frame takes 2 cycles: both sides forward instead of holding (sack_rx at entry II 2, sack_tx
// at 1).
func sackForwardingConfig() config.Config {
	c := config.Default()
	c.Name, c.DatapathWidth = "default-dp512", 512
	return c
}

// sackWideConfig is the default configuration with a 1024-bit SACK on one path per connection
// (the w1024-1path matrix shape): sack_rx's entry II is 3 there at a 64-bit datapath.
func sackWideConfig() config.Config {
	c := config.Default()
	c.Name, c.SackWidth, c.PathsPerConnection, c.Connections = "w1024-1path", hdlsack.DualSearchFrom, 1, 2
	return c
}
