package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// requireFieldError parses yaml and requires a *FieldError naming field and value.
func requireFieldError(t *testing.T, yaml, field, value string) {
	t.Helper()
	_, err := Parse([]byte(yaml))
	require.Error(t, err)
	var fe *FieldError
	require.True(t, errors.As(err, &fe), "want *FieldError, got %T: %v", err, err)
	require.Equal(t, field, fe.Field)
	require.Equal(t, value, fe.Value)
	require.NotEmpty(t, fe.Allowed)
	require.Contains(t, err.Error(), field)
}

func TestDefaultFileEqualsDefault(t *testing.T) {
	c, err := Load(filepath.Join("..", "configs", "default.yaml"))
	require.NoError(t, err)
	if d := cmp.Diff(Default(), c); d != "" {
		t.Fatalf("configs/default.yaml differs from Default() (-want +got):\n%s", d)
	}
}

func TestEmptyDocumentIsDefault(t *testing.T) {
	c, err := Parse([]byte("# nothing\n"))
	require.NoError(t, err)
	require.Equal(t, Default(), c)
}

func TestParseErrorsNameFieldAndValue(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantField string
		wantValue string
	}{
		{"wrong type", "datapath_width: wide\n", "datapath_width", `"wide"`},
		{"out of range width", "datapath_width: 96\n", "datapath_width", "96"},
		{"sack not power of two", "sack_width: 300\n", "sack_width", "300"},
		{"sack too small", "sack_width: 32\n", "sack_width", "32"},
		{"unknown field", "sack_widht: 256\n", "sack_widht", "256"},
		{"unknown nested field", "ack_policy:\n  mode: every-n\n  evry_n: 3\n", "ack_policy.evry_n", "3"},
		{"bad enum", "reset_style: async-high\n", "reset_style", `"async-high"`},
		{"bool for int", "connections: true\n", "connections", "true"},
		{"list for int", "connections: [1, 2]\n", "connections", "(a list)"},
		{"zero paths", "paths_per_connection: 0\n", "paths_per_connection", "0"},
		{"roce port", "udp_dest_port: 4791\n", "udp_dest_port", "4791"},
		{"mtu not multiple of 8", "mtu: 1001\n", "mtu", "1001"},
		{"nested wrong type", "pipeline:\n  tree_register_every: yes\n", "pipeline.tree_register_every", `"yes"`},
		{"mapping expected", "ack_policy: 3\n", "ack_policy", "3"},
		{"duplicate key", "mtu: 1024\nmtu: 2048\n", "mtu", "2048"},
		{"psn too narrow for window", "sack_width: 1024\npsn_width: 11\n", "psn_width", "11"},
		{"table too large", "connections: 4096\npaths_per_connection: 64\n", "connections", "4096"},
		{"negative seed", "seed: -1\n", "seed", "-1"},
		{"announce not a bool", "rate_hint:\n  announce: sometimes\n", "rate_hint.announce", `"sometimes"`},
		{"announced sender expires before its answer", "ack_policy:\n  max_gather_ns: 50000\nrate_hint:\n  window_ns: 40000\n",
			"rate_hint.window_ns", "40000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { requireFieldError(t, tc.yaml, tc.wantField, tc.wantValue) })
	}
}

func TestAnnounceSwitch(t *testing.T) {
	require.True(t, Default().RateHint.Announce, "on by default")
	c, err := Parse([]byte("rate_hint:\n  announce: false\n"))
	require.NoError(t, err)
	require.False(t, c.RateHint.Announce)
	require.NotEqual(t, Default().Hash(), c.Hash())
	// Without announces, the hint window is not bound by the gather window.
	c, err = Parse([]byte("ack_policy:\n  max_gather_ns: 50000\nrate_hint:\n  window_ns: 40000\n  announce: false\n"))
	require.NoError(t, err)
	require.Equal(t, 40000, c.RateHint.WindowNS)
}

func TestLoadErrorsAreConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("sack_width: 100\n"), 0o644))
	for _, path := range []string{bad, filepath.Join(dir, "missing.yaml")} {
		_, err := Load(path)
		require.Error(t, err)
		require.True(t, errors.Is(err, ErrConfig), "%v", err)
		require.Contains(t, err.Error(), path)
	}
	require.NoError(t, os.WriteFile(bad, []byte("a: [\n"), 0o644))
	_, err := Load(bad)
	require.ErrorIs(t, err, ErrConfig)
	require.Contains(t, err.Error(), "not valid YAML")
}

