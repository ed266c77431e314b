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
