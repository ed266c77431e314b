// Package blocktest holds the structural checks every block's Go description runs in its tests
// (level 5 of docs/verification-plan.md): every configuration of a matrix renders lint-clean
// (Verilator -Wall, the Yosys latch and loop checks, Icarus), and rendering twice gives
// byte-identical files. Blocks are rendered through the registry (internal/blocks), the same
// path `mrgen generate` takes.
package blocktest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/lint"
)

// Generate renders block for c with a test stamp.
func Generate(t testing.TB, block string, c config.Config) *gen.Design {
	t.Helper()
	st := gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: c.Hash()}
	d, err := blocks.Generate(block, c, st, nil)
	require.NoError(t, err)
	return d
}

// RepoConfigs loads every configuration in the repository's configs/ and configs/matrix/.
func RepoConfigs(t testing.TB) []config.Config {
	t.Helper()
	root := moduleRoot(t)
	var out []config.Config
	for _, pat := range []string{"configs/*.yaml", "configs/matrix/*.yaml"} {
		files, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		for _, f := range files {
			c, err := config.Load(f)
			require.NoError(t, err, f)
			out = append(out, c)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// moduleRoot is the directory of go.mod above the test's working directory.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

// LintMatrix renders block for every configuration and requires each to validate and lint
// clean.
func LintMatrix(t *testing.T, block string, cfgs []config.Config) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	for _, c := range cfgs {
		t.Run(c.Name, func(t *testing.T) {
			require.NoError(t, c.Validate())
			d := Generate(t, block, c)
			dir := t.TempDir()
			require.NoError(t, d.Write(dir))
			rep, err := lint.Run(context.Background(), d.RTLFiles(dir), d.Top, lint.Options{})
			require.NoError(t, err)
			require.True(t, rep.OK(), "%s", rep)
		})
	}
}

// Regenerates renders block twice for every configuration and requires files (paths in the
// output directory) to be byte-identical.
func Regenerates(t *testing.T, block string, cfgs []config.Config, files []string) {
	for _, c := range cfgs {
		a, b := t.TempDir(), t.TempDir()
		require.NoError(t, Generate(t, block, c).Write(a))
		require.NoError(t, Generate(t, block, c).Write(b))
		for _, name := range files {
			x, err := os.ReadFile(filepath.Join(a, name))
			require.NoError(t, err)
			y, err := os.ReadFile(filepath.Join(b, name))
			require.NoError(t, err)
			require.True(t, bytes.Equal(x, y), "%s differs between two generations of %s", name, c.Name)
		}
	}
}
