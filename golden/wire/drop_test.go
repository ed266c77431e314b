package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// layout holds the header offsets of an encoded frame.
type layout struct {
	l3, udp, bth, body int
	v6                 bool
}

func layoutOf(p *Packet) layout {
	var o layout
	o.l3 = EthHeaderLen
	if p.Eth.VLAN != nil {
		o.l3 += VLANTagLen
	}
	o.v6 = p.IP.Version == 6
	o.udp = o.l3 + IPv4HeaderLen
	if o.v6 {
		o.udp = o.l3 + IPv6HeaderLen
	}
	o.bth = o.udp + UDPHeaderLen
	o.body = o.bth + BTHLen
	return o
}

// setDatagramLen rewrites the IP and UDP length fields for a datagram of n bytes (from the IP
// header on) and the IPv4 header checksum, leaving the ICRC alone.
func setDatagramLen(f []byte, o layout, n int) {
	if o.v6 {
		binary.BigEndian.PutUint16(f[o.l3+IPv6PayloadLengthOff:], uint16(n-IPv6HeaderLen))
	} else {
		binary.BigEndian.PutUint16(f[o.l3+IPv4TotalLengthOff:], uint16(n))
		fixIPv4Checksum(f, o)
	}
	binary.BigEndian.PutUint16(f[o.udp+UDPLengthOff:], uint16(o.l3+n-o.udp))
}

func fixIPv4Checksum(f []byte, o layout) {
	h := f[o.l3 : o.l3+IPv4HeaderLen]
	binary.BigEndian.PutUint16(h[IPv4ChecksumOff:], 0)
	binary.BigEndian.PutUint16(h[IPv4ChecksumOff:], ^onesSum(h))
}

// resize removes (k < 0) or inserts (k > 0, zero bytes) |k| bytes just before the ICRC trailer
// and fixes every length, the IPv4 checksum and the ICRC: the result differs from f only in
// how long its transport part is.
func resize(t testing.TB, f []byte, o layout, k int) []byte {
	t.Helper()
	at := len(f) - ICRCLen
	var g []byte
	if k < 0 {
		g = append(append([]byte{}, f[:at+k]...), f[at:]...)
	} else {
		g = append(append(append([]byte{}, f[:at]...), make([]byte, k)...), f[at:]...)
	}
	setDatagramLen(g, o, len(g)-o.l3)
	require.NoError(t, Reseal(g))
	return g
}

type dropCase struct {
	name   string
	prm    Params
	base   *Packet
	edit   func(t testing.TB, f []byte, o layout) []byte
	reseal bool // recompute IPv4 checksum and ICRC after the edit
	want   DropReason
}

