package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/internal/tooltest"
)

func TestGenerateWritesTheDesign(t *testing.T) {
	out := t.TempDir()
	code, stdout, errOut := run(t, "--config", defaultConfigPath(), "--json", "generate", "--out", out)
	require.Equal(t, ExitOK, code, errOut)
	var v struct {
		Top   string   `json:"top"`
		Files []string `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	require.Equal(t, "sack_unit", v.Top)
	for _, f := range []string{"rtl/sack_unit.v", "rtl/sack_rx.v", "filelist.f", "mrgen.core", "manifest.json"} {
		_, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err, f)
	}
	code, _, errOut = run(t, "--config", defaultConfigPath(), "generate", "--block", "nope", "--out", out)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "unknown block")
}

func TestCosimCommand(t *testing.T) {
	tooltest.Require(t, "verilator", "g++", "make")
	code, stdout, errOut := run(t, "--config", defaultConfigPath(), "--json", "cosim", "--block", "sack",
		"--scenario", "in-order", "--packets", "2000", "--seed", "3", "--vcd", "")
	require.Equal(t, ExitOK, code, errOut)
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(stdout))
	require.NoError(t, dec.Decode(&v))
	require.False(t, dec.More(), "exactly one JSON object")
	for _, k := range []string{"block", "scenario", "seed", "packets", "compared", "mismatches", "drops",
		"rtl_cycles", "wall_seconds", "packets_per_second"} {
		require.Contains(t, v, k)
	}
	require.EqualValues(t, 0, v["mismatches"])
	require.EqualValues(t, 2000, v["packets"])
	requireProgressDone(t, errOut, "cosim sack/in-order", "packets")

	code, _, errOut = run(t, "--config", defaultConfigPath(), "cosim", "--scenario", "nope", "--packets", "10")
	require.Equal(t, ExitUsage, code, errOut)
	code, _, _ = run(t, "--config", defaultConfigPath(), "cosim", "--packets", "0")
	require.Equal(t, ExitUsage, code)
}

func TestSimCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "loss.svg")
	code, stdout, errOut := run(t, "--config", defaultConfigPath(), "--json", "sim", "--scenario", "loss",
		"--loss", "0.01", "--hosts", "4", "--pattern", "ring", "--duration-us", "60", "--plot", out)
	require.Equal(t, ExitOK, code, errOut)
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(stdout))
	require.NoError(t, dec.Decode(&v))
	require.False(t, dec.More(), "exactly one JSON object")
	for _, k := range []string{"scenario", "protocol", "params", "goodput_fraction", "retransmissions",
		"spurious_retransmissions", "p99_fct_us", "baseline"} {
		require.Contains(t, v, k)
	}
	require.Equal(t, "metaroce", v["protocol"])
	base := v["baseline"].(map[string]any)
	require.Equal(t, "rocev2", base["protocol"])
	require.Greater(t, v["goodput_fraction"].(float64), 0.3)
	require.Equal(t, v["messages"], v["messages_verified"])
	svg, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Contains(t, string(svg), "<svg")
	requireProgressDone(t, errOut, "sim loss", "runs")
	spread := v["spread"].(map[string]any)["goodput_fraction"].(map[string]any)
	require.Len(t, spread["values"], 5, "five seeds by default")

	for _, args := range [][]string{
		{"sim", "--scenario", "nope"},
		{"sim", "--seeds", "0"},
		{"sim", "--jobs", "-1"},
		{"sim", "--loss", "0.9"},
		{"sim", "--hosts", "1"},
		{"sim", "--scenario", "loss", "--loss", "0", "--pattern", "star", "--hosts", "4"},
		{"sim", "--scenario", "failure", "--fail", "rack"},
	} {
		code, _, errOut = run(t, append([]string{"--config", defaultConfigPath()}, args...)...)
		require.Equal(t, ExitUsage, code, "%v", args)
		require.NotEmpty(t, errOut)
	}
}

// The closed loop's fault flags are checked before anything is built: each bad value is a usage
// error that names the flag, the value and the allowed range.
func TestCosimLoopFaultFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--block", "sack", "--scenario", "random", "--mark", "0.1"}, "--mark applies to the closed-loop scenarios"},
		{[]string{"--scenario", "loss", "--loss", "0.9"}, "loss 0.9 outside 0..0.5"},
		{[]string{"--scenario", "loss", "--mark", "1.5"}, "mark 1.5 outside 0..1"},
		{[]string{"--scenario", "loss", "--corrupt", "-0.1"}, "corrupt -0.1 outside 0..0.5"},
		{[]string{"--scenario", "loss", "--host-ready", "0"}, "host-ready 0 outside 0.05..1"},
		{[]string{"--scenario", "loss", "--jitter-ns", "20000"}, "jitter 20000 ns outside 0..10000 ns"},
		{[]string{"--scenario", "loss", "--outstanding", "0"}, "outstanding 0 outside 1..64"},
		{[]string{"--scenario", "rnr", "--repost-delay-us", "-1"}, "repost-delay -1000 ns outside 0..10000000 ns"},
		{[]string{"--scenario", "loss", "--fail-switch", "p0.spine9"}, `fail-switch: fabric: no switch "p0.spine9"`},
		{[]string{"--scenario", "failure", "--fail-plane", "0"}, "fail-plane 0: the configuration has 1 NIC port"},
	} {
		code, _, errOut := run(t, append([]string{"--config", defaultConfigPath(), "cosim", "--packets", "10"}, tc.args...)...)
		require.Equal(t, ExitUsage, code, "%v", tc.args)
		require.Contains(t, errOut, tc.want, "%v", tc.args)
	}
}
