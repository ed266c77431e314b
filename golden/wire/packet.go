package wire

import (
	"fmt"
	"net/netip"
	"strings"
)

// Opcode is the BTH opcode.
type Opcode uint8

// Opcodes. Data opcodes have the high nibble 0, control packets (unsequenced, no payload) 1;
// every other value is unknown and dropped. A message's position (first, middle, last, only) is
// in Flags, not in the opcode: every data packet carries its own placement, so the receiver never
// steps an opcode state machine.
const (
	OpWrite Opcode = 0x01 // one packet of an RDMA Write; carries a WriteExt
	OpSend  Opcode = 0x02 // one packet of a Send; carries a SendExt
	OpAck   Opcode = 0x10 // per-path acknowledgement; carries an Ack
	OpNak   Opcode = 0x11 // negative acknowledgement of one data packet; carries a Nak
	// OpAnnounce is a connection announcing itself to a receiver it has not heard from, ahead
	// of its first data packet, so that the receiver counts it for the rate hint one data
	// packet's queueing earlier; carries an Announce. It is never sequenced: it changes no PSN
	// or SACK state at either end.
	OpAnnounce Opcode = 0x12
)

// AllOpcodes lists every defined opcode in numeric order.
func AllOpcodes() []Opcode { return []Opcode{OpWrite, OpSend, OpAck, OpNak, OpAnnounce} }

// Known reports whether op is a defined opcode.
func (op Opcode) Known() bool {
	switch op {
	case OpWrite, OpSend, OpAck, OpNak, OpAnnounce:
		return true
	}
	return false
}

// IsControl reports whether op is a control packet (ACK, NAK, ANNOUNCE): unsequenced, with no
// payload, and carried in the fabric's control traffic class.
func (op Opcode) IsControl() bool { return op == OpAck || op == OpNak || op == OpAnnounce }

// IsData reports whether op is a data opcode (Write or Send), which is sequenced, carries a send
// timestamp and a payload, and is acknowledged.
func (op Opcode) IsData() bool { return op == OpWrite || op == OpSend }

func (op Opcode) String() string {
	switch op {
	case OpWrite:
		return "WRITE"
	case OpSend:
		return "SEND"
	case OpAck:
		return "ACK"
	case OpNak:
		return "NAK"
	case OpAnnounce:
		return "ANNOUNCE"
	}
	return fmt.Sprintf("Opcode(0x%02x)", uint8(op))
}

// Flags is the BTH flags byte.
type Flags uint8

// Flag bits. Only data packets may set flags; ACK and NAK carry 0. Bits 3..0 are reserved.
const (
	FlagFirst  Flags = 0x80 // first packet of the message (Send: offset 0)
	FlagLast   Flags = 0x40 // last packet of the message (Send: offset + payload = message length)
	FlagAckReq Flags = 0x20 // the receiver should acknowledge this packet at once
	FlagRetx   Flags = 0x10 // a retransmission (informational: statistics, RTT sample filtering)
	// FlagPathInit restarts the path's sequence at this packet's PSN: a receiver whose entry for
	// the path has its cumulative PSN at or before it (serially) re-initialises the entry there
	// (nothing received, cum = PSN) before classifying the packet. A sender sets it on the first
	// packet of a path it revives after a failure, whose old PSNs it abandoned.
	FlagPathInit Flags = 0x08

	// DataFlagsMask is every flag a data packet may set; the rest are reserved.
	DataFlagsMask = FlagFirst | FlagLast | FlagAckReq | FlagRetx | FlagPathInit
)

// AllowedFlags is the set of flag bits op may carry.
func AllowedFlags(op Opcode) Flags {
	if op.IsData() {
		return DataFlagsMask
	}
	return 0
}

func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	var parts []string
	for _, x := range []struct {
		bit  Flags
		name string
	}{{FlagFirst, "FIRST"}, {FlagLast, "LAST"}, {FlagAckReq, "ACKREQ"}, {FlagRetx, "RETX"}, {FlagPathInit, "INIT"}} {
		if f&x.bit != 0 {
			parts = append(parts, x.name)
		}
	}
	if r := f &^ DataFlagsMask; r != 0 {
		parts = append(parts, fmt.Sprintf("0x%02x", uint8(r)))
	}
	return strings.Join(parts, "|")
}

// NakCode says why a data packet was refused.
type NakCode uint8

