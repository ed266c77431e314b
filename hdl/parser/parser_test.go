package parser_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/hdl/crc"
	"github.com/mrgen/mrgen/hdl/parser"
	"github.com/mrgen/mrgen/internal/blocktest"
)

// lintMatrix covers every datapath width, both reset styles, SACK widths 64..1024 (the ACK body
// crosses 1..4 beats), narrow PSNs, the MTU range and odd table sizes, plus every configuration
// file of configs/ and configs/matrix/.
func lintMatrix(t *testing.T) []config.Config {
	t.Helper()
	type row struct {
		w, sack, psn, mtu, conns, paths, streams int
		reset                                    string
	}
	rows := []row{
		{64, 256, 32, 4096, 4, 8, 4, config.ResetSyncHigh},
		{64, 64, 16, 256, 1, 1, 1, config.ResetAsyncLow},
		{128, 1024, 24, 9000, 3, 5, 7, config.ResetSyncHigh},
		{256, 128, 32, 1504, 64, 64, 256, config.ResetAsyncLow},
		{512, 256, 20, 4096, 2, 4, 2, config.ResetSyncHigh},
		{512, 1024, 32, 9000, 1, 256, 1, config.ResetAsyncLow},
	}
	var out []config.Config
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("w%d-s%d-psn%d-mtu%d-c%d-p%d-s%d-%s", r.w, r.sack, r.psn, r.mtu, r.conns, r.paths, r.streams, r.reset)
		c.DatapathWidth, c.SackWidth, c.PSNWidth, c.MTU = r.w, r.sack, r.psn, r.mtu
		c.Connections, c.PathsPerConnection, c.StreamsPerConnection, c.ResetStyle = r.conns, r.paths, r.streams, r.reset
		out = append(out, c)
	}
	return append(out, blocktest.RepoConfigs(t)...)
}

func TestLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "parser", lintMatrix(t)) }

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "parser", lintMatrix(t)[:3], []string{"filelist.f", "manifest.json", "rtl/rx_parser.v", "rtl/rx_parser_payload.v"})
}

// TestDescription checks the derived sizes and the CRC start values against hand-computed
// numbers and hash/crc32.
func TestDescription(t *testing.T) {
	tests := []struct {
		width, sack, mtu                        int
		hdrLen, hdrBeats, crcBeat, tailBeat     int
		fifoDepth, maxFrame, outcomes, zeroTo14 int
	}{
		// 58 + 8 + 16 + 40 = 122 header bytes; (7 + 4096 + 7) / 8 = 513 payload beats -> 1024.
		{64, 256, 4096, 122, 16, 1, 7, 1024, 4202, 36, 6},
		{128, 1024, 9000, 218, 14, 0, 3, 1024, 9106, 36, 14},
		{512, 64, 256, 102, 2, 0, 0, 32, 362, 36, 14},
	}
	for _, tc := range tests {
		c := config.Default()
		c.DatapathWidth, c.SackWidth, c.MTU = tc.width, tc.sack, tc.mtu
		u, err := parser.New(c)
		require.NoError(t, err)
		require.Equal(t, tc.hdrLen, u.HdrLen)
		require.Equal(t, tc.hdrBeats, u.HdrBeats)
		require.Equal(t, tc.crcBeat, u.CrcBeat)
		require.Equal(t, tc.tailBeat, u.TailBeat)
		require.Equal(t, tc.fifoDepth, u.FifoDepth)
		require.Equal(t, tc.maxFrame, u.MaxFrame)
		require.Equal(t, tc.outcomes, u.Outcomes)
		// From the beat holding byte 14, zero bytes up to the IP header bring the register to
		// the standard initial value.
		require.Equal(t, uint32(0xFFFFFFFF), crc.Raw(u.Init14, make([]byte, tc.zeroTo14)))
		require.Equal(t, uint32(0xFFFFFFFF), crc.Raw(u.Init18, make([]byte, tc.zeroTo14+4)))
		top := u.ParserModule()
		require.NoError(t, top.Check())
		p, ok := top.Port("m_hdr_sack")
		require.True(t, ok)
		require.Equal(t, tc.sack, p.Width)
		p, ok = top.Port("cnt_rd_data")
		require.True(t, ok)
		require.Equal(t, 32, p.Width)
	}
	c := config.Default()
	c.DatapathWidth = 96
	_, err := parser.New(c)
	require.ErrorContains(t, err, "datapath_width")
}
