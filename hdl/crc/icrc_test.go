package crc

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEarlyLanes checks the ICRC input table against the wire format's variant fields for the
// untagged IPv4 and the tagged IPv6 stacks at 64 bits.
func TestEarlyLanes(t *testing.T) {
	ops := map[int][4]string{}
	for _, lanes := range EarlyLanes(8, "d") {
		for _, l := range lanes {
			ops[l.Pos] = l.Ops
		}
	}
	raw := func(p int) string { return fmt.Sprintf("d[%d:%d]", 8*(p%8)+7, 8*(p%8)) }
	// Untagged IPv4 (stack 0): TOS at 15, TTL at 22, checksum at 24-25, UDP checksum at 40-41.
	for p, want := range map[int]string{13: "8'h00", 14: "", 15: "8'hff", 22: "8'hff", 24: "8'hff", 25: "8'hff", 40: "8'hff", 41: "8'hff"} {
		got, ok := ops[p]
		if want == "" {
			require.True(t, !ok || got[0] == raw(p), "byte %d", p)
			continue
		}
		require.Equal(t, want, got[0], "byte %d", p)
	}
	// Tagged IPv6 (stack 3): l3 = 18; traffic class/flow at 18 (low nibble) and 19-21, hop
	// limit at 25, UDP checksum at 64-65.
	require.Equal(t, "8'h00", ops[17][3])
	require.Equal(t, raw(18)+" | 8'h0f", ops[18][3])
	for _, p := range []int{19, 20, 21, 25, 64, 65} {
		require.Equal(t, "8'hff", ops[p][3], "byte %d", p)
	}
	// Every beat up to the end of the longest stack's UDP header is listed, and nothing after.
	require.Len(t, EarlyLanes(8, "d"), 9)
	require.Len(t, EarlyLanes(64, "d"), 2)
}
