package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/qor"
)

// The summary's QoR rows: per block, its worst unit's FO4 and LUT6 levels against the report's
// budgets; a missing report is named, not an error.
func TestSummaryQoRRows(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	cos := write("cosim.json", cosim.Result{Block: "nic", Scenario: "loss", Seed: 1, Packets: 10, Compared: 10})
	rep := qor.Report{Config: "default", BudgetFO4: 40, BudgetLUTLevels: 8, Units: []qor.UnitReport{
		{Unit: "sack_rx", Block: "sack", ASIC: &qor.ASICResult{CriticalFO4: 38.6}, XCUP: &qor.XCUPResult{LUTLevels: 9}},
		{Unit: "sack_tx", Block: "sack", ASIC: &qor.ASICResult{CriticalFO4: 31}, XCUP: &qor.XCUPResult{LUTLevels: 10}},
		{Unit: "rx_parser", Block: "parser", ASIC: &qor.ASICResult{CriticalFO4: 44}, XCUP: &qor.XCUPResult{LUTLevels: 8}},
		{Unit: "crc32_d64", Block: "parser", XCUP: &qor.XCUPResult{LUTLevels: 3}},
		{Unit: "nic_top", Block: "nic"},
	}}
	q := write("qor.json", rep)
	for _, tc := range []struct {
		name string
		qor  string
		want []string
	}{
		{"report", q, []string{
			"QoR sack (default)           38.6 FO4 / 40 ok (sack_rx), 10 LUT6 levels / 8 OVER (sack_tx)",
			"QoR parser (default)         44.0 FO4 / 40 OVER (rx_parser), 8 LUT6 levels / 8 ok (rx_parser)",
			"QoR nic (default)            not measured",
		}},
		{"missing report", filepath.Join(dir, "absent.json"), []string{"QoR                          no QoR report (make qor)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "summary", "--cosim", cos, "--qor", tc.qor)
			require.Equal(t, ExitOK, code, errOut)
			for _, w := range tc.want {
				require.Contains(t, out, "  "+w+"\n")
			}
		})
	}
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{"), 0o644))
	code, _, errOut := run(t, "summary", "--cosim", cos, "--qor", bad)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "--qor")
}
