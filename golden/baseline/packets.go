package baseline

// Opcode is the BTH opcode of a reliable-connection packet (IBTA values).
type Opcode uint8

// RC opcodes the model uses.
const (
	OpSendFirst   Opcode = 0x00
	OpSendMiddle  Opcode = 0x01
	OpSendLast    Opcode = 0x02
	OpSendOnly    Opcode = 0x04
	OpWriteFirst  Opcode = 0x06
	OpWriteMiddle Opcode = 0x07
	OpWriteLast   Opcode = 0x08
	OpWriteOnly   Opcode = 0x0A
	OpAcknowledge Opcode = 0x11
	OpCNP         Opcode = 0x81 // RoCEv2 congestion notification packet
)

// First reports whether op starts a message (FIRST or ONLY).
func (op Opcode) First() bool {
	return op == OpSendFirst || op == OpSendOnly || op == OpWriteFirst || op == OpWriteOnly
}

// Last reports whether op ends a message (LAST or ONLY).
func (op Opcode) Last() bool {
	return op == OpSendLast || op == OpSendOnly || op == OpWriteLast || op == OpWriteOnly
}

// Write reports whether op is an RDMA Write opcode.
func (op Opcode) Write() bool { return op >= OpWriteFirst && op <= OpWriteOnly }

// dataOpcode is the opcode of packet idx of an n-packet message.
func dataOpcode(write bool, idx, n uint64) Opcode {
	var op Opcode
	switch {
	case n == 1:
		op = OpSendOnly
	case idx == 0:
		op = OpSendFirst
	case idx == n-1:
		op = OpSendLast
	default:
		op = OpSendMiddle
	}
	if write {
		op += OpWriteFirst - OpSendFirst // every Write opcode is its Send opcode + 6
	}
	return op
}

// DataPacket is the transport content of a RoCEv2 request packet (fabric.Packet.Payload).
// The frame length in fabric.Packet.Bytes counts every header; MsgID and Index are simulation
// tags for the ledger and are not on the wire (a responder matches messages by order).
type DataPacket struct {
	Opcode Opcode
	PSN    uint32 // 24 bits
	AckReq bool
	// RETH, on the first (or only) packet of a Write.
	VA     uint64
	DMALen uint32
	Data   []byte // payload; shared with the requester's buffer, never written
	MsgID  uint64
	Index  uint32 // packet index in its message
}

// AckPacket is an ACK or a NAK (sequence error): BTH with opcode ACKNOWLEDGE plus AETH. An ACK's
// PSN is the last packet received in order; a NAK's is the expected PSN (everything before it
// arrived).
type AckPacket struct {
	NAK bool
	PSN uint32
	MSN uint32 // messages completed at the responder (24 bits)
}

// CNPPacket is a congestion notification packet from the notification point (the data
// receiver) to the reaction point (the data sender) of a QP.
type CNPPacket struct{}
