package firstset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/satequiv"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// reference is the tree's specification written the obvious way: a priority loop from the top
// bit down, so the lowest set bit wins; idx is all ones when no bit is set (what the tree gives:
// every node without a set bit takes its upper child). registered puts a register (loaded when
// en is high) before the loop: what a tree registered after any level must equal.
func reference(n, l int, registered bool) string {
	ports, search := "", "vec"
	if registered {
		ports, search = "  input  wire clk,\n  input  wire en,\n", "vec_q"
	}
	text := fmt.Sprintf(`module ref_first_set (
%[4]s  input  wire [%[1]d:0] vec,
  output reg          any,
  output reg  [%[2]d:0] idx
);
`, n-1, l-1, l, ports)
	if registered {
		text += fmt.Sprintf("  reg [%d:0] vec_q;\n  always @(posedge clk) if (en) vec_q <= vec;\n", n-1)
	}
	return text + fmt.Sprintf(`  integer i;
  always @* begin
    any = |%[4]s;
    idx = {%[3]d{1'b1}};
    for (i = %[1]d; i >= 0; i = i - 1)
      if (%[4]s[i]) idx = i[%[2]d:0];
  end
endmodule
`, n-1, l-1, l, search)
}

// proveEquivalent renders the tree over n bits (its template passed through mutate) and asks
// Yosys' SAT solver to prove it equal to reference for every input: a miter of the two
// modules whose "outputs differ" assertion must be unsatisfiable. It returns the proof's
// verdict and log.
//
// With reg > 0 the tree is registered after level reg (Registered) and the proof runs over two
// steps: the first loads both the tree and the registered reference from the same inputs (en
// high), the second compares their outputs.
func proveEquivalent(t *testing.T, n, reg int, mutate func(string) string) (bool, string) {
	t.Helper()
	src, err := Source("dut_first_set", n, "")
	if reg > 0 {
		src, err = Registered("dut_first_set", n, reg, "")
	}
	require.NoError(t, err)
	if mutate != nil {
		src.Template = mutate(src.Template)
	}
	text, err := gen.Render(src, gen.Stamp{Version: "test", Command: "go test ./hdl/firstset", ConfigName: "firstset", ConfigHash: "-"})
	require.NoError(t, err)
	sat := satequiv.Combinational
	if reg > 0 {
		sat = "dffunmap; sat -verify -seq 2 -prove-skip 1 -set-at 1 in_en 1 -prove-asserts -show-inputs miter"
	}
	return satequiv.Prove(t, satequiv.Miter{RefTop: "ref_first_set", Ref: reference(n, src.Data.(Tree).L, reg > 0),
		DUTTop: "dut_first_set", DUT: text, SAT: sat})
}

// TestTreeIsLowestSetBit proves, for every input, that the generated tree finds the lowest set
// bit, at every width a configuration can ask for (the SACK unit's 64..1024-bit bitmaps, the
// window unit's path slots, the parser's check vector, the placement engine's slots).
func TestTreeIsLowestSetBit(t *testing.T) {
	tooltest.Require(t, "yosys")
	for _, n := range []int{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			proved, log := proveEquivalent(t, n, 0, nil)
			require.True(t, proved, "tree over %d bits differs from the reference:\n%s", n, log)
		})
	}
}

// TestProofCatchesWrongTree shows the proof can fail: trees with a wrong preference or a wrong
// offset bit are found different, with a counterexample.
func TestProofCatchesWrongTree(t *testing.T) {
	tooltest.Require(t, "yosys")
	for _, tc := range []struct{ name, from, to string }{
		{"prefers the upper child", "lo_any ? {1'b0, lo_idx} : {1'b1, hi_idx}", "hi_any ? {1'b1, hi_idx} : {1'b0, lo_idx}"},
		{"level 1 offset inverted", "assign idx_l1[l1_j] = ~vec[2*l1_j];", "assign idx_l1[l1_j] = vec[2*l1_j];"},
		{"any ignores the upper half", "assign any_l{% $l %}[l{% $l %}_j] = lo_any | hi_any;", "assign any_l{% $l %}[l{% $l %}_j] = lo_any;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := satequiv.Replace(t, tc.from, tc.to)
			proved, log := proveEquivalent(t, 64, 0, mutate)
			require.False(t, proved, "a wrong tree passed the proof:\n%s", log)
		})
	}
}

// TestRegisteredTreeIsLowestSetBitOneCycleLater proves, for every input, that the tree
// registered after level reg gives, a cycle after a vector is loaded, the lowest set bit of
// that vector; a tree whose upper levels read past the register fails.
func TestRegisteredTreeIsLowestSetBitOneCycleLater(t *testing.T) {
	tooltest.Require(t, "yosys")
	skipRegister := func(s string) string { return strings.Replace(s, "{%- $q = \"_q\" %}", "", 1) }
	for _, tc := range []struct{ n, reg int }{{4, 1}, {64, 3}, {256, 4}, {1024, 5}} {
		t.Run(fmt.Sprintf("%d-reg%d", tc.n, tc.reg), func(t *testing.T) {
			proved, log := proveEquivalent(t, tc.n, tc.reg, nil)
			require.True(t, proved, "registered tree over %d bits differs from the reference:\n%s", tc.n, log)
			proved, log = proveEquivalent(t, tc.n, tc.reg, skipRegister)
			require.False(t, proved, "a tree that skips its register passed the proof:\n%s", log)
		})
	}
}
