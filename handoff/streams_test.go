package handoff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
)

func TestSplit(t *testing.T) {
	in, out := hdl.In, hdl.Out
	base := []hdl.Port{in("clk", 1, ""), in("rst", 1, "")}
	tests := []struct {
		name    string
		ports   []hdl.Port
		streams map[string][]string // stream -> payload ports
		side    []string
		status  []string
		err     string
	}{
		{name: "valid/ready streams, a payload flag, side and status",
			ports: []hdl.Port{in("s_pkt_valid", 1, ""), out("s_pkt_ready", 1, ""), in("s_pkt_psn", 8, ""),
				out("m_rx_valid", 1, ""), in("m_rx_ready", 1, ""), out("m_rx_gap_valid", 1, ""),
				out("m_rx_gap_first", 8, ""), in("now", 32, ""), out("cnt_new", 32, "")},
			streams: map[string][]string{"s_pkt": {"s_pkt_psn"}, "m_rx": {"m_rx_gap_valid", "m_rx_gap_first"}},
			side:    []string{"now"}, status: []string{"cnt_new"}},
		{name: "AXI4-Stream and an event stream",
			ports: []hdl.Port{in("s_axis_tdata", 64, ""), in("s_axis_tvalid", 1, ""), out("s_axis_tready", 1, ""),
				in("s_axis_tlast", 1, ""), out("m_drop_valid", 1, ""), out("m_drop_reason", 6, "")},
			streams: map[string][]string{"s_axis": {"s_axis_tdata", "s_axis_tlast"}, "m_drop": {"m_drop_reason"}}},
		{name: "a handshake pointing the wrong way",
			ports: []hdl.Port{in("s_pkt_valid", 1, ""), in("s_pkt_ready", 1, "")}, err: "point the wrong way"},
		{name: "a payload port pointing the wrong way",
			ports: []hdl.Port{in("s_pkt_valid", 1, ""), out("s_pkt_ready", 1, ""), out("s_pkt_psn", 8, "")},
			err:   "payload port s_pkt_psn"},
		{name: "no stream", ports: []hdl.Port{in("now", 32, "")}, err: "no valid/ready stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &hdl.Module{Name: "m", Clock: "clk", Reset: "rst", Ports: append(append([]hdl.Port(nil), base...), tc.ports...)}
			it, err := Split(m)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			got := map[string][]string{}
			for _, s := range it.Streams {
				got[s.Name] = portNames(s.Payload)
			}
			require.Empty(t, cmp.Diff(tc.streams, got))
			require.Empty(t, cmp.Diff(tc.side, portNames(it.Side)))
			require.Empty(t, cmp.Diff(tc.status, portNames(it.Status)))
		})
	}
}

func portNames(ps []hdl.Port) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestHexPacking(t *testing.T) {
	// {a[4], b[40]} with the present bit above: 1, a = 0xA, b = 0x12_3456_789A.
	v := packWords([][]uint32{{0xA}, {0x3456789A, 0x12}}, []hdl.Port{hdl.In("a", 4, ""), hdl.In("b", 40, "")})
	require.Equal(t, "1a123456789a", hexWord(withTop(v, 44), 45))
	require.Equal(t, "000000000012", hexWord([]uint32{0x12}, 45))
}
