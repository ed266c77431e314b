package wire

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

// narrowParams is a small configuration: every range check bites on small values.
var narrowParams = Params{UDPDestPort: 4792, PSNWidth: 16, SackWidth: 64, MTU: 256,
	Connections: 1, PathsPerConnection: 1, StreamsPerConnection: 1}

// testParams are the configurations the property tests run under.
func testParams() []struct {
	name string
	prm  Params
} {
	return []struct {
		name string
		prm  Params
	}{
		{"default", DefaultParams()},
		{"narrow", narrowParams},
		{"odd", Params{UDPDestPort: 5000, PSNWidth: 12, SackWidth: 128, MTU: 1000,
			Connections: 3, PathsPerConnection: 5, StreamsPerConnection: 7}},
		{"wide", Params{UDPDestPort: 65535, PSNWidth: 32, SackWidth: 1024, MTU: 9000,
			Connections: 4096, PathsPerConnection: 256, StreamsPerConnection: 256}},
	}
}

// basePacket is a deterministic valid packet of one opcode, IP version, tagging and payload size
// (data opcodes; ACK and NAK get the payload too, which makes them invalid when n > 0).
func basePacket(op Opcode, ipv uint8, tagged bool, n int, prm Params) *Packet {
	p := &Packet{
		Eth: EthHeader{Dst: MAC{2, 0, 0, 0, 0, 2}, Src: MAC{2, 0, 0, 0, 0, 1}},
		IP:  IPHeader{Version: ipv, DSCP: 26, ECN: ECNECT0, TTL: 64},
		UDP: UDPHeader{SrcPort: 0xC000 | uint16(n)},
		BTH: BTH{Opcode: op, ConnID: uint16(prm.Connections - 1), PathID: uint8(prm.PathsPerConnection - 1),
			StreamID: uint8(prm.StreamsPerConnection - 1), PSN: uint32(uint64(1)<<prm.PSNWidth - 1), MSN: 0xA5A5A5A5},
	}
	if tagged {
		p.Eth.VLAN = &VLANTag{PCP: 7, DEI: true, VID: 4095}
	}
	if ipv == 4 {
		p.IP.Src, p.IP.Dst = [16]byte{10, 0, 0, 1}, [16]byte{10, 0, 0, 2}
		p.IP.ID, p.IP.DontFragment = 0x1234, true
	} else {
		p.IP.Src, p.IP.Dst = [16]byte{0: 0xfd, 15: 1}, [16]byte{0: 0xfd, 15: 2}
		p.IP.FlowLabel = 0xFFFFF
	}
	if n > 0 {
		p.Payload = make([]byte, n)
		for i := range p.Payload {
			p.Payload[i] = byte(i*7 + 3)
		}
	}
	switch op {
	case OpWrite:
		p.BTH.Flags = FlagFirst | FlagLast | FlagAckReq
		p.Write = &WriteExt{Timestamp: 0xFFFFFFFF, MsgLen: uint32(n), RKey: 0xCAFE0001, VA: 0x7F0000001000}
	case OpSend:
		p.BTH.Flags = FlagFirst | FlagLast | FlagRetx
		p.Send = &SendExt{Timestamp: 1_000_000, MsgLen: uint32(n)}
	case OpAck:
		p.BTH.StreamID, p.BTH.MSN = 0, 0
		p.Ack = &Ack{TimestampEcho: 7, ECNEcho: 3, RateHint: 4000, Sack: make([]uint64, prm.SackWidth/64)}
		for i := range p.Ack.Sack {
			p.Ack.Sack[i] = 1<<63 | uint64(i%2) // the top bit of every word, bit 0 of odd words
		}
	case OpNak:
		p.Nak = &Nak{Code: NakReceiverNotReady, RNRDelay: 100, TimestampEcho: 123456}
	case OpAnnounce:
		p.BTH.StreamID, p.BTH.PSN, p.BTH.MSN = 0, 0, 0
		p.Announce = &Announce{Timestamp: 0xFEDCBA98}
	}
	return p
}

// frameLen is the documented frame length of p.
func frameLen(p *Packet, prm Params) int {
	n := EthHeaderLen + IPv4HeaderLen + UDPHeaderLen + BTHLen + bodyLen(p.BTH.Opcode, prm) + len(p.Payload) + ICRCLen
	if p.Eth.VLAN != nil {
		n += VLANTagLen
	}
	if p.IP.Version == 6 {
		n += IPv6HeaderLen - IPv4HeaderLen
	}
	return n
}

