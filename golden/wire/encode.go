package wire

import (
	"encoding/binary"
	"fmt"
)

// Encode builds the frame for p: Ethernet (with p.Eth.VLAN's tag if any), IPv4 or IPv6, UDP to
// prm.UDPDestPort, BTH, the opcode's extension, the payload and the ICRC trailer. It computes the
// IP and UDP lengths, the IPv4 header checksum and the ICRC. It refuses (with an error wrapping
// ErrInvalidParams or ErrInvalidPacket, the latter a *PacketError) any packet that Decode would not
// accept with the same Params, so Decode(Encode(p)) always returns p.
//
// No MetaRoCE frame is shorter than the 60-byte Ethernet minimum (MinFrameLen is 62), so Encode
// never pads.
func Encode(p *Packet, prm Params) ([]byte, error) {
	if err := prm.Validate(); err != nil {
		return nil, fmt.Errorf("wire: encode: %w", err)
	}
	if p == nil {
		return nil, fmt.Errorf("wire: encode: %w", &PacketError{Msg: "nil packet"})
	}
	if err := checkPacket(p, prm); err != nil {
		return nil, fmt.Errorf("wire: encode %s packet (conn %d path %d PSN %d): %w",
			p.BTH.Opcode, p.BTH.ConnID, p.BTH.PathID, p.BTH.PSN, err)
	}

	l3, ipLen := headerLens(p)
	udp := l3 + ipLen
	bth := udp + UDPHeaderLen
	body := bth + BTHLen
	pay := body + bodyLen(p.BTH.Opcode, prm)
	icrcAt := pay + len(p.Payload)
	f := make([]byte, icrcAt+ICRCLen)

	// Ethernet and VLAN.
	copy(f[EthDstOff:], p.Eth.Dst[:])
	copy(f[EthSrcOff:], p.Eth.Src[:])
	if v := p.Eth.VLAN; v != nil {
		binary.BigEndian.PutUint16(f[EthTypeOff+VLANTPIDOff:], EtherTypeVLAN)
		tci := uint16(v.PCP)<<(VLANDEIBits+VLANVIDBits) | v.VID
		if v.DEI {
			tci |= 1 << VLANVIDBits
		}
		binary.BigEndian.PutUint16(f[EthTypeOff+VLANTCIOff:], tci)
	}
	tos := p.IP.DSCP<<IPv4ECNBits | p.IP.ECN

	// IP.
	ip := f[l3:udp]
	if p.IP.Version == 4 {
		binary.BigEndian.PutUint16(f[l3-2:], EtherTypeIPv4)
		ip[IPv4VerIHLOff] = 4<<IPv4IHLBits | IPv4IHL
		ip[IPv4TOSOff] = tos
		binary.BigEndian.PutUint16(ip[IPv4TotalLengthOff:], uint16(len(f)-l3))
		binary.BigEndian.PutUint16(ip[IPv4IDOff:], p.IP.ID)
		if p.IP.DontFragment {
			binary.BigEndian.PutUint16(ip[IPv4FlagsFragOff:], IPv4FlagDontFragment)
		}
		ip[IPv4TTLOff] = p.IP.TTL
		ip[IPv4ProtocolOff] = IPProtocolUDP
		copy(ip[IPv4SrcOff:], p.IP.Src[:4])
		copy(ip[IPv4DstOff:], p.IP.Dst[:4])
		binary.BigEndian.PutUint16(ip[IPv4ChecksumOff:], ^onesSum(ip))
	} else {
		binary.BigEndian.PutUint16(f[l3-2:], EtherTypeIPv6)
		binary.BigEndian.PutUint32(ip[IPv6VerTCFlowOff:],
			6<<(IPv6TrafficClassBits+IPv6FlowLabelBits)|uint32(tos)<<IPv6FlowLabelBits|p.IP.FlowLabel)
		binary.BigEndian.PutUint16(ip[IPv6PayloadLengthOff:], uint16(len(f)-udp))
		ip[IPv6NextHeaderOff] = IPProtocolUDP
		ip[IPv6HopLimitOff] = p.IP.TTL
		copy(ip[IPv6SrcOff:], p.IP.Src[:])
		copy(ip[IPv6DstOff:], p.IP.Dst[:])
	}

	// UDP.
	binary.BigEndian.PutUint16(f[udp+UDPSrcPortOff:], p.UDP.SrcPort)
	binary.BigEndian.PutUint16(f[udp+UDPDstPortOff:], prm.UDPDestPort)
	binary.BigEndian.PutUint16(f[udp+UDPLengthOff:], uint16(len(f)-udp))
	binary.BigEndian.PutUint16(f[udp+UDPChecksumOff:], p.UDP.Checksum)

	// BTH (the reserved byte stays 0).
	b := f[bth:body]
	b[BTHOpcodeOff] = uint8(p.BTH.Opcode)
	b[BTHFlagsOff] = uint8(p.BTH.Flags)
	binary.BigEndian.PutUint16(b[BTHConnIDOff:], p.BTH.ConnID)
	b[BTHPathIDOff] = p.BTH.PathID
	b[BTHStreamIDOff] = p.BTH.StreamID
	b[BTHVersionOff] = BTHVersion
	binary.BigEndian.PutUint32(b[BTHPSNOff:], p.BTH.PSN)
	binary.BigEndian.PutUint32(b[BTHMSNOff:], p.BTH.MSN)

	// Extension or body.
	x := f[body:pay]
	switch p.BTH.Opcode {
	case OpWrite:
		binary.BigEndian.PutUint32(x[DataTimestampOff:], p.Write.Timestamp)
		binary.BigEndian.PutUint32(x[DataMsgLenOff:], p.Write.MsgLen)
		binary.BigEndian.PutUint32(x[WriteRKeyOff:], p.Write.RKey)
		binary.BigEndian.PutUint64(x[WriteVAOff:], p.Write.VA)
	case OpSend:
		binary.BigEndian.PutUint32(x[DataTimestampOff:], p.Send.Timestamp)
		binary.BigEndian.PutUint32(x[DataMsgLenOff:], p.Send.MsgLen)
		binary.BigEndian.PutUint32(x[SendMsgOffsetOff:], p.Send.Offset)
	case OpAck:
		binary.BigEndian.PutUint32(x[AckTimestampEchoOff:], p.Ack.TimestampEcho)
		binary.BigEndian.PutUint16(x[AckECNEchoOff:], p.Ack.ECNEcho)
		binary.BigEndian.PutUint16(x[AckRateHintOff:], p.Ack.RateHint)
		for i, w := range p.Ack.Sack {
			binary.LittleEndian.PutUint64(x[AckSackOff+8*i:], w)
		}
	case OpNak:
		x[NakCodeOff] = uint8(p.Nak.Code)
		binary.BigEndian.PutUint16(x[NakRNRDelayOff:], p.Nak.RNRDelay)
		binary.BigEndian.PutUint32(x[NakTimestampEchoOff:], p.Nak.TimestampEcho)
	case OpAnnounce:
		binary.BigEndian.PutUint32(x[AnnounceTimestampOff:], p.Announce.Timestamp)
	}
	copy(f[pay:], p.Payload)

	s := span{l3: l3, ipLen: ipLen, v6: p.IP.Version == 6, dgEnd: len(f), icrcAt: icrcAt}
	binary.BigEndian.PutUint32(f[icrcAt:], icrc(f, s))
	return f, nil
}

