package sim

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

// Small versions of every scenario (make test); the full ones are `mrgen sim` runs recorded in
// docs/results.md.

func small(scenario string) Options {
	return Options{Scenario: scenario, NIC: config.Default(), Seed: 1, Seeds: 1, Hosts: 8, DurationUs: 200}
}

// requireVerified checks that every posted message was delivered and verified byte for byte.
func requireVerified(t *testing.T, f *Figures) {
	t.Helper()
	require.Zero(t, f.VerifyFailures, "%s: %s", f.Protocol, f.FirstVerifyFailure)
	require.Equal(t, f.Messages, f.MessagesVerified, "%s: every message delivered and verified", f.Protocol)
	require.Greater(t, f.Messages, uint64(0))
}

func TestLossScenario(t *testing.T) {
	o := small("loss")
	o.Pattern = "ring"
	var clean, one, ten *Result
	for _, p := range []struct {
		loss float64
		res  **Result
	}{{0, &clean}, {0.01, &one}, {0.1, &ten}} {
		o.Loss = p.loss
		r, err := Run(o)
		require.NoError(t, err)
		requireVerified(t, &r.Figures)
		requireVerified(t, r.Baseline)
		*p.res = r
	}
	require.Greater(t, clean.GoodputFraction, 0.7, "clean ring goodput")
	require.Zero(t, clean.Retransmissions)
	// The published figure: at 1% loss at least 86% of the loss-free goodput.
	require.GreaterOrEqual(t, one.GoodputFraction/clean.GoodputFraction, 0.86)
	// 10%: clearly above zero and above the baseline.
	require.Greater(t, ten.GoodputFraction/clean.GoodputFraction, 0.3)
	require.Greater(t, one.GoodputFraction, one.Baseline.GoodputFraction)
	require.Greater(t, ten.GoodputFraction, ten.Baseline.GoodputFraction)
}

func TestReorderScenario(t *testing.T) {
	r, err := Run(small("reorder"))
	require.NoError(t, err)
	requireVerified(t, &r.Figures)
	requireVerified(t, r.Baseline)
	require.Zero(t, r.SpuriousRetransmissions, "MetaRoCE takes no reordering for loss")
	require.Zero(t, r.Retransmissions)
	require.Greater(t, r.Baseline.SpuriousRetransmissions, uint64(10), "go-back-N over sprayed paths resends what arrived")
}

func TestIncastScenario(t *testing.T) {
	o := small("incast")
	o.Incast = 8
	r, err := Run(o)
	require.NoError(t, err)
	requireVerified(t, &r.Figures)
	requireVerified(t, r.Contrast)
	requireVerified(t, r.Baseline)
	// Hints on: every sender within 10% of its share within 2 base RTTs of the start (the
	// convergence clock samples every 1/8 RTT), no loss, fair.
	require.NotNil(t, r.ConvergenceRTTs, "hints on: the senders converge within the run")
	require.LessOrEqual(t, *r.ConvergenceRTTs, 2.0)
	if r.Contrast.ConvergenceRTTs != nil {
		require.Greater(t, *r.Contrast.ConvergenceRTTs, *r.ConvergenceRTTs, "hints off converges later")
	}
	require.Zero(t, r.FabricDrops["tail_drop"], "the first-RTT gate and the hints keep the buffer from overflowing")
	require.Greater(t, r.Contrast.PeakQueueBytes, 2*r.PeakQueueBytes, "without hints the queue grows far higher")
	require.Greater(t, *r.JainFairness, 0.95)
	require.Equal(t, uint64(8), r.Counters["announces_answered"]-r.Counters["announces_refreshed"], "every sender announced and answered")
}

