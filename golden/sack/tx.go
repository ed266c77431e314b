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

var statusNames = [...]string{AckAccepted: "accepted", AckDuplicate: "duplicate", AckStale: "stale", AckInvalid: "invalid"}

func (s AckStatus) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
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
	// hwm is the highest PSN below which every loss has been reported: the highest SACKed PSN
	// of the accepted ACKs so far, or una-1. Every clear bit below the highest SACKed PSN is
	// lost, and bits below hwm were all reported when hwm was set, so only the clear bits above
	// it are new. That keeps "exactly once" with one PSN of state instead of a W-bit bitmap.
	hwm uint32
}

// Sender is the send-side loss-detection table of every (connection, path).
type Sender struct {
	p        Params
	s        psn.Space
	entries  []txEntry
	Counters TxCounters
}

// NewSender returns a sender with every entry reset (una = nxt = 0).
func NewSender(p Params) *Sender {
	t := &Sender{p: p, s: p.space(), entries: make([]txEntry, p.TableDepth)}
	t.Reset()
	return t
}

// Reset returns every entry and counter to its reset state.
func (t *Sender) Reset() {
	for i := range t.entries {
		t.Init(i, 0)
	}
	t.Counters = TxCounters{}
}

// Init sets an entry's initial PSN (connection setup): una = nxt = first.
func (t *Sender) Init(index int, first uint32) {
	e := &t.entries[index]
	e.una = t.s.Wrap(first)
	e.nxt = e.una
	e.count = 0
	e.hwm = t.s.Add(e.una, t.s.Mask()) // una - 1
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
	// The report starts above hwm: bits below it were reported with an earlier ACK.
	start := uint32(0)
	if d := t.s.Dist(cum, t.s.Add(e.hwm, 1)); !t.s.Negative(d) {
		start = min(d, uint32(W))
	}
	if h > 0 && uint32(h) > start {
		// Lost: every PSN in [cum+start, cum+h) whose bit is clear.
		res.Lost.Or(bitmap)
		res.Lost.Invert()
		res.Lost.ClearFrom(h)
		res.Lost.ClearBelow(int(start))
	}
	// hwm' = the serial maximum of hwm, cum-1 and the highest SACKed PSN.
	floor := t.s.Add(cum, t.s.Mask())
	if t.s.Negative(t.s.Dist(floor, e.hwm)) {
		e.hwm = floor
	}
	if h >= 0 {
		if top := t.s.Add(cum, uint32(h)); t.s.Before(e.hwm, top) {
			e.hwm = top
		}
	}
	e.una = cum
	e.count = bitmap.Count()
	return res
}

func (t *Sender) countStatus(s AckStatus) {
	counter := [...]*uint64{AckAccepted: &t.Counters.Accepted, AckDuplicate: &t.Counters.Duplicate,
		AckStale: &t.Counters.Stale, AckInvalid: &t.Counters.Invalid}[s]
	*counter = (*counter + 1) & t.p.counterMask()
}