// headerLens are the Ethernet (with its VLAN tag, if any) and IP header lengths of p.
func headerLens(p *Packet) (l3, ipLen int) {
	l3, ipLen = EthHeaderLen, IPv4HeaderLen
	if p.Eth.VLAN != nil {
		l3 += VLANTagLen
	}
	if p.IP.Version == 6 {
		ipLen = IPv6HeaderLen
	}
	return l3, ipLen
}

// FrameLen is the length of the frame Encode builds for p (the MAC adds the FCS): Ethernet,
// IP, UDP, BTH, the opcode's extension or body, the payload and the ICRC. It does not check p.
func FrameLen(p *Packet, prm Params) int {
	l3, ipLen := headerLens(p)
	return l3 + ipLen + UDPHeaderLen + BTHLen + bodyLen(p.BTH.Opcode, prm) + len(p.Payload) + ICRCLen
}

// bodyLen is the length of the extension or body that follows the BTH for opcode op.
func bodyLen(op Opcode, prm Params) int {
	switch op {
	case OpWrite:
		return WriteExtLen
	case OpSend:
		return SendExtLen
	case OpAck:
		return prm.AckLen()
	case OpNak:
		return NakLen
	case OpAnnounce:
		return AnnounceLen
	}
	return 0
}

// checkPacket refuses every packet Encode cannot represent or Decode would drop.
func checkPacket(p *Packet, prm Params) error {
	bad := func(format string, a ...any) error { return &PacketError{Msg: fmt.Sprintf(format, a...)} }
	if v := p.Eth.VLAN; v != nil {
		if v.PCP >= 1<<VLANPCPBits || v.VID >= 1<<VLANVIDBits {
			return bad("VLAN PCP %d / VID %d wider than %d / %d bits", v.PCP, v.VID, VLANPCPBits, VLANVIDBits)
		}
	}
	ip := &p.IP
	switch {
	case ip.Version != 4 && ip.Version != 6:
		return bad("IP version %d: must be 4 or 6", ip.Version)
	case ip.DSCP >= 1<<IPv4DSCPBits || ip.ECN >= 1<<IPv4ECNBits:
		return bad("DSCP %d / ECN %d wider than %d / %d bits", ip.DSCP, ip.ECN, IPv4DSCPBits, IPv4ECNBits)
	case ip.Version == 4 && ip.FlowLabel != 0:
		return bad("IPv4 packet with flow label %d: IPv6 only", ip.FlowLabel)
	case ip.Version == 4 && ([12]byte(ip.Src[4:]) != [12]byte{} || [12]byte(ip.Dst[4:]) != [12]byte{}):
		return bad("IPv4 address with non-zero bytes 4..15 (src %x, dst %x)", ip.Src, ip.Dst)
	case ip.Version == 6 && ip.FlowLabel > IPv6FlowLabelMask:
		return bad("flow label 0x%x wider than %d bits", ip.FlowLabel, IPv6FlowLabelBits)
	case ip.Version == 6 && (ip.ID != 0 || ip.DontFragment):
		return bad("IPv6 packet with IPv4 identification %d / DF %v", ip.ID, ip.DontFragment)
	}
	op := p.BTH.Opcode
	if !op.Known() {
		return &PacketError{Reason: DropUnknownOpcode, Msg: fmt.Sprintf("opcode 0x%02x is not defined", uint8(op))}
	}
	if (p.Write != nil) != (op == OpWrite) || (p.Send != nil) != (op == OpSend) ||
		(p.Ack != nil) != (op == OpAck) || (p.Nak != nil) != (op == OpNak) || (p.Announce != nil) != (op == OpAnnounce) {
		return bad("opcode %s needs exactly its own extension (write %v, send %v, ack %v, nak %v, announce %v set)",
			op, p.Write != nil, p.Send != nil, p.Ack != nil, p.Nak != nil, p.Announce != nil)
	}
	if op == OpAck && len(p.Ack.Sack) != prm.sackWords() {
		return bad("SACK bitmap of %d words; sack_width %d needs %d", len(p.Ack.Sack), prm.SackWidth, prm.sackWords())
	}
	if r := fieldRules(p, prm, reserved{}); r != DropNone {
		return &PacketError{Reason: r, Msg: explain(r, p, prm)}
	}
	return nil
}
