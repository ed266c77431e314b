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

// Tree is the template's data: N bits searched in L = log2 N levels; Reg > 0 registers the
// nodes of level Reg (1 <= Reg < L), so the result is a cycle after the vector.
type Tree struct{ N, L, Reg int }

// Source describes the tree over n bits as module name (doc says what the block uses it for)
// and returns it ready for gen.Build. n must be a power of two of at least 2.
func Source(name string, n int, doc string) (gen.Source, error) {
	return source(name, n, 0, doc)
}

// Registered is Source with a register after level reg (1 <= reg < log2 n), loaded when the
// input en is high: any and idx are one cycle after vec, and no cycle holds more than part of
// the tree.
func Registered(name string, n, reg int, doc string) (gen.Source, error) {
	if reg < 1 {
		return gen.Source{}, fmt.Errorf("firstset: %s: the registered level %d must be at least 1", name, reg)
	}
	return source(name, n, reg, doc)
}

func source(name string, n, reg int, doc string) (gen.Source, error) {
	if n < 2 || n&(n-1) != 0 {
		return gen.Source{}, fmt.Errorf("firstset: %s over %d bits: a power of two of at least 2", name, n)
	}
	l := 0
	for 1<<l < n {
		l++
	}
	if reg >= l {
		return gen.Source{}, fmt.Errorf("firstset: %s over %d bits: the registered level %d must be below the tree's %d levels", name, n, reg, l)
	}
	timing := "Combinational."
	var ports []hdl.Port
	if reg > 0 {
		timing = fmt.Sprintf("Level %d is registered: the result is one cycle after vec.", reg)
		ports = []hdl.Port{
			{Name: "clk", Dir: hdl.Input, Width: 1, Doc: "clock"},
			{Name: "en", Dir: hdl.Input, Width: 1, Doc: "register enable (pipeline advance)"},
		}
	}
	ports = append(ports,
		hdl.Port{Name: "vec", Dir: hdl.Input, Width: n, Doc: "vector to search"},
		hdl.Port{Name: "any", Dir: hdl.Output, Width: 1, Doc: "some bit of vec is set"},
		hdl.Port{Name: "idx", Dir: hdl.Output, Width: l, Doc: "index of the lowest set bit (all ones when none)"},
	)
	m := &hdl.Module{
		Name:   name,
		Source: "hdl/firstset/firstset.go",
		Doc: fmt.Sprintf("Find-first-set over %d bits as an explicit log2 tree (%d levels, each its own "+
			"signal): the lowest set bit's index and whether any bit is set. %s %s", n, l, timing, doc),
		Ports: ports,
	}
	if reg > 0 {
		m.Clock, m.Latency, m.II = "clk", 1, 1
	}
	return gen.Source{Module: m, Template: Template, Data: Tree{N: n, L: l, Reg: reg}}, nil
}