func TestValidRanges(t *testing.T) {
	for _, w := range []int{64, 128, 256, 512, 1024} {
		c := Default()
		c.SackWidth = w
		require.NoError(t, c.Validate(), "sack_width %d", w)
	}
	for _, w := range []int{64, 128, 256, 512} {
		c := Default()
		c.DatapathWidth = w
		require.NoError(t, c.Validate(), "datapath_width %d", w)
	}
	c := Default()
	c.PSNWidth = 10 // 256-bit window needs at least 10 bits
	require.NoError(t, c.Validate())
	c.PSNWidth = 9
	require.Error(t, c.Validate())
}

func TestDerived(t *testing.T) {
	tests := []struct {
		conns, paths, sack int
		want               Derived
	}{
		{4, 8, 256, Derived{KeepWidth: 8, ConnIDWidth: 2, PathIDWidth: 3, PathTableDepth: 32, PathTableAddrWidth: 5,
			SackIndexWidth: 8, SackTreeLevels: 8, StreamIDWidth: 2, RegionIndexWidth: 4, PostedReceiveDepth: 128, ClockPeriodNS: 10}},
		{1, 1, 64, Derived{KeepWidth: 8, ConnIDWidth: 1, PathIDWidth: 1, PathTableDepth: 4, PathTableAddrWidth: 2,
			SackIndexWidth: 6, SackTreeLevels: 6, StreamIDWidth: 2, RegionIndexWidth: 4, PostedReceiveDepth: 32, ClockPeriodNS: 10}},
		{3, 64, 1024, Derived{KeepWidth: 8, ConnIDWidth: 2, PathIDWidth: 6, PathTableDepth: 256, PathTableAddrWidth: 8,
			SackIndexWidth: 10, SackTreeLevels: 10, StreamIDWidth: 2, RegionIndexWidth: 4, PostedReceiveDepth: 96, ClockPeriodNS: 10}},
	}
	for _, tc := range tests {
		c := Default()
		c.Connections, c.PathsPerConnection, c.SackWidth = tc.conns, tc.paths, tc.sack
		require.NoError(t, c.Validate())
		if d := cmp.Diff(tc.want, c.Derived()); d != "" {
			t.Errorf("%d×%d sack %d (-want +got):\n%s", tc.conns, tc.paths, tc.sack, d)
		}
	}
}

func TestHashStable(t *testing.T) {
	a, b := Default(), Default()
	require.Equal(t, a.Hash(), b.Hash())
	b.Seed++
	require.NotEqual(t, a.Hash(), b.Hash())
	require.Len(t, a.ShortHash(), 12)
}

// TestShippedConfigsAreValid loads every configuration under configs/ (matrix/ and synth/ too).
func TestShippedConfigsAreValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	require.NoError(t, err)
	for _, dir := range []string{"matrix", "synth"} {
		more, err := filepath.Glob(filepath.Join("..", "configs", dir, "*.yaml"))
		require.NoError(t, err)
		files = append(files, more...)
	}
	require.GreaterOrEqual(t, len(files), 6)
	names := map[string]string{}
	for _, f := range files {
		c, err := Load(f)
		require.NoError(t, err, f)
		require.NotContains(t, names, c.Name, "%s and %s share the name %q", f, names[c.Name], c.Name)
		names[c.Name] = f
	}
}

// TestSenderDepths: a FIFO depth is 0 (golden/sender's default) or 2..2^20 entries, and an
// error names the field, the value and both allowed forms.
func TestSenderDepths(t *testing.T) {
	for _, tc := range []struct{ name, yaml, field, value string }{
		{"retx one", "sender:\n  retx_depth: 1\n", "sender.retx_depth", "1"},
		{"moved negative", "sender:\n  moved_depth: -4\n", "sender.moved_depth", "-4"},
		{"retry too deep", "sender:\n  rnr_retry_depth: 1048577\n", "sender.rnr_retry_depth", "1048577"},
		{"unknown sender field", "sender:\n  retx_dpeth: 8\n", "sender.retx_dpeth", "8"},
		{"records not a power of two", "sender:\n  records_per_path: 96\n", "sender.records_per_path", "96"},
		{"records one", "sender:\n  records_per_path: 1\n", "sender.records_per_path", "1"},
		{"records beyond the PSN space", "psn_width: 8\nsack_width: 64\nsender:\n  records_per_path: 512\n", "sender.records_per_path", "512"},
	} {
		t.Run(tc.name, func(t *testing.T) { requireFieldError(t, tc.yaml, tc.field, tc.value) })
	}
	_, err := Parse([]byte("sender:\n  retx_depth: 1\n"))
	require.ErrorContains(t, err, "0 (the default) or 2..1048576")

	c, err := Parse([]byte("sender:\n  retx_depth: 2\n  moved_depth: 1048576\n  rnr_retry_depth: 100\n"))
	require.NoError(t, err)
	require.Equal(t, Sender{RetxDepth: 2, MovedDepth: 1 << 20, RNRRetryDepth: 100, RecordsPerPath: DefaultRecordsPerPath}, c.Sender)
	require.Equal(t, Sender{RecordsPerPath: DefaultRecordsPerPath}, Default().Sender, "the default keeps golden/sender's FIFO depths and sizes the record tables")
	_, err = Parse([]byte("sender:\n  records_per_path: 96\n"))
	require.ErrorContains(t, err, "0 or a power of two 2..65536")
	require.NotEqual(t, Default().Hash(), c.Hash())
}

