package deparser_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl/crc"
	"github.com/mrgen/mrgen/hdl/deparser"
	"github.com/mrgen/mrgen/internal/blocktest"
)

// lintMatrix covers every datapath width, both reset styles, SACK widths 64..1024 (the ACK body
// spans 1..4 beats of header), the MTU range and odd table sizes, plus every configuration file
// of configs/ and configs/matrix/.
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

func TestLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "deparser", lintMatrix(t)) }

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "deparser", lintMatrix(t)[:3], []string{"filelist.f", "manifest.json",
		"rtl/tx_deparser.v"})
}

// TestDescription checks the derived sizes and the CRC start values against hand-computed
// numbers and hash/crc32.
func TestDescription(t *testing.T) {
	tests := []struct {
		width, sack                          int
		hdrMax, hdrBeats, crcBeat, early, kw int
		zeroTo14                             int
	}{
		// 58 + 8 + 16 + 40 = 122 header bytes; positions up to 122 + 65536 + 4 + 8 -> 17 bits.
		{64, 256, 122, 16, 1, 9, 14, 6},
		{128, 1024, 218, 14, 0, 5, 13, 14},
		{512, 64, 102, 2, 0, 2, 11, 14},
	}
	for _, tc := range tests {
		c := config.Default()
		c.DatapathWidth, c.SackWidth = tc.width, tc.sack
		u, err := deparser.New(c)
		require.NoError(t, err)
		require.Equal(t, tc.hdrMax, u.HdrMax)
		require.Equal(t, tc.hdrBeats, u.HdrBeats)
		require.Equal(t, tc.crcBeat, u.CrcBeat)
		require.Equal(t, tc.early, u.EarlyBeats)
		require.Equal(t, tc.kw, u.KW)
		require.Equal(t, uint32(0xFFFFFFFF), crc.Raw(u.Init14, make([]byte, tc.zeroTo14)))
		require.Equal(t, uint32(0xFFFFFFFF), crc.Raw(u.Init18, make([]byte, tc.zeroTo14+4)))
		top := u.DeparserModule()
		require.NoError(t, top.Check())
		p, ok := top.Port("s_hdr_sack")
		require.True(t, ok)
		require.Equal(t, tc.sack, p.Width)
		p, ok = top.Port("m_axis_tkeep")
		require.True(t, ok)
		require.Equal(t, tc.width/8, p.Width)
	}
	c := config.Default()
	c.DatapathWidth = 96
	_, err := deparser.New(c)
	require.ErrorContains(t, err, "datapath_width")
}

// TestHeaderLayouts checks the header vector against golden/wire's frame lengths: every layout
// has the length Encode gives its packets, and a byte takes one expression per distinct source.
func TestHeaderLayouts(t *testing.T) {
	u, err := deparser.New(config.Default())
	require.NoError(t, err)
	prm := u.Prm
	cls := u.Classes()
	require.Equal(t, 4*len(cls), u.Layouts())
	// Every opcode golden/wire defines has its own class.
	var ops []wire.Opcode
	for _, c := range cls {
		ops = append(ops, c.Op)
	}
	require.ElementsMatch(t, wire.AllOpcodes(), ops)
	for vo := 0; vo < u.Layouts(); vo++ {
		v := vo / len(cls)
		p := &wire.Packet{IP: wire.IPHeader{Version: 4}}
		if v&1 != 0 {
			p.IP.Version = 6
		}
		if v&2 != 0 {
			p.Eth.VLAN = &wire.VLANTag{}
		}
		p.BTH.Opcode = cls[vo%len(cls)].Op
		require.Equal(t, wire.FrameLen(p, prm)-wire.ICRCLen, u.HdrLen(vo), "layout %d", vo)
		require.Equal(t, p.BTH.Opcode.IsData(), cls[vo%len(cls)].Data)
	}
	bytes, err := u.HeaderBytes()
	require.NoError(t, err)
	require.Len(t, bytes, u.HdrBeats*u.B)
	// Bytes 0..11 (the MACs) are the same in every layout; byte 12 is 0x08 or 0x86 (the vector
	// holds every layout untagged).
	for p := 0; p < wire.EthTypeOff; p++ {
		require.Len(t, bytes[p].Choices, 1, "byte %d", p)
	}
	require.Len(t, bytes[wire.EthTypeOff].Choices, 2)
	lines, err := u.HeaderLines()
	require.NoError(t, err)
	require.Len(t, lines, u.HdrBeats*u.B)
}
