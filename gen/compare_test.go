package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/internal/tooltest"
)

func TestCompareSlicedText(t *testing.T) {
	for _, tc := range []struct {
		a, op, b string
		width    int
		want     string
	}{
		{"x", "<=", "y", 16, "(x <= y)"},
		{"x", "<", "y", 8, "(x < y)"},
		{"dl", "<=", "now", 32, "(\n  (dl[31:16] < now[31:16]) || (dl[31:16] == now[31:16]) && (\n  (dl[15:0] <= now[15:0])))"},
		{"a", "<", "b", 20, "(\n  (a[19:4] < b[19:4]) || (a[19:4] == b[19:4]) && (\n  (a[3:0] < b[3:0])))"},
	} {
		got, err := CompareSliced(tc.a, tc.op, tc.b, tc.width, 2)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s %s %s, %d bits", tc.a, tc.op, tc.b, tc.width)
	}
}

func TestCompareSlicedRefusesWhatItCannotSlice(t *testing.T) {
	for _, tc := range []struct{ a, op, b, want string }{
		{"x + 1", "<=", "y", "not a signal name"},
		{"x", "<=", "y[3:0]", "not a signal name"},
		{"x", ">", "y", "operator"},
	} {
		_, err := CompareSliced(tc.a, tc.op, tc.b, 64, 0)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := CompareSliced("x", "<", "y", 0, 0)
	require.ErrorContains(t, err, "width 0")
}

// The sliced compare equals the plain one at every width it is used at (and at widths that are
// not a multiple of the slice): Yosys's SAT solver proves it for all inputs.
func TestCompareSlicedEqualsThePlainCompare(t *testing.T) {
	tooltest.Require(t, "yosys")
	dir := t.TempDir()
	for _, width := range []int{17, 24, 32, 48, 64} {
		for _, op := range []string{"<", "<="} {
			expr, err := CompareSliced("a", op, "b", width, 4)
			require.NoError(t, err)
			src := fmt.Sprintf("module m (input wire [%d:0] a, input wire [%d:0] b, output wire same);\n"+
				"  wire sliced = %s;\n  assign same = (sliced == (a %s b));\nendmodule\n", width-1, width-1, expr, op)
			f := filepath.Join(dir, fmt.Sprintf("m%d.v", width))
			require.NoError(t, os.WriteFile(f, []byte(src), 0o644))
			out, err := exec.Command("yosys", "-q", "-p", "read_verilog "+f+"; prep -top m; sat -verify -prove same 1").CombinedOutput()
			require.NoError(t, err, "%d bits, %s: %s", width, op, out)
		}
	}
}
