package pipeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/lint"
	"github.com/mrgen/mrgen/pipeline"
)

func TestRxLint(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	c := config.Default()
	r, err := pipeline.NewRx(c)
	require.NoError(t, err)
	d, err := r.Design(gen.Stamp{Version: "test", ConfigName: c.Name, ConfigHash: c.Hash()}, nil)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, d.Write(dir))
	rep, err := lint.Run(context.Background(), d.RTLFiles(dir), d.Top, lint.Options{})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%s", rep)
}
