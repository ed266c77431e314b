package sack_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/lint"
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
		c.Pipeline.SpeculativeSearch = len(out)%2 == 1
		out = append(out, c)
	}
	return out
}

func build(t *testing.T, c config.Config) *gen.Design {
	t.Helper()
	u, err := sack.New(c)
	require.NoError(t, err)
	srcs, err := u.Sources()
	require.NoError(t, err)
	d, err := gen.Build(sack.Top, srcs, gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: c.Hash()})
	require.NoError(t, err)
	return d
}

func TestLintMatrix(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	for _, c := range lintMatrix() {
		t.Run(c.Name, func(t *testing.T) {
			require.NoError(t, c.Validate())
			d := build(t, c)
			dir := t.TempDir()
			require.NoError(t, d.Write(dir))
			rep, err := lint.Run(context.Background(), d.RTLFiles(dir), d.Top, lint.Options{})
			require.NoError(t, err)
			require.True(t, rep.OK(), "%s", rep)
		})
	}
}

func TestRegenerationIsByteIdentical(t *testing.T) {
	for _, c := range lintMatrix()[:3] {
		a, b := t.TempDir(), t.TempDir()
		require.NoError(t, build(t, c).Write(a))
		require.NoError(t, build(t, c).Write(b))
		for _, name := range []string{"filelist.f", "mrgen.core", "manifest.json", "rtl/sack_rx.v", "rtl/sack_tx.v", "rtl/sack_unit.v"} {
			x, err := os.ReadFile(filepath.Join(a, name))
			require.NoError(t, err)
			y, err := os.ReadFile(filepath.Join(b, name))
			require.NoError(t, err)
			require.True(t, bytes.Equal(x, y), "%s differs between two generations of %s", name, c.Name)
		}
	}
}

func TestDescription(t *testing.T) {
	c := config.Default()
	u, err := sack.New(c)
	require.NoError(t, err)
	require.Equal(t, 256, u.W)
	require.Equal(t, 8, u.IW)
	require.Equal(t, 32, u.Depth)
	require.Equal(t, 3, u.RxLatency)
	require.Equal(t, 3, u.TxLatency)
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
	require.Equal(t, 5, u.RxLatency)
	_, ok = u.UnitModule().Port("rst_n")
	require.True(t, ok)

	c.SackWidth = 100
	_, err = sack.New(c)
	require.ErrorContains(t, err, "sack_width")
}
