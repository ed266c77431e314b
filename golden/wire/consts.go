package wire

// Every field of every header has a named width (…Bits) and a byte offset from the start of its
// header (…Off). docs/wire-format.md names these constants beside each field of its diagrams,
// and the parser RTL takes its offsets from here, so the three cannot drift apart. All multi-byte
// fields are big-endian (network byte order); the one bit array, the SACK bitmap, has its own
// documented bit order (see Ack).

// Ethernet II header (frames as seen on AXI-Stream after the MAC: no preamble, no FCS).
const (
	MACBits       = 48 // destination and source MAC address
	EtherTypeBits = 16 // EtherType or, for a tagged frame, the tag protocol identifier

	EthDstOff      = 0  // destination MAC
	EthSrcOff      = 6  // source MAC
	EthTypeOff     = 12 // EtherType / TPID
	EthHeaderLen   = 14 // bytes, without a VLAN tag
	EthMinFrameLen = 60 // the Ethernet minimum frame without FCS (64 with it)
)

// IEEE 802.1Q tag, inserted at EthTypeOff. Offsets are from the start of the tag (its TPID).
const (
	VLANTagLen  = 4  // bytes: TPID (16) + TCI (16)
	VLANTPIDOff = 0  // tag protocol identifier, EtherTypeVLAN
	VLANTCIOff  = 2  // tag control information: PCP, DEI, VID
	VLANPCPBits = 3  // priority code point, TCI bits 15..13
	VLANDEIBits = 1  // drop eligible indicator, TCI bit 12
	VLANVIDBits = 12 // VLAN identifier, TCI bits 11..0
)

// EtherType values the decoder recognises.
const (
	EtherTypeIPv4     = 0x0800
	EtherTypeIPv6     = 0x86DD
	EtherTypeVLAN     = 0x8100 // IEEE 802.1Q customer tag: the only tag MetaRoCE accepts
	EtherTypeQinQ     = 0x88A8 // IEEE 802.1ad service tag
	EtherTypeQinQ9100 = 0x9100 // pre-standard service tag
)

// IPv4 header (RFC 791). MetaRoCE accepts only the 20-byte header without options.
const (
	IPv4HeaderLen = 20 // bytes; IHL must be IPv4IHL

	IPv4VersionBits     = 4
	IPv4IHLBits         = 4
	IPv4DSCPBits        = 6 // differentiated services code point, TOS bits 7..2
	IPv4ECNBits         = 2 // explicit congestion notification, TOS bits 1..0
	IPv4TotalLengthBits = 16
	IPv4IDBits          = 16
	IPv4FlagsBits       = 3 // reserved, DF, MF
	IPv4FragOffsetBits  = 13
	IPv4TTLBits         = 8
	IPv4ProtocolBits    = 8
	IPv4ChecksumBits    = 16
	IPv4AddrBits        = 32

	IPv4VerIHLOff      = 0 // version (high nibble) and IHL (low nibble)
	IPv4TOSOff         = 1 // DSCP and ECN
	IPv4TotalLengthOff = 2
	IPv4IDOff          = 4
	IPv4FlagsFragOff   = 6 // flags (3 bits) and fragment offset (13 bits)
	IPv4TTLOff         = 8
	IPv4ProtocolOff    = 9
	IPv4ChecksumOff    = 10
	IPv4SrcOff         = 12
	IPv4DstOff         = 16

	IPv4IHL              = 5      // header length in 32-bit words: no options
	IPv4FlagReserved     = 0x8000 // in the 16-bit flags/fragment word
	IPv4FlagDontFragment = 0x4000
	IPv4FlagMoreFrags    = 0x2000
	IPv4FragOffsetMask   = 0x1FFF
)

// IPv6 header (RFC 8200). MetaRoCE accepts no extension headers.
const (
	IPv6HeaderLen = 40

	IPv6VersionBits       = 4
	IPv6TrafficClassBits  = 8 // DSCP (6) and ECN (2), as in IPv4's TOS byte
	IPv6FlowLabelBits     = 20
	IPv6PayloadLengthBits = 16
	IPv6NextHeaderBits    = 8
	IPv6HopLimitBits      = 8
	IPv6AddrBits          = 128

	IPv6VerTCFlowOff     = 0 // version (4), traffic class (8), flow label (20)
	IPv6PayloadLengthOff = 4
	IPv6NextHeaderOff    = 6
	IPv6HopLimitOff      = 7
	IPv6SrcOff           = 8
	IPv6DstOff           = 24

	IPv6FlowLabelMask = 1<<IPv6FlowLabelBits - 1
)

// IPProtocolUDP is the IPv4 protocol and IPv6 next-header number of UDP.
const IPProtocolUDP = 17

// UDP header (RFC 768).
const (
	UDPHeaderLen    = 8
	UDPPortBits     = 16
	UDPLengthBits   = 16
	UDPChecksumBits = 16

	UDPSrcPortOff  = 0 // the path's ECMP entropy
	UDPDstPortOff  = 2 // Params.UDPDestPort (config udp_dest_port)
	UDPLengthOff   = 4
	UDPChecksumOff = 6
)