func dropCases() []dropCase {
	def, nar := DefaultParams(), narrowParams
	write4 := func() *Packet { return basePacket(OpWrite, 4, false, 8, def) }
	set8 := func(off func(o layout) int, v byte) func(testing.TB, []byte, layout) []byte {
		return func(_ testing.TB, f []byte, o layout) []byte { f[off(o)] = v; return f }
	}
	or16 := func(off func(o layout) int, v uint16) func(testing.TB, []byte, layout) []byte {
		return func(_ testing.TB, f []byte, o layout) []byte {
			binary.BigEndian.PutUint16(f[off(o):], binary.BigEndian.Uint16(f[off(o):])|v)
			return f
		}
	}
	put16 := func(off func(o layout) int, v uint16) func(testing.TB, []byte, layout) []byte {
		return func(_ testing.TB, f []byte, o layout) []byte { binary.BigEndian.PutUint16(f[off(o):], v); return f }
	}
	put32 := func(off func(o layout) int, v uint32) func(testing.TB, []byte, layout) []byte {
		return func(_ testing.TB, f []byte, o layout) []byte { binary.BigEndian.PutUint32(f[off(o):], v); return f }
	}
	grow := func(k int) func(testing.TB, []byte, layout) []byte {
		return func(t testing.TB, f []byte, o layout) []byte { return resize(t, f, o, k) }
	}
	ethType := func(o layout) int { return o.l3 - 2 }
	ip := func(off int) func(o layout) int { return func(o layout) int { return o.l3 + off } }
	udp := func(off int) func(o layout) int { return func(o layout) int { return o.udp + off } }
	bth := func(off int) func(o layout) int { return func(o layout) int { return o.bth + off } }
	body := func(off int) func(o layout) int { return func(o layout) int { return o.body + off } }
	// A tagged IPv6 SEND of 4 bytes.
	send6v := func() *Packet { return basePacket(OpSend, 6, true, 4, def) }
	ack := func(prm Params) *Packet { return basePacket(OpAck, 4, false, 0, prm) }
	nak := func() *Packet { return basePacket(OpNak, 6, false, 0, def) }
	// A NAK that is not RNR and so carries RNR delay 0.
	nakRKey := func() *Packet { p := nak(); p.Nak.Code, p.Nak.RNRDelay = NakRKeyViolation, 0; return p }
	emptySend := func() *Packet { return basePacket(OpSend, 4, false, 0, def) }
	// A middle SEND packet: offset 100, 8 bytes of a 1000-byte message.
	midSend := func() *Packet {
		p := basePacket(OpSend, 4, false, 8, def)
		p.BTH.Flags = 0
		p.Send.Offset, p.Send.MsgLen = 100, 1000
		return p
	}

	return []dropCase{
		{"frame one byte over the longest valid frame", def, basePacket(OpWrite, 6, true, def.MTU, def),
			func(_ testing.TB, f []byte, _ layout) []byte { return append(f, 0) }, false, DropFrameTooLong},
		{"frame of 61 bytes", def, write4(),
			func(_ testing.TB, f []byte, _ layout) []byte { return f[:MinFrameLen-1] }, false, DropRunt},
		{"empty frame", def, write4(),
			func(_ testing.TB, f []byte, _ layout) []byte { return f[:0] }, false, DropRunt},
		{"ARP EtherType", def, write4(), put16(ethType, 0x0806), false, DropBadEthertype},
		{"802.1ad S-tag outside", def, write4(), put16(func(layout) int { return EthTypeOff }, EtherTypeQinQ), false, DropBadEthertype},
		{"ARP inside a VLAN tag", def, send6v(), put16(ethType, 0x0806), false, DropBadEthertype},
		{"C-tag inside a C-tag", def, send6v(), put16(ethType, EtherTypeVLAN), false, DropVLANStacked},
		{"S-tag inside a C-tag", def, send6v(), put16(ethType, EtherTypeQinQ), false, DropVLANStacked},
		{"0x9100 inside a C-tag", def, send6v(), put16(ethType, EtherTypeQinQ9100), false, DropVLANStacked},
		{"IPv6 version in an IPv4 EtherType", def, write4(), set8(ip(0), 0x65), false, DropBadIPVersion},
		{"IPv4 version in an IPv6 EtherType", def, send6v(), set8(ip(0), 0x40), false, DropBadIPVersion},
		{"IHL 4", def, write4(), set8(ip(0), 0x44), false, DropIPv4BadIHL},
		{"IHL 6 (options)", def, write4(), set8(ip(0), 0x46), false, DropIPv4Options},
		{"IHL 15 (options)", def, write4(), set8(ip(0), 0x4F), false, DropIPv4Options},
		{"TTL changed without the checksum", def, write4(), set8(ip(IPv4TTLOff), 1), false, DropIPv4BadChecksum},
		{"checksum off by one", def, write4(), func(_ testing.TB, f []byte, o layout) []byte { f[o.l3+IPv4ChecksumOff+1]++; return f }, false, DropIPv4BadChecksum},
		{"MF set", def, write4(), or16(ip(IPv4FlagsFragOff), IPv4FlagMoreFrags), true, DropIPv4Fragment},
		{"fragment offset 1", def, write4(), or16(ip(IPv4FlagsFragOff), 1), true, DropIPv4Fragment},
		{"reserved IPv4 flag", def, write4(), or16(ip(IPv4FlagsFragOff), IPv4FlagReserved), true, DropIPv4ReservedFlag},
		{"protocol TCP", def, write4(), set8(ip(IPv4ProtocolOff), 6), true, DropNotUDP},
		{"next header hop-by-hop", def, send6v(), set8(ip(IPv6NextHeaderOff), 0), false, DropIPv6NextHeaderNotUDP},
		{"next header TCP", def, send6v(), set8(ip(IPv6NextHeaderOff), 6), false, DropIPv6NextHeaderNotUDP},
		{"IPv4 total length one past the frame", def, write4(), func(_ testing.TB, f []byte, o layout) []byte {
			setDatagramLen(f, o, len(f)-o.l3+1)
			return f
		}, false, DropIPLengthExceedsFrame},
		{"IPv6 payload length one past the frame", def, send6v(), func(_ testing.TB, f []byte, o layout) []byte {
			setDatagramLen(f, o, len(f)-o.l3+1)
			return f
		}, false, DropIPLengthExceedsFrame},
		{"one byte after the datagram", def, write4(),
			func(_ testing.TB, f []byte, _ layout) []byte { return append(f, 0) }, false, DropFrameTrailingBytes},
		{"IPv4 datagram ends inside the UDP header (62-byte padded frame)", def, write4(),
			func(_ testing.TB, f []byte, o layout) []byte {
				f = f[:MinFrameLen]
				binary.BigEndian.PutUint16(f[o.l3+IPv4TotalLengthOff:], IPv4HeaderLen+UDPHeaderLen-1)
				fixIPv4Checksum(f, o)
				return f
			}, false, DropTruncatedUDP},
		{"IPv4 total length below its header (64-byte padded frame)", def, write4(),
			func(_ testing.TB, f []byte, o layout) []byte {
				f = f[:MaxPaddedFrameLen]
				binary.BigEndian.PutUint16(f[o.l3+IPv4TotalLengthOff:], 0)
				fixIPv4Checksum(f, o)
				return f
			}, false, DropTruncatedUDP},
		{"tagged IPv6 with 4 bytes of payload", def, send6v(), func(_ testing.TB, f []byte, o layout) []byte {
			f = f[:o.udp+4] // 62 bytes: 18 + 40 + 4
			binary.BigEndian.PutUint16(f[o.l3+IPv6PayloadLengthOff:], 4)
			return f
		}, false, DropTruncatedUDP},
		{"RoCEv2 port", def, write4(), put16(udp(UDPDstPortOff), 4791), false, DropWrongUDPPort},
		{"UDP length one more", def, write4(), func(_ testing.TB, f []byte, o layout) []byte {
			f[o.udp+UDPLengthOff+1]++
			return f
		}, false, DropUDPLengthMismatch},
		{"UDP length one less", def, send6v(), func(_ testing.TB, f []byte, o layout) []byte {
			f[o.udp+UDPLengthOff+1]--
			return f
		}, false, DropUDPLengthMismatch},
		{"UDP payload of 19 bytes", def, send6v(), func(t testing.TB, f []byte, o layout) []byte {
			return resize(t, f, o, o.udp+UDPHeaderLen+BTHLen+ICRCLen-1-len(f))
		}, false, DropTruncatedBTH},
		{"payload bit flipped", def, write4(), func(_ testing.TB, f []byte, o layout) []byte {
			f[len(f)-ICRCLen-1] ^= 0x10
			return f
		}, false, DropBadICRC},
		{"ICRC trailer byte flipped", def, send6v(), func(_ testing.TB, f []byte, _ layout) []byte {
			f[len(f)-1] ^= 0x01
			return f
		}, false, DropBadICRC},
		{"BTH version 0", def, write4(), set8(bth(BTHVersionOff), 0), true, DropBadVersion},
		{"BTH version 2", def, ack(def), set8(bth(BTHVersionOff), 2), true, DropBadVersion},
		{"opcode 0", def, write4(), set8(bth(BTHOpcodeOff), 0), true, DropUnknownOpcode},
		{"opcode 0x03", def, write4(), set8(bth(BTHOpcodeOff), 0x03), true, DropUnknownOpcode},
		{"opcode 0xff", def, ack(def), set8(bth(BTHOpcodeOff), 0xFF), true, DropUnknownOpcode},
		{"SEND extension one byte short", def, emptySend(), grow(-1), false, DropTruncatedExtension},
		{"WRITE extension missing", def, basePacket(OpWrite, 4, false, 0, def), grow(-WriteExtLen), false, DropTruncatedExtension},
		{"NAK body one byte short", def, nak(), grow(-1), false, DropTruncatedExtension},
		{"SEND relabelled WRITE, too short", def, emptySend(), set8(bth(BTHOpcodeOff), uint8(OpWrite)), true, DropTruncatedExtension},
		{"ACK body one byte short", def, ack(def), grow(-1), false, DropTruncatedAck},
		{"ACK with the bitmap of sack_width 64 under 256", def, ack(nar), func(_ testing.TB, f []byte, _ layout) []byte { return f }, false, DropTruncatedAck},
		{"WRITE payload MTU+1", def, basePacket(OpWrite, 4, false, def.MTU, def), grow(1), false, DropPayloadTooLong},
		{"SEND payload MTU+1 under narrow params", nar, basePacket(OpSend, 6, true, nar.MTU, nar), grow(1), false, DropPayloadTooLong},
		{"ACK with one payload byte", def, ack(def), grow(1), false, DropPayloadLengthInvalid},
		{"ACK with the bitmap of sack_width 512 under 256", def, ack(Params{UDPDestPort: 4792, PSNWidth: 32, SackWidth: 512, MTU: 4096,
			Connections: 4, PathsPerConnection: 8, StreamsPerConnection: 4}), func(_ testing.TB, f []byte, _ layout) []byte { return f }, false, DropPayloadLengthInvalid},
		{"NAK with one payload byte", def, nak(), grow(1), false, DropPayloadLengthInvalid},
		{"empty SEND payload, message of 1 byte", def, emptySend(), put32(body(DataMsgLenOff), 1), true, DropPayloadLengthInvalid},
		{"reserved flag 0x01 on WRITE", def, write4(), set8(bth(BTHFlagsOff), uint8(FlagFirst|FlagLast|1)), true, DropBadFlags},
		{"reserved flag 0x04 on SEND", def, midSend(), set8(bth(BTHFlagsOff), 0x04), true, DropBadFlags},
		{"ACKREQ on ACK", def, ack(def), set8(bth(BTHFlagsOff), uint8(FlagAckReq)), true, DropBadFlags},
		{"FIRST on NAK", def, nak(), set8(bth(BTHFlagsOff), uint8(FlagFirst)), true, DropBadFlags},
		{"NAK code 0", def, nak(), set8(body(NakCodeOff), 0), true, DropUnknownNakCode},
		{"NAK code 6", def, nak(), set8(body(NakCodeOff), 6), true, DropUnknownNakCode},
		{"BTH reserved byte", def, write4(), set8(bth(BTHReservedOff), 0x80), true, DropReservedNonzero},
		{"ACK with stream 1", def, ack(def), set8(bth(BTHStreamIDOff), 1), true, DropReservedNonzero},
		{"ACK with MSN 1", def, ack(def), set8(bth(BTHMSNOff+3), 1), true, DropReservedNonzero},
		{"NAK reserved byte", def, nak(), set8(body(NakReservedOff), 1), true, DropReservedNonzero},
		{"RNR delay on an rkey NAK", def, nakRKey(), put16(body(NakRNRDelayOff), 1), true, DropReservedNonzero},
		{"connection id = connections", def, write4(), put16(bth(BTHConnIDOff), uint16(def.Connections)), true, DropConnectionOutOfRange},
		{"connection id 0xffff on ACK", def, ack(def), put16(bth(BTHConnIDOff), 0xFFFF), true, DropConnectionOutOfRange},
		{"path id = paths", def, write4(), set8(bth(BTHPathIDOff), uint8(def.PathsPerConnection)), true, DropPathOutOfRange},
		{"path id 1 with one path", nar, ack(nar), set8(bth(BTHPathIDOff), 1), true, DropPathOutOfRange},
		{"stream id = streams", def, nak(), set8(bth(BTHStreamIDOff), uint8(def.StreamsPerConnection)), true, DropStreamOutOfRange},
		{"PSN bit 16 with psn_width 16", nar, basePacket(OpWrite, 4, false, 8, nar), put32(bth(BTHPSNOff), 1<<16), true, DropPSNOutOfRange},
		{"cumulative PSN bit 31 with psn_width 16", nar, ack(nar), put32(bth(BTHPSNOff), 1<<31), true, DropPSNOutOfRange},
		{"SACK bit 0", def, ack(def), set8(body(AckSackOff), 0x01), true, DropSackBaseBitSet},
		{"WRITE payload longer than the message", def, write4(), put32(body(DataMsgLenOff), 7), true, DropMessageBounds},
		{"WRITE wraps the address space", def, write4(), func(_ testing.TB, f []byte, o layout) []byte {
			binary.BigEndian.PutUint64(f[o.body+WriteVAOff:], 1<<64-7) // 8 bytes from 2^64-7
			return f
		}, true, DropMessageBounds},
		{"SEND runs past the message", def, midSend(), put32(body(SendMsgOffsetOff), 993), true, DropMessageBounds},
		{"SEND offset near 2^32", def, midSend(), put32(body(SendMsgOffsetOff), 0xFFFFFFFC), true, DropMessageBounds},
		{"WRITE FIRST|LAST but shorter than the message", def, write4(), put32(body(DataMsgLenOff), 9), true, DropPositionFlagsMismatch},
		{"WRITE whole message without FIRST", def, write4(), set8(bth(BTHFlagsOff), uint8(FlagLast)), true, DropPositionFlagsMismatch},
		{"SEND FIRST at offset 100", def, midSend(), set8(bth(BTHFlagsOff), uint8(FlagFirst)), true, DropPositionFlagsMismatch},
		{"SEND LAST short of the end", def, midSend(), set8(bth(BTHFlagsOff), uint8(FlagLast)), true, DropPositionFlagsMismatch},
		{"SEND at offset 0 without FIRST", def, midSend(), put32(body(SendMsgOffsetOff), 0), true, DropPositionFlagsMismatch},
		{"SEND ending the message without LAST", def, midSend(), put32(body(SendMsgOffsetOff), 992), true, DropPositionFlagsMismatch},
	}
}