// requireRoundTrip encodes p, checks the length, decodes and compares.
func requireRoundTrip(t testing.TB, p *Packet, prm Params) []byte {
	t.Helper()
	frame, err := Encode(p, prm)
	require.NoError(t, err)
	require.Len(t, frame, frameLen(p, prm))
	require.GreaterOrEqual(t, len(frame), EthMinFrameLen, "Encode never needs to pad")
	require.LessOrEqual(t, len(frame), prm.MaxFrameLen())
	got, reason := Decode(frame, prm)
	require.Equal(t, DropNone, reason, "decode of a freshly encoded %s frame", p.BTH.Opcode)
	requireSamePacket(t, p, got, "decode(encode(p))")
	return frame
}

func TestRoundTripTable(t *testing.T) {
	for _, tp := range testParams() {
		prm := tp.prm
		for _, op := range AllOpcodes() {
			for _, ipv := range []uint8{4, 6} {
				for _, tagged := range []bool{false, true} {
					for _, n := range []int{0, 1, 77, prm.MTU - 1, prm.MTU} {
						name := fmt.Sprintf("%s/%s/ipv%d/vlan=%v/payload=%d", tp.name, op, ipv, tagged, n)
						t.Run(name, func(t *testing.T) {
							p := basePacket(op, ipv, tagged, n, prm)
							if !op.IsData() && n > 0 {
								// ACK and NAK carry no payload: Encode refuses with the drop reason.
								_, err := Encode(p, prm)
								requireRule(t, err, DropPayloadLengthInvalid)
								return
							}
							requireRoundTrip(t, p, prm)
						})
					}
				}
			}
		}
	}
}

func TestMaxFrameLenIsTight(t *testing.T) {
	for _, tp := range testParams() {
		p := basePacket(OpWrite, 6, true, tp.prm.MTU, tp.prm)
		frame := requireRoundTrip(t, p, tp.prm)
		require.Equal(t, tp.prm.MaxFrameLen(), len(frame), tp.name)
	}
	// The smallest frame: untagged IPv4 with the shortest body (NAK, 8 bytes) is 70 bytes; the
	// runt limit counts no body at all.
	require.Equal(t, 62, MinFrameLen)
	require.Equal(t, 60+4, MaxPaddedFrameLen)
}

func TestRandomPacketsRoundTrip(t *testing.T) {
	for _, tp := range testParams() {
		t.Run(tp.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			seen := map[string]int{}
			for i := 0; i < 20000; i++ {
				p := RandomPacket(rng, tp.prm)
				requireRoundTrip(t, p, tp.prm)
				key := fmt.Sprintf("%s/v%d/vlan=%v/ecn=%d", p.BTH.Opcode, p.IP.Version, p.Eth.VLAN != nil, p.IP.ECN)
				seen[key]++
				if p.BTH.Opcode.IsData() {
					seen[fmt.Sprintf("%s/flags=%s", p.BTH.Opcode, p.BTH.Flags)]++
					switch len(p.Payload) {
					case 0, 1, tp.prm.MTU:
						seen[fmt.Sprintf("payload=%d", len(p.Payload))]++
					}
				}
			}
			// Every opcode × IP version × tagging × ECN, every data flag combination (4 positions
			// × ACKREQ × RETX × INIT), and the payload edges all occur.
			for _, op := range AllOpcodes() {
				for _, v := range []int{4, 6} {
					for _, tagged := range []bool{false, true} {
						for ecn := 0; ecn < 4; ecn++ {
							require.Contains(t, seen, fmt.Sprintf("%s/v%d/vlan=%v/ecn=%d", op, v, tagged, ecn))
						}
					}
				}
			}
			for _, op := range []Opcode{OpWrite, OpSend} {
				for i := 0; i < 32; i++ {
					require.Contains(t, seen, fmt.Sprintf("%s/flags=%s", op, Flags(i)*FlagPathInit))
				}
			}
			for _, n := range []int{0, 1, tp.prm.MTU} {
				require.Contains(t, seen, fmt.Sprintf("payload=%d", n))
			}
		})
	}
}

func TestRandomPacketDeterministic(t *testing.T) {
	prm := DefaultParams()
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 1000; i++ {
		requireSamePacket(t, RandomPacket(a, prm), RandomPacket(b, prm), fmt.Sprintf("packet %d for the same seed", i))
	}
	c := rand.New(rand.NewPCG(7, 8))
	require.NotEqual(t, RandomPacket(rand.New(rand.NewPCG(7, 7)), prm), RandomPacket(c, prm))
}

