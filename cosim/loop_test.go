package cosim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runLoopTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunLoop(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c)})
	require.NoError(t, err)
	return res
}

// TestLoopScenarios runs every closed-loop scenario on the default configuration: nic_rx as
// host 0, every frame it receives compared with its golden shadow's handling, and every message
// delivered and verified at the end.
func TestLoopScenarios(t *testing.T) {
	for _, sc := range LoopScenarios() {
		t.Run(sc, func(t *testing.T) {
			res := runLoopTest(t, config.Default(), sc, 5, 400, nil)
			requireClean(t, res)
			require.GreaterOrEqual(t, res.Packets, 400)
			require.Positive(t, res.Counts["messages_verified"])
			require.Positive(t, res.Counts["dma_writes"])
			require.Positive(t, res.Counts["control_frames"])
			if sc == "chaos" {
				require.Positive(t, res.Drops["bad_icrc"], "corrupted frames are dropped by both")
				require.Positive(t, res.Counts["duplicated_frames"])
				require.Positive(t, res.Counts["fabric_loss_drops"])
			}
		})
	}
}

// TestLoopCatchesBlockFault breaks one block's template inside the top (rx_acker's rate-hint
// ROM is one unit high) and requires the closed loop to stop on the first control frame that
// differs.
func TestLoopCatchesBlockFault(t *testing.T) {
	faults := []templateFault{{Name: "rate-hint ROM one unit high", Module: "rx_acker", Scenario: "clean",
		From: "hint_of = 16'd{% .Value %};", To: "hint_of = 16'd{% .Value %} + 16'd1;", Stream: "control frames"}}
	requireFaultsCaught(t, faults, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, _ string) *Result {
		return runLoopTest(t, config.Default(), f.Scenario, 5, 400, mutate)
	})
}

func TestLoopUnknownScenario(t *testing.T) {
	_, err := RunLoop(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown closed-loop scenario")
}