// TestDropReasons builds, for every drop reason, frames whose only fault is that reason's and
// checks Decode names it; the unedited frame is valid.
func TestDropReasons(t *testing.T) {
	covered := map[DropReason]bool{}
	for _, c := range dropCases() {
		t.Run(fmt.Sprintf("%02d_%s/%s", c.want, c.want, c.name), func(t *testing.T) {
			frame, err := Encode(c.base, basePrm(c))
			require.NoError(t, err)
			f := c.edit(t, frame, layoutOf(c.base))
			if c.reseal {
				require.NoError(t, Reseal(f))
			}
			p, reason := Decode(f, c.prm)
			require.Equal(t, c.want, reason, "got %s, want %s", reason, c.want)
			require.Nil(t, p)
			covered[c.want] = true
		})
	}
	for _, r := range AllDropReasons()[1:] {
		require.True(t, covered[r], "no test triggers %s", r)
	}
}

// basePrm is the Params the case's base packet is encoded under (its own sack width for the
// ACKs built for another configuration).
func basePrm(c dropCase) Params {
	if c.base.Ack != nil {
		prm := c.prm
		prm.SackWidth = len(c.base.Ack.Sack) * SackWordBits
		prm.PSNWidth = PSNBits
		return prm
	}
	if len(c.base.Payload) > c.prm.MTU {
		prm := c.prm
		prm.MTU = len(c.base.Payload)
		return prm
	}
	return c.prm
}

