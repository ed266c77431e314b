package hdl

import (
	"fmt"
	"math/bits"
)

// MemKind is the kind of a memory in the memory module family.
type MemKind int

// Memory kinds.
const (
	// RAM is a 1R1W memory with a registered read: rdata is the entry at raddr one clock after
	// re, and holds while re is low; a read and a write of one address at the same edge read
	// the old contents. FPGAs infer block RAM from it, the ASIC flow treats it as a macro (at
	// or above MacroMinBits and MacroMinDepth), and a silicon team swaps in its SRAM compiler's.
	RAM MemKind = iota
	// RegFile is a 1R1W register file with a combinational read, always flip-flops: for the
	// small arrays a block reads in the cycle it addresses them. memories.json lists them, so
	// a large one (a timing and area cost) is visible.
	RegFile
)

func (k MemKind) String() string {
	if k == RegFile {
		return "regfile"
	}
	return "ram"
}

// Memory thresholds, one documented rule (docs/memories.md).
const (
	// MacroMinBits and MacroMinDepth: a RAM with at least this many bits and entries is a
	// macro in the ASIC flow; a smaller one is built of flip-flops, as an SRAM compiler's
	// smallest macro is no smaller than a few hundred flip-flops.
	MacroMinBits  = 1024
	MacroMinDepth = 16
)

// AddrWidth is the width of the table's address ports: ceil(log2(Depth)), at least 1.
func (t Table) AddrWidth() int {
	if t.Depth <= 2 {
		return 1
	}
	return bits.Len(uint(t.Depth - 1))
}

// Bits is the table's capacity in bits.
func (t Table) Bits() int { return t.Depth * t.Width }

// ReadLatency is the cycles from a read address to its data: 1 for a RAM, 0 for a RegFile.
func (t Table) ReadLatency() int {
	if t.Kind == RegFile {
		return 0
	}
	return 1
}

// Macro reports whether the ASIC flow treats the table as a macro (a black box with a timing
// model) rather than flip-flops.
func (t Table) Macro() bool {
	return t.Kind == RAM && t.Bits() >= MacroMinBits && t.Depth >= MacroMinDepth
}

// Implementation is "macro" or "flops" (memories.json).
func (t Table) Implementation() string {
	if t.Macro() {
		return "macro"
	}
	return "flops"
}

// MemModule is the name of the memory module of the table's shape, e.g. mrgen_ram_1r1w_16x300:
// one module per kind and shape, so that a silicon team replaces each with the macro of that
// shape. A RAM whose collisions are don't-care has its own module, _dc after the shape.
func (t Table) MemModule() string {
	if t.Kind == RegFile {
		return fmt.Sprintf("mrgen_regfile_1r1w_%dx%d", t.Depth, t.Width)
	}
	if t.CollisionDontCare {
		return fmt.Sprintf("mrgen_ram_1r1w_%dx%d_dc", t.Depth, t.Width)
	}
	return fmt.Sprintf("mrgen_ram_1r1w_%dx%d", t.Depth, t.Width)
}

// ReadDuringWrite is what a read of the entry written at the same edge returns: "old" (the
// contents before the write) or "dont_care" (the block never uses it).
func (t Table) ReadDuringWrite() string {
	if t.CollisionDontCare {
		return "dont_care"
	}
	return "old"
}

// Instance is the table's instance name in its block: u_ and the table's name.
func (t Table) Instance() string { return "u_" + t.Name }

// Check validates the table's shape.
func (t Table) Check() error {
	if !identRE.MatchString(t.Name) || IsKeyword(t.Name) {
		return fmt.Errorf("hdl: table %q: must be lower_snake_case and not a keyword", t.Name)
	}
	if t.Depth < 1 || t.Width < 1 {
		return fmt.Errorf("hdl: table %s: %d x %d: depth and width must be >= 1", t.Name, t.Depth, t.Width)
	}
	if t.CollisionDontCare && t.Kind != RAM {
		return fmt.Errorf("hdl: table %s: a %s reads combinationally; only a RAM's collisions can be don't-care", t.Name, t.Kind)
	}
	return nil
}

// Table returns the module's table of that name.
func (m *Module) Table(name string) (Table, bool) {
	for _, t := range m.Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}
