// Package version says which mrgen produced an output: the release version and the git commit
// the binary was built from, read from the Go build info, so that two different RTLs never carry
// the same banner.
package version

import (
	"runtime/debug"
)

// Base is the release version.
const Base = "0.1.0"

// Info is what the build info says about the binary's source tree.
type Info struct {
	Revision string // the full commit hash, "" when Go did not stamp it (go test, go run, no .git)
	Dirty    bool   // the tree had uncommitted changes
}

// Read returns the running binary's build info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{}
	}
	return fromSettings(bi.Settings)
}

func fromSettings(settings []debug.BuildSetting) Info {
	var in Info
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			in.Dirty = s.Value == "true"
		}
	}
	return in
}

// Commit is the full commit ("unknown" when not stamped), with "+dirty" for a modified tree.
func (in Info) Commit() string {
	rev := in.Revision
	if rev == "" {
		rev = "unknown"
	}
	if in.Dirty {
		rev += "+dirty"
	}
	return rev
}

// String is the version as banners print it: Base, then as semver build metadata the commit's
// first 12 hex digits and ".dirty" for a modified tree, or "+unknown" when Go did not stamp
// a commit.
func (in Info) String() string {
	rev := in.Revision
	switch {
	case rev == "":
		rev = "unknown"
	case len(rev) > 12:
		rev = rev[:12]
	}
	s := Base + "+" + rev
	if in.Dirty {
		s += ".dirty"
	}
	return s
}

// String is the running binary's version.
func String() string { return Read().String() }

// Commit is the running binary's commit.
func Commit() string { return Read().Commit() }
