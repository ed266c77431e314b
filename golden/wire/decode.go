package wire

import (
	"encoding/binary"
	"slices"
)

// Decode parses and validates one frame (Ethernet header first, no FCS). It returns the packet
// and DropNone, or nil and the first failing check's reason. The checks run in the order of the
// DropReason codes (docs/wire-format.md, section 13):
//
//	frame length → Ethernet/VLAN → IP header → IP length vs frame → UDP → BTH length → ICRC →
//	BTH version, opcode → extension length → payload length → flags → NAK code → reserved
//	fields → id and PSN ranges → SACK base bit → message bounds → position flags
//
// Trailing bytes after the IP datagram are taken as Ethernet padding, and skipped, only in frames
// of at most MaxPaddedFrameLen bytes. Every valid frame is longer than that, so an accepted frame
// never has padding and Encode(Decode(frame)) is exactly frame.
//
// Decode never panics and never retains frame (Payload is a copy). Its results are defined for
// Params that pass Validate (ParamsFrom of a validated configuration always does).
func Decode(frame []byte, prm Params) (*Packet, DropReason) {
	n := len(frame)
	if n > prm.MaxFrameLen() {
		return nil, DropFrameTooLong
	}
	if n < MinFrameLen {
		return nil, DropRunt
	}
	// From here on the Ethernet, VLAN and IP headers are inside the frame (MinFrameLen ≥ maxL2L3Len).
	var vlan *VLANTag
	l3 := EthHeaderLen
	et := binary.BigEndian.Uint16(frame[EthTypeOff:])
	if et == EtherTypeVLAN {
		tci := binary.BigEndian.Uint16(frame[EthTypeOff+VLANTCIOff:])
		vlan = &VLANTag{
			PCP: uint8(tci >> (VLANDEIBits + VLANVIDBits)),
			DEI: tci>>VLANVIDBits&1 != 0,
			VID: tci & (1<<VLANVIDBits - 1),
		}
		et = binary.BigEndian.Uint16(frame[EthTypeOff+VLANTagLen:])
		l3 += VLANTagLen
		if et == EtherTypeVLAN || et == EtherTypeQinQ || et == EtherTypeQinQ9100 {
			return nil, DropVLANStacked
		}
	}

	var ip IPHeader
	s := span{l3: l3}
	h := frame[l3:]
	switch et {
	case EtherTypeIPv4:
		if h[IPv4VerIHLOff]>>IPv4IHLBits != 4 {
			return nil, DropBadIPVersion
		}
		switch ihl := h[IPv4VerIHLOff] & 0x0F; {
		case ihl < IPv4IHL:
			return nil, DropIPv4BadIHL
		case ihl > IPv4IHL:
			return nil, DropIPv4Options
		}
		if onesSum(h[:IPv4HeaderLen]) != 0xFFFF {
			return nil, DropIPv4BadChecksum
		}
		ff := binary.BigEndian.Uint16(h[IPv4FlagsFragOff:])
		if ff&IPv4FlagMoreFrags != 0 || ff&IPv4FragOffsetMask != 0 {
			return nil, DropIPv4Fragment
		}
		if ff&IPv4FlagReserved != 0 {
			return nil, DropIPv4ReservedFlag
		}
		if h[IPv4ProtocolOff] != IPProtocolUDP {
			return nil, DropNotUDP
		}
		ip = IPHeader{
			Version:      4,
			DSCP:         h[IPv4TOSOff] >> IPv4ECNBits,
			ECN:          h[IPv4TOSOff] & (1<<IPv4ECNBits - 1),
			TTL:          h[IPv4TTLOff],
			ID:           binary.BigEndian.Uint16(h[IPv4IDOff:]),
			DontFragment: ff&IPv4FlagDontFragment != 0,
		}
		copy(ip.Src[:], h[IPv4SrcOff:IPv4SrcOff+4])
		copy(ip.Dst[:], h[IPv4DstOff:IPv4DstOff+4])
		s.ipLen = IPv4HeaderLen
		s.dgEnd = l3 + int(binary.BigEndian.Uint16(h[IPv4TotalLengthOff:]))
	case EtherTypeIPv6:
		w := binary.BigEndian.Uint32(h[IPv6VerTCFlowOff:])
		if w>>(IPv6TrafficClassBits+IPv6FlowLabelBits) != 6 {
			return nil, DropBadIPVersion
		}
		if h[IPv6NextHeaderOff] != IPProtocolUDP {
			return nil, DropIPv6NextHeaderNotUDP
		}
		tc := uint8(w >> IPv6FlowLabelBits)
		ip = IPHeader{
			Version:   6,
			DSCP:      tc >> IPv4ECNBits,
			ECN:       tc & (1<<IPv4ECNBits - 1),
			TTL:       h[IPv6HopLimitOff],
			FlowLabel: w & IPv6FlowLabelMask,
		}
		copy(ip.Src[:], h[IPv6SrcOff:IPv6SrcOff+16])
		copy(ip.Dst[:], h[IPv6DstOff:IPv6DstOff+16])
		s.v6 = true
		s.ipLen = IPv6HeaderLen
		s.dgEnd = l3 + IPv6HeaderLen + int(binary.BigEndian.Uint16(h[IPv6PayloadLengthOff:]))
	default:
		return nil, DropBadEthertype
	}

	// The datagram against the frame.
	if s.dgEnd > n {
		return nil, DropIPLengthExceedsFrame
	}
	if s.dgEnd < n && n > MaxPaddedFrameLen {
		return nil, DropFrameTrailingBytes
	}
	udp := l3 + s.ipLen
	if s.dgEnd-udp < UDPHeaderLen { // also catches an IPv4 total length below the header
		return nil, DropTruncatedUDP
	}
	if binary.BigEndian.Uint16(frame[udp+UDPDstPortOff:]) != prm.UDPDestPort {
		return nil, DropWrongUDPPort
	}
	if int(binary.BigEndian.Uint16(frame[udp+UDPLengthOff:])) != s.dgEnd-udp {
		return nil, DropUDPLengthMismatch
	}
	bth := udp + UDPHeaderLen
	if s.dgEnd-bth < BTHLen+ICRCLen {
		return nil, DropTruncatedBTH
	}
	s.icrcAt = s.dgEnd - ICRCLen
	if icrc(frame, s) != binary.BigEndian.Uint32(frame[s.icrcAt:]) {
		return nil, DropBadICRC
	}

	// BTH.
	b := frame[bth : bth+BTHLen]
	if b[BTHVersionOff] != BTHVersion {
		return nil, DropBadVersion
	}
	op := Opcode(b[BTHOpcodeOff])
	if !op.Known() {
		return nil, DropUnknownOpcode
	}
	body := bth + BTHLen
	bl := bodyLen(op, prm)
	if s.icrcAt-body < bl {
		if op == OpAck {
			return nil, DropTruncatedAck
		}
		return nil, DropTruncatedExtension
	}

	p := &Packet{
		Eth: EthHeader{VLAN: vlan},
		IP:  ip,
		UDP: UDPHeader{
			SrcPort:  binary.BigEndian.Uint16(frame[udp+UDPSrcPortOff:]),
			Checksum: binary.BigEndian.Uint16(frame[udp+UDPChecksumOff:]),
		},
		BTH: BTH{
			Opcode:   op,
			Flags:    Flags(b[BTHFlagsOff]),
			ConnID:   binary.BigEndian.Uint16(b[BTHConnIDOff:]),
			PathID:   b[BTHPathIDOff],
			StreamID: b[BTHStreamIDOff],
			PSN:      binary.BigEndian.Uint32(b[BTHPSNOff:]),
			MSN:      binary.BigEndian.Uint32(b[BTHMSNOff:]),
		},
	}
	copy(p.Eth.Dst[:], frame[EthDstOff:])
	copy(p.Eth.Src[:], frame[EthSrcOff:])
	rsv := reserved{bth: b[BTHReservedOff]}
	x := frame[body : body+bl]
	switch op {
	case OpWrite:
		p.Write = &WriteExt{
			Timestamp: binary.BigEndian.Uint32(x[DataTimestampOff:]),
			MsgLen:    binary.BigEndian.Uint32(x[DataMsgLenOff:]),
			RKey:      binary.BigEndian.Uint32(x[WriteRKeyOff:]),
			VA:        binary.BigEndian.Uint64(x[WriteVAOff:]),
		}
	case OpSend:
		p.Send = &SendExt{
			Timestamp: binary.BigEndian.Uint32(x[DataTimestampOff:]),
			MsgLen:    binary.BigEndian.Uint32(x[DataMsgLenOff:]),
			Offset:    binary.BigEndian.Uint32(x[SendMsgOffsetOff:]),
		}
	case OpAck:
		a := &Ack{
			TimestampEcho: binary.BigEndian.Uint32(x[AckTimestampEchoOff:]),
			ECNEcho:       binary.BigEndian.Uint16(x[AckECNEchoOff:]),
			RateHint:      binary.BigEndian.Uint16(x[AckRateHintOff:]),
			Sack:          make([]uint64, prm.sackWords()),
		}
		for i := range a.Sack {
			a.Sack[i] = binary.LittleEndian.Uint64(x[AckSackOff+8*i:])
		}
		p.Ack = a
	case OpNak:
		p.Nak = &Nak{
			Code:          NakCode(x[NakCodeOff]),
			RNRDelay:      binary.BigEndian.Uint16(x[NakRNRDelayOff:]),
			TimestampEcho: binary.BigEndian.Uint32(x[NakTimestampEchoOff:]),
		}
		rsv.nak = x[NakReservedOff]
	case OpAnnounce:
		p.Announce = &Announce{Timestamp: binary.BigEndian.Uint32(x[AnnounceTimestampOff:])}
		rsv.announce = binary.BigEndian.Uint32(x[AnnounceReservedOff:])
	}
	if pay := frame[body+bl : s.icrcAt]; len(pay) > 0 {
		p.Payload = slices.Clone(pay)
	}
	if r := fieldRules(p, prm, rsv); r != DropNone {
		return nil, r
	}
	return p, DropNone
}
