package sim

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultSeeds is how many seeds each point of an experiment runs over by default.
const DefaultSeeds = 5

// Summary is one figure of one protocol over the seeds of a point: the mean and the 95%
// confidence interval of the mean (Student's t with n-1 degrees of freedom), and the value of
// each seed that has it (a convergence or recovery time only where the run converged or
// recovered, so N can be below the seed count).
type Summary struct {
	N      int       `json:"n"`
	Mean   float64   `json:"mean"`
	Lo     float64   `json:"ci95_lo"`
	Hi     float64   `json:"ci95_hi"`
	Values []float64 `json:"values"`
}

// HalfWidth is the half width of the 95% interval.
func (s Summary) HalfWidth() float64 { return (s.Hi - s.Lo) / 2 }

// summarize is the Summary of xs: with one value the interval is that value, with none the
// zero Summary.
func summarize(xs []float64) Summary {
	s := Summary{N: len(xs), Values: append([]float64(nil), xs...)}
	if len(xs) == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	s.Lo, s.Hi = s.Mean, s.Mean
	if len(xs) < 2 {
		return s
	}
	var ss float64
	for _, x := range xs {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	half := t * sd / math.Sqrt(float64(len(xs)))
	s.Lo, s.Hi = s.Mean-half, s.Mean+half
	return s
}

// keyFigures are the figures summarized over the seeds; the second result is false where a run
// has no value (it did not converge or recover).
var keyFigures = []struct {
	name string
	get  func(f *Figures) (float64, bool)
}{
	{"goodput_fraction", func(f *Figures) (float64, bool) { return f.GoodputFraction, true }},
	{"goodput_gbps", func(f *Figures) (float64, bool) { return f.GoodputGbps, true }},
	{"retransmissions", func(f *Figures) (float64, bool) { return float64(f.Retransmissions), true }},
	{"spurious_retransmissions", func(f *Figures) (float64, bool) { return float64(f.SpuriousRetransmissions), true }},
	{"messages", func(f *Figures) (float64, bool) { return float64(f.Messages), true }},
	{"messages_verified", func(f *Figures) (float64, bool) { return float64(f.MessagesVerified), true }},
	{"verify_failures", func(f *Figures) (float64, bool) { return float64(f.VerifyFailures), true }},
	{"p99_fct_us", func(f *Figures) (float64, bool) { return f.P99FCTus, true }},
	{"peak_queue_bytes", func(f *Figures) (float64, bool) { return float64(f.PeakQueueBytes), true }},
	{"tail_drops", func(f *Figures) (float64, bool) { return float64(f.FabricDrops["tail_drop"]), true }},
	{"jain_fairness", func(f *Figures) (float64, bool) { return deref(f.JainFairness) }},
	{"convergence_rtts", func(f *Figures) (float64, bool) { return deref(f.ConvergenceRTTs) }},
	{"convergence_rtts_after_all_arrived", func(f *Figures) (float64, bool) { return deref(f.ConvergenceAfterAll) }},
	{"recovery_us", func(f *Figures) (float64, bool) { return deref(f.RecoveryUs) }},
}

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

// spread summarizes the key figures of one protocol's runs, one per seed.
func spread(runs []*Figures) map[string]Summary {
	out := map[string]Summary{}
	for _, k := range keyFigures {
		var xs []float64
		for _, f := range runs {
			if v, ok := k.get(f); ok {
				xs = append(xs, v)
			}
		}
		out[k.name] = summarize(xs)
	}
	return out
}

// timelineMean is the mean throughput per bin over the seeds' timelines with its 95% interval
// (the timelines are cut to the shortest).
func timelineMean(runs []*Figures) []SampleSpread {
	n := -1
	for _, f := range runs {
		if n < 0 || len(f.Timeline) < n {
			n = len(f.Timeline)
		}
	}
	out := make([]SampleSpread, 0, max(n, 0))
	for i := 0; i < n; i++ {
		xs := make([]float64, len(runs))
		for j, f := range runs {
			xs[j] = f.Timeline[i].Gbps
		}
		s := summarize(xs)
		out = append(out, SampleSpread{TimeUs: runs[0].Timeline[i].TimeUs, Mean: s.Mean, Lo: s.Lo, Hi: s.Hi})
	}
	return out
}

// SampleSpread is one bin of the seeds' mean throughput time series.
type SampleSpread struct {
	TimeUs float64 `json:"t_us"`
	Mean   float64 `json:"gbps_mean"`
	Lo     float64 `json:"ci95_lo"`
	Hi     float64 `json:"ci95_hi"`
}

// pointFunc runs one point of a scenario at one seed.
type pointFunc func(seed uint64) (*Result, error)

// seeds lists the seeds of a run: o.Seed and the o.Seeds-1 that follow it.
func (o Options) seeds() []uint64 {
	out := make([]uint64, o.Seeds)
	for i := range out {
		out[i] = o.Seed + uint64(i)
	}
	return out
}

// sweep runs every point at every seed on o.Jobs workers and returns, per point, the first
// seed's result with the spread of its key figures over all the seeds (Figures.Spread, and
// for a timeline Figures.TimelineMean). o.Progress hears of each run as it ends.
func (o Options) sweep(points []pointFunc) ([]Result, error) {
	seeds := o.seeds()
	type job struct{ point, seed int }
	jobs := make(chan job)
	runs := make([][]*Result, len(points))
	for i := range runs {
		runs[i] = make([]*Result, len(seeds))
	}
	var mu sync.Mutex
	var firstErr error
	done, total := 0, len(points)*len(seeds)
	workers := o.Jobs
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if o.Progress != nil {
		o.Progress(0, total)
	}
	var wg sync.WaitGroup
	for w := 0; w < min(workers, total); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := points[j.point](seeds[j.seed])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("seed %d: %w", seeds[j.seed], err)
				}
				runs[j.point][j.seed] = r
				done++
				if o.Progress != nil {
					o.Progress(done, total)
				}
				mu.Unlock()
			}
		}()
	}
	for p := range points {
		for s := range seeds {
			mu.Lock()
			failed := firstErr != nil
			mu.Unlock()
			if failed {
				break
			}
			jobs <- job{p, s}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	out := make([]Result, len(points))
	for p, rs := range runs {
		out[p] = aggregate(rs, seeds)
	}
	return out, nil
}

// aggregate is the first seed's result with the spread over every seed's.
func aggregate(rs []*Result, seeds []uint64) Result {
	r := *rs[0]
	params := make(map[string]any, len(r.Params)+1)
	for k, v := range r.Params {
		params[k] = v
	}
	delete(params, "seed")
	params["seeds"] = seeds
	r.Params = params
	figs := func(get func(*Result) *Figures) []*Figures {
		var fs []*Figures
		for _, x := range rs {
			if f := get(x); f != nil {
				fs = append(fs, f)
			}
		}
		return fs
	}
	apply := func(dst *Figures, fs []*Figures) {
		dst.Spread = spread(fs)
		if len(fs) > 0 && len(fs[0].Timeline) > 0 {
			dst.TimelineMean = timelineMean(fs)
		}
	}
	apply(&r.Figures, figs(func(x *Result) *Figures { return &x.Figures }))
	if r.Baseline != nil {
		b := *r.Baseline
		apply(&b, figs(func(x *Result) *Figures { return x.Baseline }))
		r.Baseline = &b
	}
	if r.Contrast != nil {
		c := *r.Contrast
		apply(&c, figs(func(x *Result) *Figures { return x.Contrast }))
		r.Contrast = &c
	}
	return r
}
