package acker_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	goldenacker "github.com/mrgen/mrgen/golden/acker"
	"github.com/mrgen/mrgen/hdl/acker"
	"github.com/mrgen/mrgen/internal/blocktest"
)

// lintMatrix: the repository's default and a few matrix configurations, plus corners: one
// connection and one path (1-bit indices), a non-power-of-two table (3 x 3), many paths, both
// reset styles, hints off.
func lintMatrix(t *testing.T) []config.Config {
	t.Helper()
	var out []config.Config
	for _, path := range []string{"../../configs/default.yaml", "../../configs/matrix/w256-64paths.yaml",
		"../../configs/matrix/w64-4paths-asic.yaml"} {
		c, err := config.Load(path)
		require.NoError(t, err, path)
		out = append(out, c)
	}
	rows := []struct {
		conns, paths, psn, sack int
		reset                   string
		hints                   bool
	}{
		{1, 1, 12, 64, config.ResetAsyncLow, true},
		{3, 3, 16, 128, config.ResetSyncHigh, false},
		{63, 8, 32, 256, config.ResetSyncHigh, true},
	}
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("c%d-p%d-psn%d-w%d-%s", r.conns, r.paths, r.psn, r.sack, r.reset)
		c.Connections, c.PathsPerConnection, c.PSNWidth, c.SackWidth, c.ResetStyle = r.conns, r.paths, r.psn, r.sack, r.reset
		c.MemoryRegions = max(c.MemoryRegions, r.conns)
		c.RateHint.Enabled = r.hints
		out = append(out, c)
	}
	return out
}

func TestLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "acker", lintMatrix(t)) }

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "acker", lintMatrix(t)[:2], []string{"filelist.f", "mrgen.core", "manifest.json", "rtl/rx_acker.v"})
}

func TestDescription(t *testing.T) {
	tests := []struct {
		name                     string
		conns, paths             int
		iw, depth, dq, gq, count int
	}{
		{"default", 4, 8, 5, 32, 32, 4, 3},
		{"3x3", 3, 3, 4, 16, 9, 3, 2},
		{"63x8", 63, 8, 9, 512, 504, 63, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			c.Connections, c.PathsPerConnection = tc.conns, tc.paths
			c.MemoryRegions = max(c.MemoryRegions, tc.conns)
			u, err := acker.New(c)
			require.NoError(t, err)
			require.Equal(t, []int{tc.iw, tc.depth, tc.dq, tc.gq, tc.count}, []int{u.IW, u.Depth, u.DQ, u.GQ, u.CountW})
			require.NoError(t, u.Module().Check())
			require.Len(t, u.Hints(), tc.conns)
			require.Equal(t, uint16(1000), u.Hints()[0].Value, "one sender: the whole 100 Gb/s")
		})
	}
}

func TestNewRejectsBadTimers(t *testing.T) {
	c := config.Default()
	c.AckPolicy.MaxGatherNS = 1000 // below gather_ns
	_, err := acker.New(c)
	require.ErrorContains(t, err, "ack_policy.max_gather_ns")
}

// TestMovedBoundsAreGoldensRule checks the ROM's two compares against golden's refresh rule for
// every told hint, at current hints across the range.
func TestMovedBoundsAreGoldensRule(t *testing.T) {
	for _, now := range []uint16{0, 1, 2, 9, 10, 11, 99, 100, 101, 1000, 1234, 4095, 40000, 59578, 59579, 65534, 65535} {
		hi, lo := acker.MovedBounds(now)
		for h := 0; h <= math.MaxUint16; h++ {
			byBounds := h >= hi || now > 0 && h <= lo
			require.Equal(t, goldenacker.HintMoved(uint16(h), now), byBounds, "told %d, current %d (bounds %d, %d)", h, now, hi, lo)
		}
	}
}
