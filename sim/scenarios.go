package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/transport"
	"github.com/mrgen/mrgen/golden/wire"
)

// Options select a scenario and its parameters; zero values take the scenario's defaults.
type Options struct {
	Scenario    string
	Hosts       int
	Pattern     string  // all-to-all | ring (loss, planes)
	Loss        float64 // loss: one point; negative: the whole sweep
	Seed        uint64
	DurationUs  float64 // measurement window
	MsgBytes    uint32
	Outstanding int    // messages in flight per flow
	Planes      int    // planes: one count; 0: the sweep 1, 2, 4, 8
	Incast      int    // incast: senders; 0: both 8 and 64
	Fail        string // failure: spine | plane
	// InitCwnd overrides the configuration's window.init_cwnd (packets per path); 0 means
	// DefaultInitCwnd.
	InitCwnd int
	NIC      config.Config
	// Seeds is how many seeds each point runs over (Seed, Seed+1, ...); 0 means DefaultSeeds.
	Seeds int
	// Jobs is how many runs go at once (0: one per CPU).
	Jobs int
	// Progress, when set, is called as each run (one point at one seed) ends.
	Progress func(done, total int) `json:"-"`
}

// Result is the JSON of `mrgen sim`.
type Result struct {
	Scenario string         `json:"scenario"`
	Params   map[string]any `json:"params"`
	Figures
	Baseline *Figures `json:"baseline,omitempty"`
	// Points holds the sweep of a scenario (loss rates, incast sizes, plane counts).
	Points []Result `json:"points,omitempty"`
	// Fit is the linear fit of throughput against planes.
	Fit *LinearFit `json:"fit,omitempty"`
	// Contrast is the same run with rate hints off (incast).
	Contrast *Figures `json:"hints_off,omitempty"`
}

// LinearFit is y = Slope·x + Intercept with its coefficient of determination.
type LinearFit struct {
	Slope     float64 `json:"slope_gbps_per_plane"`
	Intercept float64 `json:"intercept_gbps"`
	R2        float64 `json:"r2"`
}

// Patterns lists the traffic patterns.
func Patterns() []string { return []string{"all-to-all", "ring"} }

// Failures lists what the failure scenario can fail.
func Failures() []string { return []string{"spine", "plane"} }

// Scenarios lists the scenario names.
func Scenarios() []string { return []string{"loss", "reorder", "incast", "planes", "failure"} }

// DefaultInitCwnd is the experiments' initial window per path: 4 packets × 8 paths is about
// one bandwidth-delay product per connection at 100 Gb/s and a 10 µs RTT, where the
// configuration's default (16, an RTL table default) would start every connection at 4 BDPs.
const DefaultInitCwnd = 4

// LossSweep are the loss rates of the loss scenario's sweep.
var LossSweep = []float64{0, 0.001, 0.01, 0.02, 0.05, 0.1}

