package psn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSerialArithmetic(t *testing.T) {
	tests := []struct {
		bits           int
		a, b           uint32
		dist           uint32
		before, negAtB bool // Before(a, b); Negative(Dist(b, a))
	}{
		{32, 1, 2, 1, true, true},
		{32, 0xFFFFFFFF, 0, 1, true, true},           // wraps
		{32, 0, 0x7FFFFFFF, 0x7FFFFFFF, true, true},  // largest forward distance
		{32, 0, 0x80000000, 0x80000000, false, true}, // half the space: backwards
		{32, 5, 5, 0, false, false},                  // equal
		{10, 1020, 3, 7, true, true},                 // 10-bit wrap
		{10, 3, 1020, 1017, false, false},            // 1020 is before 3
		{8, 0, 127, 127, true, true},
		{8, 0, 128, 128, false, true},
	}
	for _, tc := range tests {
		s := MustSpace(tc.bits)
		require.Equal(t, tc.dist, s.Dist(tc.a, tc.b), "%+v", tc)
		require.Equal(t, tc.before, s.Before(tc.a, tc.b), "%+v", tc)
		require.Equal(t, tc.negAtB, s.Negative(s.Dist(tc.b, tc.a)), "%+v", tc)
	}
	s := MustSpace(10)
	require.Equal(t, uint32(2), s.Add(1023, 3))
	require.Equal(t, uint32(1023), s.Wrap(0xFFFFFFFF))
	_, err := NewSpace(33)
	require.Error(t, err)
	_, err = NewSpace(1)
	require.Error(t, err)
}
