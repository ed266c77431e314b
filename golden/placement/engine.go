package placement

import (
	"math"

	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/wire"
)

// msns is the serial arithmetic of 32-bit message sequence numbers (golden/psn's rule): a
// message whose distance from the completion point is negative is an old one.
var msns = psn.MustSpace(32)

// Engine is the placement engine of one NIC: the region table, the stream table and its message
// rings, and the counters.
type Engine struct {
	p       Params
	regions []Region
	streams []StreamState
	slots   []MsgSlot // stream i's ring is slots[i*Depth : (i+1)*Depth]
	words   int       // uint64 words of a slot bitmap
	cnt     Counters

	// addrSkew is added to every DMA address. It is always 0 except in the test that proves a
	// placement bug is caught by the byte-for-byte memory check.
	addrSkew uint64
}

// New returns an engine in its reset state (no regions, no receives, every CompMSN 0). It panics
// on Params that fail Validate.
func New(p Params) *Engine {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	e := &Engine{
		p:       p,
		regions: make([]Region, p.Regions),
		streams: make([]StreamState, p.Conns*p.Streams),
		slots:   make([]MsgSlot, p.Conns*p.Streams*p.Depth),
		words:   (p.MaxMsgPackets + 63) / 64,
	}
	for i := range e.slots {
		e.slots[i].Bits = make([]uint64, e.words)
	}
	return e
}

// Params returns the engine's parameters.
func (e *Engine) Params() Params { return e.p }

// Counters returns a copy of the counters.
func (e *Engine) Counters() Counters { return e.cnt }

// Region returns the region table entry at index.
func (e *Engine) Region(index int) Region { return e.regions[index] }

// Stream returns the stream table entry of (conn, stream).
func (e *Engine) Stream(conn, stream int) StreamState {
	return e.streams[conn*e.p.Streams+stream]
}

// Slot returns a copy of the k-th slot after the head of (conn, stream), k < Depth.
func (e *Engine) Slot(conn, stream, k int) MsgSlot {
	i := conn*e.p.Streams + stream
	s := e.slots[i*e.p.Depth+(e.streams[i].Head+k)%e.p.Depth]
	s.Bits = append([]uint64(nil), s.Bits...)
	return s
}

// RegisterRegion writes the lowest-numbered free entry of the region table and returns its rkey.
// length must be at least 1, base+length−1 must not wrap 2^64, conn < connections, and access
// may only hold the defined bits.
func (e *Engine) RegisterRegion(conn uint16, base, length uint64, access Access) (uint32, error) {
	if length == 0 || length-1 > math.MaxUint64-base || int(conn) >= e.p.Conns || access&^accessMask != 0 {
		return 0, ErrBadRegion
	}
	for i := range e.regions {
		r := &e.regions[i]
		if r.Valid {
			continue
		}
		gen := (r.Gen + 1) & (1<<e.p.TagBits - 1)
		if gen == 0 {
			gen = 1
		}
		*r = Region{Valid: true, Base: base, Length: length, Access: access, Conn: conn, Gen: gen}
		return e.p.RKey(i, gen), nil
	}
	return 0, ErrRegionTableFull
}

// DeregisterRegion invalidates the region rkey names (its generation is kept). Messages in
// flight that use it fail at their next packet with an rkey violation.
func (e *Engine) DeregisterRegion(rkey uint32) error {
	i, tag := e.p.SplitRKey(rkey)
	if i >= e.p.Regions || !e.regions[i].Valid || e.regions[i].Gen != tag {
		return ErrNoSuchRegion
	}
	e.regions[i].Valid = false
	return nil
}

// SetStreamMSN starts the message sequence of (conn, stream) at msn: its next completion is
// message msn. The stream must have no receive posted (ErrBusy otherwise). A host sets it when
// it (re)establishes a connection, for example after a reset, which starts every stream at 0.
func (e *Engine) SetStreamMSN(conn, stream int, msn uint32) error {
	if conn < 0 || conn >= e.p.Conns || stream < 0 || stream >= e.p.Streams {
		return ErrBadStream
	}
	st := &e.streams[conn*e.p.Streams+stream]
	if st.Posted != 0 {
		return ErrBusy
	}
	st.CompMSN, st.Head = msn, int(msn%uint32(e.p.Depth))
	return nil
}

