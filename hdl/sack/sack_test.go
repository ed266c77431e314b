package sack_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/internal/blocktest"
)

// lintMatrix covers SACK widths 64/256/1024, 1/4/64 paths, both reset styles, every ACK
// policy, narrow PSNs and pipelined rotators.
func lintMatrix() []config.Config {
	type row struct {
		w, paths, conns, psn, tree int
		reset, ack                 string
	}
	rows := []row{
		{64, 1, 1, 32, 0, config.ResetSyncHigh, config.AckEveryN},
		{64, 4, 4, 8, 0, config.ResetAsyncLow, config.AckOnGap},
		{64, 64, 2, 16, 2, config.ResetSyncHigh, config.AckEveryPacket},
		{256, 1, 4, 32, 0, config.ResetAsyncLow, config.AckEveryPacket},
		{256, 4, 4, 10, 4, config.ResetSyncHigh, config.AckEveryN},
		{256, 64, 2, 32, 3, config.ResetAsyncLow, config.AckEveryN},
		{1024, 1, 2, 12, 5, config.ResetSyncHigh, config.AckOnGap},
		{1024, 4, 1, 32, 0, config.ResetAsyncLow, config.AckEveryN},
		{1024, 64, 1, 32, 1, config.ResetSyncHigh, config.AckEveryPacket},
	}
	var out []config.Config
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("w%d-p%d-c%d-psn%d-t%d-%s-%s", r.w, r.paths, r.conns, r.psn, r.tree, r.reset, r.ack)
		c.SackWidth, c.PathsPerConnection, c.Connections, c.PSNWidth = r.w, r.paths, r.conns, r.psn
		c.Pipeline.TreeRegisterEvery, c.ResetStyle, c.AckPolicy.Mode = r.tree, r.reset, r.ack
		out = append(out, c)
	}
	return out
}

func TestLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "sack", lintMatrix()) }

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "sack", lintMatrix()[:3], []string{"filelist.f", "mrgen.core", "manifest.json", "rtl/sack_rx.v", "rtl/sack_tx.v", "rtl/sack_unit.v"})
}

func TestDescription(t *testing.T) {
	c := config.Default()
	u, err := sack.New(c)
	require.NoError(t, err)
	require.Equal(t, 256, u.W)
	require.Equal(t, 8, u.IW)
	require.Equal(t, 32, u.Depth)
	require.Equal(t, 6, u.RxLatency) // 4 + the rotator's 8 levels in 2 stages (tree_register_every 4)
	require.Equal(t, 7, u.TxLatency)
	require.Equal(t, 8+256+64, u.RxEntryW)
	rx := u.RxModule()
	require.NoError(t, rx.Check())
	p, ok := rx.Port("m_rx_bitmap")
	require.True(t, ok)
	require.Equal(t, 256, p.Width)
	p, ok = rx.Port("s_pkt_conn")
	require.True(t, ok)
	require.Equal(t, 2, p.Width)

	c.Pipeline.TreeRegisterEvery = 3
	c.ResetStyle = config.ResetAsyncLow
	u, err = sack.New(c)
	require.NoError(t, err)
	require.Len(t, u.Rotate.Stages, 3) // levels {0,1,2} {3,4,5} {6,7}
	require.Equal(t, 7, u.RxLatency)
	_, ok = u.UnitModule().Port("rst_n")
	require.True(t, ok)

	c.SackWidth = 100
	_, err = sack.New(c)
	require.ErrorContains(t, err, "sack_width")
}