// requireSamePacket fails with a cmp.Diff when got differs from want. (reflect.DeepEqual is the
// fast test; cmp renders the difference.)
func requireSamePacket(t testing.TB, want, got *Packet, what string) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s differs (-want +got):\n%s", what, cmp.Diff(want, got))
	}
}

// requireRule asserts that err is a *PacketError carrying the drop reason want.
func requireRule(t testing.TB, err error, want DropReason) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, ErrInvalidPacket)
	var pe *PacketError
	require.True(t, errors.As(err, &pe), "error %v is not a *PacketError", err)
	require.Equal(t, want, pe.Reason, "error: %v", err)
}

func TestEncodeRefusesWhatDecodeDrops(t *testing.T) {
	prm := narrowParams
	cases := []struct {
		name   string
		edit   func(p *Packet)
		op     Opcode
		reason DropReason
	}{
		{"unknown opcode", func(p *Packet) { p.BTH.Opcode = 0x7F; p.Write = nil }, OpWrite, DropUnknownOpcode},
		{"payload over MTU", func(p *Packet) { p.Payload = make([]byte, 257); p.Write.MsgLen = 257 }, OpWrite, DropPayloadTooLong},
		{"empty payload, message not empty", func(p *Packet) { p.Payload = nil }, OpSend, DropPayloadLengthInvalid},
		{"reserved flag", func(p *Packet) { p.BTH.Flags |= 0x01 }, OpWrite, DropBadFlags},
		{"flag on ACK", func(p *Packet) { p.BTH.Flags = FlagAckReq }, OpAck, DropBadFlags},
		{"unknown NAK code", func(p *Packet) { p.Nak.Code = 0 }, OpNak, DropUnknownNakCode},
		{"RNR delay on another NAK", func(p *Packet) { p.Nak.Code = NakRKeyViolation }, OpNak, DropReservedNonzero},
		{"stream on ACK", func(p *Packet) { p.BTH.StreamID = 1 }, OpAck, DropReservedNonzero},
		{"MSN on ACK", func(p *Packet) { p.BTH.MSN = 1 }, OpAck, DropReservedNonzero},
		{"flag on ANNOUNCE", func(p *Packet) { p.BTH.Flags = FlagFirst }, OpAnnounce, DropBadFlags},
		{"payload on ANNOUNCE", func(p *Packet) { p.Payload = []byte{1} }, OpAnnounce, DropPayloadLengthInvalid},
		{"stream on ANNOUNCE", func(p *Packet) { p.BTH.StreamID = 1 }, OpAnnounce, DropReservedNonzero},
		{"PSN on ANNOUNCE", func(p *Packet) { p.BTH.PSN = 1 }, OpAnnounce, DropReservedNonzero},
		{"MSN on ANNOUNCE", func(p *Packet) { p.BTH.MSN = 1 }, OpAnnounce, DropReservedNonzero},
		{"path of ANNOUNCE", func(p *Packet) { p.BTH.PathID = 1 }, OpAnnounce, DropPathOutOfRange},
		{"connection", func(p *Packet) { p.BTH.ConnID = 1 }, OpSend, DropConnectionOutOfRange},
		{"path", func(p *Packet) { p.BTH.PathID = 1 }, OpNak, DropPathOutOfRange},
		{"stream", func(p *Packet) { p.BTH.StreamID = 1 }, OpWrite, DropStreamOutOfRange},
		{"PSN", func(p *Packet) { p.BTH.PSN = 1 << 16 }, OpAck, DropPSNOutOfRange},
		{"SACK base bit", func(p *Packet) { p.Ack.Sack[0] = 1 }, OpAck, DropSackBaseBitSet},
		{"write FIRST|LAST short of message", func(p *Packet) { p.Write.MsgLen = 11 }, OpWrite, DropPositionFlagsMismatch},
		{"write longer than message", func(p *Packet) { p.Write.MsgLen = 5 }, OpWrite, DropMessageBounds},
		{"write wraps address space", func(p *Packet) { p.Write.VA = 1<<64 - 9 }, OpWrite, DropMessageBounds},
		{"send beyond message", func(p *Packet) { p.Send.Offset = 1; p.BTH.Flags &^= FlagFirst }, OpSend, DropMessageBounds},
		{"send FIRST not at 0", func(p *Packet) { p.Send.Offset = 1; p.Send.MsgLen = 20 }, OpSend, DropPositionFlagsMismatch},
		{"send LAST short of end", func(p *Packet) { p.Send.MsgLen = 20 }, OpSend, DropPositionFlagsMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := basePacket(c.op, 4, false, 10, prm)
			if !c.op.IsData() {
				p.Payload = nil
			}
			requireRoundTrip(t, p, prm) // valid before the edit
			c.edit(p)
			_, err := Encode(p, prm)
			requireRule(t, err, c.reason)
		})
	}
}

