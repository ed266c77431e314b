package wire

import (
	"math"
	"math/rand/v2"
)

// RandomPacket returns a valid packet for prm (Encode accepts it), drawn from rng alone, so the
// same seed gives the same packet. It covers every opcode, IPv4 and IPv6, tagged and untagged
// frames, every ECN codepoint, every flag combination a data packet may carry, message
// positions first/middle/last/only, and payload sizes 0..MTU with the edges (0, 1, MTU) drawn
// often. prm must pass Validate.
func RandomPacket(rng *rand.Rand, prm Params) *Packet {
	p := &Packet{}
	fill(rng, p.Eth.Dst[:])
	fill(rng, p.Eth.Src[:])
	if rng.IntN(2) == 0 {
		p.Eth.VLAN = &VLANTag{
			PCP: uint8(rng.IntN(1 << VLANPCPBits)),
			DEI: rng.IntN(2) == 0,
			VID: uint16(rng.IntN(1 << VLANVIDBits)),
		}
	}
	p.IP.DSCP = uint8(rng.IntN(1 << IPv4DSCPBits))
	p.IP.ECN = uint8(rng.IntN(1 << IPv4ECNBits))
	p.IP.TTL = uint8(rng.IntN(256))
	if rng.IntN(2) == 0 {
		p.IP.Version = 4
		fill(rng, p.IP.Src[:4])
		fill(rng, p.IP.Dst[:4])
		p.IP.ID = uint16(rng.Uint32())
		p.IP.DontFragment = rng.IntN(2) == 0
	} else {
		p.IP.Version = 6
		fill(rng, p.IP.Src[:])
		fill(rng, p.IP.Dst[:])
		p.IP.FlowLabel = rng.Uint32() & IPv6FlowLabelMask
	}
	p.UDP.SrcPort = uint16(rng.Uint32())

	ops := AllOpcodes()
	b := &p.BTH
	b.Opcode = ops[rng.IntN(len(ops))]
	b.ConnID = uint16(rng.IntN(prm.Connections))
	b.PathID = uint8(rng.IntN(prm.PathsPerConnection))
	b.PSN = uint32(rng.Uint64() & (1<<prm.PSNWidth - 1))
	if b.Opcode == OpAnnounce {
		b.PSN = 0
	}
	if b.Opcode != OpAck && b.Opcode != OpAnnounce {
		b.StreamID = uint8(rng.IntN(prm.StreamsPerConnection))
		b.MSN = rng.Uint32()
	}

	switch b.Opcode {
	case OpAck:
		a := &Ack{
			TimestampEcho: rng.Uint32(),
			ECNEcho:       uint16(rng.Uint32()),
			RateHint:      uint16(rng.Uint32()),
			Sack:          make([]uint64, prm.SackWidth/SackWordBits),
		}
		density := rng.IntN(3) // sparse, random, dense
		for i := range a.Sack {
			switch density {
			case 0:
				a.Sack[i] = rng.Uint64() & rng.Uint64() & rng.Uint64()
			case 1:
				a.Sack[i] = rng.Uint64()
			default:
				a.Sack[i] = rng.Uint64() | rng.Uint64() | rng.Uint64()
			}
		}
		a.Sack[0] &^= 1 // the cumulative PSN itself was not received
		p.Ack = a
	case OpNak:
		codes := AllNakCodes()
		p.Nak = &Nak{Code: codes[rng.IntN(len(codes))], TimestampEcho: rng.Uint32()}
		if p.Nak.Code == NakReceiverNotReady {
			p.Nak.RNRDelay = uint16(rng.Uint32())
		}
	case OpAnnounce:
		p.Announce = &Announce{Timestamp: rng.Uint32()}
	default:
		randomData(rng, prm, p)
	}
	return p
}

// randomData fills the extension, flags and payload of a data packet, consistent with one
// position in a message.
func randomData(rng *rand.Rand, prm Params, p *Packet) {
	n := randomPayloadLen(rng, prm.MTU)
	p.BTH.Flags = Flags(rng.IntN(8)) * FlagPathInit // INIT, RETX and ACKREQ, any combination
	if n > 0 {
		p.Payload = make([]byte, n)
		fill(rng, p.Payload)
	}
	// Position: 0 only, 1 first, 2 middle, 3 last. An empty payload is only a whole empty message.
	pos := 0
	if n > 0 {
		pos = rng.IntN(4)
	}
	before, after := uint32(0), uint32(0) // message bytes before and after this packet
	maxSide := uint32(math.MaxUint32-uint32(n)) / 2
	side := func() uint32 {
		if rng.IntN(2) == 0 {
			return 1 + rng.Uint32N(uint32(prm.MTU)*8) // a plausible message
		}
		return 1 + rng.Uint32N(maxSide) // anywhere in the 32-bit length space
	}
	switch pos {
	case 0:
		p.BTH.Flags |= FlagFirst | FlagLast
	case 1:
		p.BTH.Flags |= FlagFirst
		after = side()
	case 2:
		before, after = side(), side()
	case 3:
		p.BTH.Flags |= FlagLast
		before = side()
	}
	msgLen := before + uint32(n) + after
	ts := rng.Uint32()
	if p.BTH.Opcode == OpSend {
		p.Send = &SendExt{Timestamp: ts, MsgLen: msgLen, Offset: before}
		return
	}
	va := rng.Uint64()
	if rng.IntN(8) == 0 {
		va = math.MaxUint64 - uint64(max(n, 1)-1) // the last bytes of the address space
	} else if n > 0 && va > math.MaxUint64-uint64(n-1) {
		va -= uint64(n)
	}
	p.Write = &WriteExt{Timestamp: ts, MsgLen: msgLen, RKey: rng.Uint32(), VA: va}
}

// randomPayloadLen draws a payload length in 0..mtu, with the edges drawn often.
func randomPayloadLen(rng *rand.Rand, mtu int) int {
	switch rng.IntN(8) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return mtu
	case 3:
		return 1 + rng.IntN(64) // small packets, the common ACK-clocked case
	}
	return rng.IntN(mtu + 1)
}

// fill sets b to bytes drawn from rng.
func fill(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		w := rng.Uint64()
		for j := i; j < len(b) && j < i+8; j++ {
			b[j] = byte(w)
			w >>= 8
		}
	}
}
