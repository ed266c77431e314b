package firstset

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSource(t *testing.T) {
	for _, tc := range []struct{ n, l int }{{2, 1}, {8, 3}, {64, 6}, {1024, 10}} {
		s, err := Source("t", tc.n, "")
		require.NoError(t, err)
		require.Equal(t, Tree{N: tc.n, L: tc.l}, s.Data)
		require.NoError(t, s.Module.Check())
		idx, ok := s.Module.Port("idx")
		require.True(t, ok)
		require.Equal(t, tc.l, idx.Width)
	}
	for _, n := range []int{0, 1, 3, 96} {
		_, err := Source("t", n, "")
		require.ErrorContains(t, err, "power of two", "n=%d", n)
	}
}

func TestRegistered(t *testing.T) {
	s, err := Registered("t", 256, 4, "")
	require.NoError(t, err)
	require.Equal(t, Tree{N: 256, L: 8, Reg: 4}, s.Data)
	require.NoError(t, s.Module.Check())
	require.Equal(t, 1, s.Module.Latency)
	_, ok := s.Module.Port("en")
	require.True(t, ok)
	for _, tc := range []struct {
		n, reg int
		want   string
	}{{256, 0, "at least 1"}, {256, 8, "below the tree's 8 levels"}, {96, 2, "power of two"}} {
		_, err := Registered("t", tc.n, tc.reg, "")
		require.ErrorContains(t, err, tc.want, "n=%d reg=%d", tc.n, tc.reg)
	}
}
