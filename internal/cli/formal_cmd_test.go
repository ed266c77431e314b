package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/internal/tooltest"
)

func TestFormalBadInputsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"formal", "--depth", "0"},
		{"formal", "--limit", "-1"},
		{"formal", "--block", "parser"},
		{"formal", "--property", "p_nothing"},
	} {
		code, out, errOut := run(t, args...)
		require.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
		require.Empty(t, out)
	}
}

// TestFormalOneProperty runs one property of the SACK unit at its small configuration: it does
// not fail (proved, or bounded within the short limit), and the JSON says so.
func TestFormalOneProperty(t *testing.T) {
	tooltest.Require(t, "yosys", "yosys-abc", "yosys-smtbmc", "z3")
	cfg := filepath.Join("..", "..", "configs", "formal", "sack-small.yaml")
	code, out, errOut := run(t, "--config", cfg, "--json", "formal", "--block", "sack", "--property", "p_dup_no_change",
		"--depth", "8", "--limit", "5", "--out", t.TempDir())
	require.Equal(t, ExitOK, code, errOut)
	var rep formalReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "sack-small", rep.Config)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Equal(t, "sack", r.Block)
	require.Equal(t, "sack_rx", r.Top)
	require.Equal(t, "p_dup_no_change", r.Property)
	require.Contains(t, []string{"proved", "bounded"}, string(r.Status))
	require.NotEmpty(t, r.Rule)
}
