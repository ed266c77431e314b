// Package acker is the behavioural truth of a MetaRoCE receiver's ACK scheduling: which ACKs a
// NIC sends for the data packets it receives, when, and with what ECN echo, rate hint and
// timestamp echo. golden/sack classifies each packet and says whether the ACK policy makes an
// ACK due; acker decides the rest. It is the only Go implementation of these rules:
// golden/transport uses it in every protocol experiment, and the receive pipeline's RTL
// (hdl/acker) is checked against it cycle for cycle.
//
// Time is an explicit input in nanoseconds (the NIC's timestamp counter), so that hardware
// and model see the same clock: every method takes now, and every timer (delayed ACK, gather
// window, activity scan) fires at an exact nanosecond that Next reports.
//
// # State
//
// Per (connection, path): the ECN count (CE-marked data packets since the path's last ACK,
// saturating at 0xFFFF) and one held ACK slot {kind delayed or gathered, cumulative PSN,
// bitmap, timestamp, arrival time, deadline}. Per connection: the time of its last data packet
// (or ANNOUNCE), whether the rate hint counts it as active, and its announce record {held (an
// answer waits for the gather close), told (answered: a later close may refresh it), path,
// cumulative PSN, timestamp, arrival time, the hint last told}. Per NIC: the number of active
// connections, a FIFO of delayed-ACK deadlines, the gather window and the FIFO of gathered
// entries (a data path's held ACK, or a connection's held announce answer).
//
// # A data packet (Packet)
//
// Every timer due at or before now fires first (Advance). Then the connection's last-data time
// is now; a connection not counted as active becomes active (a newcomer) and opens or extends
// the gather window: it closes Gather after the latest newcomer, at most MaxGather after the
// first one. A CE mark increments the path's ECN count. Then, in this order:
//
//  1. A new packet of a newcomer is held as the path's gathered ACK (its answer carries the share
//     of every sender counted by the time the window closes).
//  2. A packet whose ACK is due refreshes a held gathered ACK (which still waits for the window),
//     else it is answered at once and clears a held delayed ACK.
//  3. Any other new packet refreshes the held ACK of the path, or holds a delayed ACK due
//     AckDelay later. The queue of deadlines holds Conns×Paths entries (a deadline stays
//     queued, stale, when an immediate ACK clears its slot); when it is full the packet is
//     answered at once instead.
//
// Packets of other classes (beyond the window, or old/duplicate ones the policy does not answer)
// send nothing. "Refresh" replaces the slot's cumulative PSN, bitmap, timestamp and arrival time
// and keeps its kind and deadline. Last, whatever the class, a packet on the path of its
// connection's announce record sets the record's cumulative PSN to the packet's (so that an
// announce answer always carries the path's current cumulative point).
//
// # An ANNOUNCE (Announce; docs/wire-format.md §10.1)
//
// A connection announces itself ahead of its first data packet; the transport passes the
// announced path's current cumulative PSN (golden/sack) with it. Every timer due at or before
// now fires first. A receiver with hints off (an all-zero table) ignores it, and so does one
// that already counts the connection (its data ACKs carry the hint). Otherwise the connection
// becomes active exactly as a data newcomer does (last-data time now, the count, the gather
// window), and its announce record is set {held, not told, path, cum, timestamp, arrival now};
// unless it was already held, the connection joins the gathered FIFO. An ANNOUNCE never touches
// a slot or an ECN count.
//
// # Timers (Advance), in time order; at equal times delayed ACKs, then the gather, then the scan
//
//   - Delayed ACK: the oldest deadline; sent if the path still holds that delayed ACK.
//   - Gather close, with H = Hints[active] at that time: first the refresh walk, over the
//     connections in index order: a told announce record whose ANNOUNCE arrived more than
//     MaxGather before the close stops being told; one whose last told hint h differs from H
//     by more than a tenth (10·|h−H| > H) is answered again (kind Announce) and remembers H.
//     Then every gathered entry, in the order the newcomers arrived: a path still holding its
//     gathered ACK is answered with the timestamp echo advanced by the time the ACK was held
//     (so the sender's RTT sample leaves the gather window out); a connection whose announce
//     record is still held is answered (kind Announce) and its record becomes told with hint H.
//   - Activity scan, every Scan while a connection is active (the first Scan after the first
//     connection became active; a scan that leaves none active stops them): a connection with
//     no data for more than HintWindow stops counting.
//
// An ACK carries the slot's (or the packet's) cumulative PSN and bitmap, the path's ECN count
// (then cleared) and the rate hint Hints[active] (the receiver's link rate divided among the
// active connections, in wire.RateHintUnitMbps units, between 1 and 0xFFFF; 0 when hints are
// off). An announce answer (kind Announce, first answer or refresh) carries the record's path
// and cumulative PSN, no SACK bits, ECN 0 (the path's count and held slot are left alone), the
// hint, and the ANNOUNCE's own timestamp as echo, not advanced by the hold: nothing on the path
// left before the ANNOUNCE, so the sender's loss inference from the echo finds nothing, and a
// header-only packet's round trip plus the hold is no shorter than a data packet's, so it
// cannot lower the sender's base RTT.
package acker

