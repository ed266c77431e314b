package parser

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/wire"
)

func newParser(t testing.TB) *Parser {
	t.Helper()
	p, err := New(wire.DefaultParams())
	require.NoError(t, err)
	return p
}

func basePacket(t *testing.T, v6, vlan bool) *wire.Packet {
	t.Helper()
	pkt := &wire.Packet{
		Eth: wire.EthHeader{Dst: wire.MAC{2, 0, 0, 0, 0, 1}, Src: wire.MAC{2, 0, 0, 0, 0, 2}},
		IP:  wire.IPHeader{Version: 4, TTL: 64, ECN: wire.ECNCE, DSCP: 26},
		UDP: wire.UDPHeader{SrcPort: 0xC123},
	}
	src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	if v6 {
		pkt.IP.Version = 6
		src, dst = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	}
	require.NoError(t, pkt.IP.SetAddrs(src, dst))
	if vlan {
		pkt.Eth.VLAN = &wire.VLANTag{PCP: 3, VID: 100}
	}
	return pkt
}

// TestDescriptors builds packets of every opcode with known field values, encodes them and
// requires the parser's descriptor to carry exactly those values, written out by hand.
func TestDescriptors(t *testing.T) {
	payload := make([]byte, 1000)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	sack := make([]uint64, 4)
	sack[0], sack[3] = 0b1010_0110, 1<<63
	tests := []struct {
		name      string
		v6, vlan  bool
		fill      func(p *wire.Packet)
		want      Descriptor
		wantBytes int
	}{
		{"write ipv4", false, false, func(p *wire.Packet) {
			p.BTH = wire.BTH{Opcode: wire.OpWrite, Flags: wire.FlagFirst | wire.FlagAckReq, ConnID: 3, PathID: 5, StreamID: 2, PSN: 0xFFFFFFF0, MSN: 77}
			p.Write = &wire.WriteExt{Timestamp: 123456, MsgLen: 4000, RKey: 0xABCD0001, VA: 0x1_0000_2000}
			p.Payload = payload
		}, Descriptor{Opcode: 0x01, Flags: 0xA0, ConnID: 3, PathID: 5, PSN: 0xFFFFFFF0, StreamID: 2, MSN: 77,
			ECN: 3, UDPSrcPort: 0xC123, Timestamp: 123456, MsgLen: 4000, RKey: 0xABCD0001, VA: 0x1_0000_2000,
			PayloadLen: 1000}, 1000},
		{"send ipv6 vlan", true, true, func(p *wire.Packet) {
			p.BTH = wire.BTH{Opcode: wire.OpSend, Flags: wire.FlagLast, ConnID: 1, PathID: 7, StreamID: 3, PSN: 9, MSN: 4}
			p.Send = &wire.SendExt{Timestamp: 99, MsgLen: 5096, Offset: 4096}
			p.Payload = payload
		}, Descriptor{Opcode: 0x02, Flags: 0x40, ConnID: 1, PathID: 7, PSN: 9, StreamID: 3, MSN: 4, IPv6: true, VLAN: true,
			ECN: 3, UDPSrcPort: 0xC123, Timestamp: 99, MsgLen: 5096, Offset: 4096, PayloadLen: 1000}, 1000},
		{"ack ipv4", false, false, func(p *wire.Packet) {
			p.BTH = wire.BTH{Opcode: wire.OpAck, ConnID: 2, PathID: 1, PSN: 5000}
			p.Ack = &wire.Ack{TimestampEcho: 4242, ECNEcho: 3, RateHint: 1000, Sack: sack}
		}, Descriptor{Opcode: 0x10, ConnID: 2, PathID: 1, PSN: 5000, ECN: 3, UDPSrcPort: 0xC123, TimestampEcho: 4242,
			ECNEcho: 3, RateHint: 1000, Sack: []uint64{0b1010_0110, 0, 0, 1 << 63}}, 0},
		{"nak ipv6", true, false, func(p *wire.Packet) {
			p.BTH = wire.BTH{Opcode: wire.OpNak, ConnID: 2, PathID: 0, PSN: 17}
			p.Nak = &wire.Nak{Code: wire.NakReceiverNotReady, RNRDelay: 10, TimestampEcho: 31}
		}, Descriptor{Opcode: 0x11, ConnID: 2, PSN: 17, IPv6: true, ECN: 3, UDPSrcPort: 0xC123, NakCode: 3, RNRDelay: 10,
			TimestampEcho: 31}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pkt := basePacket(t, tc.v6, tc.vlan)
			tc.fill(pkt)
			frame, err := wire.Encode(pkt, wire.DefaultParams())
			require.NoError(t, err)
			p := newParser(t)
			got, pay, reason := p.Parse(frame)
			require.Equal(t, wire.DropNone, reason)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("descriptor (-want +got):\n%s", d)
			}
			require.Len(t, pay, tc.wantBytes)
			if tc.wantBytes > 0 {
				require.Equal(t, payload[:tc.wantBytes], pay, "payload starts at lane 0, trailer excluded")
			}
			require.Equal(t, uint64(1), p.Counters.Accepted)
		})
	}
}

