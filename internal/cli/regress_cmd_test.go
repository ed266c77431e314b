package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/internal/regress"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// TestRegressEndToEnd runs a tiny real regression (one block, one scenario, two seeds) as two
// shards and merges their reports.
func TestRegressEndToEnd(t *testing.T) {
	tooltest.Require(t, "verilator", "g++", "make")
	dir := t.TempDir()
	common := []string{"regress", "--seeds", "1..2", "--suites", "parser", "--scenarios", "valid,line-rate",
		"--configs", defaultConfigPath(), "--packets", "40"}
	code, stdout, errOut := run(t, append([]string{"--json"}, common...)...)
	require.Equal(t, ExitOK, code, errOut)
	var whole regress.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &whole))
	require.True(t, whole.Pass)
	require.Equal(t, 4, whole.JobsTotal)
	require.Equal(t, regress.Totals{Jobs: 4, Passed: 4, Packets: 160, WallSeconds: whole.Totals.WallSeconds}, whole.Totals)
	requireProgressDone(t, errOut, "regress shard 0/1", "jobs")

	var files []string
	for _, sh := range []string{"0/2", "1/2"} {
		f := filepath.Join(dir, "shard"+sh[:1]+".json")
		code, stdout, errOut := run(t, append(common, "--shard", sh, "--out", f)...)
		require.Equal(t, ExitOK, code, errOut)
		require.Contains(t, stdout, "totals: 2 jobs, 2 passed, 0 failed, 80 packets, 0 mismatches")
		files = append(files, f)
	}
	code, stdout, errOut = run(t, append([]string{"--json", "regress", "merge"}, files...)...)
	require.Equal(t, ExitOK, code, errOut)
	var merged regress.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &merged))
	require.True(t, merged.Pass)
	require.Equal(t, whole.JobListHash, merged.JobListHash)
	require.Len(t, merged.Results, 4)
	for i, r := range merged.Results {
		require.Equal(t, whole.Results[i].Job, r.Job)
	}

	code, _, errOut = run(t, "regress", "merge", files[0])
	require.Equal(t, ExitFailure, code)
	require.Contains(t, errOut, "2 missing jobs: 1, 3")
	code, _, errOut = run(t, "regress", "merge", files[0], files[1], files[1])
	require.Equal(t, ExitFailure, code)
	require.Contains(t, errOut, "2 duplicate jobs")
}

// failingSuite fails the job of seed 2: the injected job func of the failure test.
type failingSuite struct{}

func (failingSuite) Name() string                { return "test/failing" }
func (failingSuite) Scenarios() []string         { return []string{"only"} }
func (failingSuite) Accepts(config.Config) error { return nil }
func (failingSuite) Run(_ context.Context, j regress.Job, _ config.Config) (regress.Outcome, error) {
	if j.Seed == 2 {
		return regress.Outcome{Packets: 7, Mismatches: 1, Failure: "injected mismatch at packet 7"}, nil
	}
	return regress.Outcome{Packets: j.Packets}, nil
}

func TestRegressFailingJobExits1(t *testing.T) {
	defer regress.Register(failingSuite{})()
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, errOut := run(t, "regress", "--seeds", "1..3", "--suites", "test/failing", "--configs", defaultConfigPath(),
		"--packets", "10", "--out", out)
	require.Equal(t, ExitFailure, code)
	require.Contains(t, stdout, "FAIL: injected mismatch at packet 7")
	require.Contains(t, stdout, "totals: 3 jobs, 2 passed, 1 failed, 27 packets, 1 mismatches")
	require.Contains(t, errOut, "1 of 3 jobs failed; first: job 1 test/failing")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	rep, err := regress.ReadReport(strings.NewReader(string(b)))
	require.NoError(t, err)
	require.False(t, rep.Pass)
	// A merge of a failing report fails too.
	code, _, _ = run(t, "regress", "merge", out)
	require.Equal(t, ExitFailure, code)
}

func TestRegressUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"regress", "--shard", "2/2"}, `--shard "2/2": the shard index i = 2, allowed 0..1 for n = 2`},
		{[]string{"regress", "--shard", "0/0"}, "the shard count n = 0, allowed n ≥ 1"},
		{[]string{"regress", "--seeds", "3..1"}, `--seeds "3..1": the range is empty`},
		{[]string{"regress", "--suites", "nope", "--configs", defaultConfigPath()}, "--suites nope: no such suite"},
		{[]string{"regress"}, "run from the repository root or pass --configs"},
		{[]string{"regress", "--packets", "0", "--configs", defaultConfigPath()}, "--packets 0"},
		{[]string{"regress", "--configs", "missing.yaml"}, "missing.yaml"},
		{[]string{"regress", "merge"}, "needs at least one report"},
		{[]string{"regress", "merge", "missing.json"}, "missing.json"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := run(t, tc.args...)
			require.Equal(t, ExitUsage, code, errOut)
			require.Contains(t, errOut, tc.want)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "one error line")
		})
	}
}

func TestRegressList(t *testing.T) {
	code, stdout, errOut := run(t, "--json", "regress", "--list", "--seeds", "1..2", "--shard", "1/3", "--suites", "sack",
		"--configs", defaultConfigPath())
	require.Equal(t, ExitOK, code, errOut)
	var v struct {
		JobsTotal int `json:"jobs_total"`
		Jobs      []struct {
			Index, Shard int
			Job          regress.Job
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	require.Equal(t, len(v.Jobs), v.JobsTotal)
	require.Positive(t, v.JobsTotal)
	for i, j := range v.Jobs {
		require.Equal(t, i, j.Index)
		require.Equal(t, i%3, j.Shard)
		require.Equal(t, "block/sack", j.Job.Suite)
	}
}
