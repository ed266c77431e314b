package placement

import (
	"errors"
	"fmt"
	"math"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/wire"
)

// Defaults of the parameters the configuration does not (yet) carry.
const (
	// DefaultMaxMsgPackets is the default slot bitmap width B: at most this many packets per
	// message (256 KiB at mtu 4096).
	DefaultMaxMsgPackets = 64
	// DefaultRNRDelayUS is the RNR Delay a receiver_not_ready NAK carries, in µs.
	DefaultRNRDelayUS = 10
)

// Params are the parameters the placement rules depend on, derived from the shared configuration.
type Params struct {
	Conns         int // connections
	Streams       int // streams_per_connection
	Regions       int // memory_regions
	IndexBits     int // rkey index width: clog2(memory_regions), at least 1
	TagBits       int // rkey tag width: 32 − IndexBits
	Depth         int // posted_receives_per_stream: receive queue and message ring depth D
	MTU           int
	MaxMsgPackets int    // B, a power of two in 1..4096
	RNRDelayUS    uint16 // RNR Delay of a receiver_not_ready NAK
}

// ParamsFrom derives Params from a validated configuration.
func ParamsFrom(c config.Config) Params {
	d := c.Derived()
	return Params{
		Conns:         c.Connections,
		Streams:       c.StreamsPerConnection,
		Regions:       c.MemoryRegions,
		IndexBits:     d.RegionIndexWidth,
		TagBits:       wire.RKeyBits - d.RegionIndexWidth,
		Depth:         c.PostedReceivesPerStream,
		MTU:           c.MTU,
		MaxMsgPackets: DefaultMaxMsgPackets,
		RNRDelayUS:    DefaultRNRDelayUS,
	}
}

// Validate checks Params that were built or edited by hand.
func (p Params) Validate() error {
	switch {
	case p.Conns < 1 || p.Conns > 1<<wire.ConnIDBits:
		return fmt.Errorf("placement: Conns %d", p.Conns)
	case p.Streams < 1 || p.Streams > 1<<wire.StreamIDBits:
		return fmt.Errorf("placement: Streams %d", p.Streams)
	case p.IndexBits < 1 || p.IndexBits > 31 || p.Regions < 1 || p.Regions > 1<<p.IndexBits:
		return fmt.Errorf("placement: Regions %d with IndexBits %d", p.Regions, p.IndexBits)
	case p.TagBits != wire.RKeyBits-p.IndexBits:
		return fmt.Errorf("placement: TagBits %d, want %d", p.TagBits, wire.RKeyBits-p.IndexBits)
	case p.Depth < 1:
		return fmt.Errorf("placement: Depth %d", p.Depth)
	case p.MTU < 1 || p.MTU > wire.MaxMTU:
		return fmt.Errorf("placement: MTU %d", p.MTU)
	case p.MaxMsgPackets < 1 || p.MaxMsgPackets > 4096 || p.MaxMsgPackets&(p.MaxMsgPackets-1) != 0:
		return fmt.Errorf("placement: MaxMsgPackets %d: a power of two in 1..4096", p.MaxMsgPackets)
	}
	return nil
}

// MaxMsgLen is the longest message placement accepts: MaxMsgPackets × MTU bytes (capped at the
// 32-bit message length field).
func (p Params) MaxMsgLen() uint32 {
	return uint32(min(uint64(p.MaxMsgPackets)*uint64(p.MTU), math.MaxUint32))
}

// Packets is N = max(1, ⌈msgLen/mtu⌉), the number of packets of a message of msgLen bytes.
func (p Params) Packets(msgLen uint32) uint64 {
	if msgLen == 0 {
		return 1
	}
	return (uint64(msgLen) + uint64(p.MTU) - 1) / uint64(p.MTU)
}

// Segment is packet i of a message of msgLen bytes: it carries the message bytes
// [off, off+n), off = i·mtu and n = min(mtu, msgLen − off) (0 past the end).
func (p Params) Segment(msgLen, i uint32) (off, n uint32) {
	off = i * uint32(p.MTU)
	return off, min(uint32(p.MTU), msgLen-min(off, msgLen))
}

// LastLen is the payload length of the last packet of a message of msgLen bytes.
func (p Params) LastLen(msgLen uint32) uint32 {
	return uint32(uint64(msgLen) - (p.Packets(msgLen)-1)*uint64(p.MTU))
}

// RKey builds an rkey from a table index and a tag.
func (p Params) RKey(index int, tag uint32) uint32 {
	return tag<<p.IndexBits | uint32(index)
}

// SplitRKey returns an rkey's table index and tag.
func (p Params) SplitRKey(rkey uint32) (index int, tag uint32) {
	return int(rkey & (1<<p.IndexBits - 1)), rkey >> p.IndexBits
}

// Access is a region's access-rights field (2 bits).
type Access uint8

