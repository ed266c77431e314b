// Package satequiv proves two Verilog modules equal for every input with Yosys's SAT solver,
// for the tests of generated trees and decoders: a miter of a reference written the obvious way
// and the generated module, whose "outputs differ" assertion must be unsatisfiable.
package satequiv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Combinational is the proof of a combinational miter: one step, every input free.
const Combinational = "sat -verify -prove-asserts -show-inputs miter"

// Miter is one proof: the reference module (RefTop, its source Ref) against the module under
// test (DUTTop, its source DUT). SAT is Yosys's sat command on the miter module, named miter
// (Combinational, or a sequential proof for registered designs).
type Miter struct {
	RefTop, Ref string
	DUTTop, DUT string
	SAT         string
}

// Prove writes both sources to a temporary directory, builds the miter and runs the proof. It
// returns whether the proof succeeded and the solver's part of Yosys's log (the problem's size,
// the verdict, a counterexample); any failure other than a disproof fails t.
func Prove(t testing.TB, m Miter) (bool, string) {
	t.Helper()
	dir := t.TempDir()
	ref, dut := filepath.Join(dir, m.RefTop+".v"), filepath.Join(dir, m.DUTTop+".v")
	require.NoError(t, os.WriteFile(ref, []byte(m.Ref), 0o644))
	require.NoError(t, os.WriteFile(dut, []byte(m.DUT), 0o644))
	script := fmt.Sprintf("read_verilog %s %s; prep; miter -equiv -flatten -make_assert %s %s miter; "+
		"hierarchy -top miter; %s", ref, dut, m.RefTop, m.DUTTop, m.SAT)
	out, err := exec.Command("yosys", "-p", script).CombinedOutput()
	log := string(out)
	if i := strings.Index(log, "Executing SAT pass"); i >= 0 {
		log = log[i:]
	}
	proved := err == nil && strings.Contains(log, "SAT proof finished - no model found: SUCCESS!")
	if !proved {
		require.Contains(t, log, "proof did fail", "yosys failed for another reason:\n%s", log)
	}
	return proved, log
}

// Replace is a mutation for a proof that must fail: it replaces from, which must occur exactly
// once in the template, by to.
func Replace(t testing.TB, from, to string) func(string) string {
	return func(s string) string {
		t.Helper()
		require.Equal(t, 1, strings.Count(s, from), "fault site %q", from)
		return strings.Replace(s, from, to, 1)
	}
}