import (
	"fmt"
	"math"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/wire"
)

// Params configure an Acker. Times are nanoseconds.
type Params struct {
	Conns, Paths int
	Width        int    // SACK bitmap width
	AckDelay     uint64 // how long a delayed ACK is held at most
	Gather       uint64 // a gather window closes this long after its latest newcomer ...
	MaxGather    uint64 // ... and at most this long after its first
	HintWindow   uint64 // a connection with no data for longer stops counting for the hint
	Scan         uint64 // period of the activity scan
	// Hints[k] is the rate hint when k connections are active (len Conns+1; Hints[0] unused).
	// All zero: hints are off.
	Hints []uint16
}

// HintsOn says whether the table gives any hint (an all-zero table is hints off).
func (p Params) HintsOn() bool {
	for _, h := range p.Hints {
		if h != 0 {
			return true
		}
	}
	return false
}

// HintTable is the rate-hint table for a receiver of linkMbps: the link divided among k active
// connections in wire.RateHintUnitMbps units, clamped to 1..0xFFFF; all zero when off.
func HintTable(conns int, linkMbps float64, on bool) []uint16 {
	t := make([]uint16, conns+1)
	if !on {
		return t
	}
	for k := 1; k <= conns; k++ {
		u := linkMbps / float64(k) / wire.RateHintUnitMbps
		t[k] = uint16(math.Min(math.Max(u, 1), 0xFFFF))
	}
	return t
}

// ParamsFrom derives the parameters from the shared configuration: its connection and path
// counts, SACK width, ack_policy timers and rate_hint section (the rate divided is the NIC's
// inbound rate: link_gbps on each of its ports, as golden/transport's NIC sums its ports' links).
func ParamsFrom(c config.Config) Params {
	return Params{Conns: c.Connections, Paths: c.PathsPerConnection, Width: c.SackWidth,
		AckDelay: uint64(c.AckPolicy.DelayNS), Gather: uint64(c.AckPolicy.GatherNS), MaxGather: uint64(c.AckPolicy.MaxGatherNS),
		HintWindow: uint64(c.RateHint.WindowNS), Scan: uint64(c.RateHint.ScanNS),
		Hints: HintTable(c.Connections, float64(c.RateHint.LinkGbps*c.Ports)*1000, c.RateHint.Enabled)}
}

