package sack

import "github.com/mrgen/mrgen/golden/psn"

// AckStatus is the send side's verdict on an ACK. The numeric values are the RTL's encoding.
type AckStatus uint8

// ACK verdicts.
const (
	AckAccepted  AckStatus = 0
	AckDuplicate AckStatus = 1
	AckStale     AckStatus = 2
	AckInvalid   AckStatus = 3
)

func (s AckStatus) String() string {
	switch s {
	case AckAccepted:
		return "accepted"
	case AckDuplicate:
		return "duplicate"
	case AckStale:
		return "stale"
	case AckInvalid:
		return "invalid"
	}
	return "unknown"
}

// AckResult is the send side's answer to one ACK.
type AckResult struct {
	Status AckStatus
	Base   uint32 // the ACK's cumulative PSN; Lost is aligned to it
	Lost   Bitmap // PSNs newly known lost (bit i = PSN Base+i), each reported once
}

// TxCounters count ACKs by verdict. They wrap at Params.CounterBits.
type TxCounters struct {
	Accepted, Duplicate, Stale, Invalid uint64
}

type txEntry struct {
	una, nxt uint32
	count    int
	reported Bitmap // aligned to una
}

// Sender is the send-side loss-detection table of every (connection, path).
type Sender struct {
	p        Params
	s        psn.Space
	entries  []txEntry
	scratch  Bitmap
	Counters TxCounters
}

// NewSender returns a sender with every entry reset (una = nxt = 0).
func NewSender(p Params) *Sender {
	t := &Sender{p: p, s: p.space(), entries: make([]txEntry, p.TableDepth), scratch: NewBitmap(p.Width)}
	t.Reset()
	return t
}

// Reset returns every entry and counter to its reset state.
func (t *Sender) Reset() {
	for i := range t.entries {
		t.entries[i] = txEntry{reported: NewBitmap(t.p.Width)}
	}
	t.Counters = TxCounters{}
}

// Init sets an entry's initial PSN (connection setup): una = nxt = first.
func (t *Sender) Init(index int, first uint32) {
	e := &t.entries[index]
	e.una = t.s.Wrap(first)
	e.nxt = e.una
	e.count = 0
	e.reported.Clear()
}

// Sent records that PSN p went out on the path: nxt moves past it if it is not before nxt.
func (t *Sender) Sent(index int, p uint32) {
	e := &t.entries[index]
	p = t.s.Wrap(p)
	if !t.s.Negative(t.s.Dist(e.nxt, p)) {
		e.nxt = t.s.Add(p, 1)
	}
}

// Una and Nxt expose an entry's window edges.
func (t *Sender) Una(index int) uint32 { return t.entries[index].una }

// Nxt is the next PSN the path will send.
func (t *Sender) Nxt(index int) uint32 { return t.entries[index].nxt }

// Ack processes one ACK for the entry. bitmap is aligned to cum and is not retained.
func (t *Sender) Ack(index int, cum uint32, bitmap Bitmap) AckResult {
	e := &t.entries[index]
	cum = t.s.Wrap(cum)
	W := t.p.Width
	res := AckResult{Base: cum, Lost: NewBitmap(W)}
	a := t.s.Dist(e.una, cum)
	toNxt := t.s.Dist(cum, e.nxt)
	h := bitmap.Highest()
	switch {
	case t.s.Negative(a):
		res.Status = AckStale
	case t.s.Negative(toNxt), h >= 0 && uint32(h) >= toNxt, bitmap.Get(0):
		res.Status = AckInvalid
	case a == 0 && bitmap.Count() <= e.count:
		res.Status = AckDuplicate
	default:
		res.Status = AckAccepted
	}
	t.countStatus(res.Status)
	if res.Status != AckAccepted {
		return res
	}
	shift := W
	if a < uint32(W) {
		shift = int(a)
	}
	e.reported.ShiftDown(shift)
	if h > 0 {
		// Lost: every PSN in [cum, cum+h) whose bit is clear, less those already reported.
		res.Lost.Or(bitmap)
		for i := range res.Lost.w {
			res.Lost.w[i] = ^res.Lost.w[i]
		}
		res.Lost.ClearFrom(h)
		res.Lost.AndNot(e.reported)
		e.reported.Or(res.Lost)
	}
	e.una = cum
	e.count = bitmap.Count()
	return res
}

func (t *Sender) countStatus(s AckStatus) {
	m := t.p.counterMask()
	switch s {
	case AckAccepted:
		t.Counters.Accepted = (t.Counters.Accepted + 1) & m
	case AckDuplicate:
		t.Counters.Duplicate = (t.Counters.Duplicate + 1) & m
	case AckStale:
		t.Counters.Stale = (t.Counters.Stale + 1) & m
	case AckInvalid:
		t.Counters.Invalid = (t.Counters.Invalid + 1) & m
	}
}
