package cosim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/wire"
	hdlparser "github.com/mrgen/mrgen/hdl/parser"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runParserTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunParser(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

// parserConfigs are the parser's matrix configurations, one per datapath width.
func parserConfigs(t *testing.T) []config.Config {
	t.Helper()
	var out []config.Config
	for _, w := range []string{"64", "128", "256", "512"} {
		c, err := config.Load(filepath.Join("..", "configs", "matrix", "parser-w"+w+".yaml"))
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

// reachableReasons are the drop reasons a configuration can produce (psn_out_of_range needs
// psn_width < 32).
func reachableReasons(c config.Config) []wire.DropReason {
	var out []wire.DropReason
	for _, r := range wire.AllDropReasons() {
		if r == wire.DropNone || r == wire.DropPSNOutOfRange && c.PSNWidth == 32 {
			continue
		}
		out = append(out, r)
	}
	return out
}

// TestParserWidths runs mixed valid and malformed traffic, with input gaps and output
// backpressure, at every datapath width, and malformed traffic alone that must reach every drop
// reason.
func TestParserWidths(t *testing.T) {
	for _, c := range parserConfigs(t) {
		t.Run(c.Name, func(t *testing.T) {
			res := runParserTest(t, c, "random", 7, 20_000, nil, "")
			requireClean(t, res)
			require.Equal(t, 20_000, res.Packets)
			require.GreaterOrEqual(t, float64(res.Counts["malformed"]), 0.2*float64(res.Packets), "malformed share")
			require.Positive(t, res.Counts["accepted"])
			require.Positive(t, res.Counts["payload_packets"])
			for _, v := range []string{"hdr"} {
				require.Equal(t, res.DeclaredLatency[v], res.MinLatency[v], "latency without backpressure")
			}

			res = runParserTest(t, c, "malformed", 8, 20_000, nil, "")
			requireClean(t, res)
			for _, r := range reachableReasons(c) {
				require.Positive(t, res.Drops[r.String()], "drop reason %s never exercised", r)
			}
		})
	}
}

// TestParserLineRate sends minimum-size frames back to back without gaps or backpressure: the
// parser must take one beat every cycle (no bubble between frames, so at 512 bits a one-beat
// frame goes at one frame per cycle) and answer every frame exactly Latency cycles after its
// last beat.
func TestParserLineRate(t *testing.T) {
	for _, c := range parserConfigs(t) {
		t.Run(c.Name, func(t *testing.T) {
			res := runParserTest(t, c, "line-rate", 3, 5_000, nil, "")
			requireClean(t, res)
			require.Equal(t, res.DeclaredLatency["hdr"], res.MinLatency["hdr"])
			require.Equal(t, res.DeclaredLatency["hdr"], res.MaxLatency["hdr"])
			require.Zero(t, res.Counts["input_stalls"], "cycles with a beat offered and not taken")
			require.Zero(t, res.Counts["input_idle"], "cycles without a beat while frames remained")
			require.Positive(t, res.Counts["beats"])
			u, err := hdlparser.New(c)
			require.NoError(t, err)
			require.Equal(t, u.InitCycles(), res.Counts["init_cycles"], "cycles from reset to s_axis_tready: one per counter slot")
		})
	}
}

// TestParserScenarios runs the other scenarios on the default configuration.
func TestParserScenarios(t *testing.T) {
	for _, sc := range []string{"valid", "malformed", "backpressure", "stall-bursts"} {
		t.Run(sc, func(t *testing.T) {
			res := runParserTest(t, config.Default(), sc, 11, 5_000, nil, "")
			requireClean(t, res)
			if sc == "valid" {
				require.Zero(t, res.Counts["malformed"])
				require.Equal(t, res.Packets, res.Counts["accepted"], "every valid frame is accepted")
			}
		})
	}
}

// TestParserCosimCatchesFaults breaks the RTL on purpose and requires cosim to notice.
func TestParserCosimCatchesFaults(t *testing.T) {
	// Every fault runs at parser-w128 but the token's, which needs frames of two beats (a
	// 128-bit frame's token waits five cycles for the next one: stage y holds it still).
	faults := []struct {
		name, module, from, to, stream, field string
		vcd                                   bool
	}{
		{"psn bit slip", "rx_parser",
			"wire [31:0] h_psn = s_psn;", "wire [31:0] h_psn = {s_psn[30:0], s_psn[31]};", "hdr", "PSN", true},
		{"icrc not checked", "rx_parser",
			"wire bad_icrc = ~crc_raw != join_tr;", "wire bad_icrc = 1'b0;", "hdr", "Reason", false},
		{"checks out of order", "rx_parser",
			"wire chk_unknown_opcode = !op_data && !op_ack && !op_nak && !op_announce;",
			"wire chk_unknown_opcode = !op_data && !op_ack && !op_nak && !op_announce && !chk_bad_flags;", "hdr", "Reason", false},
		// The hazard paths of the pipeline: the ICRC verdict's place in the check order, the
		// token meeting its ICRC one stage early, the pad count reaching the unshift network
		// one stage early, a dropped frame's descriptor slot never freed, a last beat taken
		// with no descriptor slot free, one taken with no outcome-queue entry free, and a full
		// outcome queue that looks empty (it deadlocked the parser until session 39).
		{"icrc verdict before the lower checks", "rx_parser",
			"wire [5:0] join_reason = j{% $JD %}_early ? j{% $JD %}_first : bad_icrc ? BAD_ICRC :",
			"wire [5:0] join_reason = bad_icrc ? BAD_ICRC : j{% $JD %}_early ? j{% $JD %}_first :", "hdr", "Reason", false},
		{"token meets the icrc a stage early", "rx_parser",
			"wire [31:0] join_tr = j{% $JD %}_tr;", "wire [31:0] join_tr = j1_tr;", "hdr", "Reason", false},
		// The frame fields held in stage x at 64 and 128 bits (HoldFrameFields): loaded by a
		// runt too, or read for a runt's payload verdict.
		{"held fields loaded by every frame", "rx_parser",
			"if (w_valid && tail_beat) begin", "if (w_valid) begin", "hdr", "", false},
		{"held payload beats read for a runt", "rx_parser",
			"j{% $JD %}_long ? x_pbeats :", "1'b1 ? x_pbeats :", "", "", false},
		{"pad count a stage early", "rx_parser",
			".zeros(y_zeros),", ".zeros(x_zeros),", "hdr", "Reason", false},
		{"dropped frame keeps its slot", "rx_parser",
			"wire drop_free = pop && head_reason != 6'd0 && head_claim;", "wire drop_free = 1'b0;", "hdr", "", false},
		{"last beat taken with no slot", "rx_parser",
			"last_ok <= oq_ok_next && (ds_ok_next || !may_claim_next);", "last_ok <= oq_ok_next;", "hdr", "", false},
		{"outcome queue room ignores the last beat taken", "rx_parser",
			"oq_ok_next = eof ? oq_used_pop < 5'd{% sub $.D.OutDepthT 1 %}", "oq_ok_next = eof ? oq_used_pop < 5'd{% $.D.OutDepthT %}", "", "", false},
		{"outcome queue full looks empty", "rx_parser",
			"wire oq_any = oq_wr != oq_rd;", "wire oq_any = oq_wa != oq_ra;", "stall", "no handshake", false},
		{"payload aligner one byte off", "rx_parser_payload",
			"pair[{1'b0, q_shift, 3'b000} +:", "pair[{1'b0, q_shift, 3'b000} + 8 +:", "payload", "rtl", false},
	}
	var tf []templateFault
	for _, f := range faults {
		// Room for a last beat matters only once the outputs have held back enough frames.
		sc := "random"
		if strings.HasPrefix(f.name, "last beat") || strings.HasPrefix(f.name, "outcome queue") {
			sc = "stall-bursts"
		}
		tf = append(tf, templateFault{Name: f.name, Module: f.module, From: f.from, To: f.to, Stream: f.stream, Field: f.field, VCD: f.vcd, Scenario: sc})
	}
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		cfg := "parser-w128.yaml"
		if strings.HasPrefix(f.Name, "token") {
			cfg = "parser-w512.yaml"
		}
		c, err := config.Load(filepath.Join("..", "configs", "matrix", cfg))
		require.NoError(t, err)
		return runParserTest(t, c, f.Scenario, 1, 5_000, mutate, vcd)
	})
}

func TestUnknownParserScenario(t *testing.T) {
	_, err := RunParser(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown parser scenario")
	_, err = RunParser(context.Background(), Options{Config: config.Default(), Scenario: "random", Packets: 0})
	require.ErrorContains(t, err, "packets must be positive")
}