// Validate checks the parameters.
func (p Params) Validate() error {
	switch {
	case p.Conns < 1 || p.Paths < 1:
		return fmt.Errorf("acker: conns %d and paths %d must be at least 1", p.Conns, p.Paths)
	case p.Width < 1:
		return fmt.Errorf("acker: width %d must be at least 1", p.Width)
	case p.AckDelay == 0 || p.Gather == 0 || p.MaxGather < p.Gather || p.HintWindow == 0 || p.Scan == 0:
		return fmt.Errorf("acker: ack delay %d, gather %d ≤ max gather %d, hint window %d and scan %d must be positive",
			p.AckDelay, p.Gather, p.MaxGather, p.HintWindow, p.Scan)
	case len(p.Hints) != p.Conns+1:
		return fmt.Errorf("acker: hint table has %d entries, want conns+1 = %d", len(p.Hints), p.Conns+1)
	}
	return nil
}

// Input is one classified data packet.
type Input struct {
	Conn, Path int
	CE         bool   // the packet arrived CE-marked
	TS         uint32 // its timestamp (echoed)
	Res        sack.RxResult
}

// Kind says why an ACK was sent.
type Kind uint8

// Kinds of ACK.
const (
	Immediate Kind = iota // the policy made it due
	Delayed               // a held ACK whose delay ran out
	Gathered              // a newcomer's answer at the close of the gather window
	Announce              // an ANNOUNCE's answer (or its refresh) at the close of the gather window
)

func (k Kind) String() string {
	return [...]string{"immediate", "delayed", "gathered", "announce"}[k]
}

// Ack is one ACK to send.
type Ack struct {
	Kind       Kind
	Conn, Path int
	Cum        uint32
	Bitmap     sack.Bitmap // aligned to Cum
	ECN        uint16
	Hint       uint16
	TS         uint32 // timestamp echo
}

// Counters count the scheduler's decisions.
type Counters struct {
	Immediate, Delayed, Gathered uint64
	Newcomers, Expired           uint64
	Overflows                    uint64 // delayed ACKs sent at once because the deadline queue was full
	// ANNOUNCEs received, those ignored (hints off, or the connection already counted), their
	// first answers and their refreshes.
	Announces, AnnouncesIgnored, Announced, Refreshed uint64
}

// announcement is a connection's announce record.
type announcement struct {
	held, told bool
	path       int
	cum        uint32
	ts         uint32
	arrived    uint64
	hint       uint16 // the hint last told
}

// gEntry is one entry of the gathered FIFO: a path's held ACK, or (announce) the held answer
// to the ANNOUNCE of connection idx/Paths.
type gEntry struct {
	idx      int
	announce bool
}

type slot struct {
	kind     Kind // Delayed or Gathered (valid only)
	valid    bool
	cum      uint32
	bitmap   sack.Bitmap
	ts       uint32
	arrived  uint64
	deadline uint64 // Delayed: when it goes
}

type due struct {
	idx      int
	deadline uint64
}

// Acker is one NIC's ACK scheduler.
type Acker struct {
	p        Params
	ecn      []uint16
	slots    []slot
	lastData []uint64
	active   []bool
	ann      []announcement
	count    int
	delayed  []due    // FIFO, deadlines non-decreasing
	gathered []gEntry // FIFO
	gOpen    bool
	gStart   uint64
	gEnd     uint64
	nextScan uint64 // the next multiple of Scan to process
	// Counters are the decisions so far.
	Counters Counters
}

// New returns an Acker with no connection active and nothing held.
func New(p Params) (*Acker, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := p.Conns * p.Paths
	return &Acker{p: p, ecn: make([]uint16, n), slots: make([]slot, n), lastData: make([]uint64, p.Conns),
		active: make([]bool, p.Conns), ann: make([]announcement, p.Conns)}, nil
}

// Active is the number of connections counted by the rate hint.
func (a *Acker) Active() int { return a.count }

// Hint is the rate hint an ACK sent now carries.
func (a *Acker) Hint() uint16 { return a.p.Hints[a.count] }

