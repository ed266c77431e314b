// Package regress runs many co-simulation jobs (suite × configuration × scenario × seed) and
// reports them, sharded so that an external engine (a CI matrix, a Kubernetes Indexed Job)
// can fan the list out and `mrgen regress merge` can put the shard reports back together.
//
// The job list is a pure function of the registered suites, the configuration files, the seeds
// and the packet count: every shard enumerates the same list and runs the jobs j with
// j mod n = i. Suites come from the block registry (internal/blocks: every block's cosim and
// its scenarios) and from Register, the hook through which other packages (the closed-loop
// co-simulation) add theirs without changing this one.
package regress

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mrgen/mrgen/config"
)

// Suite is one family of jobs: a block's co-simulation, or a closed-loop scenario set.
type Suite interface {
	// Name is unique among suites, e.g. "block/sack" or "closed-loop".
	Name() string
	// Scenarios lists the scenarios the suite runs, in a fixed order.
	Scenarios() []string
	// Accepts reports, with the reason, whether the suite can run on a configuration; the
	// default configuration set keeps only the files a suite accepts.
	Accepts(c config.Config) error
	// Run runs one job. A mismatch is an Outcome with Mismatches > 0 and Failure set, not an
	// error; an error means the job could not run (the tool failed, the model did not build).
	Run(ctx context.Context, j Job, c config.Config) (Outcome, error)
}

// Outcome is what a suite reports for one job.
type Outcome struct {
	Packets    int    // packets (or frames) the job ran
	Mismatches int    // divergences between RTL and golden model
	Failure    string // why the job failed, "" when it passed
}

var (
	regMu      sync.Mutex
	registered []Suite
)

// Register adds a suite to every later enumeration (call it from an init function). It returns
// a function that removes it again (for tests). A second suite of the same name makes
// Suites fail.
func Register(s Suite) (unregister func()) {
	regMu.Lock()
	defer regMu.Unlock()
	registered = append(registered, s)
	return func() {
		regMu.Lock()
		defer regMu.Unlock()
		for i, r := range registered {
			if r == s {
				registered = append(registered[:i], registered[i+1:]...)
				return
			}
		}
	}
}

// Suites lists the block suites and the registered ones, sorted by name.
func Suites() ([]Suite, error) {
	out := blockSuites()
	regMu.Lock()
	out = append(out, registered...)
	regMu.Unlock()
	sort.SliceStable(out, func(a, b int) bool { return out[a].Name() < out[b].Name() })
	for i := 1; i < len(out); i++ {
		if out[i].Name() == out[i-1].Name() {
			return nil, fmt.Errorf("regress: suite %q registered twice", out[i].Name())
		}
	}
	return out, nil
}

// Job is one run: a suite's scenario on a configuration file with one seed.
type Job struct {
	Suite    string `json:"suite"`
	Config   string `json:"config"` // the configuration file as given (slash-separated)
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Packets  int    `json:"packets"`
}

// ShardJobs is how many of the plan's jobs the shard runs.
func (p Plan) ShardJobs(s Shard) int {
	n := 0
	for idx := range p.Jobs {
		if s.Has(idx) {
			n++
		}
	}
	return n
}

// ID names the job uniquely within a job list.
func (j Job) ID() string {
	return fmt.Sprintf("%s %s %s seed=%d packets=%d", j.Suite, j.Config, j.Scenario, j.Seed, j.Packets)
}

// Seeds is an inclusive seed range A..B.
type Seeds struct{ First, Last uint64 }

func (s Seeds) String() string { return fmt.Sprintf("%d..%d", s.First, s.Last) }

// ErrUsage marks errors in the user's arguments (the CLI exits 2 on them).
var ErrUsage = errors.New("usage")

// ParseSeeds reads "A..B" (inclusive, A ≤ B) or a single seed "A".
func ParseSeeds(v string) (Seeds, error) {
	bad := func(why string) (Seeds, error) {
		return Seeds{}, fmt.Errorf("%w: --seeds %q: %s; want A..B with 0 ≤ A ≤ B < 2^64 (or one seed A)", ErrUsage, v, why)
	}
	a, b, ranged := strings.Cut(v, "..")
	if !ranged {
		b = a
	}
	first, err := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
	if err != nil {
		return bad("the first seed is not a non-negative integer")
	}
	last, err := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
	if err != nil {
		return bad("the last seed is not a non-negative integer")
	}
	if last < first {
		return bad(fmt.Sprintf("the range is empty (%d > %d)", first, last))
	}
	return Seeds{first, last}, nil
}

// Shard selects the jobs j with j mod Count = Index.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Has reports whether job number j belongs to the shard.
func (s Shard) Has(j int) bool { return j%s.Count == s.Index }

// ParseShard reads "i/n" with n ≥ 1 and 0 ≤ i < n.
func ParseShard(v string) (Shard, error) {
	is, ns, ok := strings.Cut(v, "/")
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	i, ierr := strconv.Atoi(strings.TrimSpace(is))
	switch {
	case !ok || nerr != nil || ierr != nil:
		return Shard{}, fmt.Errorf("%w: --shard %q: want i/n, two integers, with n ≥ 1 and 0 ≤ i < n (e.g. 0/4)", ErrUsage, v)
	case n < 1:
		return Shard{}, fmt.Errorf("%w: --shard %q: the shard count n = %d, allowed n ≥ 1", ErrUsage, v, n)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("%w: --shard %q: the shard index i = %d, allowed 0..%d for n = %d", ErrUsage, v, i, n-1, n)
	}
	return Shard{Index: i, Count: n}, nil
}

