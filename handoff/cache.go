package handoff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/cacheroot"
)

// toolCache keeps what the synthesis tools made for a bundle (the gate-level netlists with their
// timing, the synthesis reports), so that a second bundle of the same design from the same build
// of mrgen reuses them. An entry's key covers everything its files follow from: this program's
// executable (so every rule and setting of the flows), the tools' version lines, the
// configuration and the content of every RTL file. A nil *toolCache caches nothing.
type toolCache struct {
	dir   string
	exe   string            // the executable's sha256
	tools map[string]string // the tools' version lines, by name
}

// openToolCache returns the cache in dir ("" = $MRGEN_CACHE/handoff, or the user's cache
// folder's mrgen/handoff) for the tools of versions, or nil when this program's executable
// cannot be read.
func openToolCache(dir string, versions map[string]string) *toolCache {
	if dir == "" {
		var err error
		if dir, err = cacheroot.Dir("handoff"); err != nil {
			return nil
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	f, err := os.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil
	}
	return &toolCache{dir: dir, exe: hex.EncodeToString(h.Sum(nil)), tools: versions}
}

// key names an entry of kind: the executable, the tools' versions, the configuration's hash,
// the designs' files and what (the module it is of, if any).
func (c *toolCache) key(kind, configHash string, designs []*gen.Design, what string) string {
	if c == nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00exe %s\x00config %s", kind, what, c.exe, configHash)
	for _, name := range slices.Sorted(maps.Keys(c.tools)) {
		fmt.Fprintf(h, "\x00tool %s %s", name, c.tools[name])
	}
	for _, d := range designs {
		fmt.Fprintf(h, "\x00design %s", d.Top)
		for _, f := range d.Files {
			fmt.Fprintf(h, "\x00file %s %d\x00", f.Path, len(f.Content))
			h.Write(f.Content)
		}
	}
	return kind + "-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// load returns the files of entry key, if the cache holds it.
func (c *toolCache) load(key string) (map[string][]byte, bool) {
	if c == nil || key == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key+".json"))
	if err != nil {
		return nil, false
	}
	var files map[string][]byte
	if err := json.Unmarshal(b, &files); err != nil || len(files) == 0 {
		return nil, false
	}
	return files, true
}

// store writes entry key through a temporary file renamed into place, so that a reader sees a
// whole entry or none.
func (c *toolCache) store(key string, files map[string][]byte) error {
	if c == nil || key == "" {
		return nil
	}
	b, err := json.Marshal(files)
	if err != nil {
		return fmt.Errorf("handoff: tool cache: %w", err)
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("handoff: tool cache: %w", err)
	}
	tmp, err := os.CreateTemp(c.dir, ".entry-*")
	if err != nil {
		return fmt.Errorf("handoff: tool cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("handoff: tool cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("handoff: tool cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(c.dir, key+".json")); err != nil {
		return fmt.Errorf("handoff: tool cache: %w", err)
	}
	return nil
}
