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
	return bmc(t, "sack_rx", mutate, depth)
}

// bmc generates the small configuration (with mutate applied to module's template) and checks
// module's properties depth cycles deep.
func bmc(t *testing.T, module string, mutate func(string) string, depth int) *formal.Result {
	t.Helper()
	tooltest.Require(t, "yosys", "yosys-abc")
	c := formalConfig()
	u, err := sack.New(c)
	require.NoError(t, err)
	srcs, err := u.Sources()
	require.NoError(t, err)
	var files []gen.Source
	for _, s := range srcs {
		if s.Module.Name == module && mutate != nil {
			s.Template = mutate(s.Template)
		}
		files = append(files, s)
	}
	d, err := gen.Build(sack.Top, files, gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: c.Hash()})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, d.Write(dir))
	var files2 []string
	for _, f := range d.RTLFiles(dir) {
		if !strings.Contains(f, "sack_unit") {
			files2 = append(files2, f)
		}
	}
	res, err := formal.BMC(context.Background(), files2, module, depth, "")
	require.NoError(t, err)
	return res
}

// TestRxPropertiesHold searches 20 cycles from reset (the 4-entry clear, then up to ~16
// packets) for a violation of sack_rx's embedded properties: bit 0 of the aligned bitmap is
// never set, only new packets expose gaps, a path init that took effect leaves its packet new
// at the head of an empty window (cum = psn+1), nothing is taken during the clear, and a held
// output is stable under backpressure.
func TestRxPropertiesHold(t *testing.T) {
	res := bmcRx(t, nil, 20)
	require.True(t, res.Passed, "counterexample in frame %d:\n%s", res.Frame, res.Log)
}

// TestRxBMCFindsInjectedBug advances cum one slot past the first zero (onto a PSN that may have
// been received); the bounded check must find the counterexample.
func TestRxBMCFindsInjectedBug(t *testing.T) {
	const anchor = "cum_advanced = {a_upper_any ? cum_hi : a_cum_hi_inc, zero_idx};"
	res := bmcRx(t, func(tmpl string) string {
		require.Contains(t, tmpl, anchor)
		return strings.Replace(tmpl, anchor,
			"cum_advanced = {a_upper_any ? cum_hi : a_cum_hi_inc, zero_idx + 1'b1};", 1)
	}, 20)
	require.False(t, res.Passed, "bmc3 missed an injected bug")
	require.Positive(t, res.Frame)
	t.Logf("counterexample at frame %d", res.Frame)
}

// TestRxBMCFindsPathInitBug writes the re-initialised entry as Init leaves it (cum = psn)
// instead of as its packet leaves it (cum = psn+1); the path-init property must object.
func TestRxBMCFindsPathInitBug(t *testing.T) {
	const anchor = "wire [PSN_WIDTH-1:0] first_cum = a_init ? a_psn : psn_inc;"
	res := bmcRx(t, func(tmpl string) string {
		require.Contains(t, tmpl, anchor)
		return strings.Replace(tmpl, anchor, "wire [PSN_WIDTH-1:0] first_cum = a_psn;", 1)
	}, 20)
	require.False(t, res.Passed, "bmc3 missed an injected bug")
	require.Positive(t, res.Frame)
}

// TestTxPropertiesHold checks sack_tx's embedded properties 20 cycles deep: only accepted ACKs
// report losses, nothing is taken during the clear, held outputs are stable.
func TestTxPropertiesHold(t *testing.T) {
	res := bmc(t, "sack_tx", nil, 20)
	require.True(t, res.Passed, "counterexample in frame %d:\n%s", res.Frame, res.Log)
}

// TestTxBMCFindsInjectedBug lets every verdict report losses; bmc3 must object.
func TestTxBMCFindsInjectedBug(t *testing.T) {
	const anchor = "out_lost <= o_accept ? newly_lost : {SACK_WIDTH{1'b0}};"
	res := bmc(t, "sack_tx", func(tmpl string) string {
		require.Contains(t, tmpl, anchor)
		return strings.Replace(tmpl, anchor, "out_lost <= newly_lost;", 1)
	}, 20)
	require.False(t, res.Passed, "bmc3 missed an injected bug")
}
