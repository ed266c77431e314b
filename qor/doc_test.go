package qor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocSaysWhatWasMeasured: a column of "-" must read as "not measured in this run", so each
// configuration's section names the targets its report measured and those it did not.
func TestDocSaysWhatWasMeasured(t *testing.T) {
	for _, tc := range []struct {
		name      string
		targets   []Target
		depthOnly bool
		want      string
	}{
		{"all", Targets(), false, "Measured: ASIC (osu018, OpenSTA), UltraScale+, iCE40 HX8K.\n"},
		{"depth only", []Target{ASIC, XCUP}, true,
			"Measured: ASIC (osu018, OpenSTA), UltraScale+ (LUT depth only: no resources). Not measured in this run: iCE40 HX8K.\n"},
		{"ecp5 alone", []Target{ECP5}, false,
			"Measured: ECP5. Not measured in this run: ASIC (osu018, OpenSTA), UltraScale+, iCE40 HX8K.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Config: "default", Targets: tc.targets, DepthOnly: tc.depthOnly,
				Units: []UnitReport{{Unit: "sack_rx", Block: "sack"}}}
			md, _ := Doc([]*Report{r}, nil, "qor-fo4.svg")
			require.Contains(t, md, tc.want)
		})
	}
}
