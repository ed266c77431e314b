package qor_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/qor"
)

// GateConfig is the configuration the QoR gate of make test measures: the smallest NIC.
const GateConfig = "../configs/synth/nic-tiny.yaml"

// gateSkips are units the gate leaves to make qor (none: nic_top is composed of the others'
// results, a few seconds of its own glue).
var gateSkips = map[string]bool{}

// TestQoRGate is the QoR gate of make test: the ASIC and LUT-depth flows on every unit of every
// block at the smallest configuration, nic_top included, held to the committed
// budgets (budgets.json). A figure more than the file's tolerance above its budget fails; so
// does a unit without budgets.
func TestQoRGate(t *testing.T) {
	if testing.Short() {
		t.Skip("the QoR gate synthesizes every block (minutes)")
	}
	if err := qor.Check(qor.ASIC, qor.XCUP); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip("\n\n*** SKIPPED: " + err.Error() + " ***\n")
	}
	c, err := config.Load(GateConfig)
	require.NoError(t, err)
	dir := t.TempDir()
	var bds []qor.BlockDesign
	for _, b := range blocks.QoROrder {
		bd, err := blocks.QoRDesign(b, c, gen.Stamp{Version: "gate", Command: "go test", ConfigName: c.Name,
			ConfigHash: c.Hash()}, filepath.Join(dir, "rtl", b))
		require.NoError(t, err)
		var units []string
		for _, u := range bd.Units {
			if !gateSkips[u] {
				units = append(units, u)
			}
		}
		bd.Units = units
		bds = append(bds, bd)
	}
	rep, err := qor.Run(context.Background(), qor.Options{Targets: []qor.Target{qor.ASIC, qor.XCUP}, DepthOnly: true,
		WorkDir: filepath.Join(dir, "work"), Jobs: runtime.NumCPU(), Model: qor.DefaultMacroModel, Part: qor.XCU55C}, bds)
	require.NoError(t, err)
	top, ok := rep.Unit("nic_top")
	require.True(t, ok)
	require.Equal(t, []string{"nic_egress_merge", "nic_rx", "nic_tx", "tx_engine"}, top.ASIC.ComposedOf,
		"nic_top is composed of the units below it")
	require.Equal(t, top.ASIC.ComposedOf, top.XCUP.ComposedOf)
	budgets, err := qor.LoadBudgets("budgets.json")
	require.NoError(t, err)
	viol, unmeasured := budgets.Check(rep)
	for _, v := range viol {
		t.Errorf("over budget: %s", v)
	}
	for _, b := range unmeasured {
		if b.Metric != qor.MetricLUTs && !gateSkips[b.Unit] { // the gate measures depth, not resources
			t.Errorf("budget not measured: %+v", b)
		}
	}
	have := map[string]bool{}
	for _, b := range budgets.Budgets {
		if b.Config == c.Name {
			have[b.Unit+" "+b.Metric] = true
		}
	}
	for _, u := range rep.Units {
		t.Logf("%-18s %6.2f ns %5.0f FO4  %3d LUT6 levels  %s -> %s", u.Unit, u.ASIC.CriticalNS, u.ASIC.CriticalFO4,
			u.XCUP.LUTLevels, u.ASIC.Start, u.ASIC.End)
		for _, m := range []string{qor.MetricCriticalNS, qor.MetricLUTLevels, qor.MetricMemoryBits} {
			if m == qor.MetricMemoryBits && u.MemoryBits == 0 {
				continue // a unit without memories (the CRC units)
			}
			require.True(t, have[u.Unit+" "+m], "budgets.json has no %s budget for %s at %s", m, u.Unit, c.Name)
		}
	}
}
