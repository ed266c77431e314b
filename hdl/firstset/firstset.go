// Package firstset describes the find-first-set priority tree the blocks share: the lowest set
// bit of an N-bit vector (N a power of two) as an explicit log2 tree, one signal per level.
// The SACK unit finds its cumulative advance and highest SACKed PSN with it, the window unit
// its spraying pick, the parser its drop reason (the lowest failing check).
package firstset

import (
	_ "embed"
	"fmt"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
)

// Template is the tree's Verilog template (gen delimiters); its data is Tree.
//
//go:embed first_set.v.tmpl
var Template string

// Tree is the template's data: N bits searched in L = log2 N levels.
type Tree struct{ N, L int }

// Source describes the tree over n bits as module name (doc says what the block uses it for)
// and returns it ready for gen.Build. n must be a power of two of at least 2.
func Source(name string, n int, doc string) (gen.Source, error) {
	if n < 2 || n&(n-1) != 0 {
		return gen.Source{}, fmt.Errorf("firstset: %s over %d bits: a power of two of at least 2", name, n)
	}
	l := 0
	for 1<<l < n {
		l++
	}
	m := &hdl.Module{
		Name:   name,
		Source: "hdl/firstset/firstset.go",
		Doc: fmt.Sprintf("Find-first-set over %d bits as an explicit log2 tree (%d levels, each its own "+
			"signal): the lowest set bit's index and whether any bit is set. Combinational. %s", n, l, doc),
		Ports: []hdl.Port{
			{Name: "vec", Dir: hdl.Input, Width: n, Doc: "vector to search"},
			{Name: "any", Dir: hdl.Output, Width: 1, Doc: "some bit of vec is set"},
			{Name: "idx", Dir: hdl.Output, Width: l, Doc: "index of the lowest set bit (all ones when none)"},
		},
	}
	return gen.Source{Module: m, Template: Template, Data: Tree{N: n, L: l}}, nil
}
