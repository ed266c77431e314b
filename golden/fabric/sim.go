// Package fabric is an event-driven simulator of a lossy multipath datacenter network: hosts
// with one NIC port per plane, switches with drop-tail egress queues and RED-style ECN marking,
// links with a rate and a propagation delay, random loss per link, ECMP hashing on the 5-tuple
// (so a UDP source port is a route), two-tier leaf-spine and multiplane topologies, link,
// switch and plane failures at set times with a configurable routing reconvergence delay, and
// constant-rate background load.
//
// Time is an integer count of picoseconds (Time), so that serialization at any link rate is
// exact to the picosecond; NS converts to the nanoseconds transports put on the wire. Events at
// equal times run in the order they were scheduled, and every random draw comes from one seeded
// generator, so a run is a pure function of its inputs and seed.
package fabric

import (
	"container/heap"
	"fmt"
)

// Time is simulated time in picoseconds.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// NS is t in whole nanoseconds (truncated).
func (t Time) NS() int64 { return int64(t / Nanosecond) }

// Seconds is t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

func (t Time) String() string { return fmt.Sprintf("%.3fus", float64(t)/float64(Microsecond)) }

// event is one scheduled action. Network events carry their port and packet so that the hot
// path allocates no closures; timers carry fn.
type event struct {
	at   Time
	seq  uint64
	kind eventKind
	port *Port
	pkt  *Packet
	fn   func()
}

type eventKind uint8

const (
	evFunc     eventKind = iota
	evTxDone             // port finished serializing pkt
	evArrive             // pkt reaches the far end of port's link
	evPullPort           // a deferred NIC pull (Kick during a pull)
)

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = event{}
	*h = old[:n-1]
	return e
}

// Sim is the event loop.
type Sim struct {
	now     Time
	seq     uint64
	events  eventHeap
	handled uint64
	stopped bool
	net     *Network
}

// NewSim returns an empty event loop at time 0.
func NewSim() *Sim { return &Sim{} }

// Now is the current simulated time.
func (s *Sim) Now() Time { return s.now }

// Events is the number of events handled so far.
func (s *Sim) Events() uint64 { return s.handled }

// Pending is the number of scheduled events.
func (s *Sim) Pending() int { return len(s.events) }

func (s *Sim) push(e event) {
	if e.at < s.now {
		e.at = s.now
	}
	s.seq++
	e.seq = s.seq
	heap.Push(&s.events, e)
}

// At runs fn at time t (now, if t is in the past).
func (s *Sim) At(t Time, fn func()) { s.push(event{at: t, kind: evFunc, fn: fn}) }

// After runs fn d after now.
func (s *Sim) After(d Time, fn func()) { s.At(s.now+d, fn) }

// Stop ends Run after the current event.
func (s *Sim) Stop() { s.stopped = true }

// Run handles events in time order until none is left, Stop is called, or the next event lies
// after until. The clock ends at until when it was reached, or at the last event.
func (s *Sim) Run(until Time) {
	s.stopped = false
	for len(s.events) > 0 && !s.stopped {
		if s.events[0].at > until {
			s.now = until
			return
		}
		e := heap.Pop(&s.events).(event)
		s.now = e.at
		s.handled++
		switch e.kind {
		case evFunc:
			e.fn()
		default:
			s.net.handle(e)
		}
	}
	if !s.stopped && s.now < until {
		s.now = until
	}
}