func TestEncodeRefusesUnrepresentable(t *testing.T) {
	prm := DefaultParams()
	cases := []struct {
		name string
		edit func(p *Packet)
	}{
		{"VLAN PCP", func(p *Packet) { p.Eth.VLAN = &VLANTag{PCP: 8} }},
		{"VLAN VID", func(p *Packet) { p.Eth.VLAN = &VLANTag{VID: 4096} }},
		{"IP version", func(p *Packet) { p.IP.Version = 5 }},
		{"DSCP", func(p *Packet) { p.IP.DSCP = 64 }},
		{"ECN", func(p *Packet) { p.IP.ECN = 4 }},
		{"IPv4 flow label", func(p *Packet) { p.IP.FlowLabel = 1 }},
		{"IPv4 address high bytes", func(p *Packet) { p.IP.Dst[15] = 1 }},
		{"missing extension", func(p *Packet) { p.Write = nil }},
		{"two extensions", func(p *Packet) { p.Send = &SendExt{} }},
		{"announce body on a data packet", func(p *Packet) { p.Announce = &Announce{} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := basePacket(OpWrite, 4, false, 8, prm)
			c.edit(p)
			_, err := Encode(p, prm)
			requireRule(t, err, DropNone)
		})
	}
	v6 := basePacket(OpSend, 6, false, 8, prm)
	v6.IP.FlowLabel = 1 << 20
	_, err := Encode(v6, prm)
	requireRule(t, err, DropNone)
	v6 = basePacket(OpSend, 6, false, 8, prm)
	v6.IP.DontFragment = true
	_, err = Encode(v6, prm)
	requireRule(t, err, DropNone)
	ack := basePacket(OpAck, 4, false, 0, prm)
	ack.Ack.Sack = ack.Ack.Sack[:1]
	_, err = Encode(ack, prm)
	requireRule(t, err, DropNone)
	_, err = Encode(nil, prm)
	require.ErrorIs(t, err, ErrInvalidPacket)
}

func TestParams(t *testing.T) {
	c := config.Default()
	prm := ParamsFrom(c)
	want := Params{UDPDestPort: 4792, PSNWidth: 32, SackWidth: 256, MTU: 4096,
		Connections: 4, PathsPerConnection: 8, StreamsPerConnection: 4}
	if d := cmp.Diff(want, prm); d != "" {
		t.Fatalf("ParamsFrom(config.Default()) (-want +got):\n%s", d)
	}
	require.NoError(t, prm.Validate())
	require.Equal(t, 8+32, prm.AckLen())
	require.Equal(t, 18+40+8+16+20+4096+4, prm.MaxFrameLen())

	// Every configuration config.Validate accepts at its range edges gives valid Params.
	edges := config.Default()
	edges.Connections, edges.PathsPerConnection, edges.StreamsPerConnection = 256, 256, 256
	edges.SackWidth, edges.PSNWidth, edges.MTU, edges.UDPDestPort = 1024, 32, 9000, 65535
	require.NoError(t, edges.Validate())
	require.NoError(t, ParamsFrom(edges).Validate())

	bad := []func(p *Params){
		func(p *Params) { p.UDPDestPort = 0 },
		func(p *Params) { p.PSNWidth = 0 },
		func(p *Params) { p.PSNWidth = 33 },
		func(p *Params) { p.SackWidth = 96 },
		func(p *Params) { p.SackWidth = 0 },
		func(p *Params) { p.SackWidth = MaxSackWidth + 64 },
		func(p *Params) { p.MTU = 0 },
		func(p *Params) { p.MTU = MaxMTU + 1 },
		func(p *Params) { p.Connections = 0 },
		func(p *Params) { p.Connections = 65537 },
		func(p *Params) { p.PathsPerConnection = 257 },
		func(p *Params) { p.StreamsPerConnection = 0 },
	}
	for i, edit := range bad {
		p := DefaultParams()
		edit(&p)
		err := p.Validate()
		require.ErrorIs(t, err, ErrInvalidParams, "case %d", i)
		_, err = Encode(basePacket(OpWrite, 4, false, 1, DefaultParams()), p)
		require.ErrorIs(t, err, ErrInvalidParams, "case %d", i)
	}
	// MaxMTU is the largest payload whose IPv4 total length fits 16 bits.
	big := DefaultParams()
	big.MTU = MaxMTU
	requireRoundTrip(t, basePacket(OpWrite, 4, false, MaxMTU, big), big)
	requireRoundTrip(t, basePacket(OpWrite, 6, true, MaxMTU, big), big)
}

