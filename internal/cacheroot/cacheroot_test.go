package cacheroot

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDir(t *testing.T) {
	tests := []struct {
		name, env, home, want string
	}{
		{"MRGEN_CACHE first", "/c", "/h", "/c/handoff"},
		{"the user's cache folder", "", "/h", "/h/.cache/mrgen/handoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MRGEN_CACHE", tt.env)
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("HOME", tt.home)
			got, err := Dir("handoff")
			require.NoError(t, err)
			require.Equal(t, filepath.FromSlash(tt.want), got)
		})
	}
}
