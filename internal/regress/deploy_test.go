package regress

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestDeployManifests checks the shipped CI and Kubernetes examples against what regress
// needs: the Indexed Job's completions, parallelism and SHARDS agree, and every example runs
// shards by their index and merges the reports.
func TestDeployManifests(t *testing.T) {
	root := filepath.Join("..", "..", "deploy")
	docs := func(name string) []map[string]any {
		t.Helper()
		f, err := os.Open(filepath.Join(root, name))
		require.NoError(t, err)
		defer f.Close()
		dec := yaml.NewDecoder(f)
		var out []map[string]any
		for {
			var d map[string]any
			if err := dec.Decode(&d); err != nil {
				require.ErrorContains(t, err, "EOF")
				return out
			}
			out = append(out, d)
		}
	}
	get := func(v any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				m, ok := v.(map[string]any)
				require.True(t, ok, "%v: not a map at %q", path, k)
				v = m[k]
			case int:
				l, ok := v.([]any)
				require.True(t, ok, "%v: not a list at %d", path, k)
				require.Greater(t, len(l), k)
				v = l[k]
			}
		}
		return v
	}

	var job map[string]any
	for _, d := range docs("k8s/regress-indexed-job.yaml") {
		if d["kind"] == "Job" {
			job = d
		}
	}
	require.NotNil(t, job)
	require.Equal(t, "Indexed", get(job, "spec", "completionMode"))
	completions := get(job, "spec", "completions")
	require.Equal(t, completions, get(job, "spec", "parallelism"))
	c := get(job, "spec", "template", "spec", "containers", 0)
	shards := ""
	for _, e := range get(c, "env").([]any) {
		if get(e, "name") == "SHARDS" {
			shards = get(e, "value").(string)
		}
	}
	n, err := strconv.Atoi(shards)
	require.NoError(t, err, "SHARDS")
	require.Equal(t, completions, n, "SHARDS must equal completions")
	script := get(c, "args", 0).(string)
	require.Contains(t, script, `i="$JOB_COMPLETION_INDEX"`)
	require.Contains(t, script, `--shard "$i/$SHARDS"`)
	require.Contains(t, script, `--out "/reports/shard-$i.json"`)

	merge := docs("k8s/regress-merge-job.yaml")
	require.Len(t, merge, 1)
	require.Contains(t, get(merge[0], "spec", "template", "spec", "containers", 0, "args", 0), "mrgen regress merge /reports/shard-*.json")

	wf := docs("ci/github-actions-regress.yml")
	require.Len(t, wf, 1)
	var shardRun, mergeRun string
	for _, s := range get(wf[0], "jobs", "shard", "steps").([]any) {
		if r, ok := get(s, "run").(string); ok && strings.Contains(r, "regress") {
			shardRun = r
		}
	}
	for _, s := range get(wf[0], "jobs", "merge", "steps").([]any) {
		if r, ok := get(s, "run").(string); ok && strings.Contains(r, "regress merge") {
			mergeRun = r
		}
	}
	require.Contains(t, shardRun, "--shard ${{ strategy.job-index }}/${{ strategy.job-total }}")
	require.Contains(t, mergeRun, "bin/mrgen regress merge reports/regress-*.json")
	require.Equal(t, false, get(wf[0], "jobs", "shard", "strategy", "fail-fast"))
	require.Equal(t, "always()", get(wf[0], "jobs", "merge", "if"))
}
