package cosim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/gen"
)

// templateFault is one deliberate bug in a block's template (level 2, item 6 of
// docs/verification-plan.md): the first From in Module's template (every template that holds
// it, when Module is empty) becomes To.
type templateFault struct {
	Name, Module, From, To string
	Scenario               string
	// Stream, when set, is the output stream the mismatch must be on; Field is text its diff
	// must contain (a field name or a rendered value).
	Stream, Field string
	// VCD asks for the window of cycles around the mismatch, which must then exist.
	VCD bool
	// Config (a file under configs/) and Packets, when set, replace the runner's configuration
	// and run length, for a fault in logic generated only elsewhere or one that shows rarely.
	Config  string
	Packets int
	// Seed, when set, replaces the runner's seed (a fault that shows in one stimulus early).
	Seed uint64
}

// SeedOr is the fault's seed: Seed, or the runner's default seed.
func (f templateFault) SeedOr(seed uint64) uint64 {
	if f.Seed != 0 {
		return f.Seed
	}
	return seed
}

// RunLength is the fault's run length: Packets, or the runner's default n.
func (f templateFault) RunLength(n int) int {
	if f.Packets > 0 {
		return f.Packets
	}
	return n
}

// mutate is the fault as gen.BuildMutated's rewrite; the anchor must be found.
func (f templateFault) mutate(t *testing.T) func([]gen.Source) error {
	return func(srcs []gen.Source) error {
		found := false
		for i := range srcs {
			if (f.Module == "" || srcs[i].Module.Name == f.Module) && strings.Contains(srcs[i].Template, f.From) {
				srcs[i].Template = strings.Replace(srcs[i].Template, f.From, f.To, 1)
				found = true
			}
		}
		require.True(t, found, "fault anchor missing from the template: %q", f.From)
		return nil
	}
}

// requireFaultsCaught runs every fault through run (the block's cosim with the mutated
// template, a VCD path or "") and requires each to stop on one mismatch on the right stream,
// naming the field, at a cycle, with its VCD when asked.
func requireFaultsCaught(t *testing.T, faults []templateFault,
	run func(t *testing.T, f templateFault, mutate func([]gen.Source) error, vcd string) *Result) {
	t.Helper()
	for _, f := range faults {
		t.Run(f.Name, func(t *testing.T) {
			vcd := ""
			if f.VCD {
				// In a directory that does not exist yet, like the default out/ of a fresh clone.
				vcd = filepath.Join(t.TempDir(), "out", "mismatch.vcd")
			}
			res := run(t, f, f.mutate(t), vcd)
			require.NotNil(t, res.Mismatch, "cosim missed an injected fault")
			require.Equal(t, 1, res.Mismatches)
			if f.Stream != "" {
				require.Equal(t, f.Stream, res.Mismatch.Stream)
			}
			require.Contains(t, res.Mismatch.Diff, f.Field)
			require.Positive(t, res.Mismatch.Cycle)
			t.Logf("%s: %v", f.Name, res.Mismatch)
			if vcd == "" {
				return
			}
			require.Equal(t, vcd, res.Mismatch.VCD)
			body, err := os.ReadFile(vcd)
			require.NoError(t, err, "VCD around the mismatch")
			require.Contains(t, string(body), "$enddefinitions")
		})
	}
}