// ConfigFile is a configuration and the file it came from.
type ConfigFile struct {
	Path   string
	Config config.Config
}

// LoadConfigs loads configuration files, in the given order.
func LoadConfigs(paths []string) ([]ConfigFile, error) {
	out := make([]ConfigFile, 0, len(paths))
	for _, p := range paths {
		c, err := config.Load(p)
		if err != nil {
			return nil, fmt.Errorf("regress: config %s: %w", p, err)
		}
		out = append(out, ConfigFile{Path: filepath.ToSlash(p), Config: c})
	}
	return out, nil
}

// DefaultConfigPaths is the default configuration set under a repository root: configs/
// default.yaml, then configs/matrix/*.yaml in name order.
func DefaultConfigPaths(root string) ([]string, error) {
	matrix, err := filepath.Glob(filepath.Join(root, "configs", "matrix", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("regress: %w", err)
	}
	sort.Strings(matrix)
	return append([]string{filepath.Join(root, "configs", "default.yaml")}, matrix...), nil
}

// Plan is the full, ordered job list of a regression.
type Plan struct {
	Jobs []Job
	// Skipped lists, per suite, the configuration files it does not accept and why.
	Skipped []string
}

// Hash identifies the job list: shards of one regression carry the same hash.
func (p Plan) Hash() string {
	h := sha256.New()
	for _, j := range p.Jobs {
		h.Write([]byte(j.ID()))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Enumerate builds the job list: suites in name order, then configurations in the given
// order (those the suite accepts), then the suite's scenarios in its order (only those named
// in scenarios when it is not empty), then seeds ascending. The result depends on nothing
// else.
func Enumerate(suites []Suite, cfgs []ConfigFile, scenarios []string, seeds Seeds, packets int) (Plan, error) {
	if packets <= 0 {
		return Plan{}, fmt.Errorf("%w: --packets %d: allowed ≥ 1", ErrUsage, packets)
	}
	if seeds.Last < seeds.First {
		return Plan{}, fmt.Errorf("%w: seeds %s: empty range", ErrUsage, seeds)
	}
	if seeds.Last-seeds.First >= MaxJobs {
		return Plan{}, fmt.Errorf("%w: --seeds %s: %d seeds, allowed at most %d jobs in all", ErrUsage, seeds, seeds.Last-seeds.First+1, MaxJobs)
	}
	want := map[string]bool{}
	for _, s := range scenarios {
		want[s] = true
	}
	used := map[string]bool{}
	var p Plan
	for _, s := range suites {
		for _, cf := range cfgs {
			if err := s.Accepts(cf.Config); err != nil {
				p.Skipped = append(p.Skipped, fmt.Sprintf("%s does not accept %s: %v", s.Name(), cf.Path, err))
				continue
			}
			for _, sc := range s.Scenarios() {
				if len(want) > 0 && !want[sc] {
					continue
				}
				used[sc] = true
				if uint64(len(p.Jobs))+seeds.Last-seeds.First >= MaxJobs {
					return Plan{}, fmt.Errorf("%w: the selection has more than %d jobs", ErrUsage, MaxJobs)
				}
				for seed := seeds.First; ; seed++ {
					p.Jobs = append(p.Jobs, Job{Suite: s.Name(), Config: cf.Path, Scenario: sc, Seed: seed, Packets: packets})
					if seed == seeds.Last {
						break
					}
				}
			}
		}
	}
	var unknown []string
	for _, s := range scenarios {
		if !used[s] {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) > 0 {
		return Plan{}, fmt.Errorf("%w: --scenarios %s: no selected suite has such a scenario", ErrUsage, strings.Join(unknown, ","))
	}
	if len(p.Jobs) == 0 {
		return Plan{}, fmt.Errorf("%w: the selection has no jobs (%s)", ErrUsage, strings.Join(p.Skipped, "; "))
	}
	return p, nil
}

// SelectSuites keeps the suites whose name is in names, or that end in "/"+name (so "sack"
// selects "block/sack"); all of them when names is empty.
func SelectSuites(all []Suite, names []string) ([]Suite, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Suite
	for _, n := range names {
		found := false
		for _, s := range all {
			if s.Name() == n || strings.HasSuffix(s.Name(), "/"+n) {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			var have []string
			for _, s := range all {
				have = append(have, s.Name())
			}
			return nil, fmt.Errorf("%w: --suites %s: no such suite; suites: %s", ErrUsage, n, strings.Join(have, ", "))
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Name() < out[b].Name() })
	for i := 1; i < len(out); i++ {
		if out[i].Name() == out[i-1].Name() {
			return nil, fmt.Errorf("%w: --suites names %s twice", ErrUsage, out[i].Name())
		}
	}
	return out, nil
}