// TestIncast64Converges: the full 64:1 point (a second of wall time): every sender within 10%
// of its share within 2 base RTTs of the start with hints on, not within the run without them,
// with no tail drop and a queue far below the hints-off run's.
func TestIncast64Converges(t *testing.T) {
	o := small("incast")
	o.Incast, o.Hosts, o.DurationUs = 64, 0, 0
	r, err := Run(o)
	require.NoError(t, err)
	requireVerified(t, &r.Figures)
	requireVerified(t, r.Contrast)
	require.NotNil(t, r.ConvergenceRTTs)
	require.LessOrEqual(t, *r.ConvergenceRTTs, 2.0)
	require.Nil(t, r.Contrast.ConvergenceRTTs, "hints off: the AIMD windows never settle within 10%")
	require.Zero(t, r.FabricDrops["tail_drop"])
	require.Greater(t, r.Contrast.FabricDrops["tail_drop"], uint64(0))
	require.Greater(t, r.Contrast.PeakQueueBytes, 2*r.PeakQueueBytes)
	require.Greater(t, *r.JainFairness, 0.99)
	require.Equal(t, uint64(64), r.Counters["announces_received"])
}

// TestIncastWithoutAnnounce: rate_hint.announce off in the NIC configuration reaches the
// transport: no sender announces, the receiver counts each at its first data packet, and the
// incast still converges, no sooner than with ANNOUNCE, with every message verified.
func TestIncastWithoutAnnounce(t *testing.T) {
	o := small("incast")
	o.Incast = 8
	o.NIC.RateHint.Announce = false
	r, err := Run(o)
	require.NoError(t, err)
	requireVerified(t, &r.Figures)
	require.Zero(t, r.Counters["announces_sent"])
	require.Zero(t, r.Counters["announces_received"])
	require.NotNil(t, r.ConvergenceRTTs)
	oOn := small("incast")
	oOn.Incast = 8
	on, err := Run(oOn)
	require.NoError(t, err)
	require.NotNil(t, on.ConvergenceRTTs)
	require.GreaterOrEqual(t, *r.ConvergenceRTTs, *on.ConvergenceRTTs, "ANNOUNCE never slows convergence")
}

func TestPlanesScenario(t *testing.T) {
	o := small("planes")
	o.Hosts, o.DurationUs = 8, 100
	var xs []int
	for _, k := range []int{1, 2, 4} {
		o.Planes = k
		r, err := Run(o)
		require.NoError(t, err)
		requireVerified(t, &r.Figures)
		requireVerified(t, r.Baseline)
		xs = append(xs, int(r.GoodputGbps))
	}
	// Linear: each doubling of planes at least 1.8x the throughput.
	require.Greater(t, float64(xs[1]), 1.8*float64(xs[0]), "%v", xs)
	require.Greater(t, float64(xs[2]), 1.8*float64(xs[1]), "%v", xs)
}

func TestFailureScenario(t *testing.T) {
	o := small("failure")
	o.DurationUs = 600
	r, err := Run(o)
	require.NoError(t, err)
	requireVerified(t, &r.Figures)
	require.NotNil(t, r.RecoveryUs, "MetaRoCE recovers without intervention")
	require.Greater(t, r.Counters["paths_failed"], uint64(0))
}

func TestUnknownScenarioAndPattern(t *testing.T) {
	_, err := Run(Options{Scenario: "nope"})
	require.ErrorContains(t, err, "unknown scenario")
	_, err = Run(Options{Scenario: "loss", Pattern: "star", Hosts: 4, Loss: 0})
	require.ErrorContains(t, err, "unknown pattern")
}

func TestFit(t *testing.T) {
	f := fit([]float64{1, 2, 4, 8}, []float64{100, 200, 400, 800})
	require.InDelta(t, 100, f.Slope, 1e-9)
	require.InDelta(t, 0, f.Intercept, 1e-9)
	require.InDelta(t, 1, f.R2, 1e-12)
	require.InDelta(t, 1.0, jain([]float64{3, 3, 3}), 1e-12)
	require.InDelta(t, 1.0/3, jain([]float64{9, 0, 0}), 1e-12)
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name         string
		xs           []float64
		mean, lo, hi float64
	}{
		{"none", nil, 0, 0, 0},
		{"one seed: no interval", []float64{0.9}, 0.9, 0.9, 0.9},
		{"equal values", []float64{2, 2, 2}, 2, 2, 2},
		// mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445: half width 1.963243.
		{"1..5", []float64{1, 2, 3, 4, 5}, 3, 3 - 1.963243, 3 + 1.963243},
		// t(0.975, 1) = 12.706205, s = sqrt(2)/... : mean 1, s = 1.414214, half = 12.706205.
		{"two seeds", []float64{0, 2}, 1, 1 - 12.706205, 1 + 12.706205},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := summarize(tc.xs)
			require.Equal(t, len(tc.xs), s.N)
			require.InDelta(t, tc.mean, s.Mean, 1e-6)
			require.InDelta(t, tc.lo, s.Lo, 1e-5)
			require.InDelta(t, tc.hi, s.Hi, 1e-5)
			require.Equal(t, len(tc.xs), len(s.Values))
		})
	}
}

