package sack_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/formal"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// The small configurations, small enough for a deep bounded check: 64-bit bitmaps, 4 table
// entries, 8-bit PSNs (so the PSN space wraps within reach of the search). formalSmall, the
// one `mrgen formal` is run at, has a 512-bit datapath (sack_rx at entry II 2, with its
// forwarding); formalSmallHold a 64-bit one (entry II 3: it holds instead).
const (
	formalSmall     = "../../configs/formal/sack-small.yaml"
	formalSmallHold = "../../configs/formal/sack-small-hold.yaml"
)

// formalConfig loads one of them.
func formalConfig(t *testing.T, file string) config.Config {
	t.Helper()
	c, err := config.Load(file)
	require.NoError(t, err)
	return c
}

func bmcRx(t *testing.T, mutate func(string) string, depth int) *formal.Result {
	t.Helper()
	return bmc(t, "sack_rx", mutate, depth)
}

// generateSmall renders the unit at the small configuration, mutate applied to module's
// template, and returns its RTL files.
func generateSmall(t *testing.T, module string, mutate func(string) string) []string {
	t.Helper()
	return generateAt(t, formalSmall, module, mutate)
}

// generateAt is generateSmall at the configuration file.
func generateAt(t *testing.T, file, module string, mutate func(string) string) []string {
	t.Helper()
	c := formalConfig(t, file)
	u, err := sack.New(c)
	require.NoError(t, err)
	srcs, err := u.Sources()
	require.NoError(t, err)
	for i, s := range srcs {
		if s.Module.Name == module && mutate != nil {
			srcs[i].Template = mutate(s.Template)
		}
	}
	d, err := gen.Build(sack.Top, srcs, gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: c.Hash()})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, d.Write(dir))
	return d.RTLFiles(dir)
}

// bmc generates the small configuration (with mutate applied to module's template) and checks
// module's unlabelled properties depth cycles deep.
func bmc(t *testing.T, module string, mutate func(string) string, depth int) *formal.Result {
	t.Helper()
	tooltest.Require(t, "yosys", "yosys-abc")
	var files []string
	for _, f := range generateSmall(t, module, mutate) {
		if !strings.Contains(f, "sack_unit") {
			files = append(files, f)
		}
	}
	res, err := formal.BMC(context.Background(), files, module, depth, "")
	require.NoError(t, err)
	return res
}

// checkProperty generates the small configuration (mutate applied to sack_rx's template) and
// checks one labelled property of sack_rx: pdr, then bmc3 within limit per engine.
func checkProperty(t *testing.T, property string, mutate func(string) string, depth int, limit time.Duration) *formal.Verdict {
	t.Helper()
	return checkPropertyAt(t, formalSmall, "sack_rx", property, mutate, depth, limit)
}

// checkPropertyAt is checkProperty at the configuration file, of module top (mutate applied to
// its template).
func checkPropertyAt(t *testing.T, file, top, property string, mutate func(string) string, depth int, limit time.Duration) *formal.Verdict {
	t.Helper()
	tooltest.Require(t, "yosys", "yosys-abc", "yosys-smtbmc", "z3")
	files := generateAt(t, file, top, mutate)
	v, err := formal.Check(context.Background(), formal.Request{Files: files, Top: top, Property: property,
		Depth: depth, Limit: limit, WorkDir: filepath.Join(filepath.Dir(files[0]), "..", "formal")})
	require.NoError(t, err)
	return v
}

// replaceAnchor is a template mutation: the one place anchor stands (it must) becomes broken.
func replaceAnchor(t *testing.T, anchor, broken string) func(string) string {
	return func(tmpl string) string {
		require.Contains(t, tmpl, anchor)
		return strings.Replace(tmpl, anchor, broken, 1)
	}
}

// TestPropertiesCheck checks every labelled property of sack_rx and sack_tx (pdr, then bmc3 24
// cycles deep, 30 s each): none may fail. Which are proved and how deep the others got is logged
// (it depends on the machine's load).
func TestPropertiesCheck(t *testing.T) {
	for _, p := range sack.Properties {
		t.Run(p.Label, func(t *testing.T) {
			t.Parallel()
			v := checkPropertyAt(t, formalSmall, p.Top, p.Label, nil, 24, 30*time.Second)
			require.NotEqual(t, formal.Failed, v.Status, "%s fails in cycle %d: %s\n%s", p.Label, v.Frame, v.Trace, v.Log)
			t.Logf("%s: %s (%s, depth %d, %.1f s)", p.Label, v.Status, v.Engine, v.Depth, v.Seconds)
		})
	}
}