// TestPadding: trailing bytes after the datagram are skipped in frames of at most
// MaxPaddedFrameLen bytes (the ICRC is found through the IP length, not the frame end) and
// refused in longer ones.
func TestPadding(t *testing.T) {
	prm := DefaultParams()
	// A 62-byte datagram stack with a NAK opcode but no NAK body: valid up to the body check.
	p := basePacket(OpNak, 4, false, 0, prm)
	full, err := Encode(p, prm)
	require.NoError(t, err)
	o := layoutOf(p)
	short := resize(t, full, o, -NakLen)
	require.Len(t, short, MinFrameLen)
	_, reason := Decode(short, prm)
	require.Equal(t, DropTruncatedExtension, reason)
	for pad := 1; pad <= MaxPaddedFrameLen-MinFrameLen; pad++ {
		padded := append(append([]byte{}, short...), make([]byte, pad)...)
		for i := range pad {
			padded[MinFrameLen+i] = 0xA5 // junk, not zeros: padding content is not checked
		}
		_, reason := Decode(padded, prm)
		require.Equal(t, DropTruncatedExtension, reason, "%d padding bytes pass the length and ICRC checks", pad)
	}
	_, reason = Decode(append(append([]byte{}, short...), 0, 0, 0), prm)
	require.Equal(t, DropFrameTrailingBytes, reason, "a 65-byte frame cannot carry padding")
	// The smallest valid frames are larger than the padded limit, so no valid frame is padded.
	require.Greater(t, len(full), MaxPaddedFrameLen)
}