// A point over 5 seeds, two at a time: every seed's run is verified, the spread holds each
// seed's figure, the seeds differ, and the first seed's run is the one the figures show; the
// same point at seed 1 alone gives the same first run (the parallel runs share nothing).
func TestSpreadOverSeeds(t *testing.T) {
	o := small("loss")
	o.Pattern, o.Loss, o.Hosts, o.DurationUs = "ring", 0.02, 4, 100
	o.Seeds, o.Jobs = 5, 2
	var calls []int
	o.Progress = func(done, total int) {
		require.Equal(t, 5, total)
		calls = append(calls, done)
	}
	r, err := Run(o)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, calls, "the total first, then each run")
	require.Equal(t, []uint64{1, 2, 3, 4, 5}, r.Params["seeds"])
	for _, f := range []*Figures{&r.Figures, r.Baseline} {
		g := f.Spread["goodput_fraction"]
		require.Equal(t, 5, g.N, f.Protocol)
		require.LessOrEqual(t, g.Lo, g.Mean)
		require.GreaterOrEqual(t, g.Hi, g.Mean)
		require.Equal(t, f.GoodputFraction, g.Values[0], "the figures are the first seed's")
		require.Greater(t, g.Hi-g.Lo, 0.0, "%s: the seeds' loss draws differ: %v", f.Protocol, g.Values)
		require.Equal(t, f.Spread["messages"].Values, f.Spread["messages_verified"].Values, "every seed's messages verified")
		require.Equal(t, 0.0, f.Spread["verify_failures"].Hi)
	}
	o.Seeds, o.Progress = 1, nil
	one, err := Run(o)
	require.NoError(t, err)
	require.Equal(t, one.GoodputFraction, r.GoodputFraction)
	require.Equal(t, one.Retransmissions, r.Retransmissions)

	b, err := json.Marshal(r)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	sp := v["spread"].(map[string]any)["p99_fct_us"].(map[string]any)
	for _, k := range []string{"n", "mean", "ci95_lo", "ci95_hi", "values"} {
		require.Contains(t, sp, k)
	}
	require.False(t, math.IsNaN(sp["mean"].(float64)))
}

// Every scenario's figure draws from a small run over two seeds: the means with their
// intervals (error bars, or a band for a time series), titled with the seed count.
func TestPlotEveryScenario(t *testing.T) {
	for _, sc := range Scenarios() {
		t.Run(sc, func(t *testing.T) {
			o := Options{Scenario: sc, NIC: config.Default(), Seed: 1, Seeds: 2, Jobs: 2, Hosts: 4, DurationUs: 80, Loss: -1}
			switch sc {
			case "incast":
				o.Hosts, o.Incast = 0, 4
			case "loss":
				o.Loss = 0.02
			case "failure":
				o.Hosts, o.DurationUs = 8, 400
			}
			r, err := Run(o)
			require.NoError(t, err)
			out := filepath.Join(t.TempDir(), sc+".svg")
			require.NoError(t, Plot(r, out))
			svg, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Contains(t, string(svg), "<svg")
			require.Contains(t, string(svg), "95% CI of 2 seeds")
		})
	}
	require.Error(t, Plot(&Result{Scenario: "loss"}, filepath.Join(t.TempDir(), "x.pdf")))
}