// RestoreGeneration sets the generation of the unregistered region entry rkey's index names to
// rkey's tag, so the entry's next registration issues the tag after it. A host that restarts the
// engine (a reset clears every generation) restores the last rkey it issued per entry, so that
// rkeys handed out before the reset are not issued again. ErrNoSuchRegion: no such entry;
// ErrBusy: the entry is registered.
func (e *Engine) RestoreGeneration(rkey uint32) error {
	i, tag := e.p.SplitRKey(rkey)
	if i >= e.p.Regions {
		return ErrNoSuchRegion
	}
	if e.regions[i].Valid {
		return ErrBusy
	}
	e.regions[i].Gen = tag
	return nil
}

// PostReceive appends a receive buffer to the queue of (conn, stream). It is the buffer of
// message CompMSN + Posted (before the call). addr+length must not wrap 2^64.
func (e *Engine) PostReceive(conn, stream int, addr uint64, length uint32) error {
	if conn < 0 || conn >= e.p.Conns || stream < 0 || stream >= e.p.Streams {
		return ErrBadStream
	}
	if length > 0 && uint64(length)-1 > math.MaxUint64-addr {
		return ErrBadBuffer
	}
	si := conn*e.p.Streams + stream
	st := &e.streams[si]
	if st.Posted == e.p.Depth {
		return ErrQueueFull
	}
	s := &e.slots[si*e.p.Depth+(st.Head+st.Posted)%e.p.Depth]
	e.clearSlot(s)
	s.Buf = Buffer{Addr: addr, Length: length}
	st.Posted++
	return nil
}

func (e *Engine) clearSlot(s *MsgSlot) {
	b := s.Bits
	clear(b)
	*s = MsgSlot{Bits: b}
}

// Place applies the rules of the package documentation to one data packet.
func (e *Engine) Place(d Desc) Result {
	r := e.place(d)
	e.cnt.Drops[r.Drop]++
	if r.Drop == DropNone {
		e.cnt.BytesPlaced += uint64(len(d.Payload))
	}
	if r.Drop != DropInvalidDesc {
		r.Completions = e.release(int(d.Conn)*e.p.Streams + int(d.Stream))
	}
	return r
}

func (e *Engine) place(d Desc) Result {
	n := uint64(len(d.Payload))
	p := e.p
	// 1. Descriptor sanity.
	if (d.Op != wire.OpWrite && d.Op != wire.OpSend) || int(d.Conn) >= p.Conns || int(d.Stream) >= p.Streams ||
		n > uint64(p.MTU) || n > uint64(d.MsgLen) || (n == 0) != (d.MsgLen == 0) ||
		(d.Op == wire.OpSend && uint64(d.Offset)+n > uint64(d.MsgLen)) ||
		(d.Op == wire.OpWrite && n > 0 && n-1 > math.MaxUint64-d.VA) {
		return Result{Drop: DropInvalidDesc}
	}
	// 2. Window and receive.
	si := int(d.Conn)*p.Streams + int(d.Stream)
	st := &e.streams[si]
	k := d.MSN - st.CompMSN
	if msns.Negative(k) {
		return Result{Drop: DropStaleMessage}
	}
	if k >= uint32(st.Posted) {
		return Result{Drop: DropReceiverNotReady, Nak: wire.NakReceiverNotReady, RNRDelay: p.RNRDelayUS}
	}
	s := &e.slots[si*p.Depth+(st.Head+int(k))%p.Depth]
	// 3. Slot state.
	switch s.State {
	case SlotFailed:
		return Result{Drop: DropMessageFailed, Nak: s.Nak}
	case SlotComplete:
		return Result{Drop: DropDuplicate}
	}
	drop, bit := e.check(d, s)
	if drop == DropDuplicate {
		return Result{Drop: DropDuplicate}
	}
	if s.State == SlotPosted { // open the slot with this packet's message attributes
		s.State, s.Op, s.MsgLen = SlotOpen, d.Op, d.MsgLen
		if d.Op == wire.OpWrite {
			s.RKey, s.Residue = d.RKey, uint32(d.VA%uint64(p.MTU))
		}
	}
	if drop != DropNone {
		s.State, s.Nak = SlotFailed, drop.Nak()
		return Result{Drop: drop, Nak: s.Nak}
	}
	// 10. Place.
	s.Bits[bit/64] |= 1 << (bit % 64)
	s.Bytes += uint32(n)
	if s.Bytes == s.MsgLen {
		s.State = SlotComplete
	}
	var dma *DMAWrite
	if n > 0 {
		addr := d.VA
		if d.Op == wire.OpSend {
			addr = s.Buf.Addr + uint64(d.Offset)
		}
		dma = &DMAWrite{Addr: addr + e.addrSkew, Data: d.Payload}
	}
	return Result{DMA: dma}
}