// TestDecodeRetainsNothing: the decoded payload is a copy of the frame's bytes.
func TestDecodeRetainsNothing(t *testing.T) {
	prm := DefaultParams()
	p := basePacket(OpWrite, 4, false, 16, prm)
	f, err := Encode(p, prm)
	require.NoError(t, err)
	got, reason := Decode(f, prm)
	require.Equal(t, DropNone, reason)
	for i := range f {
		f[i] = 0
	}
	requireSamePacket(t, p, got, "packet after the frame was cleared")
}

func TestICRCHelpers(t *testing.T) {
	prm := DefaultParams()
	for _, ipv := range []uint8{4, 6} {
		for _, tagged := range []bool{false, true} {
			p := basePacket(OpSend, ipv, tagged, 30, prm)
			f, err := Encode(p, prm)
			require.NoError(t, err)
			c, err := ICRC(f)
			require.NoError(t, err)
			require.Equal(t, binary.BigEndian.Uint32(f[len(f)-4:]), c)
			require.NoError(t, CheckICRC(f))
			// Variant fields are masked: changing them keeps the ICRC.
			o := layoutOf(p)
			g := append([]byte{}, f...)
			if ipv == 4 {
				g[o.l3+IPv4TOSOff] ^= 0xFF
				g[o.l3+IPv4TTLOff]--
				g[o.l3+IPv4ChecksumOff] ^= 0x55
			} else {
				g[o.l3] ^= 0x0F
				g[o.l3+1] ^= 0xFF
				g[o.l3+3] ^= 0x01
				g[o.l3+IPv6HopLimitOff]--
			}
			g[o.udp+UDPChecksumOff] ^= 0xFF
			require.NoError(t, CheckICRC(g), "variant fields are outside the ICRC")
			// Everything else is covered, the UDP source port (path entropy) included.
			g[o.udp+UDPSrcPortOff] ^= 0x01
			require.ErrorIs(t, CheckICRC(g), ErrBadICRC)
			require.NoError(t, Reseal(g))
			require.NoError(t, CheckICRC(g))
			// Reseal repairs the IPv4 checksum too.
			got, reason := Decode(g, prm)
			require.Equal(t, DropNone, reason)
			require.Equal(t, p.UDP.SrcPort^0x0100, got.UDP.SrcPort)
		}
	}
	for _, bad := range [][]byte{nil, make([]byte, 13), make([]byte, 80)} {
		_, err := ICRC(bad)
		require.ErrorIs(t, err, ErrMalformedFrame)
		require.ErrorIs(t, CheckICRC(bad), ErrMalformedFrame)
		require.ErrorIs(t, Reseal(bad), ErrMalformedFrame)
	}
}

