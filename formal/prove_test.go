package formal_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/formal"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func TestCheck(t *testing.T) {
	tooltest.Require(t, "yosys", "yosys-abc", "yosys-smtbmc", "z3")
	dir := t.TempDir()
	check := func(property string) *formal.Verdict {
		v, err := formal.Check(context.Background(), formal.Request{Files: []string{"testdata/counter.v"}, Top: "counter",
			Property: property, Depth: 12, Limit: 20 * time.Second, WorkDir: dir})
		require.NoError(t, err)
		return v
	}
	v := check("p_bound")
	require.Equal(t, formal.Proved, v.Status, v.Log)
	require.Equal(t, "pdr", v.Engine)

	// q counts 0..5 from the reset cycle: the assertion fails in cycle 6, and the replay says so.
	v = check("p_small")
	require.Equal(t, formal.Failed, v.Status, v.Log)
	require.Equal(t, 6, v.Frame)
	vcd, err := os.ReadFile(filepath.Join(dir, v.Trace))
	require.NoError(t, err)
	require.Contains(t, string(vcd), "$var")

	_, err = formal.Check(context.Background(), formal.Request{Files: []string{"testdata/counter.v"}, Top: "counter",
		Property: "p_absent", Depth: 12, WorkDir: dir})
	require.Error(t, err, "a label with no assertion is an error, not a pass")
	_, err = formal.Check(context.Background(), formal.Request{Files: []string{"testdata/counter.v"}, Top: "counter",
		Property: "p bad", Depth: 12})
	require.ErrorContains(t, err, "not an assertion label")
}