// check runs rules 4 to 9 on a slot that is Posted or Open and returns the first failing
// reason (DropNone: place) and the packet's bit.
func (e *Engine) check(d Desc, s *MsgSlot) (DropReason, uint64) {
	p := e.p
	n := uint64(len(d.Payload))
	mtu := uint64(p.MTU)
	// 4. Consistency with the message.
	if s.State == SlotOpen && (s.Op != d.Op || s.MsgLen != d.MsgLen || (d.Op == wire.OpWrite && s.RKey != d.RKey)) {
		return DropInconsistent, 0
	}
	// 5. Receive buffer.
	if d.Op == wire.OpSend && d.MsgLen > s.Buf.Length {
		return DropReceiveTooSmall, 0
	}
	// 6. Message length.
	npk := p.Packets(d.MsgLen)
	if npk > uint64(p.MaxMsgPackets) {
		return DropMessageTooLong, 0
	}
	// 7. Segmentation.
	last := uint64(p.LastLen(d.MsgLen))
	var bit uint64
	if d.Op == wire.OpSend {
		off := uint64(d.Offset)
		want := mtu
		if off+mtu >= uint64(d.MsgLen) {
			want = uint64(d.MsgLen) - off
		}
		if off%mtu != 0 || n != want {
			return DropSegmentation, 0
		}
		bit = off / mtu
	} else {
		if (s.State == SlotOpen && d.VA%mtu != uint64(s.Residue)) || (n != mtu && n != last) {
			return DropSegmentation, 0
		}
		bit = (d.VA / mtu) % uint64(p.MaxMsgPackets)
	}
	// 8. Duplicate.
	if s.Bits[bit/64]>>(bit%64)&1 != 0 {
		return DropDuplicate, bit
	}
	// Bytes can only exceed the message length when a WRITE sender broke segmentation in a way
	// the residue and size checks cannot see (two last-sized packets); refuse the excess.
	if uint64(s.Bytes)+n > uint64(d.MsgLen) {
		return DropSegmentation, 0
	}
	// 9. WRITE protection.
	if d.Op == wire.OpWrite {
		idx, tag := p.SplitRKey(d.RKey)
		if idx >= p.Regions || !e.regions[idx].Valid {
			return DropRKeyInvalid, 0
		}
		r := &e.regions[idx]
		switch {
		case tag != r.Gen:
			return DropRKeyTag, 0
		case d.Conn != r.Conn:
			return DropWrongConnection, 0
		case r.Access&AccessRemoteWrite == 0:
			return DropNoWriteAccess, 0
		}
		if d.VA < r.Base || d.VA-r.Base > r.Length || n > r.Length-(d.VA-r.Base) {
			return DropOutOfBounds, 0
		}
	}
	return DropNone, bit
}

// release retires the head slots of stream si that are Complete or Failed.
func (e *Engine) release(si int) []Completion {
	st := &e.streams[si]
	var out []Completion
	for st.Posted > 0 {
		s := &e.slots[si*e.p.Depth+st.Head]
		if s.State != SlotComplete && s.State != SlotFailed {
			break
		}
		c := Completion{
			Conn: uint16(si / e.p.Streams), Stream: uint8(si % e.p.Streams), MSN: st.CompMSN,
			Op: s.Op, MsgLen: s.MsgLen, Bytes: s.Bytes, Status: s.Nak, Buf: s.Buf,
		}
		if s.Op == wire.OpWrite {
			c.RKey = s.RKey
		}
		if s.Nak == 0 {
			e.cnt.Completed++
		} else {
			e.cnt.Failed++
		}
		out = append(out, c)
		e.clearSlot(s)
		st.Head = (st.Head + 1) % e.p.Depth
		st.Posted--
		st.CompMSN++
	}
	return out
}
