package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			require.Error(t, err)
			var fe *FieldError
			require.True(t, errors.As(err, &fe), "want *FieldError, got %T: %v", err, err)
			require.Equal(t, tc.wantField, fe.Field)
			require.Equal(t, tc.wantValue, fe.Value)
			require.NotEmpty(t, fe.Allowed)
			require.Contains(t, err.Error(), tc.wantField)
		})
	}
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

// TestShippedConfigsAreValid loads every configuration under configs/.
func TestShippedConfigsAreValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("..", "configs", "matrix", "*.yaml"))
	require.NoError(t, err)
	files = append(files, more...)
	require.GreaterOrEqual(t, len(files), 5)
	names := map[string]string{}
	for _, f := range files {
		c, err := Load(f)
		require.NoError(t, err, f)
		require.NotContains(t, names, c.Name, "%s and %s share the name %q", f, names[c.Name], c.Name)
		names[c.Name] = f
	}
}