// Next is the earliest time a timer is due, and whether any is pending.
func (a *Acker) Next() (uint64, bool) {
	t, ok := uint64(math.MaxUint64), false
	if len(a.delayed) > 0 {
		t, ok = a.delayed[0].deadline, true
	}
	if a.gOpen && a.gEnd < t {
		t, ok = a.gEnd, true
	}
	if a.count > 0 && a.nextScan < t {
		t, ok = a.nextScan, true
	}
	return t, ok
}

// Advance fires every timer due at or before now, in time order, and returns the ACKs sent.
func (a *Acker) Advance(now uint64) []Ack {
	var out []Ack
	for {
		t, ok := a.Next()
		if !ok || t > now {
			return out
		}
		switch {
		case len(a.delayed) > 0 && a.delayed[0].deadline == t:
			d := a.delayed[0]
			a.delayed = a.delayed[1:]
			s := &a.slots[d.idx]
			if s.valid && s.kind == Delayed && s.deadline == d.deadline {
				a.Counters.Delayed++
				out = append(out, a.send(d.idx, Delayed, s.cum, s.bitmap, s.ts))
			}
		case a.gOpen && a.gEnd == t:
			a.gOpen = false
			hint := a.p.Hints[a.count]
			for c := range a.ann {
				r := &a.ann[c]
				switch {
				case !r.told:
				case t-r.arrived > a.p.MaxGather:
					r.told = false
				case HintMoved(r.hint, hint):
					r.hint = hint
					a.Counters.Refreshed++
					out = append(out, a.answer(c))
				}
			}
			for _, g := range a.gathered {
				if g.announce {
					c := g.idx / a.p.Paths
					if r := &a.ann[c]; r.held {
						r.held, r.told, r.hint = false, true, hint
						a.Counters.Announced++
						out = append(out, a.answer(c))
					}
					continue
				}
				s := &a.slots[g.idx]
				if s.valid && s.kind == Gathered {
					a.Counters.Gathered++
					out = append(out, a.send(g.idx, Gathered, s.cum, s.bitmap, s.ts+uint32(t-s.arrived)))
				}
			}
			a.gathered = a.gathered[:0]
		default: // the scan
			for c := range a.active {
				if a.active[c] && t-a.lastData[c] > a.p.HintWindow {
					a.active[c] = false
					a.count--
					a.Counters.Expired++
				}
			}
			a.nextScan = t + a.p.Scan
		}
	}
}

// Packet handles one classified data packet at now and returns the ACKs sent (timers that fell
// due first, then the packet's own answer, if any).
func (a *Acker) Packet(now uint64, in Input) ([]Ack, error) {
	if in.Conn < 0 || in.Conn >= a.p.Conns || in.Path < 0 || in.Path >= a.p.Paths {
		return nil, fmt.Errorf("acker: connection %d path %d outside %d×%d", in.Conn, in.Path, a.p.Conns, a.p.Paths)
	}
	if in.Res.Bitmap.Len() != a.p.Width {
		return nil, fmt.Errorf("acker: bitmap of %d bits, want %d", in.Res.Bitmap.Len(), a.p.Width)
	}
	out := a.Advance(now)
	c, idx := in.Conn, in.Conn*a.p.Paths+in.Path
	newcomer := a.arrive(now, c)
	if r := &a.ann[c]; (r.held || r.told) && r.path == in.Path {
		r.cum = in.Res.Cum
	}
	if in.CE && a.ecn[idx] < 0xFFFF {
		a.ecn[idx]++
	}
	s := &a.slots[idx]
	isNew := in.Res.Class == sack.ClassNew
	refresh := func() {
		s.cum, s.bitmap, s.ts, s.arrived = in.Res.Cum, in.Res.Bitmap.Clone(), in.TS, now
	}
	switch {
	case newcomer && isNew:
		if !(s.valid && s.kind == Gathered) {
			a.gathered = append(a.gathered, gEntry{idx: idx})
		}
		s.valid, s.kind = true, Gathered
		refresh()
	case in.Res.AckDue && s.valid && s.kind == Gathered:
		refresh()
	case in.Res.AckDue:
		s.valid = false
		a.Counters.Immediate++
		out = append(out, a.send(idx, Immediate, in.Res.Cum, in.Res.Bitmap, in.TS))
	case isNew && s.valid:
		refresh()
	case isNew && len(a.delayed) == a.p.Conns*a.p.Paths:
		// The deadline queue is full (of deadlines made stale by immediate ACKs): answer now.
		a.Counters.Immediate++
		a.Counters.Overflows++
		out = append(out, a.send(idx, Immediate, in.Res.Cum, in.Res.Bitmap, in.TS))
	case isNew:
		s.valid, s.kind, s.deadline = true, Delayed, now+a.p.AckDelay
		refresh()
		a.delayed = append(a.delayed, due{idx: idx, deadline: s.deadline})
	}
	return out, nil
}