func TestNames(t *testing.T) {
	require.Equal(t, "WRITE", OpWrite.String())
	require.Equal(t, "NAK", OpNak.String())
	require.Equal(t, "Opcode(0x7f)", Opcode(0x7F).String())
	require.Equal(t, "FIRST|LAST|ACKREQ|RETX|INIT|0x07", Flags(0xFF).String())
	require.Equal(t, "0", Flags(0).String())
	require.Equal(t, "receiver_not_ready", NakReceiverNotReady.String())
	require.Equal(t, "NakCode(0)", NakCode(0).String())
	require.Equal(t, "02:00:00:00:00:0a", MAC{2, 0, 0, 0, 0, 10}.String())

	seen := map[string]bool{}
	for i, r := range AllDropReasons() {
		require.Equal(t, DropReason(i), r, "codes are dense")
		require.True(t, r.Valid())
		name := r.String()
		require.Regexp(t, `^[a-z][a-z0-9_]*$`, name)
		require.False(t, seen[name], "duplicate name %s", name)
		seen[name] = true
		back, err := ParseDropReason(name)
		require.NoError(t, err)
		require.Equal(t, r, back)
	}
	require.Equal(t, DropNone, AllDropReasons()[0])
	require.False(t, numDropReasons.Valid())
	require.Equal(t, "DropReason(36)", DropReason(36).String())
	_, err := ParseDropReason("nope")
	require.Error(t, err)
}

func TestIPAddrHelpers(t *testing.T) {
	var h IPHeader
	require.NoError(t, h.SetAddrs(mustAddr(t, "10.1.2.3"), mustAddr(t, "10.1.2.4")))
	require.Equal(t, uint8(4), h.Version)
	require.Equal(t, [16]byte{10, 1, 2, 3}, h.Src)
	require.Equal(t, "10.1.2.4", h.DstAddr().String())
	require.NoError(t, h.SetAddrs(mustAddr(t, "fd00::1"), mustAddr(t, "fd00::2")))
	require.Equal(t, uint8(6), h.Version)
	require.Equal(t, "fd00::1", h.SrcAddr().String())
	require.Error(t, h.SetAddrs(mustAddr(t, "10.0.0.1"), mustAddr(t, "fd00::2")))
	require.Error(t, h.SetAddrs(mustAddr(t, "::ffff:10.0.0.1"), mustAddr(t, "::ffff:10.0.0.2")))
}

func TestSackBitHelpers(t *testing.T) {
	a := &Ack{Sack: make([]uint64, 4)}
	require.True(t, a.SetSackBit(255, true))
	require.True(t, a.SetSackBit(64, true))
	require.False(t, a.SetSackBit(256, true))
	require.False(t, a.SetSackBit(-1, true))
	require.True(t, a.SackBit(255))
	require.True(t, a.SackBit(64))
	require.False(t, a.SackBit(63))
	require.False(t, a.SackBit(256))
	require.Equal(t, []uint64{0, 1, 0, 1 << 63}, a.Sack)
	require.True(t, a.SetSackBit(64, false))
	require.Equal(t, []uint64{0, 0, 0, 1 << 63}, a.Sack)
}

func mustAddr(t testing.TB, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	require.NoError(t, err)
	return a
}

func TestFrameLenIsEncodedLength(t *testing.T) {
	prm := DefaultParams()
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 2000; i++ {
		p := RandomPacket(rng, prm)
		f, err := Encode(p, prm)
		require.NoError(t, err)
		require.Equal(t, len(f), FrameLen(p, prm), "%s v%d vlan=%v payload %d", p.BTH.Opcode, p.IP.Version, p.Eth.VLAN != nil, len(p.Payload))
	}
}
