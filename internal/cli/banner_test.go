package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/internal/blocks"
)

// bannerCommand reads the command line from a generated file's banner (wrapped lines joined).
func bannerCommand(t *testing.T, text string) []string {
	t.Helper()
	var words []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "// command:"):
			in = true
			words = append(words, strings.Fields(strings.TrimPrefix(line, "// command:"))...)
		case in && strings.HasPrefix(line, "//             "):
			words = append(words, strings.Fields(strings.TrimPrefix(line, "//"))...)
		case in:
			return words
		}
	}
	require.NotEmpty(t, words, "no command in the banner")
	return words
}

// TestBannerCommandRegeneratesItsFile generates every block, then runs the command each file's
// banner names, as a user would, in a fresh folder that has only the configs: every file comes
// back byte for byte.
func TestBannerCommandRegeneratesItsFile(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	t.Chdir(repo)
	first := t.TempDir()
	for _, block := range blocks.Names() {
		code, _, errOut := run(t, "--config", "configs/synth/nic-tiny.yaml", "generate", "--block", block,
			"--out", filepath.Join(first, block))
		require.Equal(t, ExitOK, code, errOut)
	}
	user := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(repo, "configs"), filepath.Join(user, "configs")))
	t.Chdir(user)
	last := ""
	for _, block := range blocks.Names() {
		files, err := filepath.Glob(filepath.Join(first, block, "rtl", "*.v"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			want, err := os.ReadFile(f)
			require.NoError(t, err)
			args := bannerCommand(t, string(want))
			require.Equal(t, "mrgen", args[0])
			require.Contains(t, args, "--block", "the banner names the block: %v", args)
			key := strings.Join(args, " ")
			if key != last {
				require.NoError(t, os.RemoveAll("out"))
				code, _, errOut := run(t, args[1:]...)
				require.Equal(t, ExitOK, code, "%s: %s", key, errOut)
				last = key
			}
			got, err := os.ReadFile(filepath.Join("out", "default", "rtl", filepath.Base(f)))
			require.NoError(t, err, "%s: the banner's command %q does not write it", f, key)
			require.Equal(t, string(want), string(got), "%s: the banner's command %q writes other bytes", f, key)
		}
	}
}