func TestWindowFieldErrors(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantField string
		wantValue string
	}{
		{"md_shift zero", "window:\n  md_shift: 0\n", "window.md_shift", "0"},
		{"md_shift too big", "window:\n  md_shift: 9\n", "window.md_shift", "9"},
		{"conn_md_shift", "window:\n  conn_md_shift: 0\n", "window.conn_md_shift", "0"},
		{"ai_step", "window:\n  ai_step: 0\n", "window.ai_step", "0"},
		{"srtt_shift", "window:\n  srtt_shift: 0\n", "window.srtt_shift", "0"},
		{"rttvar_shift", "window:\n  rttvar_shift: 9\n", "window.rttvar_shift", "9"},
		{"min_cwnd zero", "window:\n  min_cwnd: 0\n", "window.min_cwnd", "0"},
		{"max_cwnd above sack", "sack_width: 128\nwindow:\n  max_cwnd: 200\n", "window.max_cwnd", "200"},
		{"max_cwnd out of range", "window:\n  max_cwnd: 2048\n", "window.max_cwnd", "2048"},
		{"init above max", "window:\n  max_cwnd: 8\n", "window.init_cwnd", "16"},
		{"init below min", "window:\n  min_cwnd: 20\n", "window.init_cwnd", "16"},
		{"min above max", "window:\n  min_cwnd: 300\n  init_cwnd: 300\n", "window.min_cwnd", "300"},
		{"conn max below min", "window:\n  min_cwnd: 4\n  conn_max_cwnd: 2\n", "window.conn_max_cwnd", "2"},
		{"rto initial below min", "window:\n  rto_initial_ns: 50000\n", "window.rto_initial_ns", "50000"},
		{"rto max below min", "window:\n  rto_max_ns: 50000\n  rto_initial_ns: 100000\n", "window.rto_initial_ns", "100000"},
		{"rto too large", "window:\n  rto_max_ns: 3000000000\n", "window.rto_max_ns", "3000000000"},
		{"rto too small", "window:\n  rto_min_ns: 10\n", "window.rto_min_ns", "10"},
		{"failed not above suspect", "window:\n  suspect_timeouts: 4\n", "window.failed_timeouts", "4"},
		{"failed too large", "window:\n  failed_timeouts: 16\n", "window.failed_timeouts", "16"},
		{"probe interval", "window:\n  probe_interval_ns: 0\n", "window.probe_interval_ns", "0"},
		{"unknown window field", "window:\n  md_shfit: 1\n", "window.md_shfit", "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { requireFieldError(t, tc.yaml, tc.wantField, tc.wantValue) })
	}
}

func TestWindowResolvedMaxima(t *testing.T) {
	c := Default()
	require.Equal(t, 256, c.WindowMaxCwnd())
	require.Equal(t, 256*8, c.WindowConnMaxCwnd())
	c.Window.MaxCwnd, c.Window.ConnMaxCwnd = 122, 500
	require.NoError(t, c.Validate())
	require.Equal(t, 122, c.WindowMaxCwnd())
	require.Equal(t, 500, c.WindowConnMaxCwnd())
	c.Window.MaxCwnd = 256 // equal to sack_width is allowed
	require.NoError(t, c.Validate())
	c.Window.SuspectTimeouts, c.Window.FailedTimeouts = 14, 15
	require.NoError(t, c.Validate())
	c.Window.RTOMinNS, c.Window.RTOInitialNS, c.Window.RTOMaxNS = 1000, 1000, 1000
	require.NoError(t, c.Validate())
}
