package placement_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/hdl/placement"
	"github.com/mrgen/mrgen/internal/blocktest"
)

// lintMatrix covers the configurations of configs/ and configs/matrix/ (they share the
// placement fields of the default) and the corners of the placement fields: 1 to 16
// connections, 1 to 256 streams, D 2 to 256, 1 to 256 regions (powers of two and not), mtu
// 256 to 8192, both reset styles.
func lintMatrix() []config.Config {
	type row struct {
		conns, streams, depth, regions, mtu int
		reset                               string
	}
	rows := []row{
		{4, 4, 8, 16, 4096, config.ResetSyncHigh}, // the default
		{1, 1, 2, 1, 256, config.ResetAsyncLow},
		{2, 3, 4, 5, 1024, config.ResetSyncHigh},
		{16, 2, 16, 256, 8192, config.ResetAsyncLow},
		{3, 256, 2, 100, 512, config.ResetSyncHigh},
		{1, 1, 256, 2, 2048, config.ResetSyncHigh},
	}
	var out []config.Config
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("c%d-s%d-d%d-r%d-mtu%d-%s", r.conns, r.streams, r.depth, r.regions, r.mtu, r.reset)
		c.Connections, c.StreamsPerConnection, c.PostedReceivesPerStream = r.conns, r.streams, r.depth
		c.MemoryRegions, c.MTU, c.ResetStyle = r.regions, r.mtu, r.reset
		out = append(out, c)
	}
	return out
}

func TestLintMatrix(t *testing.T) {
	blocktest.LintMatrix(t, "placement", append(blocktest.RepoConfigs(t), lintMatrix()...))
}

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "placement", lintMatrix()[:3], []string{"filelist.f", "mrgen.core", "manifest.json", "rtl/placement_engine.v"})
}

func TestDescription(t *testing.T) {
	c := config.Default()
	u, err := placement.New(c)
	require.NoError(t, err)
	require.Equal(t, 4, u.SIW)
	require.Equal(t, 3, u.LgD)
	require.Equal(t, 128, u.SlotDepth)
	require.Equal(t, 4, u.RIW)
	require.Equal(t, 28, u.TagW)
	require.Equal(t, 12, u.LgMTU)
	require.Equal(t, 64, u.B)
	require.Equal(t, 7+4+32, u.StreamEntryW)
	require.Equal(t, 8, u.CplIW, "completion table: 16 streams x 2D")
	require.Equal(t, 228, u.CplEntryW)
	require.Equal(t, 2+2+3+4+4, u.EventW)
	require.Equal(t, 5, u.PendW)
	require.Equal(t, 64+3+32+12+32+32+1+2+32+64, u.SlotEntryW)
	require.Equal(t, 28+2+2+65+64, u.RegionEntryW, "{gen, conn, access, end (65 bits), base}")
	m := u.Module()
	require.NoError(t, m.Check())
	p, ok := m.Port("cnt_drop")
	require.True(t, ok)
	require.Equal(t, 15*32, p.Width)
	p, ok = m.Port("s_ctl_op")
	require.True(t, ok)
	require.Equal(t, 3, p.Width)
	p, ok = m.Port("m_ctl_status")
	require.True(t, ok)
	require.Equal(t, 4, p.Width)
	srcs, err := u.Sources()
	require.NoError(t, err)
	require.Equal(t, []string{"placement_first_set", "placement_engine"}, []string{srcs[0].Module.Name, srcs[1].Module.Name})

	for _, tc := range []struct {
		name   string
		mutate func(*config.Config)
		field  string
	}{
		{"depth not a power of two", func(c *config.Config) { c.PostedReceivesPerStream = 6 }, "posted_receives_per_stream"},
		{"depth 1", func(c *config.Config) { c.PostedReceivesPerStream = 1 }, "posted_receives_per_stream"},
		{"depth above 256", func(c *config.Config) { c.PostedReceivesPerStream = 512 }, "posted_receives_per_stream"},
		{"mtu not a power of two", func(c *config.Config) { c.MTU = 1504 }, "mtu"},
		{"too many regions", func(c *config.Config) { c.MemoryRegions = 512 }, "memory_regions"},
		{"invalid config", func(c *config.Config) { c.MTU = 100 }, "mtu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			tc.mutate(&c)
			_, err := placement.New(c)
			require.ErrorContains(t, err, tc.field)
			require.ErrorIs(t, err, config.ErrConfig)
		})
	}
}
