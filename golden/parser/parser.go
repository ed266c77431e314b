// Package parser is the behavioural truth of the header parser (issue 5): a frame in, either a
// header descriptor plus the payload, or a drop with a reason from docs/wire-format.md's table,
// counted per reason. The decoding rules (check order included) are golden/wire's; this package
// fixes what the parser hands downstream, in the units and widths of the RTL's ports, so the
// parser's cosim compares the RTL's descriptor with Descriptor field by field.
//
// Payload alignment: the payload leaves as its own stream with its first byte in byte lane 0
// (tdata[7:0]) of the first beat, whatever the header stack's length; the ICRC trailer is not
// part of it. PayloadLen counts its bytes.
package parser

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/wire"
)

// Descriptor is one accepted packet's header bundle. Every field is meaningful for the opcodes
// its comment names and zero otherwise, so two descriptors compare equal field by field.
type Descriptor struct {
	// Transport header (all opcodes).
	Opcode   uint8  // 8 bits: wire.Opcode
	Flags    uint8  // 8 bits: wire.Flags
	ConnID   uint16 // 16 bits
	PathID   uint8  // 8 bits
	PSN      uint32 // 32 bits; ACK: the cumulative PSN
	StreamID uint8  // 8 bits; 0 in ACK and ANNOUNCE
	MSN      uint32 // 32 bits; 0 in ACK and ANNOUNCE

	// Encapsulation.
	IPv6       bool   // 1 bit
	VLAN       bool   // 1 bit
	ECN        uint8  // 2 bits: the IP ECN field (3 = congestion experienced)
	UDPSrcPort uint16 // 16 bits: the path's ECMP entropy

	// WRITE and SEND (Timestamp: ANNOUNCE too).
	Timestamp  uint32 // 32 bits: send time, echoed by the ACK
	MsgLen     uint32 // 32 bits
	RKey       uint32 // 32 bits (WRITE)
	VA         uint64 // 64 bits (WRITE): address of this packet's first payload byte
	Offset     uint32 // 32 bits (SEND): byte offset in the message
	PayloadLen uint16 // 16 bits: payload bytes (data packets; 0 otherwise)

	// ACK.
	TimestampEcho uint32   // 32 bits (ACK and NAK)
	ECNEcho       uint16   // 16 bits
	RateHint      uint16   // 16 bits, wire.RateHintUnitMbps units
	Sack          []uint64 // sack_width bits, aligned to PSN (bit 0 = PSN itself, always 0)

	// NAK.
	NakCode  uint8  // 3 bits used: wire.NakCode
	RNRDelay uint16 // 16 bits, wire.RNRDelayUnitUS units
}

// Counters count every frame by outcome: Accepted, and Dropped[r] for every drop reason r.
type Counters struct {
	Accepted uint64
	Dropped  []uint64 // indexed by wire.DropReason; Dropped[DropNone] stays 0
}

// Total is the number of frames seen.
func (c *Counters) Total() uint64 {
	n := c.Accepted
	for _, d := range c.Dropped {
		n += d
	}
	return n
}

// Parser parses frames for one configuration and counts the outcomes.
type Parser struct {
	prm      wire.Params
	Counters Counters
}

// New returns a parser for validated wire parameters.
func New(prm wire.Params) (*Parser, error) {
	if err := prm.Validate(); err != nil {
		return nil, fmt.Errorf("parser: %w", err)
	}
	return &Parser{prm: prm, Counters: Counters{Dropped: make([]uint64, len(wire.AllDropReasons()))}}, nil
}

// Parse parses one frame (Ethernet header to ICRC trailer, no FCS). It returns the descriptor
// and the payload, or a drop reason (never DropNone for a drop). It never panics.
func (p *Parser) Parse(frame []byte) (Descriptor, []byte, wire.DropReason) {
	pkt, reason := wire.Decode(frame, p.prm)
	if reason != wire.DropNone {
		p.Counters.Dropped[reason]++
		return Descriptor{}, nil, reason
	}
	p.Counters.Accepted++
	return Describe(pkt), pkt.Payload, wire.DropNone
}

// Describe flattens a decoded packet into its descriptor.
func Describe(pkt *wire.Packet) Descriptor {
	d := Descriptor{
		Opcode: uint8(pkt.BTH.Opcode), Flags: uint8(pkt.BTH.Flags), ConnID: pkt.BTH.ConnID,
		PathID: pkt.BTH.PathID, PSN: pkt.BTH.PSN, StreamID: pkt.BTH.StreamID, MSN: pkt.BTH.MSN,
		IPv6: pkt.IP.Version == 6, VLAN: pkt.Eth.VLAN != nil, ECN: pkt.IP.ECN, UDPSrcPort: pkt.UDP.SrcPort,
		PayloadLen: uint16(len(pkt.Payload)),
	}
	switch {
	case pkt.Write != nil:
		d.Timestamp, d.MsgLen, d.RKey, d.VA = pkt.Write.Timestamp, pkt.Write.MsgLen, pkt.Write.RKey, pkt.Write.VA
	case pkt.Send != nil:
		d.Timestamp, d.MsgLen, d.Offset = pkt.Send.Timestamp, pkt.Send.MsgLen, pkt.Send.Offset
	case pkt.Ack != nil:
		d.TimestampEcho, d.ECNEcho, d.RateHint = pkt.Ack.TimestampEcho, pkt.Ack.ECNEcho, pkt.Ack.RateHint
		d.Sack = append([]uint64(nil), pkt.Ack.Sack...)
	case pkt.Nak != nil:
		d.NakCode, d.RNRDelay, d.TimestampEcho = uint8(pkt.Nak.Code), pkt.Nak.RNRDelay, pkt.Nak.TimestampEcho
	case pkt.Announce != nil:
		d.Timestamp = pkt.Announce.Timestamp
	}
	return d
}
