package sack_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/sack"
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
	dir := t.TempDir()
	dut, ref := filepath.Join(dir, "sack_thermometer.v"), filepath.Join(dir, "ref_thermometer.v")
	require.NoError(t, os.WriteFile(dut, []byte(text), 0o644))
	require.NoError(t, os.WriteFile(ref, []byte(thermometerReference(w, u.IW)), 0o644))
	script := fmt.Sprintf("read_verilog %s %s; prep; miter -equiv -flatten -make_assert ref_thermometer sack_thermometer miter; "+
		"hierarchy -top miter; sat -verify -prove-asserts -show-inputs miter", ref, dut)
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
		{"combine without the high equality", "| (hi_ge[gi / {% pow2 $L %}] & lo_ge", "| (lo_ge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := func(s string) string {
				require.Equal(t, 1, strings.Count(s, tc.from), "fault site %q", tc.from)
				return strings.Replace(s, tc.from, tc.to, 1)
			}
			proved, log := proveThermometer(t, 128, mutate)
			require.False(t, proved, "a wrong thermometer passed the proof:\n%s", log)
		})
	}
}
