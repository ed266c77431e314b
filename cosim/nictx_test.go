package cosim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/pipeline"
)

func runNicTxTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error, vcd string) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunNicTx(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), VCD: vcd})
	require.NoError(t, err)
	return res
}

// TestNicTxScenarios runs every scenario on the default configuration and the 512-bit 64-path
// one: every frame byte for byte with its tdest, every read request; back-to-back and
// max-length must keep the output busy every cycle after the first frame; header-only must
// issue no read; the declared latencies must be met exactly when the pipeline is idle.
func TestNicTxScenarios(t *testing.T) {
	wide, err := config.Load(filepath.Join("..", "configs", "matrix", "nic-w512-64paths.yaml"))
	require.NoError(t, err)
	for _, c := range []config.Config{config.Default(), wide} {
		t.Run(c.Name, func(t *testing.T) {
			for _, sc := range NicTxScenarios() {
				t.Run(sc, func(t *testing.T) {
					n := 300
					if sc == "header-only" {
						n = 2000 // short frames: enough of them to find the pipeline idle and the output ready
					}
					res := runNicTxTest(t, c, sc, 3, n, nil, "")
					requireClean(t, res)
					require.Equal(t, n, res.Compared)
					require.Positive(t, res.Counts["op_WRITE"])
					require.Positive(t, res.Counts["op_SEND"])
					require.Positive(t, res.Counts["ipv6"])
					require.Less(t, res.Counts["ipv6"], res.Compared)
					for _, f := range []string{"FIRST", "LAST", "ACKREQ", "RETX", "INIT"} {
						require.Positive(t, res.Counts["flag_"+f], f)
					}
					require.Equal(t, res.DeclaredLatency["deparser"], res.MinLatency["deparser"])
					if v, ok := res.MinLatency["header_frame"]; ok {
						require.GreaterOrEqual(t, v, res.DeclaredLatency["header_frame"])
					}
					switch sc {
					case "header-only":
						require.Zero(t, res.Counts["reads"])
						require.Equal(t, res.Compared, res.Counts["header_only"])
						require.Equal(t, res.DeclaredLatency["header_frame"], res.MinLatency["header_frame"])
					case "max-length":
						require.Equal(t, res.Compared, res.Counts["max_length"])
					default:
						require.Positive(t, res.Counts["header_only"])
						require.Positive(t, res.Counts["max_length"])
					}
					if sc != "header-only" {
						require.Equal(t, res.DeclaredLatency["read_request"], res.MinLatency["read_request"])
						// The outstanding reads stay within the derived depth (the driver checks every
						// cycle); full-mtu frames drain slower than reads issue, so they reach it.
						require.LessOrEqual(t, res.Counts["max_outstanding"], pipeline.TxReadDepth(c))
						if sc == "max-length" {
							require.Equal(t, pipeline.TxReadDepth(c), res.Counts["max_outstanding"])
						}
					}
					if nicTxScenarios[sc].Gapless {
						require.Zero(t, res.Counts["output_idle"], "cycles without an output beat after the first frame")
						require.Equal(t, res.DeclaredLatency["deparser"], res.MaxLatency["deparser"])
					}
				})
			}
		})
	}
}

// TestNicTxJumbo runs the random scenario at 128 bits with jumbo frames and an ASIC reset.
func TestNicTxJumbo(t *testing.T) {
	c, err := config.Load(filepath.Join("..", "configs", "matrix", "parser-w128.yaml"))
	require.NoError(t, err)
	res := runNicTxTest(t, c, "random", 4, 200, nil, "")
	requireClean(t, res)
	require.Positive(t, res.Counts["max_length"])
}

// TestNicTxCosimCatchesFaults breaks nic_tx on purpose and requires cosim to notice.
func TestNicTxCosimCatchesFaults(t *testing.T) {
	faults := []templateFault{
		{Name: "DMA address off by one", From: "rq_addr <= s_txd_addr;", To: "rq_addr <= s_txd_addr + 64'd1;",
			Stream: "read", Field: "Addr", VCD: true},
		{Name: "tag off by one", From: "rq_tag <= rd_tag_next;", To: "rq_tag <= rd_tag_next + 1'b1;",
			Stream: "read", Field: "Tag"},
		{Name: "read for a header-only packet", From: "wire txd_read = txd_fire && (s_txd_len != ",
			To: "wire txd_read = txd_fire || (s_txd_len != ", Stream: "read", Field: "Len"},
		{Name: "egress port of the previous frame", From: `"waddr" "eg_tail" "wdata" "q_port"`, To: `"waddr" "eg_tail + 3'd1" "wdata" "q_port"`,
			Stream: "frame", Field: "m_axis_tdest"},
		{Name: "outstanding reads not bounded", From: "wire rd_full = (rd_count == FULL);", To: "wire rd_full = 1'b0;",
			Stream: "read", Field: "outstanding"},
		{Name: "peer entry of the wrong connection", From: ".rd_conn(q1_conn),",
			To: ".rd_conn(q1_conn + 1'b1),", Stream: "frame", Field: "first difference"},
	}
	for i := range faults {
		faults[i].Module, faults[i].Scenario = "nic_tx", "backpressure"
	}
	requireFaultsCaught(t, faults, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result {
		res := runNicTxTest(t, config.Default(), f.Scenario, 1, 300, mutate, vcd)
		return res
	})
}

func TestUnknownNicTxScenario(t *testing.T) {
	_, err := RunNicTx(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown nictx scenario")
	_, err = RunNicTx(context.Background(), Options{Config: config.Default(), Scenario: "random", Packets: 0})
	require.ErrorContains(t, err, "packets must be positive")
}
