package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStackOffsets checks the four stacks' header offsets against the byte counts of
// docs/wire-format.md: 14-byte Ethernet, 4-byte tag, 20-byte IPv4, 40-byte IPv6, 8-byte UDP,
// 16-byte BTH.
func TestStackOffsets(t *testing.T) {
	tests := []struct {
		s                         Stack
		index, l3, udp, bth, body int
	}{
		{Stack{}, 0, 14, 34, 42, 58},
		{Stack{IPv6: true}, 1, 14, 54, 62, 78},
		{Stack{VLAN: true}, 2, 18, 38, 46, 62},
		{Stack{VLAN: true, IPv6: true}, 3, 18, 58, 66, 82},
	}
	for _, tc := range tests {
		require.Equal(t, tc.index, tc.s.Index())
		require.Equal(t, tc.s, Stacks()[tc.index])
		require.Equal(t, []int{tc.l3, tc.udp, tc.bth, tc.body}, []int{tc.s.L3(), tc.s.UDP(), tc.s.BTH(), tc.s.Body()})
	}
}

// TestICRCMask lists every variant field byte, IP header first then UDP.
func TestICRCMask(t *testing.T) {
	set := func(v6 bool, ipLen int) map[int]byte {
		m := map[int]byte{}
		for off := 0; off < ipLen+UDPHeaderLen+4; off++ {
			if b := ICRCMask(v6, ipLen, off); b != 0 {
				m[off] = b
			}
		}
		return m
	}
	require.Equal(t, map[int]byte{1: 0xFF, 8: 0xFF, 10: 0xFF, 11: 0xFF, 26: 0xFF, 27: 0xFF}, set(false, 20))
	// IPv4 with options: the UDP checksum moves with the header's end.
	require.Equal(t, map[int]byte{1: 0xFF, 8: 0xFF, 10: 0xFF, 11: 0xFF, 30: 0xFF, 31: 0xFF}, set(false, 24))
	require.Equal(t, map[int]byte{0: 0x0F, 1: 0xFF, 2: 0xFF, 3: 0xFF, 7: 0xFF, 46: 0xFF, 47: 0xFF}, set(true, 40))
}
