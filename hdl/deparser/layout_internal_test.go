package deparser

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

// TestTaggedLayoutIsTheUntaggedWithTheTag checks the rule the template's tagged beats rely on:
// every tagged layout is its untagged twin with the four tag bytes inserted at EthTypeOff.
func TestTaggedLayoutIsTheUntaggedWithTheTag(t *testing.T) {
	u, err := New(config.Default())
	require.NoError(t, err)
	tag := []string{"8'h81", "8'h00", "{s_hdr_vlan_pcp, s_hdr_vlan_dei, s_hdr_vlan_vid[11:8]}", "s_hdr_vlan_vid[7:0]"}
	require.Equal(t, u.TPID(), "16'h8100")
	require.Equal(t, u.TagEnd(), u.TagAt()+len(tag))
	for _, v6 := range []bool{false, true} {
		for _, c := range u.Classes() {
			untagged, err := u.layoutBytes(false, v6, c)
			require.NoError(t, err)
			tagged, err := u.layoutBytes(true, v6, c)
			require.NoError(t, err)
			want := append(append(append([]string(nil), untagged[:u.TagAt()]...), tag...), untagged[u.TagAt():]...)
			require.Equal(t, want, tagged, "ipv6 %v, %s", v6, c.Op)
		}
	}
}
