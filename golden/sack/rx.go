package sack

import (
	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/psn"
)

// Class is the receive-side classification of a data packet. The numeric values are the RTL's
// class encoding.
type Class uint8

// Receive classes.
const (
	ClassNew       Class = 0
	ClassDuplicate Class = 1
	ClassOld       Class = 2
	ClassBeyond    Class = 3
)

var classNames = [...]string{ClassNew: "new", ClassDuplicate: "duplicate", ClassOld: "old", ClassBeyond: "beyond"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "invalid"
}

// RxResult is everything the receive side says about one data packet.
type RxResult struct {
	Class    Class
	Cum      uint32 // cumulative point after the packet
	Bitmap   Bitmap // aligned to Cum (bit i = PSN Cum+i)
	AckDue   bool
	GapValid bool   // the packet made PSNs (highest, psn) newly visible as lost
	GapFirst uint32 // first PSN of the newly visible gap (valid with GapValid)
	GapCount uint32 // number of PSNs in it (valid with GapValid)
	// PathInit: the packet carried the path-init flag at or after cum and re-initialised the
	// entry at its PSN before it was classified (PacketInit only).
	PathInit bool
}

// RxCounters count packets by class over all entries. They wrap at Params.CounterBits.
type RxCounters struct {
	New, Duplicate, Old, Beyond uint64
}

type rxEntry struct {
	cum, highest uint32
	bitmap       Bitmap
	sinceAck     int
}

// Receiver is the receive-side table of every (connection, path).
type Receiver struct {
	p        Params
	s        psn.Space
	entries  []rxEntry
	Counters RxCounters
}

// NewReceiver returns a receiver with every entry reset (cum 0, nothing received).
func NewReceiver(p Params) *Receiver {
	r := &Receiver{p: p, s: p.space(), entries: make([]rxEntry, p.TableDepth)}
	r.Reset()
	return r
}

// Reset returns every entry and counter to its reset state, as the RTL's reset does.
func (r *Receiver) Reset() {
	for i := range r.entries {
		r.entries[i] = rxEntry{bitmap: NewBitmap(r.p.Width)}
		r.Init(i, 0)
	}
	r.Counters = RxCounters{}
}

// Init sets an entry's initial PSN (connection setup): nothing received, cum = first.
func (r *Receiver) Init(index int, first uint32) {
	e := &r.entries[index]
	e.cum = r.s.Wrap(first)
	e.highest = r.s.Add(e.cum, r.s.Mask()) // cum - 1
	e.bitmap.Clear()
	e.sinceAck = 0
}

// Cum returns an entry's cumulative point.
func (r *Receiver) Cum(index int) uint32 { return r.entries[index].cum }

// Packet applies the rules to one arriving data packet.
func (r *Receiver) Packet(index int, p uint32, ackReq bool) RxResult {
	e := &r.entries[index]
	W := uint32(r.p.Width)
	p = r.s.Wrap(p)
	d := r.s.Dist(e.cum, p)
	res := RxResult{}
	switch {
	case r.s.Negative(d):
		res.Class = ClassOld
	case d >= W:
		res.Class = ClassBeyond
	case e.bitmap.Get(int(d)):
		res.Class = ClassDuplicate
	default:
		res.Class = ClassNew
	}

	if res.Class == ClassNew {
		e.bitmap.Set(int(d))
		if above := r.s.Dist(e.highest, p); above != 0 && !r.s.Negative(above) {
			if above > 1 {
				res.GapValid = true
				res.GapFirst = r.s.Add(e.highest, 1)
				res.GapCount = above - 1
			}
			e.highest = p
		}
		if d == 0 {
			n := e.bitmap.TrailingOnes()
			e.bitmap.ShiftDown(n)
			e.cum = r.s.Add(e.cum, uint32(n))
		}
	}

	res.AckDue = r.ackDue(e, res, ackReq)
	res.Cum = e.cum
	res.Bitmap = e.bitmap.Clone()
	r.count(res.Class)
	return res
}

// PacketInit applies the rules to one arriving data packet that may carry the path-init flag
// (wire.FlagPathInit: the sender restarted the path's PSN sequence at this packet). With
// pathInit set and p at or after the entry's cumulative point (p - cum not negative in serial
// order, the window notwithstanding), the entry is re-initialised at p, as Init does, and the
// packet is then classified: new, at the head, so cum becomes p+1 with an empty bitmap, no gap,
// and an ACK due as the policy gives for a first packet. A stale copy of an INIT packet (p
// before cum) changes nothing and is classified as Packet would: old. Without pathInit it is
// Packet. res.PathInit says whether the entry was re-initialised.
func (r *Receiver) PacketInit(index int, p uint32, ackReq, pathInit bool) RxResult {
	reinit := pathInit && !r.s.Negative(r.s.Dist(r.entries[index].cum, r.s.Wrap(p)))
	if reinit {
		r.Init(index, p)
	}
	res := r.Packet(index, p, ackReq)
	res.PathInit = reinit
	return res
}

// PeekInit classifies a data packet as PacketInit would and changes nothing: neither the entry
// nor the counters. The result's Class, PathInit, AckDue and gap fields are what PacketInit
// would report; Cum and Bitmap are the entry as it stands (the RTL's peek, s_pkt_peek, reports
// the same). A receiver looks before it commits: a packet that placement then refuses as
// receiver-not-ready must leave its PSN unacknowledged, so the path counts it lost and resends
// it even when the NAK is lost (docs/transport.md); the packet it accepts is then committed
// with PacketInit, whose classification equals the peek's.
func (r *Receiver) PeekInit(index int, p uint32, ackReq, pathInit bool) RxResult {
	e := &r.entries[index]
	saved, counters := *e, r.Counters
	saved.bitmap = e.bitmap.Clone()
	res := r.PacketInit(index, p, ackReq, pathInit)
	*e, r.Counters = saved, counters
	res.Cum = e.cum
	res.Bitmap = e.bitmap.Clone()
	return res
}

// ackDue applies the ACK policy and updates the entry's since-last-ACK count.
func (r *Receiver) ackDue(e *rxEntry, res RxResult, ackReq bool) bool {
	if res.Class == ClassBeyond {
		return false
	}
	trigger := res.Class != ClassNew || ackReq || res.GapValid
	var due bool
	switch r.p.AckMode {
	case config.AckEveryPacket:
		due = true
	case config.AckEveryN:
		due = trigger || e.sinceAck+1 >= r.p.AckEveryN
	default: // config.AckOnGap
		due = trigger
	}
	if due {
		e.sinceAck = 0
	} else if e.sinceAck < 255 {
		e.sinceAck++
	}
	return due
}

func (r *Receiver) count(c Class) {
	counter := [...]*uint64{ClassNew: &r.Counters.New, ClassDuplicate: &r.Counters.Duplicate,
		ClassOld: &r.Counters.Old, ClassBeyond: &r.Counters.Beyond}[c]
	*counter = (*counter + 1) & r.p.counterMask()
}
