package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// run executes the CLI in-process and returns exit status, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func defaultConfigPath() string { return filepath.Join("..", "..", "configs", "default.yaml") }

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	require.Equal(t, ExitOK, code)
	require.Equal(t, "mrgen "+Version+"\n", out)
	code, out, _ = run(t, "--json", "version")
	require.Equal(t, ExitOK, code)
	var v map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Equal(t, Version, v["version"])
}

func TestConfigCheckBadInputsExit2WithOneLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	tests := []struct {
		name, path, field, value string
	}{
		{"wrong type", write("type.yaml", "connections: many\n"), "connections", `"many"`},
		{"out of range width", write("width.yaml", "datapath_width: 100\n"), "datapath_width", "100"},
		{"sack not power of two", write("sack.yaml", "sack_width: 200\n"), "sack_width", "200"},
		{"unknown field", write("typo.yaml", "conections: 4\n"), "conections", "4"},
		{"missing file", filepath.Join(dir, "absent.yaml"), "absent.yaml", "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "--config", tc.path, "config", "check")
			require.Equal(t, ExitUsage, code, errOut)
			require.Empty(t, out)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "exactly one line: %q", errOut)
			require.Contains(t, errOut, tc.field)
			require.Contains(t, errOut, tc.value)
		})
	}
}

func TestConfigCheckAndShowDefault(t *testing.T) {
	code, out, errOut := run(t, "--config", defaultConfigPath(), "config", "check")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "valid")

	code, out, _ = run(t, "--config", defaultConfigPath(), "--json", "config", "show")
	require.Equal(t, ExitOK, code)
	var v struct {
		Config  map[string]any `json:"config"`
		Derived map[string]any `json:"derived"`
		Hash    string         `json:"hash"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	require.NoError(t, dec.Decode(&v))
	require.False(t, dec.More(), "exactly one JSON object on stdout")
	require.EqualValues(t, 256, v.Config["sack_width"])
	require.EqualValues(t, 32, v.Derived["path_table_depth"])
	require.Len(t, v.Hash, 64)

	code, out, _ = run(t, "--config", defaultConfigPath(), "config", "show")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "derived.path_table_addr_width")
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"--no-such-flag"}, {"version", "extra"}, {"config"}, {"no-such-command"}} {
		code, _, errOut := run(t, args...)
		require.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
		require.True(t, strings.HasPrefix(errOut, "mrgen: "), errOut)
	}
}

// requireProgressDone checks that a run whose stderr is not a terminal printed its plain
// progress report: a first line "label: d/n unit" and a finish line "label: n/n unit done in
// ...", n > 0.
func requireProgressDone(t *testing.T, stderr, label, unit string) {
	t.Helper()
	q := regexp.QuoteMeta(label)
	require.Regexp(t, regexp.MustCompile(`(?m)^`+q+`: \d+/\d+ `+unit), stderr, "first line")
	m := regexp.MustCompile(`(?m)^` + q + `: (\d+)/(\d+) ` + unit + ` done in [0-9.]+ s`).FindStringSubmatch(stderr)
	require.NotNil(t, m, "finish line of %q in:\n%s", label, stderr)
	require.Equal(t, m[2], m[1], "all done")
	require.NotEqual(t, "0", m[1])
}
