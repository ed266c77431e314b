package regress

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// MaxJobs bounds the job list a report may claim (merge walks it).
const MaxJobs = 10_000_000

// ReadReport decodes one report.
func ReadReport(r io.Reader) (*Report, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var rep Report
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("regress: report: %w", err)
	}
	if rep.Version != ReportVersion {
		return nil, fmt.Errorf("regress: report version %d, this mrgen reads %d", rep.Version, ReportVersion)
	}
	if rep.JobsTotal < 0 || rep.JobsTotal > MaxJobs {
		return nil, fmt.Errorf("regress: report has jobs_total %d, allowed 0..%d", rep.JobsTotal, MaxJobs)
	}
	return &rep, nil
}

// CoverageError says how shard reports fail to cover their job list exactly once.
type CoverageError struct {
	Missing    []int          // job numbers no report has
	Duplicates map[int]int    // job number → how many results have it (> 1)
	Conflicts  []string       // results of one job number that name different jobs
	Mismatched []string       // reports of another regression (job list or seeds)
	byIndex    map[int]string // job IDs known from the reports, for the message
}

func (e *CoverageError) Error() string {
	var parts []string
	if len(e.Mismatched) > 0 {
		parts = append(parts, "reports of different regressions: "+strings.Join(e.Mismatched, "; "))
	}
	if len(e.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("%d missing jobs: %s", len(e.Missing), ranges(e.Missing)))
	}
	if len(e.Duplicates) > 0 {
		var d []string
		for _, i := range sortedKeys(e.Duplicates) {
			d = append(d, fmt.Sprintf("job %d (%s) %d times", i, e.byIndex[i], e.Duplicates[i]))
		}
		parts = append(parts, fmt.Sprintf("%d duplicate jobs: %s", len(e.Duplicates), strings.Join(d, ", ")))
	}
	if len(e.Conflicts) > 0 {
		parts = append(parts, "conflicting results: "+strings.Join(e.Conflicts, "; "))
	}
	return "regress merge: the shard reports do not cover the job list exactly once: " + strings.Join(parts, "; ")
}

// Merge combines shard reports into one, sorted by job number. It returns the merged report
// and, when the reports do not cover their job list exactly once (a job missing, a job in two
// reports, or reports of different job lists), a *CoverageError beside it.
func Merge(reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("%w: regress merge needs at least one report", ErrUsage)
	}
	first := reps[0]
	out := &Report{Version: ReportVersion, Seeds: first.Seeds, JobsTotal: first.JobsTotal,
		JobListHash: first.JobListHash, Results: []Result{}}
	ce := &CoverageError{Duplicates: map[int]int{}, byIndex: map[int]string{}}
	count := map[int]int{}
	for ri, r := range reps {
		if r.JobListHash != first.JobListHash || r.JobsTotal != first.JobsTotal || r.Seeds != first.Seeds {
			ce.Mismatched = append(ce.Mismatched, fmt.Sprintf("report %d has %d jobs (seeds %s, list %.12s), report 0 has %d (seeds %s, list %.12s)",
				ri, r.JobsTotal, r.Seeds, r.JobListHash, first.JobsTotal, first.Seeds, first.JobListHash))
			continue
		}
		out.Shards = append(out.Shards, r.Shards...)
		for _, x := range r.Results {
			if x.Index < 0 || x.Index >= first.JobsTotal {
				ce.Conflicts = append(ce.Conflicts, fmt.Sprintf("report %d has job number %d outside 0..%d", ri, x.Index, first.JobsTotal-1))
				continue
			}
			if id, seen := ce.byIndex[x.Index]; seen && id != x.ID() {
				ce.Conflicts = append(ce.Conflicts, fmt.Sprintf("job %d is %q in one report and %q in another", x.Index, id, x.ID()))
			}
			ce.byIndex[x.Index] = x.ID()
			count[x.Index]++
			out.Results = append(out.Results, x)
		}
	}
	for i := 0; i < first.JobsTotal; i++ {
		switch n := count[i]; {
		case n == 0:
			ce.Missing = append(ce.Missing, i)
		case n > 1:
			ce.Duplicates[i] = n
		}
	}
	sort.SliceStable(out.Results, func(a, b int) bool { return out.Results[a].Index < out.Results[b].Index })
	sort.Slice(out.Shards, func(a, b int) bool {
		if out.Shards[a].Count != out.Shards[b].Count {
			return out.Shards[a].Count < out.Shards[b].Count
		}
		return out.Shards[a].Index < out.Shards[b].Index
	})
	out.finish()
	if len(ce.Missing)+len(ce.Duplicates)+len(ce.Conflicts)+len(ce.Mismatched) > 0 {
		out.Pass = false
		return out, ce
	}
	return out, nil
}

// ranges renders sorted job numbers compactly: 0-3, 7, 9-10.
func ranges(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(xs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
