// Package blocks is the registry of generatable blocks: for each name (sack, and later parser,
// window, placement and the NIC top) it builds the block's description from a configuration
// and renders it into a gen.Design.
package blocks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/constraints"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
)

// Block is one generatable block.
type Block struct {
	Name string
	// Design renders the block for a configuration; mutate, when not nil, rewrites its sources
	// first (fault-injection tests).
	Design func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error)
	// SynthUnits are the modules `mrgen synth` places and routes one by one, and the top.
	SynthUnits func(c config.Config) (units []*hdl.Module, top *hdl.Module, err error)
	// Cosim runs the block's RTL in lockstep with its golden unit (`mrgen cosim --block`).
	Cosim func(ctx context.Context, opt cosim.Options) (*cosim.Result, error)
	// Scenarios lists the stimulus scenarios Cosim accepts.
	Scenarios func() []string
}

var registry = map[string]Block{}

// register adds a block; each block's file calls it from init.
func register(b Block) {
	if _, dup := registry[b.Name]; dup {
		panic("blocks: " + b.Name + " registered twice")
	}
	registry[b.Name] = b
}

// Default is the block `mrgen generate` builds when none is named.
const Default = "sack"

// Names lists the registered blocks.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the named block or an error listing the valid names.
func Lookup(name string) (Block, error) {
	b, ok := registry[name]
	if !ok {
		return Block{}, fmt.Errorf("unknown block %q; blocks: %s", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// Stamp builds the banner stamp of a block's files: the generator version and the command that
// regenerates them byte for byte (`generate` writes to --out, which changes no file's bytes).
func Stamp(version, configPath, block string, c config.Config) gen.Stamp {
	return gen.Stamp{Version: version, Command: GenerateCommand(configPath, block),
		ConfigName: c.Name, ConfigHash: c.Hash()}
}

// GenerateCommand is the `mrgen generate` command line for a block at a configuration file. A
// path inside the working directory is written relative to it, so that banners do not depend on
// where the repository was cloned.
func GenerateCommand(configPath, block string) string {
	p := filepath.Clean(configPath)
	if filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
	}
	return "mrgen --config " + shellWord(filepath.ToSlash(p)) + " generate --block " + block
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./=+-]+$`)

// shellWord quotes s for a POSIX shell when it holds anything but plain path characters.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Generate renders a block for a configuration. mutate, when not nil, may rewrite the sources
// before rendering (fault-injection tests use it to break a template on purpose).
func Generate(name string, c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	b, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	d, err := b.Design(c, st, mutate)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", name, err)
	}
	top, ok := d.Descriptions[d.Top]
	if !ok {
		return nil, fmt.Errorf("block %s: no description of its top %s", name, d.Top)
	}
	sdc, err := constraints.ModuleSDC(top, c)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", name, err)
	}
	if err := d.Add(gen.File{Path: "constraints/" + d.Top + ".sdc", Content: []byte(sdc)}); err != nil {
		return nil, fmt.Errorf("block %s: %w", name, err)
	}
	return d, nil
}
