package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/golden/fabric"
)

// loopFaultFlags are the closed loop's fault flags: each one given replaces the scenario's value
// of that fault, and they combine freely (cosim.LoopFaults checks the ranges).
type loopFaultFlags struct {
	loss, corrupt, duplicate, mark, hostReady float64
	jitterNS, failAtUS, repostDelayUS         float64
	failSwitch                                string
	failPlane, outstanding                    int
}

func (l *loopFaultFlags) register(f *pflag.FlagSet) {
	f.Float64Var(&l.loss, "loss", 0, "closed loop: random loss on the last hop toward every host, 0..0.5 (default: the scenario's)")
	f.Float64Var(&l.corrupt, "corrupt", 0, "closed loop: probability a frame toward host 0 has a byte flipped (its ICRC drops it), 0..0.5")
	f.Float64Var(&l.duplicate, "duplicate", 0, "closed loop: probability a frame toward host 0 arrives twice, 0..0.5")
	f.Float64Var(&l.mark, "mark", 0, "closed loop: probability an ECN-capable data frame is marked CE on its last hop, 0..1")
	f.Float64Var(&l.jitterNS, "jitter-ns", 0, "closed loop: extra delay per link, uniform in [0, J) ns (reorders across paths), 0..10000")
	f.Float64Var(&l.hostReady, "host-ready", 1, "closed loop: probability host 0's host interfaces are ready in a cycle (backpressure), 0.05..1")
	f.StringVar(&l.failSwitch, "fail-switch", "", "closed loop: fail this switch at --fail-at-us (e.g. p0.spine1; \"\" = none)")
	f.IntVar(&l.failPlane, "fail-plane", 0, "closed loop: fail every switch of this plane at --fail-at-us (configurations of 2 or more ports)")
	f.Float64Var(&l.failAtUS, "fail-at-us", 200, "closed loop: when the failed switch or plane goes down, in microseconds of fabric time")
	f.Float64Var(&l.repostDelayUS, "repost-delay-us", 0, "closed loop: the applications repost a receive this long after a completion; SENDs that find none get receiver-not-ready NAKs, 0..10000")
	f.IntVar(&l.outstanding, "outstanding", 2, "closed loop: messages each peer keeps in flight toward host 0 (incast), 1..64")
}

// changed lists the fault flags given on the command line.
func (l *loopFaultFlags) changed(cmd *cobra.Command) []string {
	var set []string
	for _, n := range []string{"loss", "corrupt", "duplicate", "mark", "jitter-ns", "host-ready", "fail-switch", "fail-plane", "fail-at-us", "outstanding", "repost-delay-us"} {
		if cmd.Flags().Changed(n) {
			set = append(set, n)
		}
	}
	return set
}

// overrides turns the given flags into the cosim's overrides; the others keep the scenario's.
func (l *loopFaultFlags) overrides(cmd *cobra.Command) cosim.LoopFaults {
	var o cosim.LoopFaults
	ch := cmd.Flags().Changed
	float := func(name string, v float64, to **float64) {
		if ch(name) {
			*to = &v
		}
	}
	float("loss", l.loss, &o.Loss)
	float("corrupt", l.corrupt, &o.Corrupt)
	float("duplicate", l.duplicate, &o.Duplicate)
	float("mark", l.mark, &o.Mark)
	float("host-ready", l.hostReady, &o.HostReady)
	if ch("jitter-ns") {
		j := fabric.Time(l.jitterNS * float64(fabric.Nanosecond))
		o.Jitter = &j
	}
	if ch("fail-at-us") {
		at := fabric.Time(l.failAtUS * float64(fabric.Microsecond))
		o.FailAt = &at
	}
	if ch("repost-delay-us") {
		d := fabric.Time(l.repostDelayUS * float64(fabric.Microsecond))
		o.RepostDelay = &d
	}
	if ch("fail-switch") {
		o.FailSwitch = &l.failSwitch
	}
	if ch("fail-plane") {
		o.FailPlane = &l.failPlane
	}
	if ch("outstanding") {
		o.Outstanding = &l.outstanding
	}
	return o
}
