package cosim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/parser"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runDeparserTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunDeparser(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

// TestDeparserWidths runs every scenario at every datapath width: every frame byte for byte
// against wire.Encode, the four opcodes over IPv4/IPv6 with and without a tag, gaps on both
// inputs and backpressure; the line-rate scenarios require an output beat every cycle after
// the first and the declared latency for every frame; length-error requires its frames marked
// and counted; every scenario requires the declared accept delay (sparse offers most
// descriptors to an idle builder).
func TestDeparserWidths(t *testing.T) {
	for _, c := range parserConfigs(t) {
		t.Run(c.Name, func(t *testing.T) {
			for _, sc := range DeparserScenarios() {
				t.Run(sc, func(t *testing.T) {
					res := runDeparserTest(t, c, sc, 5, 600, nil, "")
					requireClean(t, res)
					require.Equal(t, 600, res.Compared)
					for _, op := range wire.AllOpcodes() {
						require.Positive(t, res.Counts["op_"+op.String()], "no %s frame", op)
					}
					require.Positive(t, res.Counts["ipv6"])
					require.Positive(t, res.Counts["vlan"])
					require.Less(t, res.Counts["ipv6"], res.Compared)
					require.Less(t, res.Counts["vlan"], res.Compared)
					require.Positive(t, res.Counts["payload_packets"])
					// Never sooner than declared; exactly as declared whenever the output is free
					// (under heavy backpressure a frame seldom finds all its stages free).
					require.GreaterOrEqual(t, res.MinLatency["frame"], res.DeclaredLatency["frame"])
					if sc != "backpressure" {
						require.Equal(t, res.DeclaredLatency["frame"], res.MinLatency["frame"])
					}
					// The first descriptor finds the builder idle: it is taken exactly the accept
					// delay after it is offered, and none sooner.
					require.Equal(t, res.DeclaredLatency["accept"], res.MinLatency["accept"])
					switch sc {
					case "line-rate", "line-rate-small":
						require.Zero(t, res.Counts["output_idle"], "cycles without an output beat after the first")
						require.Equal(t, res.DeclaredLatency["frame"], res.MaxLatency["frame"])
					case "length-error":
						require.Positive(t, res.Counts["bad_frames"])
					default:
						require.Zero(t, res.Counts["bad_frames"])
					}
				})
			}
		})
	}
}

// TestDeparserRoundTrip feeds every frame the RTL emits to golden/parser: each must be accepted
// unchanged, with the descriptor and payload of the packet it was built from.
func TestDeparserRoundTrip(t *testing.T) {
	tooltest.Require(t, "verilator", "g++", "make")
	for _, c := range parserConfigs(t)[:2] {
		t.Run(c.Name, func(t *testing.T) {
			gold, err := parser.New(wire.ParamsFrom(c))
			require.NoError(t, err)
			frames := 0
			res, err := runDeparserWith(context.Background(), Options{Config: c, Scenario: "random", Seed: 9, Packets: 400,
				Stamp: stamp(c)}, func(f *deparserFrame, got []byte) {
				desc, payload, reason := gold.Parse(got)
				require.Equal(t, wire.DropNone, reason, "frame of %s", f)
				require.Empty(t, cmp.Diff(parser.Describe(f.pkt), desc), "frame of %s", f)
				require.Equal(t, len(f.pkt.Payload), len(payload))
				require.Equal(t, f.pkt.Payload, append([]byte(nil), payload...)[:len(f.pkt.Payload):len(f.pkt.Payload)])
				frames++
			})
			require.NoError(t, err)
			requireClean(t, res)
			require.Equal(t, 400, frames)
		})
	}
}

