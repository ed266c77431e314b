package sack_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/internal/satequiv"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// thermometerReference is the decode written the obvious way: one comparator per output bit.
func thermometerReference(w, iw int) string {
	return fmt.Sprintf(`module ref_thermometer (
  input  wire [%[2]d:0] x,
  output reg  [%[1]d:0] ge
);
  integer i;
  always @* for (i = 0; i <= %[1]d; i = i + 1) ge[i] = (i >= x);
endmodule
`, w-1, iw-1)
}

// proveThermometer renders sack_thermometer at a SACK width of w (its template passed through
// mutate) and asks Yosys' SAT solver to prove it equal to thermometerReference for every index:
// a miter whose "outputs differ" assertion must be unsatisfiable. It returns the verdict and
// the solver's log.
func proveThermometer(t *testing.T, w int, mutate func(string) string) (bool, string) {
	t.Helper()
	c := config.Default()
	c.SackWidth = w
	u, err := sack.New(c)
	require.NoError(t, err)
	srcs, err := u.Sources()
	require.NoError(t, err)
	var src *gen.Source
	for i := range srcs {
		if srcs[i].Module.Name == "sack_thermometer" {
			src = &srcs[i]
		}
	}
	require.NotNil(t, src, "the unit has no sack_thermometer")
	if mutate != nil {
		src.Template = mutate(src.Template)
	}
	text, err := gen.Render(*src, gen.Stamp{Version: "test", Command: "go test ./hdl/sack", ConfigName: c.Name, ConfigHash: "-"})
	require.NoError(t, err)
	return satequiv.Prove(t, satequiv.Miter{RefTop: "ref_thermometer", Ref: thermometerReference(w, u.IW),
		DUTTop: "sack_thermometer", DUT: text, SAT: satequiv.Combinational})
}

// TestThermometerIsGreaterOrEqual proves, for every index, that the two-half decode gives
// ge[i] = (i >= x) at every SACK width a configuration can ask for (64 bits splits its index
// 3 + 3, 1024 bits 5 + 5).
func TestThermometerIsGreaterOrEqual(t *testing.T) {
	tooltest.Require(t, "yosys")
	for _, w := range []int{64, 128, 256, 512, 1024} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			proved, log := proveThermometer(t, w, nil)
			require.True(t, proved, "the thermometer over %d bits differs from the comparators:\n%s", w, log)
		})
	}
}

// TestThermometerProofCatchesWrongDecode shows the proof can fail: a high part "above x's"
// that includes x's own (no shift), and a combine that ignores the high part's equality.
func TestThermometerProofCatchesWrongDecode(t *testing.T) {
	tooltest.Require(t, "yosys")
	for _, tc := range []struct{ name, from, to string }{
		{"high part above includes equal", "= {hi_ge[{% sub (pow2 $H) 2 %}:0], 1'b0};", "= hi_ge;"},
		{"combine without the high equality", "assign ge = hi_gt_x | (hi_ge_x & ", "assign ge = hi_gt_x | ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := satequiv.Replace(t, tc.from, tc.to)
			proved, log := proveThermometer(t, 128, mutate)
			require.False(t, proved, "a wrong thermometer passed the proof:\n%s", log)
		})
	}
}