// TestDropsCounted feeds valid frames and corrupted copies and requires every frame to be
// counted exactly once: accepted, or under the reason golden/wire gives.
func TestDropsCounted(t *testing.T) {
	prm := wire.DefaultParams()
	p := newParser(t)
	rng := rand.New(rand.NewPCG(7, 8))
	want := make([]uint64, len(wire.AllDropReasons()))
	var accepted uint64
	const n = 20000
	for i := 0; i < n; i++ {
		frame, err := wire.Encode(wire.RandomPacket(rng, prm), prm)
		require.NoError(t, err)
		switch rng.IntN(4) {
		case 0: // truncate
			frame = frame[:rng.IntN(len(frame))]
		case 1: // flip a byte
			frame[rng.IntN(len(frame))] ^= byte(1 + rng.IntN(255))
		}
		_, r := wire.Decode(frame, prm)
		if r == wire.DropNone {
			accepted++
		} else {
			want[r]++
		}
		_, _, got := p.Parse(frame)
		require.Equal(t, r, got)
	}
	require.Equal(t, accepted, p.Counters.Accepted)
	require.Equal(t, want, p.Counters.Dropped)
	require.Equal(t, uint64(n), p.Counters.Total())
	require.Positive(t, want[wire.DropBadICRC])
	require.Positive(t, want[wire.DropRunt])
}

func FuzzParse(f *testing.F) {
	prm := wire.DefaultParams()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 16; i++ {
		frame, err := wire.Encode(wire.RandomPacket(rng, prm), prm)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		p := newParser(t)
		d, pay, r := p.Parse(frame)
		if r != wire.DropNone {
			require.True(t, r.Valid())
			require.Equal(t, Descriptor{}, d)
			require.Nil(t, pay)
			return
		}
		require.Equal(t, int(d.PayloadLen), len(pay))
	})
}

func BenchmarkParse(b *testing.B) {
	prm := wire.DefaultParams()
	rng := rand.New(rand.NewPCG(2, 2))
	frames := make([][]byte, 256)
	for i := range frames {
		f, err := wire.Encode(wire.RandomPacket(rng, prm), prm)
		require.NoError(b, err)
		frames[i] = f
	}
	p := newParser(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Parse(frames[i%len(frames)])
	}
}

// TestFuzzCorpus loads the stored golden/wire fuzz corpus and parses every frame of it under the
// default configuration without a panic, with a defined outcome.
func TestFuzzCorpus(t *testing.T) {
	frames, err := FuzzCorpus()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(frames), 10)
	p := newParser(t)
	for _, f := range frames {
		_, _, r := p.Parse(f)
		require.True(t, r.Valid())
	}
	require.Equal(t, uint64(len(frames)), p.Counters.Total())
	_, err = parseCorpusFile("go test fuzz v1\nbyte('x')\n")
	require.ErrorContains(t, err, "no []byte")
	_, err = parseCorpusFile("garbage")
	require.Error(t, err)
}