// Access bits.
const (
	AccessRemoteWrite Access = 1 << 0 // WRITE packets may place into the region
	AccessRemoteRead  Access = 1 << 1 // reserved for a future READ opcode; stored, never checked

	accessMask = AccessRemoteWrite | AccessRemoteRead
)

// Region is one entry of the memory-region table.
type Region struct {
	Valid  bool
	Base   uint64
	Length uint64
	Access Access
	Conn   uint16 // the owning connection
	Gen    uint32 // registration generation = the rkey tag of the current registration
}

// Buffer is one posted receive buffer.
type Buffer struct {
	Addr   uint64
	Length uint32
}

// SlotState is the state of a message slot.
type SlotState uint8

// Slot states.
const (
	SlotPosted   SlotState = iota // a receive is posted; no packet of the message has arrived
	SlotOpen                      // some packets placed, not all
	SlotComplete                  // every byte placed; waits for older messages to be released
	SlotFailed                    // the message failed with Nak; waits to be released
)

// MsgSlot is one entry of a stream's ring: a posted receive and the tracker of its message.
type MsgSlot struct {
	Buf     Buffer
	State   SlotState
	Op      wire.Opcode
	MsgLen  uint32
	RKey    uint32 // WRITE: the message's rkey
	Residue uint32 // WRITE: VA mod mtu of every packet of the message
	Bytes   uint32 // bytes placed
	Nak     wire.NakCode
	Bits    []uint64 // B-bit bitmap of placed packets
}

// StreamState is one entry of the stream table.
type StreamState struct {
	CompMSN uint32 // MSN of the next completion to release
	Head    int    // ring position of CompMSN
	Posted  int    // receives posted and not yet released
}

// Desc is the part of a parsed data packet that placement needs.
type Desc struct {
	Op     wire.Opcode
	Flags  wire.Flags // not used by the rules (the parser checked them); carried for traces
	Conn   uint16
	Stream uint8
	MSN    uint32
	MsgLen uint32
	RKey   uint32 // WRITE
	VA     uint64 // WRITE: address of the first payload byte
	Offset uint32 // SEND: offset of the first payload byte in the message
	// Payload is the packet's payload; its length is the payload length. Placement does not
	// retain it beyond the DMAWrite it returns (which aliases it).
	Payload []byte
}

// DescFromPacket extracts the descriptor of a decoded WRITE or SEND packet.
func DescFromPacket(pk *wire.Packet) (Desc, error) {
	d := Desc{Op: pk.BTH.Opcode, Flags: pk.BTH.Flags, Conn: pk.BTH.ConnID, Stream: pk.BTH.StreamID,
		MSN: pk.BTH.MSN, Payload: pk.Payload}
	switch {
	case pk.BTH.Opcode == wire.OpWrite && pk.Write != nil:
		d.MsgLen, d.RKey, d.VA = pk.Write.MsgLen, pk.Write.RKey, pk.Write.VA
	case pk.BTH.Opcode == wire.OpSend && pk.Send != nil:
		d.MsgLen, d.Offset = pk.Send.MsgLen, pk.Send.Offset
	default:
		return Desc{}, fmt.Errorf("placement: %v packet is not a data packet", pk.BTH.Opcode)
	}
	return d, nil
}

// DMAWrite is one DMA command to host memory.
type DMAWrite struct {
	Addr uint64
	Data []byte
}

// Completion is the record a message leaves the engine with.
type Completion struct {
	Conn   uint16
	Stream uint8
	MSN    uint32
	Op     wire.Opcode
	MsgLen uint32
	Bytes  uint32       // bytes placed (MsgLen on success)
	Status wire.NakCode // 0: success; else the NAK code the message failed with
	Buf    Buffer       // the receive the message consumed (SEND: where its bytes are)
	RKey   uint32       // WRITE: the message's rkey; 0 for SEND
}

// Result is the outcome of one packet.
type Result struct {
	Drop        DropReason
	Nak         wire.NakCode // 0: no NAK due
	RNRDelay    uint16       // with NakReceiverNotReady
	DMA         *DMAWrite    // nil: nothing written
	Completions []Completion // released by this packet, in order
}

// Counters are the engine's event counters (32-bit wrapping counters in hardware).
type Counters struct {
	Drops       [NumDropReasons]uint64 // Drops[DropNone] counts placed packets
	BytesPlaced uint64
	Completed   uint64 // completions released with status 0
	Failed      uint64 // completions released with a NAK status
}

// Errors of the control operations.
var (
	ErrRegionTableFull = errors.New("placement: memory-region table full")
	ErrBadRegion       = errors.New("placement: invalid region")
	ErrNoSuchRegion    = errors.New("placement: rkey names no registered region")
	ErrQueueFull       = errors.New("placement: posted-receive queue full")
	ErrBadBuffer       = errors.New("placement: invalid receive buffer")
	ErrBadStream       = errors.New("placement: connection or stream out of range")
	ErrBusy            = errors.New("placement: stream has receives posted, or region is registered")
)
