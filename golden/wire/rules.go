package wire

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidPacket marks every error of Encode about the Packet it was given.
var ErrInvalidPacket = errors.New("wire: invalid packet")

// PacketError is Encode's refusal of a Packet. When the fault is one Decode would drop, Reason
// is that drop reason (the rule lives once, in fieldRules, for both directions); a fault that
// no frame can express (a field wider than its wire width, a missing extension) has DropNone.
type PacketError struct {
	Reason DropReason
	Msg    string
}

func (e *PacketError) Error() string {
	if e.Reason == DropNone {
		return e.Msg
	}
	return fmt.Sprintf("%s (a receiver drops it as %s)", e.Msg, e.Reason)
}

func (e *PacketError) Unwrap() error { return ErrInvalidPacket }

// reserved carries the raw reserved fields Decode read; Encode always writes zeros.
type reserved struct {
	bth, nak uint8
	announce uint32
}

// fieldRules applies the checks from payload_too_long on, in code order, to a packet whose
// structure is sound (known opcode, exactly the matching extension, Ack.Sack of the right
// length). Decode and Encode both call it.
func fieldRules(p *Packet, prm Params, rsv reserved) DropReason {
	op := p.BTH.Opcode
	n := len(p.Payload)
	msgLen, isData := dataMsgLen(p)
	switch {
	case n > prm.MTU:
		return DropPayloadTooLong
	case !isData && n != 0, isData && n == 0 && msgLen != 0:
		return DropPayloadLengthInvalid
	case p.BTH.Flags&^AllowedFlags(op) != 0:
		return DropBadFlags
	case op == OpNak && !p.Nak.Code.Known():
		return DropUnknownNakCode
	case rsv.bth != 0,
		op == OpAck && (p.BTH.StreamID != 0 || p.BTH.MSN != 0),
		op == OpNak && (rsv.nak != 0 || p.Nak.Code != NakReceiverNotReady && p.Nak.RNRDelay != 0),
		op == OpAnnounce && (p.BTH.StreamID != 0 || p.BTH.PSN != 0 || p.BTH.MSN != 0 || rsv.announce != 0):
		return DropReservedNonzero
	case int(p.BTH.ConnID) >= prm.Connections:
		return DropConnectionOutOfRange
	case int(p.BTH.PathID) >= prm.PathsPerConnection:
		return DropPathOutOfRange
	case int(p.BTH.StreamID) >= prm.StreamsPerConnection:
		return DropStreamOutOfRange
	case prm.PSNWidth < PSNBits && uint64(p.BTH.PSN)>>max(prm.PSNWidth, 0) != 0:
		return DropPSNOutOfRange
	case op == OpAck && len(p.Ack.Sack) > 0 && p.Ack.Sack[0]&1 != 0:
		return DropSackBaseBitSet
	}
	if !isData {
		return DropNone
	}
	first, last := p.BTH.Flags&FlagFirst != 0, p.BTH.Flags&FlagLast != 0
	if op == OpWrite {
		// The address range [VA, VA+n) must not wrap the 64-bit address space.
		if uint64(n) > uint64(msgLen) || n > 0 && p.Write.VA > math.MaxUint64-uint64(n-1) {
			return DropMessageBounds
		}
		// Every packet of a message carries at least one byte (or the message is empty), so
		// the packet is the whole message exactly when it is both first and last.
		if (first && last) != (uint64(n) == uint64(msgLen)) {
			return DropPositionFlagsMismatch
		}
		return DropNone
	}
	end := uint64(p.Send.Offset) + uint64(n)
	if end > uint64(msgLen) {
		return DropMessageBounds
	}
	if first != (p.Send.Offset == 0) || last != (end == uint64(msgLen)) {
		return DropPositionFlagsMismatch
	}
	return DropNone
}

// dataMsgLen returns the message length of a data packet and whether p is one.
func dataMsgLen(p *Packet) (uint32, bool) {
	switch p.BTH.Opcode {
	case OpWrite:
		return p.Write.MsgLen, true
	case OpSend:
		return p.Send.MsgLen, true
	}
	return 0, false
}

// explain renders a field-rule violation for Encode's error message.
func explain(r DropReason, p *Packet, prm Params) string {
	b := &p.BTH
	switch r {
	case DropPayloadTooLong:
		return fmt.Sprintf("payload of %d bytes exceeds MTU %d", len(p.Payload), prm.MTU)
	case DropPayloadLengthInvalid:
		if !b.Opcode.IsData() {
			return fmt.Sprintf("%s carries %d payload bytes; it may carry none", b.Opcode, len(p.Payload))
		}
		return "empty payload in a non-empty message: every packet of a message carries at least one byte"
	case DropBadFlags:
		return fmt.Sprintf("flags %s not allowed on %s (allowed: %s)", b.Flags, b.Opcode, AllowedFlags(b.Opcode))
	case DropUnknownNakCode:
		return fmt.Sprintf("NAK code %d is not defined", uint8(p.Nak.Code))
	case DropReservedNonzero:
		switch b.Opcode {
		case OpAck:
			return fmt.Sprintf("ACK must carry stream id 0 and MSN 0, has %d and %d", b.StreamID, b.MSN)
		case OpAnnounce:
			return fmt.Sprintf("ANNOUNCE must carry stream id, PSN and MSN 0, has %d, %d and %d", b.StreamID, b.PSN, b.MSN)
		}
		return fmt.Sprintf("NAK %s must carry RNR delay 0, has %d", p.Nak.Code, p.Nak.RNRDelay)
	case DropConnectionOutOfRange:
		return fmt.Sprintf("connection id %d not below %d", b.ConnID, prm.Connections)
	case DropPathOutOfRange:
		return fmt.Sprintf("path id %d not below %d", b.PathID, prm.PathsPerConnection)
	case DropStreamOutOfRange:
		return fmt.Sprintf("stream id %d not below %d", b.StreamID, prm.StreamsPerConnection)
	case DropPSNOutOfRange:
		return fmt.Sprintf("PSN 0x%08x has bits above psn_width %d", b.PSN, prm.PSNWidth)
	case DropSackBaseBitSet:
		return "SACK bit 0 (the cumulative PSN, not received by definition) is set"
	case DropMessageBounds:
		if b.Opcode == OpWrite {
			return fmt.Sprintf("%d payload bytes at VA 0x%x do not fit a %d-byte message or the address space",
				len(p.Payload), p.Write.VA, p.Write.MsgLen)
		}
		return fmt.Sprintf("%d payload bytes at offset %d overrun the %d-byte message", len(p.Payload), p.Send.Offset, p.Send.MsgLen)
	case DropPositionFlagsMismatch:
		if b.Opcode == OpWrite {
			return fmt.Sprintf("flags %s with %d payload bytes of a %d-byte message: FIRST|LAST exactly when the packet is the whole message",
				b.Flags, len(p.Payload), p.Write.MsgLen)
		}
		return fmt.Sprintf("flags %s with offset %d, %d payload bytes, message %d bytes: FIRST iff offset 0, LAST iff it ends the message",
			b.Flags, p.Send.Offset, len(p.Payload), p.Send.MsgLen)
	}
	return r.String()
}
