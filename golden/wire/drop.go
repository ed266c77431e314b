package wire

import "fmt"

// DropReason says why Decode refused a frame. Codes are dense, stable, and numbered in the order
// Decode checks them: when several checks fail, the lowest code is reported, so the parser RTL can
// decide with a priority encoder over its check results. docs/wire-format.md has the table.
type DropReason uint8

// Drop reasons, in check order.
const (
	DropNone                  DropReason = iota // accepted
	DropFrameTooLong                            // frame longer than Params.MaxFrameLen
	DropRunt                                    // frame shorter than MinFrameLen
	DropBadEthertype                            // not IPv4, IPv6 or one 802.1Q tag in front of them
	DropVLANStacked                             // a second tag (0x8100, 0x88A8, 0x9100) after the first
	DropBadIPVersion                            // IP version nibble disagrees with the EtherType
	DropIPv4BadIHL                              // IPv4 IHL below 5
	DropIPv4Options                             // IPv4 IHL above 5: options are not supported
	DropIPv4BadChecksum                         // IPv4 header checksum wrong
	DropIPv4Fragment                            // IPv4 MF set or fragment offset non-zero
	DropIPv4ReservedFlag                        // IPv4 reserved flag bit set
	DropNotUDP                                  // IPv4 protocol is not UDP
	DropIPv6NextHeaderNotUDP                    // IPv6 next header is not UDP (extension headers too)
	DropIPLengthExceedsFrame                    // the IP datagram runs past the end of the frame
	DropFrameTrailingBytes                      // bytes after the IP datagram in a frame too long for padding
	DropTruncatedUDP                            // the IP payload is shorter than a UDP header
	DropWrongUDPPort                            // UDP destination port is not Params.UDPDestPort
	DropUDPLengthMismatch                       // UDP length differs from the IP payload length
	DropTruncatedBTH                            // the UDP payload is shorter than BTH + ICRC
	DropBadICRC                                 // ICRC trailer wrong
	DropBadVersion                              // BTH version is not BTHVersion
	DropUnknownOpcode                           // BTH opcode not defined
	DropTruncatedExtension                      // Write/Send extension or NAK body cut short by the ICRC
	DropTruncatedAck                            // ACK body (with SACK bitmap) cut short by the ICRC
	DropPayloadTooLong                          // payload longer than Params.MTU
	DropPayloadLengthInvalid                    // payload on an ACK/NAK, or empty data payload of a non-empty message
	DropBadFlags                                // a flag bit the opcode may not set
	DropUnknownNakCode                          // NAK code not defined
	DropReservedNonzero                         // a reserved field is not zero
	DropConnectionOutOfRange                    // connection id ≥ Params.Connections
	DropPathOutOfRange                          // path id ≥ Params.PathsPerConnection
	DropStreamOutOfRange                        // stream id ≥ Params.StreamsPerConnection
	DropPSNOutOfRange                           // PSN has bits set at or above Params.PSNWidth
	DropSackBaseBitSet                          // ACK bitmap bit 0 (the cumulative PSN) set
	DropMessageBounds                           // payload does not fit in the message (or the address space)
	DropPositionFlagsMismatch                   // FIRST/LAST disagree with offset, length and message length

	numDropReasons // one past the last code
)

// DropReasonBits is the width of a drop-reason code in hardware.
const DropReasonBits = 6

const _ = uint(1<<DropReasonBits - int(numDropReasons)) // every code fits DropReasonBits

var dropNames = [numDropReasons]string{
	DropNone:                  "none",
	DropFrameTooLong:          "frame_too_long",
	DropRunt:                  "runt",
	DropBadEthertype:          "bad_ethertype",
	DropVLANStacked:           "vlan_stacked",
	DropBadIPVersion:          "bad_ip_version",
	DropIPv4BadIHL:            "ipv4_bad_ihl",
	DropIPv4Options:           "ipv4_options",
	DropIPv4BadChecksum:       "ipv4_bad_checksum",
	DropIPv4Fragment:          "ipv4_fragment",
	DropIPv4ReservedFlag:      "ipv4_reserved_flag",
	DropNotUDP:                "not_udp",
	DropIPv6NextHeaderNotUDP:  "ipv6_next_header_not_udp",
	DropIPLengthExceedsFrame:  "ip_length_exceeds_frame",
	DropFrameTrailingBytes:    "frame_trailing_bytes",
	DropTruncatedUDP:          "truncated_udp",
	DropWrongUDPPort:          "wrong_udp_port",
	DropUDPLengthMismatch:     "udp_length_mismatch",
	DropTruncatedBTH:          "truncated_bth",
	DropBadICRC:               "bad_icrc",
	DropBadVersion:            "bad_version",
	DropUnknownOpcode:         "unknown_opcode",
	DropTruncatedExtension:    "truncated_extension",
	DropTruncatedAck:          "truncated_ack",
	DropPayloadTooLong:        "payload_too_long",
	DropPayloadLengthInvalid:  "payload_length_invalid",
	DropBadFlags:              "bad_flags",
	DropUnknownNakCode:        "unknown_nak_code",
	DropReservedNonzero:       "reserved_nonzero",
	DropConnectionOutOfRange:  "connection_out_of_range",
	DropPathOutOfRange:        "path_out_of_range",
	DropStreamOutOfRange:      "stream_out_of_range",
	DropPSNOutOfRange:         "psn_out_of_range",
	DropSackBaseBitSet:        "sack_base_bit_set",
	DropMessageBounds:         "message_bounds",
	DropPositionFlagsMismatch: "position_flags_mismatch",
}

// String is the reason's snake_case name as in docs/wire-format.md.
func (r DropReason) String() string {
	if r < numDropReasons {
		return dropNames[r]
	}
	return fmt.Sprintf("DropReason(%d)", uint8(r))
}

// Valid reports whether r is a defined code (DropNone included).
func (r DropReason) Valid() bool { return r < numDropReasons }

// AllDropReasons lists every code, DropNone first, in numeric (= check) order.
func AllDropReasons() []DropReason {
	out := make([]DropReason, numDropReasons)
	for i := range out {
		out[i] = DropReason(i)
	}
	return out
}

// ParseDropReason returns the reason whose String is name.
func ParseDropReason(name string) (DropReason, error) {
	for i, n := range dropNames {
		if n == name {
			return DropReason(i), nil
		}
	}
	return 0, fmt.Errorf("wire: unknown drop reason %q", name)
}
