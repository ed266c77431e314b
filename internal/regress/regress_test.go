package regress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

// fakeSuite is a suite whose jobs are decided by a function: the injected job func of the
// failure tests.
type fakeSuite struct {
	name      string
	scenarios []string
	accepts   func(c config.Config) error
	run       func(j Job) (Outcome, error)
}

func (f *fakeSuite) Name() string        { return f.name }
func (f *fakeSuite) Scenarios() []string { return f.scenarios }
func (f *fakeSuite) Accepts(c config.Config) error {
	if f.accepts == nil {
		return nil
	}
	return f.accepts(c)
}
func (f *fakeSuite) Run(_ context.Context, j Job, _ config.Config) (Outcome, error) {
	return f.run(j)
}

func passAll(j Job) (Outcome, error) { return Outcome{Packets: j.Packets}, nil }

func repoConfigs(t *testing.T) []ConfigFile {
	t.Helper()
	paths, err := DefaultConfigPaths(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.Greater(t, len(paths), 1, "configs/default.yaml and the matrix")
	cfgs, err := LoadConfigs(paths)
	require.NoError(t, err)
	return cfgs
}

func TestEnumerateIsDeterministic(t *testing.T) {
	cfgs := repoConfigs(t)
	a := &fakeSuite{name: "closed-loop", scenarios: []string{"clean", "loss"}, run: passAll}
	b := &fakeSuite{name: "aaa", scenarios: []string{"x"}, run: passAll,
		accepts: func(c config.Config) error {
			if c.DatapathWidth != 64 {
				return fmt.Errorf("64-bit only")
			}
			return nil
		}}
	enumerate := func(order ...Suite) Plan {
		var undo []func()
		for _, s := range order {
			undo = append(undo, Register(s))
		}
		defer func() {
			for _, u := range undo {
				u()
			}
		}()
		all, err := Suites()
		require.NoError(t, err)
		p, err := Enumerate(all, cfgs, nil, Seeds{3, 5}, 100)
		require.NoError(t, err)
		return p
	}
	p1, p2 := enumerate(a, b), enumerate(b, a)
	if d := cmp.Diff(p1, p2); d != "" {
		t.Fatalf("registration order changed the job list:\n%s", d)
	}
	require.Equal(t, p1.Hash(), p2.Hash())

	// Every block suite is there, with every scenario, on every configuration, with 3 seeds;
	// suites in name order, then configurations in file order, scenarios, seeds.
	all, err := Suites()
	require.NoError(t, err)
	require.NotEmpty(t, all)
	want := 0
	for _, s := range all {
		want += len(s.Scenarios()) * len(cfgs) * 3
	}
	want += 2*len(cfgs)*3 + 1*3*countWidth64(cfgs)
	require.Len(t, p1.Jobs, want)
	require.Equal(t, Job{Suite: "aaa", Config: cfgs[0].Path, Scenario: "x", Seed: 3, Packets: 100}, p1.Jobs[0])
	require.Equal(t, uint64(4), p1.Jobs[1].Seed)
	seen := map[string]bool{}
	for i, j := range p1.Jobs {
		require.False(t, seen[j.ID()], "job %d %s twice", i, j.ID())
		seen[j.ID()] = true
		if i > 0 {
			require.LessOrEqual(t, p1.Jobs[i-1].Suite, j.Suite, "suites in name order")
		}
	}
	require.NotEmpty(t, p1.Skipped, "aaa skips the wider configurations")
	require.NotEqual(t, p1.Hash(), enumerate().Hash(), "a different list has a different hash")
}

func countWidth64(cfgs []ConfigFile) int {
	n := 0
	for _, c := range cfgs {
		if c.Config.DatapathWidth == 64 {
			n++
		}
	}
	return n
}

func TestEnumerateSelection(t *testing.T) {
	cfgs := repoConfigs(t)[:1]
	all, err := Suites()
	require.NoError(t, err)
	sel, err := SelectSuites(all, []string{"sack"})
	require.NoError(t, err)
	require.Len(t, sel, 1)
	require.Equal(t, "block/sack", sel[0].Name())
	p, err := Enumerate(sel, cfgs, []string{"reset", "in-order"}, Seeds{1, 1}, 10)
	require.NoError(t, err)
	require.Len(t, p.Jobs, 2)
	require.Equal(t, "in-order", p.Jobs[0].Scenario, "the suite's scenario order, not the flag's")

	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"unknown suite", func() error { _, err := SelectSuites(all, []string{"nope"}); return err }, "--suites nope: no such suite; suites: block/"},
		{"unknown scenario", func() error { _, err := Enumerate(sel, cfgs, []string{"nope"}, Seeds{1, 1}, 10); return err }, "--scenarios nope"},
		{"too many seeds", func() error { _, err := Enumerate(sel, cfgs, nil, Seeds{0, 1<<64 - 1}, 10); return err }, "allowed at most"},
		{"no packets", func() error { _, err := Enumerate(sel, cfgs, nil, Seeds{1, 1}, 0); return err }, "--packets 0: allowed ≥ 1"},
		{"nothing accepted", func() error {
			_, err := Enumerate([]Suite{&fakeSuite{name: "n", scenarios: []string{"x"}, accepts: func(config.Config) error { return errors.New("never") }}}, cfgs, nil, Seeds{1, 1}, 10)
			return err
		}, "no jobs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.ErrorIs(t, err, ErrUsage)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestDuplicateSuiteName(t *testing.T) {
	defer Register(&fakeSuite{name: "block/sack", run: passAll})()
	_, err := Suites()
	require.ErrorContains(t, err, `suite "block/sack" registered twice`)
}

// TestShardsPartition: for every n in 1..8 the n shards together hold every job exactly once.
func TestShardsPartition(t *testing.T) {
	for _, jobs := range []int{0, 1, 7, 8, 9, 100, 741} {
		for n := 1; n <= 8; n++ {
			count := make([]int, jobs)
			for i := 0; i < n; i++ {
				sh, err := ParseShard(fmt.Sprintf("%d/%d", i, n))
				require.NoError(t, err)
				for j := 0; j < jobs; j++ {
					if sh.Has(j) {
						count[j]++
					}
				}
			}
			for j, c := range count {
				require.Equal(t, 1, c, "jobs %d, n %d: job %d in %d shards", jobs, n, j, c)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"3/4", Shard{3, 4}, ""},
		{"4/4", Shard{}, `--shard "4/4": the shard index i = 4, allowed 0..3 for n = 4`},
		{"-1/4", Shard{}, "the shard index i = -1, allowed 0..3"},
		{"0/0", Shard{}, "the shard count n = 0, allowed n ≥ 1"},
		{"1", Shard{}, "want i/n"},
		{"a/b", Shard{}, "want i/n"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseShard(tc.in)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrUsage)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		in   string
		want Seeds
		err  string
	}{
		{"1..4", Seeds{1, 4}, ""},
		{"7", Seeds{7, 7}, ""},
		{"0..0", Seeds{0, 0}, ""},
		{"5..2", Seeds{}, "the range is empty (5 > 2)"},
		{"x..2", Seeds{}, "the first seed"},
		{"1..", Seeds{}, "the last seed"},
		{"-1..2", Seeds{}, "the first seed"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSeeds(tc.in)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrUsage)
				require.ErrorContains(t, err, `--seeds "`+tc.in+`"`)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// fakePlan is a plan over fake suites, with the configurations it needs.
func fakePlan(t *testing.T, run func(Job) (Outcome, error)) ([]Suite, Plan, map[string]config.Config) {
	t.Helper()
	s := &fakeSuite{name: "fake", scenarios: []string{"a", "b"}, run: run}
	cfgs := []ConfigFile{{Path: "x.yaml", Config: config.Default()}}
	p, err := Enumerate([]Suite{s}, cfgs, nil, Seeds{1, 5}, 10)
	require.NoError(t, err)
	return []Suite{s}, p, map[string]config.Config{"x.yaml": config.Default()}
}

func TestRunReportsFailures(t *testing.T) {
	suites, p, cfgs := fakePlan(t, func(j Job) (Outcome, error) {
		switch {
		case j.Scenario == "a" && j.Seed == 2:
			return Outcome{Packets: 4, Mismatches: 1, Failure: "cosim mismatch on rx output 3"}, nil
		case j.Scenario == "b" && j.Seed == 4:
			return Outcome{}, errors.New("model build failed\nlong log")
		case j.Scenario == "b" && j.Seed == 5:
			panic("boom")
		case j.Scenario == "a" && j.Seed == 5:
			return Outcome{Packets: 3}, nil // stopped early without saying why
		}
		return Outcome{Packets: j.Packets}, nil
	})
	rep, err := Run(context.Background(), suites, p, Seeds{1, 5}, RunOptions{Configs: cfgs})
	require.NoError(t, err)
	require.False(t, rep.Pass)
	require.Equal(t, Totals{Jobs: 10, Passed: 6, Failed: 4, Packets: 6*10 + 4 + 3, Mismatches: 1, WallSeconds: rep.Totals.WallSeconds}, rep.Totals)
	errs := map[int]string{}
	for _, r := range rep.Results {
		if !r.Pass {
			errs[r.Index] = r.Error
		}
	}
	want := map[int]string{1: "cosim mismatch on rx output 3", 4: "ran 3 of 10 packets", 8: "model build failed …", 9: "panic: boom"}
	if d := cmp.Diff(want, errs); d != "" {
		t.Fatalf("failures (-want +got):\n%s", d)
	}
	require.ErrorIs(t, rep.Err(), ErrFailed)
	require.ErrorContains(t, rep.Err(), "4 of 10 jobs failed; first: job 1 fake x.yaml a seed=2")
}

func TestRunShardAndMerge(t *testing.T) {
	suites, p, cfgs := fakePlan(t, passAll)
	var reps []*Report
	for i := 0; i < 3; i++ {
		rep, err := Run(context.Background(), suites, p, Seeds{1, 5}, RunOptions{Shard: Shard{i, 3}, Configs: cfgs})
		require.NoError(t, err)
		require.True(t, rep.Pass)
		for _, r := range rep.Results {
			require.Equal(t, i, r.Index%3)
		}
		// Through JSON, as the shards hand them over.
		var b bytes.Buffer
		require.NoError(t, json.NewEncoder(&b).Encode(rep))
		back, err := ReadReport(&b)
		require.NoError(t, err)
		reps = append(reps, back)
	}
	merged, err := Merge(reps)
	require.NoError(t, err)
	require.True(t, merged.Pass)
	require.Len(t, merged.Results, len(p.Jobs))
	for i, r := range merged.Results {
		require.Equal(t, i, r.Index)
		require.Equal(t, p.Jobs[i], r.Job)
	}
	require.Equal(t, []Shard{{0, 3}, {1, 3}, {2, 3}}, merged.Shards)
	require.NoError(t, merged.Err())

	tests := []struct {
		name string
		reps []*Report
		want []string
	}{
		{"missing shard", []*Report{reps[0], reps[2]}, []string{"3 missing jobs: 1, 4, 7"}},
		{"duplicate shard", []*Report{reps[0], reps[1], reps[2], reps[1]}, []string{"3 duplicate jobs: job 1 (fake x.yaml a seed=2 packets=10) 2 times, job 4"}},
		{"another regression", []*Report{reps[0], reps[1], otherList(reps[2])}, []string{"reports of different regressions: report 2", "3 missing jobs: 2, 5, 8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.reps)
			var ce *CoverageError
			require.ErrorAs(t, err, &ce)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			require.False(t, m.Pass)
		})
	}
	_, err = Merge(nil)
	require.ErrorIs(t, err, ErrUsage)
}

func otherList(r *Report) *Report {
	c := *r
	c.JobListHash = "0000"
	return &c
}

func TestReadReportRefuses(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not JSON", "{", "regress: report"},
		{"unknown field", `{"version":1,"nope":2}`, "unknown field"},
		{"other version", `{"version":99}`, "report version 99"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadReport(bytes.NewReader([]byte(tc.in)))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	suites, p, cfgs := fakePlan(t, passAll)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, suites, p, Seeds{1, 5}, RunOptions{Configs: cfgs})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, rep.Results)
	require.False(t, rep.Pass)
}

func TestVCDPath(t *testing.T) {
	j := Job{Suite: "block/sack", Config: "configs/matrix/w64.yaml", Scenario: "in-order", Seed: 3, Packets: 9}
	require.Equal(t, "d/block_sack_configs_matrix_w64.yaml_in-order_seed_3_packets_9.vcd", vcdPath("d", j))
}

func FuzzReadReport(f *testing.F) {
	f.Add([]byte(`{"version":1,"seeds":"1..2","shards":[{"index":0,"count":1}],"jobs_total":1,"results":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ReadReport(bytes.NewReader(b))
		if err == nil {
			_, _ = Merge([]*Report{r}) // must not panic on any decoded report
		}
	})
}