// Announce handles the ANNOUNCE of connection conn on path, with timestamp ts, at now; cum is
// the path's current cumulative PSN. It returns the ACKs sent (timers that fell due first; an
// ANNOUNCE is answered only at the gather close).
func (a *Acker) Announce(now uint64, conn, path int, ts, cum uint32) ([]Ack, error) {
	if conn < 0 || conn >= a.p.Conns || path < 0 || path >= a.p.Paths {
		return nil, fmt.Errorf("acker: announce of connection %d path %d outside %d×%d", conn, path, a.p.Conns, a.p.Paths)
	}
	out := a.Advance(now)
	a.Counters.Announces++
	if !a.p.HintsOn() || a.active[conn] {
		a.Counters.AnnouncesIgnored++
		return out, nil
	}
	a.arrive(now, conn)
	r := &a.ann[conn]
	if !r.held {
		a.gathered = append(a.gathered, gEntry{idx: conn * a.p.Paths, announce: true})
	}
	*r = announcement{held: true, path: path, cum: cum, ts: ts, arrived: now, hint: r.hint}
	return out, nil
}

// arrive records traffic of connection c at now; a connection not counted becomes active (a
// newcomer: it opens or extends the gather window) and arrive reports it.
func (a *Acker) arrive(now uint64, c int) bool {
	a.lastData[c] = now
	if a.active[c] {
		return false
	}
	a.active[c] = true
	if a.count == 0 {
		a.nextScan = now + a.p.Scan
	}
	a.count++
	a.Counters.Newcomers++
	if !a.gOpen {
		a.gOpen, a.gStart = true, now
	}
	a.gEnd = min(now+a.p.Gather, a.gStart+a.p.MaxGather)
	return true
}

// answer builds the announce answer of connection c: its record's path and cumulative PSN, no
// SACK bits, no ECN echo, the record's hint and the ANNOUNCE's timestamp.
func (a *Acker) answer(c int) Ack {
	r := &a.ann[c]
	return Ack{Kind: Announce, Conn: c, Path: r.path, Cum: r.cum, Bitmap: sack.NewBitmap(a.p.Width), Hint: r.hint, TS: r.ts}
}

// HintMoved reports whether a told hint differs from the current hint by more than a tenth of
// the current one (10·|told − now| > now): the refresh rule of the gather close.
func HintMoved(told, now uint16) bool { return 10*absDiff(told, now) > int(now) }

func absDiff(x, y uint16) int {
	if x > y {
		return int(x - y)
	}
	return int(y - x)
}

// send builds the ACK of path idx, clearing its ECN count and its held slot.
func (a *Acker) send(idx int, k Kind, cum uint32, bm sack.Bitmap, ts uint32) Ack {
	ack := Ack{Kind: k, Conn: idx / a.p.Paths, Path: idx % a.p.Paths, Cum: cum, Bitmap: bm.Clone(),
		ECN: a.ecn[idx], Hint: a.p.Hints[a.count], TS: ts}
	a.ecn[idx] = 0
	a.slots[idx].valid = false
	return ack
}
