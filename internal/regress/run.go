package regress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mrgen/mrgen/config"
)

// ReportVersion is the version of the report format; merge refuses other versions.
const ReportVersion = 1

// Result is one job's line in a report.
type Result struct {
	Index int `json:"index"` // the job's number in the full job list
	Job
	Pass        bool    `json:"pass"`
	Packets     int     `json:"packets_run"`
	Mismatches  int     `json:"mismatches"`
	WallSeconds float64 `json:"wall_seconds"`
	Error       string  `json:"error,omitempty"`
}

// Totals sum a report's results.
type Totals struct {
	Jobs        int     `json:"jobs"`
	Passed      int     `json:"passed"`
	Failed      int     `json:"failed"`
	Packets     int     `json:"packets"`
	Mismatches  int     `json:"mismatches"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Report is the JSON contract of `mrgen regress` and `mrgen regress merge`.
type Report struct {
	Version int    `json:"version"`
	Seeds   string `json:"seeds"`
	// Shards are the shards the report covers: one for a shard's run, all of them after a merge.
	Shards []Shard `json:"shards"`
	// JobsTotal is the length of the full job list, JobListHash its Plan.Hash: the shards of
	// one regression agree on both.
	JobsTotal   int      `json:"jobs_total"`
	JobListHash string   `json:"job_list_hash"`
	Results     []Result `json:"results"`
	Totals      Totals   `json:"totals"`
	Pass        bool     `json:"pass"`
}

// RunOptions configure a regression run.
type RunOptions struct {
	Shard Shard
	// Configs resolves a job's configuration file.
	Configs map[string]config.Config
	// VCDDir, when set, receives a VCD window of each mismatching block job.
	VCDDir string
	// Log, when set, gets one line as each job ends.
	Log io.Writer
	// Progress, when set, is called as each job ends with the shard's jobs done and in all.
	Progress func(done, total int)
}

// Run runs the plan's jobs of the shard, one after the other, and reports them. A job that
// fails (mismatch or error) does not stop the others; cancellation of ctx does, and the
// jobs not run are left out (merge then reports them missing).
func Run(ctx context.Context, suites []Suite, p Plan, seeds Seeds, opt RunOptions) (*Report, error) {
	if opt.Shard.Count == 0 {
		opt.Shard = Shard{Index: 0, Count: 1}
	}
	byName := map[string]Suite{}
	for _, s := range suites {
		byName[s.Name()] = s
	}
	if opt.VCDDir != "" {
		if err := os.MkdirAll(opt.VCDDir, 0o755); err != nil {
			return nil, fmt.Errorf("regress: VCD directory: %w", err)
		}
		ctx = context.WithValue(ctx, vcdDirKey{}, opt.VCDDir)
	}
	rep := &Report{Version: ReportVersion, Seeds: seeds.String(), Shards: []Shard{opt.Shard},
		JobsTotal: len(p.Jobs), JobListHash: p.Hash(), Results: []Result{}}
	mine := p.ShardJobs(opt.Shard)
	if opt.Progress != nil {
		opt.Progress(0, mine)
	}
	for idx, j := range p.Jobs {
		if !opt.Shard.Has(idx) {
			continue
		}
		if err := ctx.Err(); err != nil {
			rep.finish()
			return rep, fmt.Errorf("regress: stopped before job %d: %w", idx, err)
		}
		r := runOne(ctx, byName[j.Suite], j, opt.Configs)
		r.Index = idx
		rep.Results = append(rep.Results, r)
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "regress: job %d/%d %s: %s (%.1f s)\n", idx, len(p.Jobs), j.ID(), passFail(r.Pass), r.WallSeconds)
		}
		if opt.Progress != nil {
			opt.Progress(len(rep.Results), mine)
		}
	}
	rep.finish()
	return rep, nil
}

func runOne(ctx context.Context, s Suite, j Job, cfgs map[string]config.Config) (r Result) {
	r.Job = j
	start := time.Now()
	defer func() {
		r.WallSeconds = time.Since(start).Seconds()
		// A suite that panics fails its job, not the regression.
		if p := recover(); p != nil {
			r.Pass, r.Error = false, fmt.Sprintf("panic: %v", p)
		}
	}()
	c, ok := cfgs[j.Config]
	if s == nil || !ok {
		r.Error = fmt.Sprintf("regress: job %s: suite or configuration not loaded", j.ID())
		return r
	}
	o, err := s.Run(ctx, j, c)
	r.Packets, r.Mismatches = o.Packets, o.Mismatches
	switch {
	case err != nil:
		r.Error = firstLine(err.Error())
	case o.Failure != "":
		r.Error = o.Failure
	case o.Mismatches > 0:
		r.Error = fmt.Sprintf("%d mismatches", o.Mismatches)
	case o.Packets < j.Packets:
		r.Error = fmt.Sprintf("ran %d of %d packets", o.Packets, j.Packets)
	default:
		r.Pass = true
	}
	return r
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// finish computes the totals and the verdict.
func (r *Report) finish() {
	r.Totals = Totals{}
	for _, x := range r.Results {
		r.Totals.Jobs++
		if x.Pass {
			r.Totals.Passed++
		} else {
			r.Totals.Failed++
		}
		r.Totals.Packets += x.Packets
		r.Totals.Mismatches += x.Mismatches
		r.Totals.WallSeconds += x.WallSeconds
	}
	r.Pass = r.Totals.Failed == 0 && r.Totals.Jobs > 0
}

// ErrFailed marks a regression with a failing job (the CLI exits 1).
var ErrFailed = errors.New("regress: failed")

// Err is nil when every job passed, else an ErrFailed naming the first failure.
func (r *Report) Err() error {
	if r.Pass {
		return nil
	}
	for _, x := range r.Results {
		if !x.Pass {
			return fmt.Errorf("%w: %d of %d jobs failed; first: job %d %s: %s", ErrFailed, r.Totals.Failed, r.Totals.Jobs, x.Index, x.ID(), x.Error)
		}
	}
	return fmt.Errorf("%w: no job ran", ErrFailed)
}
