package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// ErrMalformedFrame marks the errors of ICRC, CheckICRC and Reseal on a frame whose structure
// does not let them find the IP datagram.
var ErrMalformedFrame = errors.New("wire: malformed frame")

// ErrBadICRC is returned by CheckICRC when the trailer does not match.
var ErrBadICRC = errors.New("wire: ICRC mismatch")

// span locates the parts of a frame that the checksums cover.
type span struct {
	l3     int  // start of the IP header
	ipLen  int  // IP header length in bytes
	v6     bool // IPv6
	dgEnd  int  // end of the IP datagram (the ICRC is its last ICRCLen bytes)
	icrcAt int  // offset of the ICRC trailer
}

// locate finds the IP datagram of a frame without judging it: one 802.1Q tag at most, IPv4 (any
// IHL ≥ 5) or IPv6, the datagram inside the frame and long enough for UDP and the ICRC.
func locate(frame []byte) (span, error) {
	malformed := func(format string, a ...any) (span, error) {
		return span{}, fmt.Errorf("%w: %s", ErrMalformedFrame, fmt.Sprintf(format, a...))
	}
	if len(frame) < EthHeaderLen {
		return malformed("%d bytes is shorter than an Ethernet header", len(frame))
	}
	l3 := EthHeaderLen
	et := binary.BigEndian.Uint16(frame[EthTypeOff:])
	if et == EtherTypeVLAN {
		if len(frame) < EthHeaderLen+VLANTagLen {
			return malformed("%d bytes is too short for a VLAN-tagged Ethernet header", len(frame))
		}
		et = binary.BigEndian.Uint16(frame[EthTypeOff+VLANTagLen:])
		l3 += VLANTagLen
	}
	var s span
	s.l3 = l3
	switch et {
	case EtherTypeIPv4:
		if len(frame) < l3+IPv4HeaderLen {
			return malformed("frame ends inside the IPv4 header")
		}
		s.ipLen = int(frame[l3]&0x0F) * 4
		if s.ipLen < IPv4HeaderLen {
			return malformed("IPv4 IHL %d is below %d", s.ipLen/4, IPv4IHL)
		}
		s.dgEnd = l3 + int(binary.BigEndian.Uint16(frame[l3+IPv4TotalLengthOff:]))
	case EtherTypeIPv6:
		if len(frame) < l3+IPv6HeaderLen {
			return malformed("frame ends inside the IPv6 header")
		}
		s.v6 = true
		s.ipLen = IPv6HeaderLen
		s.dgEnd = l3 + IPv6HeaderLen + int(binary.BigEndian.Uint16(frame[l3+IPv6PayloadLengthOff:]))
	default:
		return malformed("EtherType 0x%04x is neither IPv4 nor IPv6", et)
	}
	if s.dgEnd > len(frame) {
		return malformed("IP datagram ends at byte %d, beyond the %d-byte frame", s.dgEnd, len(frame))
	}
	if s.dgEnd < l3+s.ipLen+UDPHeaderLen+ICRCLen {
		return malformed("IP datagram of %d bytes has no room for UDP and the ICRC", s.dgEnd-l3)
	}
	s.icrcAt = s.dgEnd - ICRCLen
	return s, nil
}

// icrc computes the invariant CRC over the masked IP header, the masked UDP header and everything
// after it up to the trailer. s must come from locate (or the equivalent checks of Decode).
func icrc(frame []byte, s span) uint32 {
	// Copy of the IP header (up to 60 bytes with options) and the UDP header, variant fields
	// set to ones.
	var buf [60 + UDPHeaderLen]byte
	hdr := buf[:s.ipLen+UDPHeaderLen]
	copy(hdr, frame[s.l3:])
	for i := range hdr {
		hdr[i] |= ICRCMask(s.v6, s.ipLen, i)
	}
	c := crc32.Update(0, crc32.IEEETable, hdr)
	return crc32.Update(c, crc32.IEEETable, frame[s.l3+len(hdr):s.icrcAt])
}

// ICRC computes the invariant CRC of a frame: CRC-32 (IEEE 802.3, as hash/crc32.ChecksumIEEE)
// over the IP header, the UDP header, the transport headers and the payload, with the variant
// fields set to ones (IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label and hop
// limit; UDP checksum), up to the 4-byte trailer that carries it big-endian. The Ethernet header
// and any padding after the IP datagram are not covered. ICRC parses only enough of the frame to
// find the datagram; it returns an error wrapping ErrMalformedFrame if it cannot.
func ICRC(frame []byte) (uint32, error) {
	s, err := locate(frame)
	if err != nil {
		return 0, fmt.Errorf("wire: ICRC: %w", err)
	}
	return icrc(frame, s), nil
}

// CheckICRC compares the frame's ICRC trailer with ICRC(frame). It returns nil when they match,
// an error wrapping ErrBadICRC when they differ, or one wrapping ErrMalformedFrame.
func CheckICRC(frame []byte) error {
	s, err := locate(frame)
	if err != nil {
		return fmt.Errorf("wire: check ICRC: %w", err)
	}
	got := binary.BigEndian.Uint32(frame[s.icrcAt:])
	if want := icrc(frame, s); got != want {
		return fmt.Errorf("%w: trailer 0x%08x, computed 0x%08x", ErrBadICRC, got, want)
	}
	return nil
}

// Reseal recomputes, in place, the IPv4 header checksum (of a 20-byte IPv4 header) and the ICRC
// trailer, after a caller edited header fields. It exists to build deliberately malformed frames
// whose only fault is the one intended (tests, cosim directed stimulus). Errors wrap
// ErrMalformedFrame.
func Reseal(frame []byte) error {
	s, err := locate(frame)
	if err != nil {
		return fmt.Errorf("wire: reseal: %w", err)
	}
	if !s.v6 && s.ipLen == IPv4HeaderLen {
		h := frame[s.l3 : s.l3+IPv4HeaderLen]
		binary.BigEndian.PutUint16(h[IPv4ChecksumOff:], 0)
		binary.BigEndian.PutUint16(h[IPv4ChecksumOff:], ^onesSum(h))
	}
	binary.BigEndian.PutUint32(frame[s.icrcAt:], icrc(frame, s))
	return nil
}

// onesSum is the 16-bit one's-complement sum of b (even length) used by the IPv4 header checksum:
// a header is intact when onesSum over it, checksum included, is 0xFFFF.
func onesSum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}
