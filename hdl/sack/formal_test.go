package sack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/formal"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// formalConfig is small enough for a deep bounded check: 64-bit bitmaps, 4 table entries,
// 8-bit PSNs (so the PSN space wraps within reach of the search).
func formalConfig() config.Config {
	c := config.Default()
	c.Name = "formal-small"
	c.Connections, c.PathsPerConnection, c.SackWidth, c.PSNWidth = 1, 2, 64, 8
	return c
}

func bmcRx(t *testing.T, mutate func(string) string, depth int) *formal.Result {
	t.Helper()
	tooltest.Require(t, "yosys", "yosys-abc")
	c := formalConfig()
	u, err := sack.New(c)
	require.NoError(t, err)
	srcs, err := u.Sources()
	require.NoError(t, err)
	var files []gen.Source
	for _, s := range srcs {
		if s.Module.Name == "sack_rx" && mutate != nil {
			s.Template = mutate(s.Template)
		}
		files = append(files, s)
	}
	d, err := gen.Build(sack.Top, files, gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: c.Hash()})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, d.Write(dir))
	var rx []string
	for _, f := range d.RTLFiles(dir) {
		if !strings.Contains(f, "sack_tx") && !strings.Contains(f, "sack_unit") && !strings.Contains(f, "popcount") {
			rx = append(rx, f)
		}
	}
	res, err := formal.BMC(context.Background(), rx, "sack_rx", depth, "")
	require.NoError(t, err)
	return res
}

// TestRxPropertiesHold searches 20 cycles from reset (the 4-entry clear, then up to ~16
// packets) for a violation of sack_rx's embedded properties: bit 0 of the aligned bitmap is
// never set, only new packets expose gaps, nothing is taken during the clear, and a held
// output is stable under backpressure.
func TestRxPropertiesHold(t *testing.T) {
	res := bmcRx(t, nil, 20)
	require.True(t, res.Passed, "counterexample in frame %d:\n%s", res.Frame, res.Log)
}

// TestRxBMCFindsInjectedBug advances cum one slot too far (onto a received PSN); the bounded
// check must find the counterexample.
func TestRxBMCFindsInjectedBug(t *testing.T) {
	const anchor = "assign zero_idx = upper_any ? upper_idx : window_full ? head : lower_idx;"
	res := bmcRx(t, func(tmpl string) string {
		require.Contains(t, tmpl, anchor)
		return strings.Replace(tmpl, anchor,
			"assign zero_idx = upper_any ? upper_idx + {% dec .D.IW 1 %} : window_full ? head : lower_idx;", 1)
	}, 20)
	require.False(t, res.Passed, "bmc3 missed an injected bug")
	require.Positive(t, res.Frame)
}
