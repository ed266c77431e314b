// Package blocks is the registry of generatable blocks: for each name (sack, and later parser,
// window, placement and the NIC top) it builds the block's description from a configuration
// and renders it into a gen.Design.
package blocks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/sack"
)

// Block is one generatable block.
type Block struct {
	Name string
	// Sources returns the block's modules (leaves first) and the top module's name.
	Sources func(c config.Config) (srcs []gen.Source, top string, err error)
}

var registry = map[string]Block{
	"sack": {Name: "sack", Sources: func(c config.Config) ([]gen.Source, string, error) {
		u, err := sack.New(c)
		if err != nil {
			return nil, "", err
		}
		srcs, err := u.Sources()
		return srcs, sack.Top, err
	}},
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

// Stamp builds the banner stamp for a configuration.
func Stamp(version, configPath string, c config.Config) gen.Stamp {
	return gen.Stamp{Version: version, Command: "mrgen generate --config " + configPath,
		ConfigName: c.Name, ConfigHash: c.Hash()}
}

// Generate renders a block for a configuration. mutate, when not nil, may rewrite the sources
// before rendering (fault-injection tests use it to break a template on purpose).
func Generate(name string, c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	b, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	srcs, top, err := b.Sources(c)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", name, err)
	}
	if mutate != nil {
		if err := mutate(srcs); err != nil {
			return nil, fmt.Errorf("block %s: mutate: %w", name, err)
		}
	}
	d, err := gen.Build(top, srcs, st)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", name, err)
	}
	return d, nil
}