// TestRxPropertyMutantsFail breaks sack_rx in one way per labelled property; each property must
// fail with a counterexample that replays (formal.Check checks the replay fails the assertion).
func TestRxPropertyMutantsFail(t *testing.T) {
	cases := []struct {
		property, anchor, broken, why string
	}{
		{"p_hold_registered", "wire one_ahead = in_q_valid && (new_idx == in_q_idx);",
			"wire one_ahead = in_q_valid && (new_idx[0] == in_q_idx[0]);",
			"the hold decided on one bit of the entry index: an operation waits behind another entry's"},
		{"p_cum_forward", "wire [ENTRY_WIDTH-1:0] cur = fwd_hit ? e_entry : c_entry;",
			"wire [ENTRY_WIDTH-1:0] cur = c_entry;",
			"no forwarding: an operation right behind one on its entry starts from the stale entry"},
		{"p_dup_no_change", "wire [ENTRY_WIDTH-1:0] entry_next = a_peek ? a_entry : entry_restart ? entry_first",
			"wire [ENTRY_WIDTH-1:0] entry_next = entry_restart ? entry_first",
			"a peek commits its packet"},
		{"p_cum_received", "cum_advanced = {a_upper_any ? cum_hi : a_cum_hi_inc, zero_idx};",
			"cum_advanced = {a_upper_any ? cum_hi : a_cum_hi_inc, zero_idx + 1'b1};",
			"cum advances one past the first missing PSN"},
		{"p_bitmap_received", "| (is_new && slot_hi_hot[",
			"| (!a_is_old && slot_hi_hot[",
			"a beyond-window packet sets the bit of its slot"},
	}
	for _, tc := range cases {
		t.Run(tc.property, func(t *testing.T) {
			t.Parallel()
			v := checkProperty(t, tc.property, replaceAnchor(t, tc.anchor, tc.broken), 24, 30*time.Second)
			require.Equal(t, formal.Failed, v.Status, "%s (%s) was not caught: %+v", tc.property, tc.why, v)
			require.NotEmpty(t, v.Trace)
			t.Logf("%s: %s fails in cycle %d (%s, %.1f s)", tc.why, tc.property, v.Frame, v.Engine, v.Seconds)
		})
	}
}

// TestRxHoldTwoProperties checks the entry-II-3 variant (formalSmallHold), which holds an
// operation behind either of the two ahead on its entry instead of forwarding: the registered
// hold and the cumulative PSN's rule must not fail, and a hold that forgets the operation two
// ahead must fail both.
func TestRxHoldTwoProperties(t *testing.T) {
	for _, tc := range []struct {
		property string
		broken   bool
	}{
		{"p_hold_registered", false}, {"p_cum_forward", false},
		{"p_hold_registered", true}, {"p_cum_forward", true},
	} {
		name := tc.property
		if tc.broken {
			name += "/two-ahead-hold-disabled"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var mutate func(string) string
			if tc.broken {
				mutate = replaceAnchor(t, "wire two_ahead = c_valid && ", "wire two_ahead = 1'b0 && c_valid && ")
			}
			v := checkPropertyAt(t, formalSmallHold, "sack_rx", tc.property, mutate, 24, 30*time.Second)
			if tc.broken {
				require.Equal(t, formal.Failed, v.Status, "%s missed the disabled two-ahead hold: %+v", tc.property, v)
				t.Logf("%s fails in cycle %d (%s, %.1f s)", tc.property, v.Frame, v.Engine, v.Seconds)
				return
			}
			require.NotEqual(t, formal.Failed, v.Status, "%s fails in cycle %d: %s\n%s", tc.property, v.Frame, v.Trace, v.Log)
			t.Logf("%s: %s (%s, depth %d, %.1f s)", tc.property, v.Status, v.Engine, v.Depth, v.Seconds)
		})
	}
}

// TestTxSameEntryProperty checks p_tx_same_entry in both of sack_tx's variants, the forwarding
// one (formalSmall, entry II 1) and the hold (formalSmallHold, entry II 3): it holds as
// generated, and a mutant of each fails it.
func TestTxSameEntryProperty(t *testing.T) {
	for _, tc := range []struct {
		name, file, anchor, broken string
	}{
		{"forwarding", formalSmall, "", ""},
		{"forwarding/two-ahead-compare-on-one-bit", formalSmall,
			"m_fwd2 <= n_valid && (n_idx == lp_idx);", "m_fwd2 <= n_valid && (n_idx[0] == lp_idx[0]);"},
		{"hold", formalSmallHold, "", ""},
		{"hold/two-ahead-hold-disabled", formalSmallHold,
			"wire two_ahead = hold ? ", "wire two_ahead = 1'b0 && hold ? "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mutate func(string) string
			if tc.anchor != "" {
				mutate = replaceAnchor(t, tc.anchor, tc.broken)
			}
			v := checkPropertyAt(t, tc.file, "sack_tx", "p_tx_same_entry", mutate, 24, 30*time.Second)
			if mutate != nil {
				require.Equal(t, formal.Failed, v.Status, "the mutant passed p_tx_same_entry: %+v", v)
				t.Logf("fails in cycle %d (%s, %.1f s)", v.Frame, v.Engine, v.Seconds)
				return
			}
			require.NotEqual(t, formal.Failed, v.Status, "fails in cycle %d: %s\n%s", v.Frame, v.Trace, v.Log)
			t.Logf("%s (%s, depth %d, %.1f s)", v.Status, v.Engine, v.Depth, v.Seconds)
		})
	}
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
