package hdl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
)

// TestMinFrameBeats pins the line-rate budgets the timing issues are held to: one operation per
// port every 2 cycles at 512 bits, 3 at 256, 5 at 128, 9 at 64.
func TestMinFrameBeats(t *testing.T) {
	for _, tc := range []struct{ bits, beats int }{
		{1024, 1}, {512, 2}, {256, 3}, {128, 5}, {64, 9}, {0, 1},
	} {
		require.Equal(t, tc.beats, hdl.MinFrameBeats(tc.bits), "%d bits", tc.bits)
	}
	require.Equal(t, 70, hdl.MinFrameBytes)
}
