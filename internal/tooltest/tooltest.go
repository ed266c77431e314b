// Package tooltest gates tests on external EDA tools (verilator, yosys, iverilog, nextpnr-ice40,
// ...). Outside CI a missing tool skips the test with a loud message; with CI=true a missing
// tool fails the test, so a CI machine without the tools can never pass silently.
package tooltest

import (
	"os"
	"os/exec"
	"testing"
)

// Require skips (or, under CI=true, fails) t unless every named program is on PATH.
func Require(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			msg := "MISSING TOOL: " + p + " is not on PATH; run `make deps` (this test needs it)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip("\n\n*** SKIPPED: " + msg + " ***\n")
		}
	}
}
