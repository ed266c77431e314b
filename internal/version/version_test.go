package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersionFromBuildSettings(t *testing.T) {
	rev := "d4e7a0c1b2c3d4e5f60718293a4b5c6d7e8f9012"
	for _, tc := range []struct {
		name            string
		settings        []debug.BuildSetting
		version, commit string
	}{
		{"no VCS stamp (go test)", nil, Base + "+unknown", "unknown"},
		{"clean tree", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}},
			Base + "+d4e7a0c1b2c3", rev},
		{"dirty tree", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}},
			Base + "+d4e7a0c1b2c3.dirty", rev + "+dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fromSettings(tc.settings)
			require.Equal(t, tc.version, in.String())
			require.Equal(t, tc.commit, in.Commit())
		})
	}
}
