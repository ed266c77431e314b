// Package cacheroot names mrgen's cache folders: $MRGEN_CACHE/<kind>, or the user's cache
// folder's mrgen/<kind>.
package cacheroot

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir is the cache folder of kind ("verilator", "handoff").
func Dir(kind string) (string, error) {
	if env := os.Getenv("MRGEN_CACHE"); env != "" {
		return filepath.Join(env, kind), nil
	}
	uc, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set MRGEN_CACHE): %w", err)
	}
	return filepath.Join(uc, "mrgen", kind), nil
}
