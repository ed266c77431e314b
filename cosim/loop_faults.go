package cosim

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
)

// LoopFaults override a closed-loop scenario's faults, which combine freely: a nil field keeps
// the scenario's value. `mrgen cosim --scenario S --loss P --mark P --fail-plane K ...` sets
// them (docs/pipeline.md lists the scenarios' own values).
type LoopFaults struct {
	Loss      *float64     // random loss on the last hop toward every host, data and control
	Corrupt   *float64     // a frame toward host 0 has one byte flipped (the ICRC drops it)
	Duplicate *float64     // a frame toward host 0 arrives twice
	Mark      *float64     // an ECN-capable data frame is marked CE on its last hop (besides RED)
	Jitter    *fabric.Time // extra delay per link, uniform, FIFO per link: reorders across paths
	HostReady *float64     // probability the host interfaces are ready in a cycle (backpressure)
	// FailSwitch fails one switch (e.g. "p0.spine1"; "" = none), FailPlane every switch of one
	// plane (NIC port), both at FailAt; routing never reconverges around them.
	FailSwitch *string
	FailPlane  *int
	FailAt     *fabric.Time
	// Outstanding is the number of messages every peer keeps in flight toward host 0 (incast).
	Outstanding *int
	// RepostDelay is how long every application takes to repost a receive after a completion:
	// SENDs that find none are refused receiver-not-ready and resent (RNR NAKs both ways).
	RepostDelay *fabric.Time
}

// The allowed ranges of the faults.
const (
	maxLossFault   = 0.5
	minHostReady   = 0.05
	maxJitterFault = 10 * fabric.Microsecond
	maxFailAt      = fabric.Second
	maxOutstanding = 64
	maxRepostDelay = 10 * fabric.Millisecond
	defaultFailAt  = 200 * fabric.Microsecond // a failure given without its time
)

// apply validates the overrides and writes them into k; planes is the fabric's plane count.
func (f LoopFaults) apply(k *loopKnobs, planes int) error {
	for _, p := range []struct {
		name   string
		v      *float64
		lo, hi float64
		to     *float64
	}{
		{"loss", f.Loss, 0, maxLossFault, &k.Loss},
		{"corrupt", f.Corrupt, 0, maxLossFault, &k.Corrupt},
		{"duplicate", f.Duplicate, 0, maxLossFault, &k.Duplicate},
		{"mark", f.Mark, 0, 1, &k.Mark},
		{"host-ready", f.HostReady, minHostReady, 1, &k.HostReady},
	} {
		if p.v == nil {
			continue
		}
		if !(*p.v >= p.lo && *p.v <= p.hi) { // also refuses NaN
			return fmt.Errorf("cosim: %s %g outside %g..%g", p.name, *p.v, p.lo, p.hi)
		}
		*p.to = *p.v
	}
	for _, p := range []struct {
		name string
		v    *fabric.Time
		max  fabric.Time
		to   *fabric.Time
	}{
		{"jitter", f.Jitter, maxJitterFault, &k.Jitter},
		{"fail-at", f.FailAt, maxFailAt, &k.FailAt},
		{"repost-delay", f.RepostDelay, maxRepostDelay, &k.RepostDelay},
	} {
		if p.v == nil {
			continue
		}
		if *p.v < 0 || *p.v > p.max {
			return fmt.Errorf("cosim: %s %d ns outside 0..%d ns", p.name, *p.v/fabric.Nanosecond, p.max/fabric.Nanosecond)
		}
		*p.to = *p.v
	}
	if f.Outstanding != nil {
		if *f.Outstanding < 1 || *f.Outstanding > maxOutstanding {
			return fmt.Errorf("cosim: outstanding %d outside 1..%d", *f.Outstanding, maxOutstanding)
		}
		k.Outstanding = *f.Outstanding
	}
	if f.FailSwitch != nil {
		k.FailSwitch = *f.FailSwitch
	}
	if f.FailPlane != nil {
		switch p := *f.FailPlane; {
		case planes < 2:
			return fmt.Errorf("cosim: fail-plane %d: the configuration has %d NIC port (one plane), and a plane failure needs ports >= 2 so that the other planes carry the traffic", p, planes)
		case p < 0 || p >= planes:
			return fmt.Errorf("cosim: fail-plane %d outside 0..%d", p, planes-1)
		}
		k.FailPlane = f.FailPlane
	}
	if (f.FailSwitch != nil || f.FailPlane != nil) && f.FailAt == nil && k.FailAt == 0 {
		k.FailAt = defaultFailAt
	}
	if k.FailSwitch != "" || k.FailPlane != nil {
		k.NoReroute = true
	}
	return nil
}