// Base transport header (BTH): 16 bytes on every MetaRoCE packet.
const (
	BTHLen = 16

	OpcodeBits      = 8
	FlagsBits       = 8
	ConnIDBits      = 16
	PathIDBits      = 8
	StreamIDBits    = 8
	BTHVersionBits  = 8
	BTHReservedBits = 8
	PSNBits         = 32 // always 32 on the wire, whatever Params.PSNWidth
	MSNBits         = 32

	BTHOpcodeOff   = 0
	BTHFlagsOff    = 1
	BTHConnIDOff   = 2
	BTHPathIDOff   = 4
	BTHStreamIDOff = 5
	BTHVersionOff  = 6
	BTHReservedOff = 7
	BTHPSNOff      = 8
	BTHMSNOff      = 12

	// BTHVersion is the only header version this format defines.
	BTHVersion = 1
)

// Data extensions. Both start with the same two words (send timestamp, message length) so that
// the parser extracts them at one offset for either opcode.
const (
	TimestampBits = 32 // send timestamp, TimestampUnitNS units, truncated to 32 bits
	MsgLenBits    = 32 // total message length in bytes
	RKeyBits      = 32
	VABits        = 64
	MsgOffsetBits = 32 // byte offset of this packet's first payload byte in the message

	DataTimestampOff = 0 // in both the Write and the Send extension
	DataMsgLenOff    = 4 // in both the Write and the Send extension

	WriteExtLen      = 20
	WriteRKeyOff     = 8
	WriteVAOff       = 12
	SendExtLen       = 12
	SendMsgOffsetOff = 8
)

// ACK body. Its length depends on the SACK width: AckFixedLen + SackWidth/8 (see AckLen).
const (
	AckFixedLen = 8

	TimestampEchoBits = 32
	ECNEchoBits       = 16
	RateHintBits      = 16

	AckTimestampEchoOff = 0
	AckECNEchoOff       = 4
	AckRateHintOff      = 6
	AckSackOff          = 8 // first byte of the SACK bitmap
)

// NAK body.
const (
	NakLen = 8

	NakCodeBits     = 8
	NakReservedBits = 8
	RNRDelayBits    = 16

	NakCodeOff          = 0
	NakReservedOff      = 1
	NakRNRDelayOff      = 2
	NakTimestampEchoOff = 4
)

// ANNOUNCE body: the send timestamp (at the offset of the data extensions' timestamp, so the
// parser takes it from one place) and a reserved word.
const (
	AnnounceLen = 8

	AnnounceReservedBits = 32

	AnnounceTimestampOff = 0
	AnnounceReservedOff  = 4
)

// ICRC trailer: CRC-32 (IEEE 802.3), big-endian, the last 4 bytes of the UDP datagram.
const (
	ICRCLen  = 4
	ICRCBits = 32
)

// Units of the fields that carry physical quantities.
const (
	TimestampUnitNS  = 1   // send timestamp and timestamp echo: nanoseconds, mod 2^32
	RateHintUnitMbps = 100 // rate hint: 100 Mb/s per unit; 0 means no limit advertised
	RNRDelayUnitUS   = 1   // RNR retry delay: microseconds
)

// Frame-size limits.
const (
	// MinFrameLen is the smallest MetaRoCE frame: Ethernet, IPv4, UDP, BTH and ICRC with no
	// extension and no payload. A shorter frame is a runt.
	MinFrameLen = EthHeaderLen + IPv4HeaderLen + UDPHeaderLen + BTHLen + ICRCLen // 62
	// MaxPaddedFrameLen is the longest frame that may carry Ethernet padding after the IP
	// datagram: the 60-byte minimum plus a 4-byte tag a bridge may insert after padding.
	MaxPaddedFrameLen = EthMinFrameLen + VLANTagLen // 64
	// maxL2L3Len is the longest Ethernet + IP header stack (tagged IPv6).
	maxL2L3Len = EthHeaderLen + VLANTagLen + IPv6HeaderLen // 58
	// MinValidFrameLen is the smallest valid frame: an untagged IPv4 NAK (the shortest body). It
	// is the line-rate unit of the hardware (hdl.MinFrameBeats).
	MinValidFrameLen = MinFrameLen + NakLen // 70
)

// Compile-time facts the codec relies on (a negative constant converted to uint does not compile):
//   - every MetaRoCE frame is at least the Ethernet minimum, so Encode never has to pad;
//   - after the runt check the whole Ethernet, VLAN and IP header stack is inside the frame;
//   - no valid frame is short enough to carry Ethernet padding;
//   - the NAK body is the shortest body (the ACK's is AckFixedLen plus at least 8 bytes; the
//     ANNOUNCE body is as short);
//   - the ANNOUNCE timestamp sits where the data extensions' does.
const (
	_ = uint(MinFrameLen - EthMinFrameLen)
	_ = uint(MinFrameLen - maxL2L3Len)
	_ = uint(MinValidFrameLen - MaxPaddedFrameLen - 1)
	_ = uint(min(SendExtLen, WriteExtLen, AckFixedLen+SackWordBits/8, AnnounceLen) - NakLen)
	_ = uint(0 - (AnnounceTimestampOff ^ DataTimestampOff))
)
