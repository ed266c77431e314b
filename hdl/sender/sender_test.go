package sender_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/hdl/sender"
	"github.com/mrgen/mrgen/internal/blocktest"
	"github.com/mrgen/mrgen/pipeline"
)

// lintMatrix: the default, the 64-path NIC, two other matrix configurations (a 1024-bit SACK
// with one path, a 10-bit PSN ASIC config), and corners: one connection, a 3 x 3 table with
// odd streams, async reset.
func lintMatrix(t *testing.T) []config.Config {
	t.Helper()
	var out []config.Config
	for _, path := range []string{"../../configs/default.yaml", "../../configs/matrix/nic-w512-64paths.yaml",
		"../../configs/matrix/w1024-1path.yaml", "../../configs/matrix/w64-4paths-asic.yaml"} {
		c, err := config.Load(path)
		require.NoError(t, err, path)
		out = append(out, c)
	}
	rows := []struct {
		conns, paths, streams, psn, sack int
		reset                            string
	}{
		{1, 1, 1, 12, 64, config.ResetAsyncLow},
		{3, 3, 3, 16, 128, config.ResetSyncHigh},
	}
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("c%d-p%d-s%d-psn%d-w%d-%s", r.conns, r.paths, r.streams, r.psn, r.sack, r.reset)
		c.Connections, c.PathsPerConnection, c.StreamsPerConnection = r.conns, r.paths, r.streams
		c.PSNWidth, c.SackWidth, c.ResetStyle = r.psn, r.sack, r.reset
		out = append(out, c)
	}
	return out
}

func TestLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "sender", lintMatrix(t)) }

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "sender", lintMatrix(t)[:2], []string{"filelist.f", "mrgen.core", "manifest.json",
		"rtl/tx_engine.v", "rtl/tx_window_unit.v", "rtl/sack_tx.v"})
}

func TestDescription(t *testing.T) {
	u, err := sender.New(config.Default())
	require.NoError(t, err)
	require.NoError(t, u.Module().Check())
	// 256 SACK bits + 256 packets of window: 512 records per path.
	require.Equal(t, []int{512, 9, 2, 256, 8, 64, 6, 7}, []int{u.R, u.RW, u.CW, u.WD, u.WSW, u.MP, u.IXW, u.NW})
	require.Equal(t, pipeline.PortBits, sender.PortW, "the descriptor's port is nic_tx's")
	names := map[string]bool{}
	for _, s := range u.States() {
		require.False(t, names[s], "state %s twice", s)
		names[s] = true
	}
	require.LessOrEqual(t, len(u.States()), 1<<u.StateW(), "the state register holds every state")
}
