package cosim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
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
			t.Logf("%s: drops %v counts %v cycles %d", sc, res.Drops, res.Counts, res.RTLCycles)
		})
	}
}
