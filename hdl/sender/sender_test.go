package sender_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
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
	// The last row also has small FIFOs, of depths that are not powers of two.
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("c%d-p%d-s%d-psn%d-w%d-%s", r.conns, r.paths, r.streams, r.psn, r.sack, r.reset)
		c.Connections, c.PathsPerConnection, c.StreamsPerConnection = r.conns, r.paths, r.streams
		c.PSNWidth, c.SackWidth, c.ResetStyle = r.psn, r.sack, r.reset
		out = append(out, c)
	}
	last := &out[len(out)-1]
	last.Sender = config.Sender{RetxDepth: 100, MovedDepth: 3, RNRRetryDepth: 6}
	last.Name += "-fifos-100-3-6"
	return out
}

func TestLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "sender", lintMatrix(t)) }

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "sender", lintMatrix(t)[:2], []string{"filelist.f", "mrgen.core", "manifest.json",
		"rtl/tx_engine.v", "rtl/tx_window_unit.v", "rtl/sack_tx.v"})
}

// TestFIFODepths: the configuration's sender section sizes the engine's FIFOs, in golden's
// parameters and in the RTL's localparams alike; 0 keeps a field's default.
func TestFIFODepths(t *testing.T) {
	c := config.Default()
	def, err := sender.New(c)
	require.NoError(t, err)
	// Two paths' records (2 x 128) for the retransmit FIFO, a connection's (8 x 128) for each
	// moved FIFO, one path's for the RNR retry FIFO; the work rings 8 x 8 posted receives.
	require.Equal(t, []int{256, 1024, 128, 64}, []int{def.P.RetxDepth, def.P.MovedDepth, def.P.RetryDepth, def.P.WorkDepth})

	c.Sender = config.Sender{RetxDepth: 100, MovedDepth: 3, RNRRetryDepth: 64}
	u, err := sender.New(c)
	require.NoError(t, err)
	require.Equal(t, []int{100, 3, 64}, []int{u.P.RetxDepth, u.P.MovedDepth, u.P.RetryDepth})
	d, err := u.Design(gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: c.Hash()}, nil)
	require.NoError(t, err)
	var rtl string
	for _, f := range d.Files {
		if f.Path == "rtl/tx_engine.v" {
			rtl = string(f.Content)
		}
	}
	require.NotEmpty(t, rtl)
	for _, want := range []string{"RETX_DEPTH = 8'd100;", "MOVED_DEPTH = 3'd3;", "RETRY_DEPTH = 7'd64;"} {
		require.Contains(t, rtl, want)
	}

	// A field left 0 keeps its default.
	c.Sender = config.Sender{RetxDepth: 2}
	one, err := sender.New(c)
	require.NoError(t, err)
	// (records_per_path 0 too: 512 records per path, no path can fill its table.)
	require.Equal(t, []int{2, 4096, 512}, []int{one.P.RetxDepth, one.P.MovedDepth, one.P.RetryDepth})
}

func TestDescription(t *testing.T) {
	u, err := sender.New(config.Default())
	require.NoError(t, err)
	require.NoError(t, u.Module().Check())
	// sender.records_per_path: 128 records per path (512 with 0: 256 SACK bits + 256 packets).
	require.Equal(t, []int{128, 7, 2, 64, 6, 64, 6, 7}, []int{u.R, u.RW, u.CW, u.WD, u.WSW, u.MP, u.IXW, u.NW})
	require.Equal(t, pipeline.PortBits, sender.PortW, "the descriptor's port is nic_tx's")
	names := map[string]bool{}
	for _, s := range u.States() {
		require.False(t, names[s], "state %s twice", s)
		names[s] = true
	}
	require.Equal(t, len(u.States()), u.StateW(), "the state register is one-hot: a bit per state")
}