// NAK codes. 0 is reserved; every value not listed is unknown and dropped.
const (
	NakRKeyViolation    NakCode = 1 // the rkey names no region, or one without remote write access
	NakBoundsViolation  NakCode = 2 // the packet's bytes fall outside the region
	NakReceiverNotReady NakCode = 3 // no receive posted for (stream, MSN) yet; retry after RNRDelay
	NakReceiveTooSmall  NakCode = 4 // the message is longer than the posted receive buffer
	NakInvalidRequest   NakCode = 5 // inconsistent with earlier packets of the message (length, rkey)
)

// AllNakCodes lists every defined NAK code in numeric order.
func AllNakCodes() []NakCode {
	return []NakCode{NakRKeyViolation, NakBoundsViolation, NakReceiverNotReady, NakReceiveTooSmall, NakInvalidRequest}
}

// Known reports whether c is a defined NAK code.
func (c NakCode) Known() bool { return c >= NakRKeyViolation && c <= NakInvalidRequest }

func (c NakCode) String() string {
	switch c {
	case NakRKeyViolation:
		return "rkey_violation"
	case NakBoundsViolation:
		return "bounds_violation"
	case NakReceiverNotReady:
		return "receiver_not_ready"
	case NakReceiveTooSmall:
		return "receive_too_small"
	case NakInvalidRequest:
		return "invalid_request"
	}
	return fmt.Sprintf("NakCode(%d)", uint8(c))
}

// ECN codepoints (RFC 3168) of the IP header's 2-bit ECN field.
const (
	ECNNotECT uint8 = 0
	ECNECT1   uint8 = 1
	ECNECT0   uint8 = 2
	ECNCE     uint8 = 3 // congestion experienced
)

// MAC is an Ethernet address.
type MAC [6]byte

func (m MAC) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// VLANTag is an IEEE 802.1Q customer tag (TPID EtherTypeVLAN).
type VLANTag struct {
	PCP uint8  // priority code point, 0..7
	DEI bool   // drop eligible indicator
	VID uint16 // VLAN identifier, 0..4095
}

// EthHeader is the Ethernet II header, with at most one VLAN tag.
type EthHeader struct {
	Dst, Src MAC
	VLAN     *VLANTag // nil: untagged
}

// IPHeader holds the IPv4 or IPv6 header fields that are not computed by Encode. Lengths, the
// protocol (UDP) and the IPv4 header checksum are computed.
type IPHeader struct {
	Version uint8 // 4 or 6
	// Src and Dst are the addresses; an IPv4 address occupies bytes 0..3 and bytes 4..15 are 0.
	Src, Dst [16]byte
	DSCP     uint8 // 0..63
	ECN      uint8 // 0..3, ECNNotECT .. ECNCE
	TTL      uint8 // IPv4 TTL or IPv6 hop limit
	// FlowLabel is the IPv6 flow label (0..0xFFFFF); 0 for IPv4.
	FlowLabel uint32
	// ID is the IPv4 identification; 0 for IPv6.
	ID uint16
	// DontFragment is the IPv4 DF flag; false for IPv6.
	DontFragment bool
}

// SrcAddr returns Src as a netip.Addr of the header's version.
func (h *IPHeader) SrcAddr() netip.Addr { return h.addr(h.Src) }

// DstAddr returns Dst as a netip.Addr of the header's version.
func (h *IPHeader) DstAddr() netip.Addr { return h.addr(h.Dst) }

func (h *IPHeader) addr(a [16]byte) netip.Addr {
	if h.Version == 4 {
		return netip.AddrFrom4([4]byte(a[:4]))
	}
	return netip.AddrFrom16(a)
}

// SetAddrs sets Version, Src and Dst from two addresses of the same family.
func (h *IPHeader) SetAddrs(src, dst netip.Addr) error {
	if src.Is4() != dst.Is4() || src.Is4In6() || dst.Is4In6() || !src.IsValid() || !dst.IsValid() {
		return fmt.Errorf("wire: IP addresses %v and %v: need two IPv4 or two IPv6 addresses", src, dst)
	}
	h.Src, h.Dst = [16]byte{}, [16]byte{}
	if src.Is4() {
		h.Version = 4
		s, d := src.As4(), dst.As4()
		copy(h.Src[:], s[:])
		copy(h.Dst[:], d[:])
	} else {
		h.Version = 6
		h.Src, h.Dst = src.As16(), dst.As16()
	}
	return nil
}

// UDPHeader holds the UDP fields that are not computed (the destination port is
// Params.UDPDestPort and the length is computed).
type UDPHeader struct {
	SrcPort uint16 // the path's ECMP entropy
	// Checksum is carried verbatim: a MetaRoCE sender writes 0 (IPv4, and IPv6 under RFC 6935/
	// 6936), and a receiver does not verify it because the ICRC protects the datagram.
	Checksum uint16
}

