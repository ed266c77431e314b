package qor

import (
	"sort"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// A parent unit is measured from its parts: the units below it that the same run measures
// (docs/qor-flow.md, "Composed units"). Its own logic, the glue, is synthesized with every part
// as a black box, and the parts' results are put back in: on the ASIC target their gate-level
// netlists under one OpenSTA link, on xcup their LUT netlists under one ltp and their resource
// counts, on ice40 their fit. No part is synthesized twice.

// SubUnit is a unit measured inside a parent unit, with its results of the target measured.
type SubUnit struct {
	Name   string
	Module *hdl.Module
	Count  int // instances in the parent
	ASIC   *ASICResult
	XCUP   *XCUPResult
	ICE40  *ICE40Result
}

// partNames are the unit's parts, sorted.
func (u Unit) partNames() []string {
	out := make([]string, len(u.Parts))
	for i, p := range u.Parts {
		out[i] = p.Name
	}
	sort.Strings(out)
	return out
}

// blackboxParts is the Yosys command that empties the parts into black boxes ("" for none).
func (u Unit) blackboxParts() string {
	if len(u.Parts) == 0 {
		return ""
	}
	return "blackbox " + strings.Join(u.partNames(), " ")
}

// deleteParts removes the parts' black-box modules (= selects black boxes too).
func (u Unit) deleteParts() string {
	names := u.partNames()
	for i, n := range names {
		names[i] = "=" + n
	}
	return "delete " + strings.Join(names, " ")
}

// partOf returns the part of the given module name.
func (u Unit) partOf(name string) (SubUnit, bool) {
	for _, p := range u.Parts {
		if p.Name == name {
			return p, true
		}
	}
	return SubUnit{}, false
}

// appendUnique appends the strings of add not in list yet.
func appendUnique(list []string, add ...string) []string {
	have := map[string]bool{}
	for _, s := range list {
		have[s] = true
	}
	for _, s := range add {
		if !have[s] {
			have[s] = true
			list = append(list, s)
		}
	}
	return list
}

// scriptLines joins the non-empty Yosys commands, one per line.
func scriptLines(cmds ...string) string {
	var keep []string
	for _, c := range cmds {
		if c != "" {
			keep = append(keep, c)
		}
	}
	return strings.Join(keep, "\n") + "\n"
}
