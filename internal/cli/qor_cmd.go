package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/fpga"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/internal/progress"
	"github.com/mrgen/mrgen/qor"
)

func init() { extraCommands = append(extraCommands, newQoRCmd) }

func newQoRCmd(g *globals) *cobra.Command {
	var block, target, out, board, budgets, why, fitGlob, unitList string
	var jobs int
	var depthOnly, update, whole bool
	cmd := &cobra.Command{
		Use:   "qor",
		Short: "Measure timing and area: ASIC (osu018, OpenSTA), UltraScale+ LUT depth and resources, iCE40",
		Long: "qor measures every block's units and the NIC top on three targets: asic (Yosys to the OSU 0.18 um\n" +
			"cells, fanout buffering, memories as macros, OpenSTA with the generated SDC; pre-layout), xcup\n" +
			"(LUT6 levels register to register and synth_xilinx resources) and ice40 (nextpnr on the HX8K;\n" +
			"a unit that does not fit is also placed at the largest configuration of --fit-configs that\n" +
			"fits in 80% of the device). A unit with measured units below it (nic_top) is composed of their\n" +
			"results: its own logic is synthesized with them as black boxes (--whole: synthesize it all).\n" +
			"--budgets checks the figures against committed budgets (exit 1\n" +
			"on a figure more than the file's tolerance above its budget).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			targets, err := qor.ParseTargets(target)
			if err != nil {
				return &usageError{err}
			}
			if _, err := fpga.LookupBoard(board); err != nil {
				return &usageError{err}
			}
			names := blocks.QoROrder
			if block != "" && block != "all" {
				if _, err := blocks.Lookup(block); err != nil {
					return &usageError{err}
				}
				if !contains(blocks.QoROrder, block) {
					return &usageError{fmt.Errorf("block %s has no QoR units; blocks: %s", block, strings.Join(blocks.QoROrder, ", "))}
				}
				names = []string{block}
			}
			if update && budgets == "" {
				return &usageError{errors.New("--update-budgets needs --budgets FILE")}
			}
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			if err := qor.Check(targets...); err != nil {
				return err
			}
			var bds []qor.BlockDesign
			want := map[string]bool{}
			for _, u := range strings.Split(unitList, ",") {
				if u = strings.TrimSpace(u); u != "" {
					want[u] = true
				}
			}
			found := map[string]bool{}
			for _, b := range names {
				bd, err := qorDesign(b, c, g.configPath, filepath.Join(out, "rtl", b))
				if err != nil {
					return err
				}
				if len(want) > 0 {
					var keep []string
					for _, u := range bd.Units {
						if want[u] {
							keep = append(keep, u)
							found[u] = true
						}
					}
					if bd.Units = keep; len(keep) == 0 {
						continue
					}
				}
				bds = append(bds, bd)
			}
			for u := range want {
				if !found[u] {
					return &usageError{fmt.Errorf("--unit %s: no such unit in blocks %s", u, strings.Join(names, ", "))}
				}
			}
			var fitCfgs []config.Config
			if fitGlob != "" {
				files, err := filepath.Glob(fitGlob)
				if err != nil {
					return &usageError{fmt.Errorf("--fit-configs %q: %w", fitGlob, err)}
				}
				for _, f := range files {
					fc, err := config.Load(f)
					if err != nil {
						return err
					}
					fitCfgs = append(fitCfgs, fc)
				}
			}
			opt := qor.Options{Targets: targets, WorkDir: filepath.Join(out, "work"), Jobs: jobs,
				Model: qor.DefaultMacroModel, Part: qor.XCU55C, Board: board, DepthOnly: depthOnly, Whole: whole}
			pr := progress.New(g.stderr, "qor "+c.Name, "measurements", 0)
			opt.Results, opt.Progress = pr, pr.Update
			if g.verbose {
				opt.Log = g.stderr
			}
			// The fit search's designs, generated once per block and configuration (the
			// measurements of a block's units run at once).
			var fitMu sync.Mutex
			fitDesigns := map[string]qor.BlockDesign{}
			opt.Candidates = func(block, unit string) ([]qor.Candidate, error) {
				fitMu.Lock()
				defer fitMu.Unlock()
				var out2 []qor.Candidate
				for _, fc := range fitCfgs {
					if fc.Name == c.Name {
						continue
					}
					key := fc.Name + "/" + block
					bd, ok := fitDesigns[key]
					if !ok {
						var err error
						if bd, err = qorDesign(block, fc, g.configPath, filepath.Join(out, "rtl-fit", fc.Name, block)); err != nil {
							return nil, err
						}
						fitDesigns[key] = bd
					}
					u, err := qor.UnitOf(bd.Design, bd.Dir, unit, fc)
					if err != nil {
						return nil, err
					}
					out2 = append(out2, qor.Candidate{Config: fc.Name, Unit: u})
				}
				return out2, nil
			}
			rep, runErr := qor.Run(context.Background(), opt, bds)
			pr.End(runErr)
			if rep == nil {
				return runErr
			}
			rep.Command = fmt.Sprintf("mrgen --config %s qor --block %s --target %s", g.configPath, block, target)
			if depthOnly {
				rep.Command += " --depth-only"
			}
			if whole {
				rep.Command += " --whole"
			}
			if fitGlob != "" && contains(targets2strings(targets), "ice40") {
				rep.Command += " --fit-configs '" + fitGlob + "'"
			}
			var viol []qor.Violation
			if budgets != "" {
				b, err := qor.LoadBudgets(budgets)
				if err != nil {
					return err
				}
				if update {
					if err := b.Update(rep, why); err != nil {
						return &usageError{err}
					}
					if err := b.Write(budgets); err != nil {
						return err
					}
				}
				viol, _ = b.Check(rep)
			}
			if g.json {
				if err := g.emitJSON(qorJSON{Report: rep, Violations: violationStrings(viol)}); err != nil {
					return err
				}
			} else if err := printQoR(g, rep, viol); err != nil {
				return err
			}
			if runErr != nil {
				return runErr
			}
			if len(viol) > 0 {
				return fmt.Errorf("qor: %d figure(s) over budget: %s", len(viol), violationStrings(viol)[0])
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&block, "block", "all", "block to measure: all, or one of "+strings.Join(blocks.QoROrder, ", "))
	f.StringVar(&target, "target", "all", "target: asic, xcup, ice40, ecp5, a comma list of them, or all (asic, xcup and ice40)")
	f.StringVar(&unitList, "unit", "", "measure only these units (modules) of the blocks, comma-separated")
	f.StringVar(&out, "out", filepath.Join("out", "qor"), "work directory: generated RTL, netlists, reports, logs")
	f.StringVar(&board, "board", "ice40-hx8k", "iCE40 board of the ice40 target")
	f.StringVar(&budgets, "budgets", "", "check the figures against this budgets file (qor/budgets.json)")
	f.BoolVar(&update, "update-budgets", false, "write the figures into --budgets (lower ones always; higher ones need --why)")
	f.StringVar(&why, "why", "", "the reason a budget is raised (with --update-budgets)")
	f.StringVar(&fitGlob, "fit-configs", "configs/matrix/*.yaml", "configurations the ice40 fit search tries (glob; empty: none)")
	f.IntVar(&jobs, "jobs", runtime.NumCPU(), "units measured at once")
	f.BoolVar(&depthOnly, "depth-only", false, "xcup: LUT depth only, no resource count (faster)")
	f.BoolVar(&whole, "whole", false, "synthesize every unit whole, none composed of the units below it that the run measures")
	return cmd
}

// qorDesign generates block for c into dir.
func qorDesign(block string, c config.Config, configPath, dir string) (qor.BlockDesign, error) {
	return blocks.QoRDesign(block, c, blocks.Stamp(Version, configPath, block, c), dir)
}

func targets2strings(ts []qor.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func init() { extraCommands = append(extraCommands, newQoRDocCmd) }

func newQoRDocCmd(g *globals) *cobra.Command {
	var reports, out, svg string
	cmd := &cobra.Command{
		Use:   "qor-doc",
		Short: "Write docs/qor.md (tables, commands) and its SVG chart from mrgen qor --json reports",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reps, cmds, err := loadQoRReports(reports)
			if err != nil {
				return fmt.Errorf("qor-doc: %w", err)
			}
			cmds = append(cmds, "mrgen qor-doc --reports "+reports+" --out "+out+" --svg "+svg)
			md, chart := qor.Doc(reps, cmds, filepath.Base(svg))
			if err := writeAtomic(svg, []byte(chart)); err != nil {
				return err
			}
			return writeAtomic(out, []byte(md))
		},
	}
	f := cmd.Flags()
	f.StringVar(&reports, "reports", "", "mrgen qor --json reports, comma-separated, the default configuration first")
	f.StringVar(&out, "out", filepath.Join("docs", "qor.md"), "the page")
	f.StringVar(&svg, "svg", filepath.Join("docs", "qor-fo4.svg"), "the chart of critical paths in FO4")
	return cmd
}

// loadQoRReports reads mrgen qor --json reports (a comma list) and the commands that made them.
func loadQoRReports(list string) ([]*qor.Report, []string, error) {
	if list == "" {
		return nil, nil, &usageError{errors.New("--reports needs at least one mrgen qor --json report")}
	}
	var reps []*qor.Report
	var cmds []string
	for _, f := range strings.Split(list, ",") {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		var r qorJSON
		r.Report = &qor.Report{}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(r.Units) == 0 {
			return nil, nil, fmt.Errorf("%s: a report with no units", f)
		}
		reps = append(reps, r.Report)
		cmds = append(cmds, r.Command+" --json > "+f)
	}
	return reps, cmds, nil
}

func init() { extraCommands = append(extraCommands, newQoRBudgetsCmd) }

func newQoRBudgetsCmd(g *globals) *cobra.Command {
	var reports, budgets, why string
	cmd := &cobra.Command{
		Use:   "qor-budgets",
		Short: "Set the budgets of each report's configuration from saved mrgen qor --json reports",
		Long: "qor-budgets writes the figures of mrgen qor --json reports into a budgets file, as\n" +
			"mrgen qor --update-budgets does while measuring: new entries are added, lower figures lower\n" +
			"their budget, and a higher one raises it only with --why. Nothing is written on an error.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reps, _, err := loadQoRReports(reports)
			if err != nil {
				return fmt.Errorf("qor-budgets: %w", err)
			}
			b, err := qor.LoadBudgets(budgets)
			if err != nil {
				return err
			}
			for _, r := range reps {
				if err := b.Update(r, why); err != nil {
					return &usageError{err}
				}
			}
			if err := b.Write(budgets); err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "qor-budgets: %d budgets in %s\n", len(b.Budgets), budgets)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&reports, "reports", "", "mrgen qor --json reports, comma-separated")
	f.StringVar(&budgets, "budgets", filepath.Join("qor", "budgets.json"), "the budgets file")
	f.StringVar(&why, "why", "", "the reason a budget is raised")
	return cmd
}

