package handoff

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/fpga"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/qor"
)

// synthesisTargets are the FPGA views in reports/synthesis/: UltraScale+ (LUT6 levels, an Fmax
// estimate, synth_xilinx resources on the Alveo U55C's device) and iCE40 (nextpnr on the HX8K).
var synthesisTargets = []qor.Target{qor.XCUP, qor.ICE40}

// synthesisBoard is the iCE40 board of reports/synthesis/.
const synthesisBoard = "ice40-hx8k"

// synthesisReports measures the units of the blocks (synthesisDesigns; nic_top composed of the
// units below it) on synthesisTargets, and returns reports/synthesis/: one JSON file per
// unit and a summary table. A unit that does not fit the HX8K at the bundle's configuration is
// reported so: the bundle has one configuration, so there is no fit search over others. What
// changes from run to run (times, the work folder's paths) is left out, so the files are the same
// for the same configuration and commit.
//
// The files are kept in the tool cache (Options.ToolCache).
func synthesisReports(ctx context.Context, opt Options, cache *toolCache, bds []qor.BlockDesign, steps int,
	work string, step func()) (map[string][]byte, error) {
	designs := make([]*gen.Design, len(bds))
	for i, bd := range bds {
		designs[i] = bd.Design
	}
	key := cache.key("synthesis", opt.Config.Hash(), designs, "")
	if files, ok := cache.load(key); ok {
		logf(opt.Log, "handoff: synthesis reports from the tool cache (%s)\n", key)
		for range steps {
			step()
		}
		return files, nil
	}
	last := 0 // qor.Run reports progress from one goroutine
	rep, err := qor.Run(ctx, qor.Options{Targets: synthesisTargets, WorkDir: filepath.Join(work, "work"), Jobs: gateJobs,
		Model: qor.DefaultMacroModel, Part: qor.XCU55C, Board: synthesisBoard,
		Progress: func(done, _ int) {
			for ; last < done; last++ {
				step()
			}
		}}, bds)
	if err != nil {
		return nil, fmt.Errorf("handoff: synthesis reports: %w", err)
	}
	files := map[string][]byte{}
	for i := range rep.Units {
		ur := withoutRunDetails(rep.Units[i])
		text, err := json.MarshalIndent(ur, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
		files["reports/synthesis/"+ur.Unit+".json"] = append(text, '\n')
	}
	files["reports/synthesis/summary.md"] = []byte(synthesisSummary(rep, opt.Config.Name))
	if err := cache.store(key, files); err != nil {
		return nil, err
	}
	return files, nil
}

// synthesisDesigns generates the QoR blocks for the bundle's configuration under work and returns
// them with the number of measurements synthesisReports will make (one per unit and target,
// each unit once). With units nil they list every unit mrgen qor measures, so that each unit is
// composed of the same parts as in mrgen qor and its figures are the QoR flow's; otherwise only
// units (each must be a unit of some block).
func synthesisDesigns(opt Options, stamp func(string) gen.Stamp, units []string, work string) ([]qor.BlockDesign, int, error) {
	left := map[string]bool{}
	for _, u := range units {
		left[u] = true
	}
	seen := map[string]bool{}
	var bds []qor.BlockDesign
	for _, b := range blocks.QoROrder {
		bd, err := blocks.QoRDesign(b, opt.Config, stamp(b), filepath.Join(work, "rtl", b))
		if err != nil {
			return nil, 0, fmt.Errorf("handoff: synthesis of %s: %w", b, err)
		}
		// Each unit once, in the first block that has it (as qor.Run measures it).
		bd.Units = slices.DeleteFunc(bd.Units, func(u string) bool { return seen[u] || units != nil && !left[u] })
		for _, u := range bd.Units {
			seen[u] = true
			delete(left, u)
		}
		if len(bd.Units) > 0 {
			bds = append(bds, bd)
		}
	}
	if len(left) > 0 {
		return nil, 0, fmt.Errorf("handoff: synthesis: no QoR block has %v", slices.Sorted(maps.Keys(left)))
	}
	return bds, len(seen) * len(synthesisTargets), nil
}

// withoutRunDetails is a unit's report without what differs between two runs of the same
// design: run times and the paths of the work folder's logs.
func withoutRunDetails(ur qor.UnitReport) qor.UnitReport {
	if ur.XCUP != nil {
		x := *ur.XCUP
		x.Seconds, x.Logs = 0, nil
		ur.XCUP = &x
	}
	if ur.ICE40 != nil {
		r := *ur.ICE40
		r.Seconds = 0
		r.Result, r.Fit = fpgaWithoutRunDetails(r.Result), fpgaWithoutRunDetails(r.Fit)
		ur.ICE40 = &r
	}
	return ur
}

func fpgaWithoutRunDetails(r *fpga.Result) *fpga.Result {
	if r == nil {
		return nil
	}
	c := *r
	c.SynthSeconds, c.PnRSeconds, c.LogPaths = 0, 0, nil
	return &c
}

// synthesisSummary is reports/synthesis/summary.md: one row per unit.
func synthesisSummary(rep *qor.Report, configName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Synthesis estimates: %s\n\n", configName)
	b.WriteString("FPGA views of every unit at this configuration, from the QoR flow (`mrgen qor --target xcup,ice40 " +
		"--fit-configs=`). These are estimates for sizing and for comparing units, not sign-off:\n\n" +
		"- **UltraScale+**: LUT6 levels register to register (generic `synth -lut 6`, memories that are macros " +
		"as registered boundaries), an Fmax estimate from them at " + fmt.Sprintf("%.2f", qor.NSPerLevel) +
		" ns a level (a rule of thumb, not timing), and `synth_xilinx -family xcup` resources against the " +
		qor.XCU55C.Name + " (no place and route).\n" +
		"- **iCE40 HX8K**: Yosys `synth_ice40` and nextpnr place and route (one seed) in a board wrapper " +
		"with registered outputs, at the configuration's clock. LUTs, flip-flops and RAMs are the unit's own; " +
		"the wrapper's are apart. A unit that needs more than the device is not placed.\n\n" +
		"A unit with parts measured on their own (nic_top) is composed of their results: its own logic is " +
		"synthesized with them as black boxes. One JSON file per unit holds every figure, the critical " +
		"paths and the cell counts.\n\n")
	b.WriteString("| unit | LUT6 levels | Fmax estimate (MHz) | LUTs | LUTRAM | FFs | RAMB36 | RAMB18 | URAM | DSP | iCE40 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	units := append([]qor.UnitReport(nil), rep.Units...)
	sort.Slice(units, func(i, j int) bool { return units[i].Unit < units[j].Unit })
	for _, u := range units {
		fmt.Fprintf(&b, "| %s | ", u.Unit)
		if x := u.XCUP; x != nil {
			fmt.Fprintf(&b, "%d | %.0f | %d | %d | %d | %d | %d | %d | %d | ", x.LUTLevels, x.FmaxEstimateMHz, x.LUTs,
				x.LUTRAM, x.FFs, x.RAMB36, x.RAMB18, x.URAM, x.DSP)
		} else {
			b.WriteString("— | — | — | — | — | — | — | — | — | ")
		}
		ice := "—"
		if u.ICE40 != nil {
			ice = u.ICE40.Summary()
		}
		fmt.Fprintf(&b, "%s |\n", strings.ReplaceAll(ice, "|", "/"))
	}
	return b.String()
}
