package wire

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readHex reads a vector file: hex bytes separated by white space, '#' starts a comment.
func readHex(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return parseHex(t, string(data))
}

func parseHex(t testing.TB, text string) []byte {
	t.Helper()
	var sb strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(sb.String())
	require.NoError(t, err)
	return b
}

// goldenVectors are the hand-written frames of testdata/vectors with the packet each encodes.
// Each file says in its comments, field by field, where its bytes come from in
// docs/wire-format.md; its checksums were computed independently of this package.
func goldenVectors() []struct {
	file string
	prm  Params
	want *Packet
} {
	fd := func(last byte) [16]byte { return [16]byte{0: 0xfd, 15: last} }
	return []struct {
		file string
		prm  Params
		want *Packet
	}{
		{"write_ipv4.hex", DefaultParams(), &Packet{
			Eth: EthHeader{Dst: MAC{2, 0, 0, 0, 0, 2}, Src: MAC{2, 0, 0, 0, 0, 1}},
			IP: IPHeader{Version: 4, Src: [16]byte{10, 0, 0, 1}, Dst: [16]byte{10, 0, 0, 2},
				DSCP: 26, ECN: ECNECT0, TTL: 64, ID: 0x1234, DontFragment: true},
			UDP:     UDPHeader{SrcPort: 49153},
			BTH:     BTH{Opcode: OpWrite, Flags: FlagFirst | FlagLast | FlagAckReq, ConnID: 3, PathID: 5, StreamID: 2, PSN: 256, MSN: 7},
			Write:   &WriteExt{Timestamp: 1_000_000, MsgLen: 8, RKey: 0xCAFE0001, VA: 0x00007F0000001000},
			Payload: []byte("MetaRoCE"),
		}},
		{"send_ipv6.hex", DefaultParams(), &Packet{
			Eth:     EthHeader{Dst: MAC{2, 0, 0, 0, 0, 2}, Src: MAC{2, 0, 0, 0, 0, 1}},
			IP:      IPHeader{Version: 6, Src: fd(1), Dst: fd(2), DSCP: 0, ECN: ECNCE, TTL: 64, FlowLabel: 0x12345},
			UDP:     UDPHeader{SrcPort: 49154},
			BTH:     BTH{Opcode: OpSend, Flags: FlagLast | FlagRetx, ConnID: 1, PathID: 7, StreamID: 3, PSN: 0xFFFFFFFE, MSN: 65536},
			Send:    &SendExt{Timestamp: 0xDEADBEEF, MsgLen: 4101, Offset: 4096},
			Payload: []byte("hello"),
		}},
		{"ack_ipv4.hex", DefaultParams(), &Packet{
			Eth: EthHeader{Dst: MAC{2, 0, 0, 0, 0, 1}, Src: MAC{2, 0, 0, 0, 0, 2}},
			IP: IPHeader{Version: 4, Src: [16]byte{10, 0, 0, 2}, Dst: [16]byte{10, 0, 0, 1},
				DSCP: 46, ECN: ECNNotECT, TTL: 255, DontFragment: true},
			UDP: UDPHeader{SrcPort: 49409},
			BTH: BTH{Opcode: OpAck, ConnID: 3, PathID: 5, PSN: 260},
			Ack: &Ack{TimestampEcho: 1_000_000, ECNEcho: 2, RateHint: 4000,
				Sack: []uint64{1<<1 | 1<<2 | 1<<10, 0, 0, 1 << 63}},
		}},
		{"nak_ipv6_vlan.hex", DefaultParams(), &Packet{
			Eth: EthHeader{Dst: MAC{2, 0, 0, 0, 0, 1}, Src: MAC{2, 0, 0, 0, 0, 2},
				VLAN: &VLANTag{PCP: 5, VID: 100}},
			IP:  IPHeader{Version: 6, Src: fd(2), Dst: fd(1), DSCP: 46, TTL: 32},
			UDP: UDPHeader{SrcPort: 49666},
			BTH: BTH{Opcode: OpNak, ConnID: 2, PathID: 1, StreamID: 1, PSN: 16, MSN: 5},
			Nak: &Nak{Code: NakReceiverNotReady, RNRDelay: 100, TimestampEcho: 123456},
		}},
		{"write_vlan_ipv4.hex", DefaultParams(), &Packet{
			Eth: EthHeader{Dst: MAC{2, 0, 0, 0, 0, 2}, Src: MAC{2, 0, 0, 0, 0, 1},
				VLAN: &VLANTag{PCP: 3, DEI: true, VID: 42}},
			IP: IPHeader{Version: 4, Src: [16]byte{192, 168, 1, 10}, Dst: [16]byte{192, 168, 1, 20},
				DSCP: 26, ECN: ECNCE, TTL: 63, ID: 0xBEEF},
			UDP:     UDPHeader{SrcPort: 65534},
			BTH:     BTH{Opcode: OpWrite, PSN: 0x7FFFFFFF, MSN: 0xFFFFFFFF},
			Write:   &WriteExt{Timestamp: 0xFFFFFFFF, MsgLen: 65536, RKey: 1, VA: 0x0000100000002000},
			Payload: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		}},
		{"announce_ipv4.hex", DefaultParams(), &Packet{
			Eth:      EthHeader{Dst: MAC{2, 0, 0, 0, 0, 2}, Src: MAC{2, 0, 0, 0, 0, 1}},
			IP:       IPHeader{Version: 4, Src: [16]byte{10, 0, 0, 1}, Dst: [16]byte{10, 0, 0, 2}, DSCP: 46, TTL: 64, DontFragment: true},
			UDP:      UDPHeader{SrcPort: 49153},
			BTH:      BTH{Opcode: OpAnnounce, ConnID: 3, PathID: 5},
			Announce: &Announce{Timestamp: 2_000_000},
		}},
		{"ack_ipv6_sack64.hex", narrowParams, &Packet{
			Eth: EthHeader{Dst: MAC{2, 0, 0, 0, 0, 1}, Src: MAC{2, 0, 0, 0, 0, 2}},
			IP:  IPHeader{Version: 6, Src: fd(2), Dst: fd(1), TTL: 255, FlowLabel: 0xABCDE},
			UDP: UDPHeader{SrcPort: 32768},
			BTH: BTH{Opcode: OpAck, PSN: 0xFFF0},
			Ack: &Ack{TimestampEcho: 0x11223344, ECNEcho: 0xFFFF, RateHint: 0,
				Sack: []uint64{^uint64(0) &^ (1 | 1<<5)}},
		}},
	}
}

func TestGoldenVectors(t *testing.T) {
	files, err := filepath.Glob("testdata/vectors/*.hex")
	require.NoError(t, err)
	vectors := goldenVectors()
	require.Len(t, files, len(vectors), "every vector file has an entry in goldenVectors")
	for _, v := range vectors {
		t.Run(v.file, func(t *testing.T) {
			frame := readHex(t, filepath.Join("testdata/vectors", v.file))
			require.NoError(t, CheckICRC(frame))
			got, reason := Decode(frame, v.prm)
			require.Equal(t, DropNone, reason)
			requireSamePacket(t, v.want, got, "decoded vector")
			enc, err := Encode(v.want, v.prm)
			require.NoError(t, err)
			if !bytes.Equal(frame, enc) {
				t.Fatalf("Encode differs from the hand-written vector:\nwant %x\ngot  %x", frame, enc)
			}
		})
	}
}
