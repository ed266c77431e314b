package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJSONFailuresAreOneObject runs a failing invocation of every command with --json: stdout
// holds exactly one JSON object naming the error and the exit code (the same as without --json),
// and the configuration field when one is at fault.
func TestJSONFailuresAreOneObject(t *testing.T) {
	dir := t.TempDir()
	badWidth := filepath.Join(dir, "width.yaml")
	require.NoError(t, os.WriteFile(badWidth, []byte("datapath_width: 100\n"), 0o644))
	full := filepath.Join(dir, "full")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o644))
	badReport := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(badReport, []byte("{"), 0o644))
	cfg := defaultConfigPath()
	tests := []struct {
		name  string
		args  []string
		code  int
		field string
	}{
		{"unknown flag", []string{"--no-such-flag"}, ExitUsage, ""},
		{"unknown command", []string{"no-such-command"}, ExitUsage, ""},
		{"version", []string{"version", "extra"}, ExitUsage, ""},
		{"config check", []string{"--config", badWidth, "config", "check"}, ExitUsage, "datapath_width"},
		{"config show", []string{"--config", filepath.Join(dir, "absent.yaml"), "config", "show"}, ExitUsage, ""},
		{"generate", []string{"--config", cfg, "generate", "--block", "nope", "--out", filepath.Join(dir, "g")}, ExitUsage, ""},
		{"lint", []string{"--config", badWidth, "lint"}, ExitUsage, "datapath_width"},
		{"cosim", []string{"--config", cfg, "cosim", "--block", "sack", "--scenario", "nope"}, ExitUsage, ""},
		{"qor", []string{"--config", cfg, "qor", "--target", "nope"}, ExitUsage, ""},
		{"qor-budgets", []string{"qor-budgets", "--reports", badReport}, ExitFailure, ""},
		{"qor-doc", []string{"qor-doc", "--reports", badReport}, ExitFailure, ""},
		{"synth", []string{"--config", cfg, "synth", "--board", "nope"}, ExitUsage, ""},
		{"regress", []string{"--config", cfg, "regress", "--shard", "3/2"}, ExitUsage, ""},
		{"regress merge", []string{"regress", "merge", badReport}, ExitUsage, ""},
		{"sim", []string{"--config", cfg, "sim", "--scenario", "nope"}, ExitUsage, ""},
		{"summary", []string{"summary", "--cosim", filepath.Join(dir, "absent.json")}, ExitUsage, ""},
		{"handoff", []string{"--config", cfg, "handoff", "--out", full}, ExitUsage, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errPlain := run(t, tc.args...)
			require.Equal(t, tc.code, code, "without --json: %s", errPlain)
			code, out, errOut := run(t, append([]string{"--json"}, tc.args...)...)
			require.Equal(t, tc.code, code, errOut)
			var v jsonError
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&v), "stdout: %q", out)
			require.False(t, dec.More(), "exactly one JSON object on stdout: %q", out)
			require.NotEmpty(t, v.Error)
			require.Equal(t, tc.code, v.ExitCode)
			require.Equal(t, tc.field, v.Field)
			require.Equal(t, "mrgen: "+v.Error+"\n", errOut, "stderr keeps the one line")
		})
	}
}