// writeAtomic writes a file through a temporary one, so that a failure leaves no half-written file.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

type qorJSON struct {
	*qor.Report
	Violations []string `json:"violations"`
}

func violationStrings(v []qor.Violation) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = x.String()
	}
	return out
}

func printQoR(g *globals, rep *qor.Report, viol []qor.Violation) error {
	w := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintf(w, "unit\tasic ns\tFO4\tlevels\tLUT6 lvls\txcup LUTs\tiCE40\tcritical path (asic, pre-layout)\n")
	for _, u := range rep.Units {
		a, fo4, lv, path := "-", "-", "-", ""
		if u.ASIC != nil {
			a, fo4, lv = fmt.Sprintf("%.2f", u.ASIC.CriticalNS), fmt.Sprintf("%.0f", u.ASIC.CriticalFO4), fmt.Sprint(u.ASIC.Levels)
			path = u.ASIC.Start + " -> " + u.ASIC.End
		}
		x, luts := "-", "-"
		if u.XCUP != nil {
			x = fmt.Sprint(u.XCUP.LUTLevels)
			if u.XCUP.LUTs > 0 {
				luts = fmt.Sprint(u.XCUP.LUTs)
			}
		}
		ice := "-"
		if u.ICE40 != nil {
			ice = u.ICE40.Summary()
		}
		for t, e := range u.Errors {
			path += fmt.Sprintf(" [%s failed: %s]", t, oneLine(e))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", u.Unit, a, fo4, lv, x, luts, ice, path)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "config %s, budgets %d FO4 (%.1f ns), %d LUT6 levels, %d MHz on iCE40; %.0f s\n",
		rep.Config, rep.BudgetFO4, float64(rep.BudgetFO4)*rep.FO4NS, rep.BudgetLUTLevels, rep.BudgetICE40MHz, rep.Seconds)
	for _, v := range viol {
		fmt.Fprintf(g.stdout, "OVER BUDGET: %s\n", v)
	}
	return nil
}
