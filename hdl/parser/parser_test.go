package parser_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/parser"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/lint"
)

// lintMatrix covers every datapath width, both reset styles, SACK widths 64..1024 (the ACK body
// crosses 1..4 beats), narrow PSNs, the MTU range and odd table sizes, plus every configuration
// file of configs/ and configs/matrix/.
func lintMatrix(t *testing.T) []config.Config {
	t.Helper()
	type row struct {
		w, sack, psn, mtu, conns, paths, streams int
		reset                                    string
	}
	rows := []row{
		{64, 256, 32, 4096, 4, 8, 4, config.ResetSyncHigh},
		{64, 64, 16, 256, 1, 1, 1, config.ResetAsyncLow},
		{128, 1024, 24, 9000, 3, 5, 7, config.ResetSyncHigh},
		{256, 128, 32, 1504, 64, 64, 256, config.ResetAsyncLow},
		{512, 256, 20, 4096, 2, 4, 2, config.ResetSyncHigh},
		{512, 1024, 32, 9000, 1, 256, 1, config.ResetAsyncLow},
	}
	var out []config.Config
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("w%d-s%d-psn%d-mtu%d-c%d-p%d-s%d-%s", r.w, r.sack, r.psn, r.mtu, r.conns, r.paths, r.streams, r.reset)
		c.DatapathWidth, c.SackWidth, c.PSNWidth, c.MTU = r.w, r.sack, r.psn, r.mtu
		c.Connections, c.PathsPerConnection, c.StreamsPerConnection, c.ResetStyle = r.conns, r.paths, r.streams, r.reset
		out = append(out, c)
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "configs", "matrix", "*.yaml"))
	require.NoError(t, err)
	files = append(files, filepath.Join("..", "..", "configs", "default.yaml"))
	for _, f := range files {
		c, err := config.Load(f)
		require.NoError(t, err, f)
		out = append(out, c)
	}
	return out
}

func build(t *testing.T, c config.Config) *gen.Design {
	t.Helper()
	u, err := parser.New(c)
	require.NoError(t, err)
	d, err := u.Design(gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: c.Hash()}, nil)
	require.NoError(t, err)
	return d
}

func TestLintMatrix(t *testing.T) {
	tooltest.Require(t, "verilator", "yosys", "iverilog")
	for _, c := range lintMatrix(t) {
		t.Run(c.Name, func(t *testing.T) {
			require.NoError(t, c.Validate())
			d := build(t, c)
			dir := t.TempDir()
			require.NoError(t, d.Write(dir))
			rep, err := lint.Run(context.Background(), d.RTLFiles(dir), d.Top, lint.Options{})
			require.NoError(t, err)
			require.True(t, rep.OK(), "%s", rep)
		})
	}
}

func TestRegenerationIsByteIdentical(t *testing.T) {
	for _, c := range lintMatrix(t)[:3] {
		a, b := t.TempDir(), t.TempDir()
		require.NoError(t, build(t, c).Write(a))
		require.NoError(t, build(t, c).Write(b))
		for _, name := range []string{"filelist.f", "manifest.json", "rtl/rx_parser.v", "rtl/rx_parser_payload.v"} {
			x, err := os.ReadFile(filepath.Join(a, name))
			require.NoError(t, err)
			y, err := os.ReadFile(filepath.Join(b, name))
			require.NoError(t, err)
			require.True(t, bytes.Equal(x, y), "%s differs between two generations of %s", name, c.Name)
		}
	}
}
