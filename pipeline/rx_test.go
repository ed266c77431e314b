package pipeline_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/internal/blocktest"
	"github.com/mrgen/mrgen/pipeline"
)

// lintMatrix: the default, the closed loop's wide configuration, a non-power-of-two table with
// jumbo frames at 128 bits, and an ASIC-reset configuration at 256 bits.
func lintMatrix(t *testing.T) []config.Config {
	t.Helper()
	var out []config.Config
	for _, name := range []string{"default.yaml", "matrix/nic-w512-64paths.yaml", "matrix/parser-w128.yaml", "matrix/w64-4paths-asic.yaml"} {
		c, err := config.Load(filepath.Join("..", "configs", name))
		require.NoError(t, err, name)
		out = append(out, c)
	}
	c := config.Default()
	c.Name, c.DatapathWidth, c.ResetStyle = "w256-async", 256, config.ResetAsyncLow
	return append(out, c)
}

// Block nic is the NIC top: nic_rx, nic_tx and the egress merge.
func TestNICLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "nic", lintMatrix(t)) }

func TestNICRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "nic", lintMatrix(t)[:1], []string{"filelist.f", "mrgen.core", "manifest.json", "rtl/nic_rx.v",
		"rtl/nic_tx.v", "rtl/nic_egress_merge.v", "rtl/nic_top.v"})
}

func TestRxDescription(t *testing.T) {
	r, err := pipeline.NewRx(config.Default())
	require.NoError(t, err)
	require.NoError(t, r.Module().Check())
	conns, err := r.DepHdr()
	require.NoError(t, err)
	require.Len(t, conns, len(r.Dep.Fields), "every deparser descriptor field is driven")
	srcs, err := r.Sources()
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, s := range srcs {
		require.False(t, seen[s.Module.Name], "module %s twice", s.Module.Name)
		seen[s.Module.Name] = true
	}
	for _, m := range []string{"rx_parser", "sack_rx", "placement_engine", "rx_acker", "tx_deparser", "nic_rx"} {
		require.True(t, seen[m], m)
	}
	require.False(t, seen["sack_tx"], "the receive top leaves the send side's modules out")
}