// TestDeparserCosimCatchesFaults breaks the RTL on purpose and requires cosim to notice.
func TestDeparserCosimCatchesFaults(t *testing.T) {
	faults := []struct {
		name, from, to, want string
		vcd                  bool
		scenario             string
	}{
		{"realignment one lane off",
			"!data_lanes[lane] ? 8'h00 : low_lanes[lane] ? e_carry[8*lane +: 8] : rot[8*lane +: 8];",
			"!data_lanes[lane] ? 8'h00 : low_lanes[lane] ? rot[8*lane +: 8] : rot[8*lane +: 8];", "first difference", true, ""},
		{"ICRC not inverted", "wire [31:0] icrc = d{% $DL %}_bad ? crc_raw : ~crc_raw;", "wire [31:0] icrc = crc_raw;", "first difference", false, ""},
		{"IPv4 checksum not inverted", "_csum <= {% if eq $k 0 %}~c_fold", "_csum <= {% if eq $k 0 %}c_fold", "first difference", false, ""},
		{"mismatch not flagged", "o_user <= d{% $DL %}_last && d{% $DL %}_bad;", "o_user <= 1'b0;", "m_axis_tuser", false, ""},
		// The hazard path of the pipelined ICRC: its unshift network must stall with the beats
		// that wait beside it.
		{"unshift runs on under backpressure", ".ce(adv),", ".ce(1'b1),", "first difference", false, "backpressure"},
		// The skid register: an output beat the sink did not take must wait, not vanish.
		{"skid drops a beat under backpressure", "wire k_load = o_valid && !m_axis_tready && adv;", "wire k_load = 1'b0;", "", false, "backpressure"},
		// The registered beat flags (in_range, e_last, f_in_last), kept from e_k + 1 and e_k + 2:
		// one beat off must show.
		{"payload range starts a beat early", "(e_has_pay && e_k1 == e_hb0)", "(e_has_pay && e_k2 == e_hb0)", "first difference", false, ""},
		{"last beat flagged a beat early", "e_last <= e_k1 == e_lk;", "e_last <= e_k1 + {% dec $KW 1 %} == e_lk;", "", false, ""},
		// The header register and the lengths' registers load from the ports on the handshake
		// only: a descriptor offered while the frame before it is still going out must wait.
		{"header register loaded by a descriptor still waiting",
			"      e_carry <= rot;\n    end\n",
			"      e_carry <= rot;\n    end\n    if (s_hdr_valid) begin\n      hb <= hb_n;\n    end\n", "first difference", false, ""},
		// A tagged frame's beats: the tag inserted as the beats go out, bytes from the tag's end
		// on four lanes late, the low four lanes from the previous beat's top.
		{"tagged beats take the low lanes from their own beat",
			"u_ext = {u_beat[{% sub $W 33 %}:0], e_hc};",
			"u_ext = {u_beat[{% sub $W 33 %}:0], u_beat[{% sub $W 1 %}:{% sub $W 32 %}]};", "first difference", false, ""},
		{"the tagged beats' carry moves while the frame stalls",
			"    if (e_step) begin\n      e_hc <=", "    if (1'b1) begin\n      e_hc <=", "first difference", false, "backpressure"},
		// The beat's registered place in the frame (kept from e_k + 1) and the header register's
		// shift: both move only when the frame steps.
		{"the ICRC's beat flagged a beat early", "f_icrc_lo <= e_k1 == e_dk;", "f_icrc_lo <= e_k2 == e_dk;", "first difference", false, ""},
		{"a payload cut short still waited for", "!(e_short || (take_in && s_axis_tlast && !f_in_last))", "!e_short", "", false, ""},
		{"the payload's last beat expected a beat early", "f_in_last <= e_k2 == e_pay_end;", "f_in_last <= e_k1 == e_pay_end;", "", false, ""},
		// Stage p: a descriptor is taken only once its decode is registered.
		{"a descriptor taken with the decode of the cycle before", "p_ok <= s_hdr_valid;", "p_ok <= 1'b1;", "", false, "sparse"},
		// The ICRC's input rule, decided in stage e and registered beside the beat.
		{"the ICRC's variant bits not set", "crc_data = (a_data & a_ck) | a_c1;", "crc_data = a_data & a_ck;", "first difference", false, ""},
		{"the header shifts while its last beat waits for the payload",
			"    if (e_step && in_range) begin\n      e_carry <= rot;",
			"    if (adv) begin\n      hb <= hb >> {% $W %};\n    end\n    if (e_step && in_range) begin\n      e_carry <= rot;", "first difference", false, ""},
		{"lengths loaded by a descriptor still waiting",
			"      e_carry <= rot;\n    end\n",
			"      e_carry <= rot;\n    end\n    if (s_hdr_valid) begin\n      e_udp_len <= l_udp_len;\n    end\n", "first difference", false, ""},
	}
	var tf []templateFault
	for _, f := range faults {
		sc := f.scenario
		if sc == "" {
			sc = "length-error"
		}
		tf = append(tf, templateFault{Name: f.name, Module: "tx_deparser", From: f.from, To: f.to, Stream: "frame", Field: f.want, VCD: f.vcd, Scenario: sc})
	}
	requireFaultsCaught(t, tf, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		c, err := config.Load(filepath.Join("..", "configs", "matrix", "parser-w128.yaml"))
		require.NoError(t, err)
		res := runDeparserTest(t, c, f.Scenario, 1, 300, mutate, vcd)
		require.Contains(t, res.Mismatch.Input, "packet ")
		return res
	})
}

func TestUnknownDeparserScenario(t *testing.T) {
	_, err := RunDeparser(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown deparser scenario")
	_, err = RunDeparser(context.Background(), Options{Config: config.Default(), Scenario: "random", Packets: 0})
	require.ErrorContains(t, err, "packets must be positive")
}
