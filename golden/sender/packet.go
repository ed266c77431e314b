package sender

import "github.com/mrgen/mrgen/golden/wire"

// Kind says why a data packet is sent.
type Kind uint8

// Kinds of data packet.
const (
	KindNew   Kind = iota // a packet's first copy
	KindRetx              // a retransmission on the path that lost it, with its PSN
	KindMoved             // a copy sent as a new packet on another path (moved, RTO copy)
)

func (k Kind) String() string { return [...]string{"new", "retx", "moved"}[k] }

// Packet is a data packet to send: its wire header fields, the DMA read of its payload and the
// UDP source port (entropy) of its path. Next returns it; Left is told when it leaves.
type Packet struct {
	Ref  Ref  // the record it was sent from
	Kind Kind // KindRetx and KindMoved are retransmissions for the ledger
	// Announce: an ANNOUNCE of the connection on this path goes out just ahead of it (the
	// connection's first data packet).
	Announce bool

	Conn     int    // this NIC's connection index
	WireConn uint16 // the connection id the peer knows
	Path     int
	Stream   int
	Op       wire.Opcode
	Flags    wire.Flags
	PSN, MSN uint32
	MsgLen   uint32
	Offset   uint32 // payload offset in the message (SEND ext; a WRITE's VA is RemoteVA+Offset)
	RKey     uint32 // WRITE
	VA       uint64 // WRITE: receiver address of this packet's first byte
	Local    uint64 // DMA read of the payload: host address ...
	Len      uint32 // ... and length
	Entropy  uint16
	ID       uint64 // the work request's cookie
	Index    uint32 // packet index in the message
}

// Header is the packet's wire header, without payload and with timestamp 0 (the MAC stamps it
// when the packet leaves).
func (pk Packet) Header() *wire.Packet {
	w := &wire.Packet{BTH: wire.BTH{Opcode: pk.Op, Flags: pk.Flags, ConnID: pk.WireConn, PathID: uint8(pk.Path),
		StreamID: uint8(pk.Stream), PSN: pk.PSN, MSN: pk.MSN}}
	if pk.Op == wire.OpWrite {
		w.Write = &wire.WriteExt{MsgLen: pk.MsgLen, RKey: pk.RKey, VA: pk.VA}
	} else {
		w.Send = &wire.SendExt{MsgLen: pk.MsgLen, Offset: pk.Offset}
	}
	return w
}

// AnnounceHeader is the ANNOUNCE that goes ahead of pk (docs/wire-format.md §10.1).
func (pk Packet) AnnounceHeader() *wire.Packet {
	return &wire.Packet{BTH: wire.BTH{Opcode: wire.OpAnnounce, ConnID: pk.WireConn, PathID: uint8(pk.Path)}, Announce: &wire.Announce{}}
}

// DataFlags are the flags of packet idx of a message of n packets: First on packet 0,
// Last|AckReq on the last, Retx|AckReq on a retransmission, PathInit on a path's first packet
// after a restart, and AckReq while the connection has not heard from its receiver (the
// first-RTT packet asks for its answer at once).
func DataFlags(idx, n uint32, retx, init, heard bool) wire.Flags {
	flags := wire.Flags(0)
	if idx == 0 {
		flags |= wire.FlagFirst
	}
	if idx == n-1 {
		flags |= wire.FlagLast | wire.FlagAckReq
	}
	if retx {
		flags |= wire.FlagRetx | wire.FlagAckReq
	}
	if init {
		flags |= wire.FlagPathInit
	}
	if !heard {
		flags |= wire.FlagAckReq
	}
	return flags
}

// describe builds the packet of record r (conn cn, path) of kind k from its message e.
func (s *Sender) describe(cn *conn, path int, r *record, e *workEntry, k Kind) Packet {
	off, plen := s.p.Placement.Segment(e.wr.Len, r.idx)
	if k == KindRetx {
		r.retx = true
	}
	flags := DataFlags(r.idx, e.n, k == KindRetx, r.init, cn.heard)
	pk := Packet{Ref: s.refOf(cn.idx, path, r), Kind: k, Conn: cn.idx, WireConn: s.p.WireConn[cn.idx], Path: path,
		Stream: r.msg.stream, Op: e.wr.Op, Flags: flags, PSN: r.psn, MSN: e.msn, MsgLen: e.wr.Len, Offset: off,
		Local: e.wr.Local + uint64(off), Len: plen, Entropy: s.win.Path(cn.idx, path).Entropy, ID: e.wr.ID, Index: r.idx}
	if e.wr.Op == wire.OpWrite {
		pk.RKey, pk.VA = e.wr.RKey, e.wr.RemoteVA+uint64(off)
	}
	r.inNIC = true
	return pk
}
