package baseline

import (
	"math"

	"github.com/mrgen/mrgen/golden/fabric"
)

// rateState is one QP's DCQCN reaction point: the current rate Rc, the target rate Rt, the
// congestion estimate alpha, and the timer (T) and byte-counter (BC) stages of the increase.
type rateState struct {
	cfg    *DCQCN
	line   float64 // Gb/s: the most DCQCN allows (Config.LineGbps or the link's rate)
	link   float64 // Gb/s: the NIC port's link rate, above which pacing is moot
	rc, rt float64 // Gb/s
	alpha  float64
	// alphaAt is the time of the last alpha update: alpha decays by (1-G) for every whole
	// AlphaTimer since then (evaluated lazily, with no timer event), and only after a first CNP.
	alphaAt fabric.Time
	cnpSeen bool
	lastDec fabric.Time
	// pending is a decrease deferred to lastDec+DecreaseInterval.
	pending bool
	t, bc   int
	bytes   int64 // sent since the byte counter last stepped
	// gen invalidates a scheduled rate-timer event when the timer restarts or stops.
	gen     uint64
	running bool
}

func newRateState(cfg *DCQCN, line, link float64) rateState {
	return rateState{cfg: cfg, line: line, link: link, rc: line, rt: line, alpha: 1}
}

// limited reports whether DCQCN holds the QP below its line rate (the increase runs).
func (r *rateState) limited() bool { return r.cfg.Enabled && r.rc < r.line }

// paced reports whether the rate limiter spaces the QP's packets wider than its link does.
func (r *rateState) paced() bool { return r.rc < r.link }

// alphaNow is alpha at time now, after the decays of the AlphaTimer periods with no CNP.
func (r *rateState) alphaNow(now fabric.Time) float64 {
	if !r.cnpSeen {
		return r.alpha
	}
	periods := (now - r.alphaAt) / r.cfg.AlphaTimer
	return r.alpha * math.Pow(1-r.cfg.G, float64(periods))
}

// canDecrease reports whether a CNP arriving now may cut the rate at once.
func (r *rateState) canDecrease(now fabric.Time) bool {
	return !r.cnpSeen || now-r.lastDec >= r.cfg.DecreaseInterval
}

// decrease is the reaction to a CNP: Rt = Rc, Rc = Rc(1 - alpha/2), alpha = (1-g)alpha + g,
// and the increase stages restart. The caller (re)starts the rate timer.
func (r *rateState) decrease(now fabric.Time) {
	a := r.alphaNow(now)
	r.rt = r.rc
	r.rc = max(r.cfg.MinGbps, r.rc*(1-a/2))
	r.alpha = (1-r.cfg.G)*a + r.cfg.G
	r.alphaAt, r.cnpSeen, r.lastDec, r.pending = now, true, now, false
	r.t, r.bc, r.bytes = 0, 0, 0
}

// timerStep is one expiry of the rate timer.
func (r *rateState) timerStep() {
	r.t++
	r.increase()
}

// sent counts bytes toward the byte counter; it returns true when the rate increased.
func (r *rateState) sent(bytes int) bool {
	if !r.limited() || r.cfg.ByteCounter <= 0 {
		return false
	}
	r.bytes += int64(bytes)
	stepped := false
	for r.bytes >= r.cfg.ByteCounter && r.limited() {
		r.bytes -= r.cfg.ByteCounter
		r.bc++
		r.increase()
		stepped = true
	}
	return stepped
}

// increase is one step of fast recovery (max(T, BC) < F: Rc toward Rt), additive increase
// (Rt += AI) or hyper increase (min(T, BC) > F: Rt += HAI). Without a byte counter the timer
// stage alone decides.
func (r *rateState) increase() {
	t, bc := r.t, r.bc
	if r.cfg.ByteCounter <= 0 {
		bc = t
	}
	switch {
	case max(t, bc) < r.cfg.F:
	case min(t, bc) > r.cfg.F:
		r.rt += r.cfg.HAIGbps
	default:
		r.rt += r.cfg.AIGbps
	}
	r.rt = min(r.rt, r.line)
	r.rc = (r.rt + r.rc) / 2
	// Halving the gap never closes it: a rate within 1 Mb/s of line rate is line rate.
	if r.rt == r.line && r.line-r.rc < 1e-3 {
		r.rc = r.line
	}
}

// gap is the pacing interval after a frame of bytes (fabric.WireOverhead included) at Rc.
func (r *rateState) gap(bytes int) fabric.Time {
	return fabric.FrameTime(bytes, r.rc)
}