// BTH holds the base transport header fields (version and reserved byte are constants).
type BTH struct {
	Opcode Opcode
	Flags  Flags
	ConnID uint16
	// PathID is the path the data packet travels on; in an ACK or NAK, the path it answers for.
	PathID   uint8
	StreamID uint8 // ordered message stream; 0 in an ACK and an ANNOUNCE
	// PSN is the per-path packet sequence number of a data packet; in an ACK, the path's
	// cumulative PSN (the next PSN expected: every lower PSN was received); in a NAK, the PSN of
	// the refused packet; 0 in an ANNOUNCE. Bits at and above Params.PSNWidth must be 0.
	PSN uint32
	MSN uint32 // message sequence number within the stream; 0 in an ACK and an ANNOUNCE
}

// WriteExt is the Write extension: where this packet's bytes go.
type WriteExt struct {
	Timestamp uint32 // send time, TimestampUnitNS units mod 2^32; echoed by the ACK
	MsgLen    uint32 // total message length in bytes
	RKey      uint32 // remote key of the target memory region
	VA        uint64 // virtual address of this packet's first payload byte
}

// SendExt is the Send extension; the receive match (stream, MSN) is in the BTH.
type SendExt struct {
	Timestamp uint32 // send time, TimestampUnitNS units mod 2^32; echoed by the ACK
	MsgLen    uint32 // total message length in bytes
	Offset    uint32 // byte offset of this packet's first payload byte in the message
}

// Ack is the ACK body. The acknowledged path and its cumulative PSN are BTH.PathID and BTH.PSN.
type Ack struct {
	TimestampEcho uint32 // the Timestamp of the data packet that triggered this ACK
	ECNEcho       uint16 // CE-marked packets received on the path since the last ACK (saturating)
	RateHint      uint16 // the sender's fair share of the receiver, RateHintUnitMbps; 0: no limit
	// Sack is the SACK bitmap, Params.SackWidth bits as SackWidth/64 words. Bit i (word i/64,
	// bit i%64, LSB = 0) stands for PSN (BTH.PSN + i) mod 2^PSNWidth and is set when that packet
	// was received. Bit 0 is the cumulative PSN itself, which by definition was not received, so
	// it is always 0. On the wire, byte k holds bits 8k..8k+7 with bit 8k in its LSB.
	Sack []uint64
}

// SackBit reports bit i of the bitmap (false when i is out of range).
func (a *Ack) SackBit(i int) bool {
	if i < 0 || i/SackWordBits >= len(a.Sack) {
		return false
	}
	return a.Sack[i/SackWordBits]>>(i%SackWordBits)&1 != 0
}

// SetSackBit sets bit i of the bitmap to v; it reports false when i is out of range.
func (a *Ack) SetSackBit(i int, v bool) bool {
	if i < 0 || i/SackWordBits >= len(a.Sack) {
		return false
	}
	m := uint64(1) << (i % SackWordBits)
	if v {
		a.Sack[i/SackWordBits] |= m
	} else {
		a.Sack[i/SackWordBits] &^= m
	}
	return true
}

// Nak is the NAK body. The refused packet is identified by BTH.PathID, PSN, StreamID and MSN.
type Nak struct {
	Code NakCode
	// RNRDelay is the retry delay in RNRDelayUnitUS for NakReceiverNotReady; 0 for other codes.
	RNRDelay      uint16
	TimestampEcho uint32 // the Timestamp of the refused packet
}

// Announce is the ANNOUNCE body. The announcing connection is BTH.ConnID (the receiver's index
// of the sender) and BTH.PathID the path it travels on, whose ACK answers it; stream id, PSN and
// MSN are 0, and so is the body's reserved word.
type Announce struct {
	Timestamp uint32 // send time, TimestampUnitNS units mod 2^32; echoed by the answering ACK
}

// Packet is everything Encode needs to build a frame and everything Decode recovers from one.
// Exactly one of Write, Send, Ack, Nak and Announce is non-nil, the one BTH.Opcode calls for.
type Packet struct {
	Eth      EthHeader
	IP       IPHeader
	UDP      UDPHeader
	BTH      BTH
	Write    *WriteExt
	Send     *SendExt
	Ack      *Ack
	Nak      *Nak
	Announce *Announce
	Payload  []byte // data packets only; nil when empty
}
