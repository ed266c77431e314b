package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/qor"
)

func TestQoRUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"qor", "--block", "nope"}, "unknown block \"nope\""},
		{[]string{"qor", "--target", "vivado"}, "targets: asic, xcup, ice40, ecp5, all"},
		{[]string{"qor", "--board", "nope"}, "unknown board"},
		{[]string{"qor", "--update-budgets"}, "--update-budgets needs --budgets FILE"},
		{[]string{"qor", "--block", "sack", "--unit", "nope"}, "--unit nope: no such unit"},
	} {
		args := append([]string{"--config", defaultConfigPath()}, tc.args...)
		code, _, errOut := run(t, append(args, "--out", t.TempDir())...)
		require.Equal(t, ExitUsage, code, errOut)
		require.Contains(t, errOut, tc.want)
	}
}

func TestQoRMissingToolNamesThePackage(t *testing.T) {
	t.Setenv("MRGEN_BLIFFANOUT", "/nonexistent/blifFanout")
	code, _, errOut := run(t, "--config", defaultConfigPath(), "qor", "--block", "acker", "--target", "asic",
		"--out", t.TempDir())
	require.Equal(t, ExitFailure, code, errOut)
	require.Contains(t, errOut, "Debian package qflow")
}

// One small block through every target, and its budgets written and then held.
func TestQoRCommandOneBlock(t *testing.T) {
	if err := qor.Check(qor.Targets()...); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip("\n\n*** SKIPPED: " + err.Error() + " ***\n")
	}
	out := t.TempDir()
	cfg := filepath.Join("..", "..", "configs", "synth", "nic-tiny.yaml")
	budgets := filepath.Join(out, "budgets.json")
	require.NoError(t, os.WriteFile(budgets, []byte(`{"tolerance_pct": 5, "budgets": []}`), 0o644))
	code, stdout, errOut := run(t, "--config", cfg, "--json", "qor", "--block", "nic", "--unit", "nic_egress_merge", "--out", out,
		"--fit-configs", "", "--budgets", budgets, "--update-budgets")
	require.Equal(t, ExitOK, code, errOut)
	var rep struct {
		Units []struct {
			Unit string `json:"unit"`
			ASIC *struct {
				CriticalNS float64 `json:"critical_ns"`
				Stage      string  `json:"stage"`
			} `json:"asic"`
			XCUP *struct {
				LUTLevels int `json:"lut_levels"`
				LUTs      int `json:"luts"`
			} `json:"xcup"`
			ICE40 *struct {
				Result *struct {
					LUTs int `json:"luts"`
				} `json:"result"`
			} `json:"ice40"`
		} `json:"units"`
		Violations []string `json:"violations"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	require.Len(t, rep.Units, 1)
	u := rep.Units[0]
	require.Equal(t, "nic_egress_merge", u.Unit)
	require.NotNil(t, u.ASIC)
	require.Equal(t, "pre-layout", u.ASIC.Stage)
	require.Greater(t, u.ASIC.CriticalNS, 0.5)
	require.NotNil(t, u.XCUP)
	require.Greater(t, u.XCUP.LUTLevels, 0)
	require.Greater(t, u.XCUP.LUTs, 0)
	require.NotNil(t, u.ICE40)
	require.Greater(t, u.ICE40.Result.LUTs, 0)
	require.Empty(t, rep.Violations)
	requireProgressDone(t, errOut, "qor nic-tiny", "measurements")

	b, err := qor.LoadBudgets(budgets)
	require.NoError(t, err)
	require.Len(t, b.Budgets, 3, "critical path, LUT levels and LUTs were written (the merge has no memory)")
	// A budget well below the figure fails the gate (exit 1, the violation named).
	for i := range b.Budgets {
		b.Budgets[i].Max /= 2
	}
	require.NoError(t, b.Write(budgets))
	code, _, errOut = run(t, "--config", cfg, "qor", "--block", "nic", "--unit", "nic_egress_merge", "--target", "asic",
		"--out", out, "--budgets", budgets)
	require.Equal(t, ExitFailure, code, errOut)
	require.Contains(t, errOut, "over budget")
}

// qor-budgets sets budgets from saved reports: new ones written, a higher figure refused
// without a reason (and nothing written), accepted with one.
func TestQoRBudgetsFromReports(t *testing.T) {
	dir := t.TempDir()
	report := func(name string, ns float64) string {
		rep := qorJSON{Report: &qor.Report{Config: "w128-small", Command: "mrgen qor", Units: []qor.UnitReport{
			{Unit: "sack_rx", ASIC: &qor.ASICResult{CriticalNS: ns}, XCUP: &qor.XCUPResult{LUTLevels: 12, LUTs: 3000}}}}}
		data, err := json.Marshal(rep)
		require.NoError(t, err)
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, data, 0o644))
		return f
	}
	budgets := filepath.Join(dir, "budgets.json")
	require.NoError(t, os.WriteFile(budgets, []byte(`{"tolerance_pct": 5, "budgets": []}`), 0o644))
	code, _, errOut := run(t, "qor-budgets", "--reports", report("a.json", 5.0), "--budgets", budgets)
	require.Equal(t, ExitOK, code, errOut)
	b, err := qor.LoadBudgets(budgets)
	require.NoError(t, err)
	require.Len(t, b.Budgets, 3, "critical_ns, lut_levels and luts of sack_rx")
	before, err := os.ReadFile(budgets)
	require.NoError(t, err)

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--reports", report("b.json", 6.0)}, ExitUsage, "raising a budget needs a reason"},
		{[]string{"--reports", filepath.Join(dir, "none.json")}, ExitFailure, "none.json"},
		{[]string{}, ExitUsage, "--reports needs"},
	} {
		code, _, errOut := run(t, append([]string{"qor-budgets", "--budgets", budgets}, tc.args...)...)
		require.Equal(t, tc.code, code, errOut)
		require.Contains(t, errOut, tc.want)
		after, err := os.ReadFile(budgets)
		require.NoError(t, err)
		require.Equal(t, string(before), string(after), "a refused update writes nothing")
	}
	code, _, errOut = run(t, "qor-budgets", "--reports", report("c.json", 6.0), "--budgets", budgets, "--why", "a test")
	require.Equal(t, ExitOK, code, errOut)
	b, err = qor.LoadBudgets(budgets)
	require.NoError(t, err)
	for _, x := range b.Budgets {
		if x.Metric == qor.MetricCriticalNS {
			require.Equal(t, 6.0, x.Max)
			require.Equal(t, "raised: a test", x.Why)
		}
	}
}
