package handoff

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/internal/tooltest"
	"github.com/mrgen/mrgen/qor"
)

// TestSynthesisReports measures two of the nic-tiny bundle's modules on both FPGA targets, as a
// bundle's reports/synthesis/ does for all of them (TestHandoffBundle builds with NoSynthesis:
// every unit takes about 20 minutes of CPU at nic-tiny; the default-configuration bundle of
// BENCHMARKS.md has it), then takes the same files from the tool cache.
func TestSynthesisReports(t *testing.T) {
	t.Parallel()
	tooltest.Require(t, "yosys", "nextpnr-ice40")
	c, err := config.Load("../configs/synth/nic-tiny.yaml")
	require.NoError(t, err)
	opt := Options{Config: c, Version: "test"}
	stamp := func(b string) gen.Stamp { return blocks.Stamp("test", "configs/synth/nic-tiny.yaml", b, c) }
	work := t.TempDir()

	_, _, err = synthesisDesigns(opt, stamp, []string{"rx_parser", "no_such_module"}, filepath.Join(work, "bad"))
	require.ErrorContains(t, err, "no_such_module")

	bds, steps, err := synthesisDesigns(opt, stamp, []string{"rx_parser", "sack_unit"}, filepath.Join(work, "designs"))
	require.NoError(t, err)
	require.Equal(t, 4, steps, "two modules, two targets")
	cache := openToolCache(filepath.Join(work, "cache"), map[string]string{"yosys": "test"})
	require.NotNil(t, cache)
	n := 0
	files, err := synthesisReports(context.Background(), opt, cache, bds, steps, filepath.Join(work, "a"), func() { n++ })
	require.NoError(t, err)
	require.Equal(t, steps, n, "a step per measurement")
	require.Len(t, files, 3)
	summary := string(files["reports/synthesis/summary.md"])
	for _, unit := range []string{"rx_parser", "sack_unit"} {
		var ur qor.UnitReport
		require.NoError(t, json.Unmarshal(files["reports/synthesis/"+unit+".json"], &ur), unit)
		require.NotNil(t, ur.XCUP, unit)
		require.Positive(t, ur.XCUP.LUTLevels, unit)
		require.Positive(t, ur.XCUP.LUTs, unit)
		require.Empty(t, ur.XCUP.Logs, "%s: no work-folder paths in the bundle", unit)
		require.Zero(t, ur.XCUP.Seconds, unit)
		require.NotNil(t, ur.ICE40, unit)
		require.Empty(t, ur.ICE40.Result.OverCapacity, "%s places on the HX8K at nic-tiny", unit)
		require.Positive(t, ur.ICE40.Result.FmaxMHz, unit)
		require.Positive(t, ur.ICE40.Share, unit)
		// A fit is a placement within 80% of the device (rx_parser fills more at nic-tiny).
		require.Equal(t, ur.ICE40.Share <= qor.FitFraction, ur.ICE40.Fits, "%s at %.1f%%", unit, 100*ur.ICE40.Share)
		require.Empty(t, ur.ICE40.Result.LogPaths, unit)
		require.Zero(t, ur.ICE40.Result.SynthSeconds, unit)
		require.Contains(t, summary, "| "+unit+" | ", unit)
	}

	// The same design again: the files come from the cache, the same bytes, every step reported.
	n = 0
	again, err := synthesisReports(context.Background(), opt, cache, bds, steps, filepath.Join(work, "b"), func() { n++ })
	require.NoError(t, err)
	require.Equal(t, steps, n)
	require.Equal(t, files, again)
}