// Run runs a scenario.
func Run(o Options) (*Result, error) {
	if o.NIC.Name == "" {
		o.NIC = config.Default()
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Seeds == 0 {
		o.Seeds = DefaultSeeds
	}
	if o.Seeds < 0 {
		return nil, fmt.Errorf("sim: seeds %d: at least 1", o.Seeds)
	}
	if o.MsgBytes == 0 {
		o.MsgBytes = 64 << 10
	}
	if o.InitCwnd == 0 {
		o.InitCwnd = DefaultInitCwnd
	}
	o.NIC.Window.InitCwnd = o.InitCwnd
	if err := o.NIC.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if o.Loss < 0 && o.Scenario != "loss" {
		o.Loss = 0
	}
	switch o.Scenario {
	case "loss":
		return runLoss(o)
	case "reorder":
		return runReorder(o)
	case "incast":
		return runIncast(o)
	case "planes":
		return runPlanes(o)
	case "failure":
		return runFailure(o)
	}
	return nil, fmt.Errorf("sim: unknown scenario %q; scenarios: %s", o.Scenario, strings.Join(Scenarios(), ", "))
}

func (o Options) hosts(def int) int {
	if o.Hosts > 0 {
		return o.Hosts
	}
	return def
}

func (o Options) duration(defUs float64) fabric.Time {
	if o.DurationUs > 0 {
		return fabric.Time(o.DurationUs * float64(fabric.Microsecond))
	}
	return fabric.Time(defUs * float64(fabric.Microsecond))
}

// leafSpine is a 1:1 leaf-spine of hosts hosts, 4 per leaf, 4 spines, per plane.
func leafSpine(hosts, planes int, seed uint64) fabric.Topology {
	t := fabric.DefaultTopology()
	t.Hosts, t.HostsPerLeaf, t.Spines, t.Planes, t.Seed = hosts, 4, 4, planes, seed
	if hosts <= 4 {
		t.HostsPerLeaf = hosts
	}
	return t
}

func pattern(name string, hosts int) ([][2]int, error) {
	var out [][2]int
	switch name {
	case "", "all-to-all":
		for s := 0; s < hosts; s++ {
			for d := 0; d < hosts; d++ {
				if s != d {
					out = append(out, [2]int{s, d})
				}
			}
		}
	case "ring":
		for s := 0; s < hosts; s++ {
			out = append(out, [2]int{s, (s + 1) % hosts})
		}
	default:
		return nil, fmt.Errorf("sim: unknown pattern %q; patterns: all-to-all, ring", name)
	}
	return out, nil
}

func (o Options) base(topo fabric.Topology, flows [][2]int, duration fabric.Time) runSpec {
	out := o.Outstanding
	if out == 0 {
		out = 2
	}
	return runSpec{topo: topo, flows: flows, msgBytes: o.MsgBytes, outstanding: out,
		warmup: 50 * fabric.Microsecond, duration: duration, drain: 200 * fabric.Millisecond,
		loss: o.Loss, nic: o.NIC, hints: true, sprayPaths: 1}
}

// both runs MetaRoCE and the baseline on the same spec.
func both(scenario string, params map[string]any, s runSpec) (*Result, error) {
	m, err := run(MetaRoCE, s)
	if err != nil {
		return nil, err
	}
	b, err := run(RoCEv2, s)
	if err != nil {
		return nil, err
	}
	return &Result{Scenario: scenario, Params: params, Figures: m, Baseline: &b}, nil
}

func runLoss(o Options) (*Result, error) {
	hosts := o.hosts(16)
	patterns := []string{o.Pattern}
	if o.Pattern == "" {
		patterns = []string{"all-to-all"}
		if o.Loss < 0 {
			patterns = []string{"all-to-all", "ring"} // the sweep runs both
		}
	}
	flowsOf := map[string][][2]int{}
	for _, pat := range patterns {
		flows, err := pattern(pat, hosts)
		if err != nil {
			return nil, err
		}
		flowsOf[pat] = flows
	}
	point := func(pat string, loss float64) pointFunc {
		return func(seed uint64) (*Result, error) {
			flows := flowsOf[pat]
			o2 := o
			o2.Loss = loss
			if o2.Outstanding == 0 {
				// Enough in flight for one flow to fill its path (ring), without piling up
				// work when every host talks to every other.
				o2.Outstanding = map[string]int{"all-to-all": 2, "ring": 4}[pat]
			}
			s := o2.base(leafSpine(hosts, 1, seed), flows, o.duration(500))
			return both("loss", map[string]any{"loss": loss, "hosts": hosts, "pattern": pat, "seed": seed,
				"msg_bytes": o.MsgBytes, "outstanding": o2.Outstanding}, s)
		}
	}
	if o.Loss >= 0 {
		return o.single(point(patterns[0], o.Loss))
	}
	var points []pointFunc
	for _, pat := range patterns {
		for _, p := range LossSweep {
			points = append(points, point(pat, p))
		}
	}
	rs, err := o.sweep(points)
	if err != nil {
		return nil, err
	}
	res := &Result{Scenario: "loss", Params: map[string]any{"hosts": hosts, "patterns": patterns, "seeds": o.seeds(), "sweep": LossSweep},
		Points: rs, Figures: rs[0].Figures}
	return res, nil
}

// single runs one point over the seeds.
func (o Options) single(p pointFunc) (*Result, error) {
	rs, err := o.sweep([]pointFunc{p})
	if err != nil {
		return nil, err
	}
	return &rs[0], nil
}

func runReorder(o Options) (*Result, error) {
	hosts := o.hosts(16)
	flows, err := pattern(o.Pattern, hosts)
	if err != nil {
		return nil, err
	}
	pat := o.Pattern
	if pat == "" {
		pat = "all-to-all"
	}
	return o.single(func(seed uint64) (*Result, error) {
		topo := leafSpine(hosts, 1, seed)
		topo.SpineDelaySkew = 2 * fabric.Microsecond // routes differ by up to 6 µs each way
		s := o.base(topo, flows, o.duration(300))
		s.loss = 0
		s.sprayPaths = o.NIC.PathsPerConnection // the baseline sprays over as many source ports
		return both("reorder", map[string]any{"hosts": hosts, "pattern": pat, "seed": seed,
			"spine_delay_skew_us": 2, "spray_paths": s.sprayPaths}, s)
	})
}

// runIncast runs N senders toward host 0 with hints on (and off, for contrast).
func runIncast(o Options) (*Result, error) {
	sizes := []int{8, 64}
	if o.Incast > 0 {
		sizes = []int{o.Incast}
	}
	var points []pointFunc
	for _, n := range sizes {
		points = append(points, func(seed uint64) (*Result, error) {
			o2 := o
			o2.Seed = seed
			return incastPoint(o2, n)
		})
	}
	rs, err := o.sweep(points)
	if err != nil {
		return nil, err
	}
	if len(rs) == 1 {
		return &rs[0], nil
	}
	return &Result{Scenario: "incast", Params: map[string]any{"senders": sizes, "seeds": o.seeds()},
		Points: rs, Figures: rs[0].Figures}, nil
}

func incastSpec(o Options, n int) (runSpec, fabric.Time) {
	topo := leafSpine(n+1, 1, o.Seed)
	topo.HostsPerLeaf = 16
	var flows [][2]int
	for s := 1; s <= n; s++ {
		flows = append(flows, [2]int{s, 0})
	}
	o.MsgBytes = 256 << 10
	spec := o.base(topo, flows, o.duration(400))
	spec.warmup = 0
	return spec, medianBaseRTT(topo, flows, o.NIC.MTU)
}

// medianBaseRTT is the median over the flows of the unloaded round trip: the links each way
// (two within a leaf, four across the spine) with one mtu frame's serialization per hop of the
// data and a minimum frame's per hop of the ACK.
func medianBaseRTT(topo fabric.Topology, flows [][2]int, mtu int) fabric.Time {
	frame := func(bytes int) fabric.Time { return fabric.FrameTime(bytes, topo.HostLinkGbps) }
	var rtts []fabric.Time
	for _, f := range flows {
		hops := fabric.Time(4)
		if f[0]/topo.HostsPerLeaf == f[1]/topo.HostsPerLeaf {
			hops = 2
		}
		rtts = append(rtts, hops*(2*topo.LinkDelay+frame(mtu+100)+frame(64)))
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	return rtts[len(rtts)/2]
}

// incastMetaRoCE runs MetaRoCE's N:1 incast and measures convergence: the first time from which
// the rate every sender's congestion state allows (window or rate cap per SRTT, see
// allowedRate) stays within 10% of the fair share until the end of the window. The state, not
// packet counts: at 64:1 a sender's fair share is under one packet per RTT.
func incastMetaRoCE(o Options, n int, hints bool) (Figures, error) {
	s, _ := incastSpec(o, n)
	return incastMetaRoCEspec(o, n, hints, s)
}

func incastMetaRoCEspec(o Options, n int, hints bool, s runSpec) (Figures, error) {
	_, baseRTT := incastSpec(o, n)
	s.hints = hints
	fair := s.topo.HostLinkGbps * 1e9 / float64(n)
	mtuBits := float64(o.NIC.MTU * 8)
	var converged, allArrived fabric.Time = -1, -1
	s.sampleEvery = baseRTT / 8
	s.sample = func(now fabric.Time, hosts []traffic.Host) {
		if allArrived < 0 && hosts[0].(*transport.NIC).ActiveSenders() == n {
			allArrived = now
		}
		ok := true
		for _, h := range hosts[1:] {
			if r := allowedRate(h.(*transport.NIC), 0, mtuBits); math.Abs(r-fair) > 0.1*fair {
				ok = false
				break
			}
		}
		switch {
		case ok && converged < 0:
			converged = now
		case !ok:
			converged = -1
		}
	}
	f, err := run(MetaRoCE, s)
	if err != nil {
		return f, err
	}
	f.BaseRTTus = float64(baseRTT) / float64(fabric.Microsecond)
	if converged >= 0 {
		v := float64(converged) / float64(baseRTT)
		f.ConvergenceRTTs = &v
		if allArrived >= 0 {
			a := float64(max(converged-allArrived, 0)) / float64(baseRTT)
			f.ConvergenceAfterAll = &a
		}
	}
	return f, nil
}

func incastPoint(o Options, n int) (*Result, error) {
	on, err := incastMetaRoCE(o, n, true)
	if err != nil {
		return nil, err
	}
	off, err := incastMetaRoCE(o, n, false)
	if err != nil {
		return nil, err
	}
	spec, baseRTT := incastSpec(o, n)
	b, err := run(RoCEv2, spec)
	if err != nil {
		return nil, err
	}
	return &Result{Scenario: "incast", Params: map[string]any{"senders": n, "seed": o.Seed, "base_rtt_us": float64(baseRTT) / float64(fabric.Microsecond)},
		Figures: on, Contrast: &off, Baseline: &b}, nil
}

// allowedRate is the rate (b/s) the congestion state of nic's connection to peer allows: its
// window, the lower of the connection window and the rate cap with their fractional bits, over
// the round trip the rate cap is sized for (1.5 × the connection's base RTT, golden/window),
// and at most the pacer's rate, the last rate hint. +Inf before the first RTT sample.
func allowedRate(nic *transport.NIC, peer int, mtuBits float64) float64 {
	ce := nic.Window().Conn(transport.ConnIndex(nic.Host(), peer))
	if !ce.MinValid || ce.MinRTT == 0 {
		return math.Inf(1)
	}
	rtt := float64(ce.CapRTT())
	w := float64(min(ce.Cwnd, ce.RateCap)) / 256
	r := w * mtuBits / (rtt * 1e-9)
	if ce.RateHint != 0 { // the pacer's rate (golden/transport)
		r = min(r, float64(ce.RateHint)*wire.RateHintUnitMbps*1e6)
	}
	return r
}

func runPlanes(o Options) (*Result, error) {
	hosts := o.hosts(64)
	counts := []int{1, 2, 4, 8}
	if o.Planes > 0 {
		counts = []int{o.Planes}
	}
	flows, err := pattern(o.Pattern, hosts)
	if err != nil {
		return nil, err
	}
	var points []pointFunc
	// The largest plane count first: its runs are the longest, so the workers end together.
	for i := len(counts) - 1; i >= 0; i-- {
		k := counts[i]
		points = append(points, func(seed uint64) (*Result, error) {
			s := o.base(leafSpine(hosts, k, seed), flows, o.duration(200))
			// The offered load grows with the capacity: two messages in flight per flow per plane.
			if o.Outstanding == 0 {
				s.outstanding = 2 * k
			}
			return both("planes", map[string]any{"planes": k, "hosts": hosts, "connections": len(flows), "seed": seed}, s)
		})
	}
	rs, err := o.sweep(points)
	if err != nil {
		return nil, err
	}
	slices.Reverse(rs)
	if len(rs) == 1 {
		return &rs[0], nil
	}
	res := &Result{Scenario: "planes", Params: map[string]any{"hosts": hosts, "connections": len(flows), "planes": counts, "seeds": o.seeds()},
		Points: rs, Figures: rs[len(rs)-1].Figures}
	var xs, ys []float64
	for i, r := range rs {
		xs, ys = append(xs, float64(counts[i])), append(ys, r.Spread["goodput_gbps"].Mean)
	}
	f := fit(xs, ys)
	res.Fit = &f
	return res, nil
}

func fit(xs, ys []float64) LinearFit {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	icpt := (sy - slope*sx) / n
	var ssr, sst float64
	for i := range xs {
		e := ys[i] - (slope*xs[i] + icpt)
		ssr += e * e
		d := ys[i] - sy/n
		sst += d * d
	}
	r2 := 1.0
	if sst > 0 {
		r2 = 1 - ssr/sst
	}
	return LinearFit{Slope: slope, Intercept: icpt, R2: r2}
}

func runFailure(o Options) (*Result, error) {
	hosts := o.hosts(16)
	flows, err := pattern(o.Pattern, hosts)
	if err != nil {
		return nil, err
	}
	if o.Fail == "" {
		o.Fail = "spine"
	}
	planes := 1
	if o.Fail == "plane" {
		planes = 4
	}
	dur := o.duration(4000)
	failAt := dur / 4
	var setup func(n *fabric.Network) error
	switch o.Fail {
	case "spine":
		setup = func(n *fabric.Network) error { return n.FailSwitch("p0.spine1", failAt) }
	case "plane":
		setup = func(n *fabric.Network) error { return n.FailPlane(1, failAt) }
	default:
		return nil, fmt.Errorf("sim: unknown failure %q; failures: spine, plane", o.Fail)
	}
	return o.single(func(seed uint64) (*Result, error) {
		s := o.base(leafSpine(hosts, planes, seed), flows, dur)
		s.outstanding = 1
		s.warmup = 0
		s.binWidth = 25 * fabric.Microsecond
		s.setup = setup
		r, err := both("failure", map[string]any{"hosts": hosts, "fail": o.Fail, "fail_at_us": float64(failAt) / float64(fabric.Microsecond),
			"reroute": "never (black hole until the end)", "seed": seed}, s)
		if err != nil {
			return nil, err
		}
		for _, f := range []*Figures{&r.Figures, r.Baseline} {
			if v, ok := recovery(f.Timeline, failAt); ok {
				f.RecoveryUs = &v
			}
		}
		return r, nil
	})
}

// recovery is how long after the failure the throughput first reaches 90% of its mean over the
// last quarter of the run (the post-failure steady state) and stays there for 4 bins.
func recovery(tl []Sample, failAt fabric.Time) (float64, bool) {
	if len(tl) < 8 {
		return 0, false
	}
	tail := tl[len(tl)*3/4:]
	var mean float64
	for _, s := range tail {
		mean += s.Gbps
	}
	mean /= float64(len(tail))
	fa := float64(failAt) / float64(fabric.Microsecond)
	idx := sort.Search(len(tl), func(i int) bool { return tl[i].TimeUs > fa })
	for i := idx; i+4 <= len(tl); i++ {
		ok := true
		for _, s := range tl[i : i+4] {
			if s.Gbps < 0.9*mean {
				ok = false
				break
			}
		}
		if ok {
			return tl[i].TimeUs - fa, mean > 0
		}
	}
	return 0, false
}