// TestDecodeInvalidParams: Decode's results are only defined for valid Params, but it must not
// panic whatever it is given.
func TestDecodeInvalidParams(t *testing.T) {
	prm := DefaultParams()
	rng := rand.New(rand.NewPCG(5, 6))
	var frames [][]byte
	for range 200 {
		f, err := Encode(RandomPacket(rng, prm), prm)
		require.NoError(t, err)
		frames = append(frames, f)
	}
	weird := []Params{
		{},
		{UDPDestPort: 4792, PSNWidth: -3, SackWidth: -64, MTU: -1, Connections: -1, PathsPerConnection: -1, StreamsPerConnection: -1},
		{UDPDestPort: 4792, PSNWidth: 99, SackWidth: 100, MTU: 1 << 40, Connections: 1 << 40, PathsPerConnection: 1, StreamsPerConnection: 1},
		{UDPDestPort: 4792, PSNWidth: 32, SackWidth: 1 << 30, MTU: math.MaxInt, Connections: 4, PathsPerConnection: 8, StreamsPerConnection: 4},
	}
	for _, w := range weird {
		require.Error(t, w.Validate())
		for _, f := range frames {
			for range 20 {
				g := mutate(rng, bytes.Clone(f))
				if rng.IntN(2) == 0 {
					_ = Reseal(g)
				}
				_, r := decodeNoPanic(t, g, w)
				require.True(t, r.Valid())
			}
		}
	}
}
