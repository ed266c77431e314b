package cosim

import (
	"fmt"
	"sort"
	"strings"
)

// windowKnobs shape the stimulus of a window-unit scenario. Probabilities are per event.
type windowKnobs struct {
	AckRate   float64 // an ACK-port operation is offered in a given cycle
	SendRate  float64 // a send request is offered in a given cycle
	OutReady  float64 // each output is ready in a given cycle (1: always)
	ECN       float64 // an ACK on a congested path carries ECN echoes
	Congested float64 // fraction of paths that are congested (ECN applies to them)
	BigECN    float64 // an ECN echo is near 65535 (saturates the marks counter)
	RateHint  float64 // an ACK carries a non-zero rate hint
	BigCounts float64 // an ACK's cum advance / newly SACKed counts are huge (clamped to inflight)
	Bogus     float64 // the timestamp echo is from the future or 2^31 ns old (sample discarded)
	LongRTT   float64 // the RTT sample is above 2^24 ns (discarded by the base RTT as a maximum)
	// LongBase is the fraction of connections whose paths all have base RTTs near one drawn
	// from 8–16 ms: 1.5 x the connection's MinRTT lands on either side of the rate-cap
	// product's 2^24 ns clamp.
	LongBase float64
	Dead     float64 // fraction of paths that never answer (timeouts, suspect, failed, probes)
	// DeadConn is the fraction of connections (the first ones, at least one) whose paths are dead
	// or alive together, dead at the start (the peer or its link down): nothing is heard on the
	// connection, so a silent path's timeouts count to suspect and failed instead of failing it
	// at the first (golden/window, "Timers").
	DeadConn float64
	// DeadPeriod is the mean time, ns, a path stays dead or alive before it flips (0: never).
	DeadPeriod uint32
	SetPSN     float64 // an ACK-port operation is a set-PSN near the PSN wrap instead
	Heard      float64 // an ACK-port operation is a NAK instead (liveness only; its ACK fields are noise)
	DtMax      uint32  // ns the clock moves per cycle: uniform in 0..DtMax
	Jump       float64 // per cycle: the clock jumps by up to 4 ms
	OneConn    bool    // all ACKs and sends on connection 0, half the ACKs to the last path sent
	NearWrap   bool    // the clock starts just before 2^32 ns
	RTTMax     uint32  // largest path base RTT, ns
	// ResetEvery is the mean number of cycles between resets in the middle of traffic (0: never).
	ResetEvery int
}

// windowScenarios are the named scenarios of `mrgen cosim --block window`. "random" mixes every
// condition; the others are the directed cases of the verification plan (docs/window.md).
var windowScenarios = map[string]windowKnobs{
	"random": {AckRate: 0.45, SendRate: 0.6, OutReady: 0.85, ECN: 0.3, Congested: 0.3, BigECN: 0.002,
		RateHint: 0.05, BigCounts: 0.002, Bogus: 0.005, LongRTT: 0.002, Dead: 0.2, DeadPeriod: 5_000_000,
		SetPSN: 0.002, Heard: 0.03, DtMax: 400, Jump: 0.0002, NearWrap: true, RTTMax: 60_000, ResetEvery: 100_000,
		DeadConn: 0.25},
	// II=1: every operation on one connection (half the ACKs to the path just sent on), offered
	// every cycle, outputs always ready; rate hints, so that a rate cap is written back to back.
	"back-to-back": {AckRate: 0.5, SendRate: 1, OutReady: 1, ECN: 0.1, Congested: 1, Heard: 0.1, DtMax: 200,
		OneConn: true, RTTMax: 20_000, RateHint: 0.3},
	// AIMD: marked and unmarked ACKs, decreases once per RTT, epochs, marks saturation.
	"ecn": {AckRate: 0.5, SendRate: 0.7, OutReady: 1, ECN: 0.6, Congested: 0.6, BigECN: 0.01,
		DtMax: 300, RTTMax: 40_000},
	// Path failure: dead paths time out, turn suspect, fail, re-draw entropy, are probed, revive;
	// NAKs keep live paths alive and reactivate suspect ones.
	"failure": {AckRate: 0.4, SendRate: 0.7, OutReady: 1, ECN: 0.2, Congested: 0.3, Dead: 0.5, Heard: 0.15,
		DeadPeriod: 6_000_000, DtMax: 2_000, Jump: 0.001, RTTMax: 40_000, DeadConn: 0.25},
	// Rate hints: the rate cap limits the connection window (and lifts with hint 0).
	"rate-cap": {AckRate: 0.5, SendRate: 0.8, OutReady: 1, RateHint: 0.5, LongRTT: 0.02, LongBase: 0.5,
		DtMax: 300, RTTMax: 60_000},
	// Wraparound: the clock starts before 2^32 ns and runs fast (it wraps many times), PSNs are
	// set just below their wrap, deadlines and decrease epochs cross the wrap.
	"wraparound": {AckRate: 0.45, SendRate: 0.7, OutReady: 1, ECN: 0.2, Congested: 0.3, Dead: 0.2,
		DeadPeriod: 40_000_000, SetPSN: 0.02, DtMax: 40_000, NearWrap: true, RTTMax: 2_000_000},
	// Saturation and clamps: huge ACK counts and ECN echoes, bogus and long RTT samples.
	"saturate": {AckRate: 0.5, SendRate: 0.8, OutReady: 1, ECN: 0.3, Congested: 0.5, BigECN: 0.05,
		RateHint: 0.2, BigCounts: 0.05, Bogus: 0.05, LongRTT: 0.05, DtMax: 500, RTTMax: 60_000},
	"backpressure": {AckRate: 0.5, SendRate: 0.6, OutReady: 0.4, ECN: 0.2, Congested: 0.3, Dead: 0.2,
		DeadPeriod: 5_000_000, DtMax: 400, RTTMax: 40_000},
	"reset": {AckRate: 0.45, SendRate: 0.6, OutReady: 0.9, ECN: 0.2, Congested: 0.3, Dead: 0.2,
		DtMax: 1_000, NearWrap: true, RTTMax: 40_000, ResetEvery: 3_000, DeadConn: 0.25},
}

// WindowScenarios lists the scenario names, sorted.
func WindowScenarios() []string {
	out := make([]string, 0, len(windowScenarios))
	for n := range windowScenarios {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func windowScenario(name string) (windowKnobs, error) {
	k, ok := windowScenarios[name]
	if !ok {
		return windowKnobs{}, fmt.Errorf("unknown window scenario %q; scenarios: %s", name, strings.Join(WindowScenarios(), ", "))
	}
	return k, nil
}
