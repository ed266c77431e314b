package wire

// Stack is one of the four Ethernet/IP encapsulations a MetaRoCE packet takes: with or without
// one 802.1Q tag, over IPv4 (no options) or IPv6. Every header after the Ethernet header sits
// at a fixed offset in each, which is what lets hardware capture fields with a 4-way choice
// instead of a shifter. This is the one description of those offsets that the parser and
// header-builder generators, the Wireshark dissector generator and this package's tests use.
type Stack struct {
	VLAN bool
	IPv6 bool
}

// Stacks lists the four stacks in hardware order: index 2·VLAN + IPv6 (untagged IPv4,
// untagged IPv6, tagged IPv4, tagged IPv6).
func Stacks() []Stack {
	return []Stack{{false, false}, {false, true}, {true, false}, {true, true}}
}

// Index is the stack's number in Stacks.
func (s Stack) Index() int {
	i := 0
	if s.VLAN {
		i += 2
	}
	if s.IPv6 {
		i++
	}
	return i
}

// L3 is the offset of the IP header.
func (s Stack) L3() int {
	if s.VLAN {
		return EthHeaderLen + VLANTagLen
	}
	return EthHeaderLen
}

// IPHeaderLen is the IP header's length (IPv4 without options).
func (s Stack) IPHeaderLen() int {
	if s.IPv6 {
		return IPv6HeaderLen
	}
	return IPv4HeaderLen
}

// UDP is the offset of the UDP header.
func (s Stack) UDP() int { return s.L3() + s.IPHeaderLen() }

// BTH is the offset of the base transport header.
func (s Stack) BTH() int { return s.UDP() + UDPHeaderLen }

// Body is the offset of the opcode's extension or body.
func (s Stack) Body() int { return s.BTH() + BTHLen }

// ICRCMask is the ICRC's rule for the variant fields: the bits that are set to one before a byte
// of the IP or UDP header enters the CRC (docs/wire-format.md section 11). off counts from the
// start of the IP header, whose length is ipLen (IPv4 with options included); the byte at off is
// ORed with the result. IPv4: TOS, TTL and the header checksum; IPv6: the traffic class (the low
// half of byte 0 and the high half of byte 1), the flow label and the hop limit; both: the UDP
// checksum. Bytes past the UDP header are never masked.
func ICRCMask(ipv6 bool, ipLen, off int) byte {
	switch u := off - ipLen; {
	case u == UDPChecksumOff || u == UDPChecksumOff+1:
		return 0xFF
	case u >= 0:
		return 0
	}
	if ipv6 {
		switch off {
		case IPv6VerTCFlowOff:
			return 0x0F
		case IPv6VerTCFlowOff + 1, IPv6VerTCFlowOff + 2, IPv6VerTCFlowOff + 3, IPv6HopLimitOff:
			return 0xFF
		}
		return 0
	}
	switch off {
	case IPv4TOSOff, IPv4TTLOff, IPv4ChecksumOff, IPv4ChecksumOff + 1:
		return 0xFF
	}
	return 0
}
