package pipeline_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/blocktest"
	"github.com/mrgen/mrgen/pipeline"
)

// nic_tx lints on the same matrix as nic_rx.
func TestTxLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "nictx", lintMatrix(t)) }

func TestTxRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "nictx", lintMatrix(t)[:1], []string{"filelist.f", "mrgen.core", "manifest.json", "rtl/nic_tx.v", "rtl/nic_peer_table.v"})
}

func TestTxDescription(t *testing.T) {
	tx, err := pipeline.NewTx(config.Default())
	require.NoError(t, err)
	require.NoError(t, tx.Module().Check())
	conns, err := tx.DepHdr()
	require.NoError(t, err)
	require.Len(t, conns, len(tx.Dep.Fields), "every deparser descriptor field is driven")
	srcs, err := tx.Sources()
	require.NoError(t, err)
	var names []string
	for _, s := range srcs {
		names = append(names, s.Module.Name)
	}
	require.Contains(t, names, "tx_deparser")
	require.Equal(t, pipeline.TxTop, names[len(names)-1])
	// The queue entry is the queued fields, back to back from bit 0.
	lay := tx.QueueLayout()
	require.Zero(t, lay[0].Lo)
	require.Equal(t, tx.DescW-1, lay[len(lay)-1].Hi)
	// nic_rx and nic_tx hold the same peer-table module, so one control-plane write serves both.
	rx, err := pipeline.NewRx(config.Default())
	require.NoError(t, err)
	rxSrcs, err := rx.Sources()
	require.NoError(t, err)
	peerOf := func(srcs []gen.Source) gen.Source {
		for _, s := range srcs {
			if s.Module.Name == pipeline.PeerTop {
				return s
			}
		}
		t.Fatalf("no %s among the sources", pipeline.PeerTop)
		return gen.Source{}
	}
	a, b := peerOf(srcs), peerOf(rxSrcs)
	require.Equal(t, a.Template, b.Template)
	require.Empty(t, cmp.Diff(a.Module, b.Module))
	require.Empty(t, cmp.Diff(a.Data, b.Data))
}

// The outstanding-read depth covers TxReadLatencyNS of back-to-back minimum frames: 100 cycles
// over 9-beat frames at 64 bits, 2-beat frames at 512 (capped at 64).
func TestTxReadDepth(t *testing.T) {
	c := config.Default()
	require.Equal(t, 16, pipeline.TxReadDepth(c))
	c.DatapathWidth = 512
	require.Equal(t, 64, pipeline.TxReadDepth(c))
	c.TargetClockMHz = 10
	require.Equal(t, 8, pipeline.TxReadDepth(c))
}
