package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/fpga"
	"github.com/mrgen/mrgen/qor"
)

func init() { extraCommands = append(extraCommands, newSummaryCmd) }

// newSummaryCmd prints the demo's summary table from a cosim JSON report and, when it exists,
// a synthesis JSON report.
func newSummaryCmd(g *globals) *cobra.Command {
	var cosimPath, synthPath, qorPath string
	cmd := &cobra.Command{
		Use:   "summary",
		Short: "Print a summary table of a cosim report (and each block's QoR and Fmax from qor and synth reports, if present)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res cosim.Result
			if err := readJSON(cosimPath, &res); err != nil {
				return &usageError{fmt.Errorf("--cosim: %w", err)}
			}
			var syn struct {
				Board  string         `json:"board"`
				Top    *fpga.Result   `json:"top"`
				Blocks []*fpga.Result `json:"blocks"`
			}
			var qr qor.Report
			haveQoR, err := readOptionalJSON("--qor", qorPath, &qr)
			if err != nil {
				return err
			}
			haveSynth, err := readOptionalJSON("--synth", synthPath, &syn)
			if err != nil {
				return err
			}
			w := g.stdout
			row := func(k string, v any) { fmt.Fprintf(w, "  %-28s %v\n", k, v) }
			fmt.Fprintf(w, "summary: %s / %s, seed %d\n", res.Block, res.Scenario, res.Seed)
			row("packets", res.Packets)
			row("outputs compared", res.Compared)
			row("mismatches", res.Mismatches)
			if v, ok := res.Counts["goodput_mbps"]; ok {
				row("goodput (Gb/s)", fmt.Sprintf("%.1f", float64(v)/1000))
			}
			for _, k := range []string{"messages_verified", "bytes_verified", "acks", "naks", "dma_writes", "completions", "data_frames",
				"dma_reads", "engine_answers", "data_packets_retx", "data_packets_moved", "fabric_loss_drops"} {
				if v, ok := res.Counts[k]; ok {
					row(k, v)
				}
			}
			reasons := make([]string, 0, len(res.Drops))
			for r := range res.Drops {
				reasons = append(reasons, r)
			}
			sort.Strings(reasons)
			if len(reasons) == 0 {
				row("drops", "none")
			}
			for _, r := range reasons {
				row("drops: "+r, res.Drops[r])
			}
			row("packets/s", fmt.Sprintf("%.0f", res.PacketsPerSecond))
			if haveQoR {
				for _, l := range qorLines(&qr) {
					row(l[0], l[1])
				}
			} else if qorPath != "" {
				row("QoR", "no QoR report (make qor)")
			}
			if !haveSynth {
				row("Fmax", "no synth report (make synth)")
				return nil
			}
			for _, b := range append(syn.Blocks, syn.Top) {
				if b == nil {
					continue
				}
				f := "did not place"
				if nf := b.DoesNotFit(); nf != "" {
					f = nf
				} else if b.FmaxMHz > 0 {
					f = fmt.Sprintf("%.1f MHz (target %d)", b.FmaxMHz, b.TargetMHz)
				}
				row("Fmax "+b.Top+" ("+syn.Board+")", f)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cosimPath, "cosim", "", "cosim JSON report (mrgen cosim --json)")
	cmd.Flags().StringVar(&synthPath, "synth", "", "synthesis JSON report (mrgen synth --json); skipped when missing")
	cmd.Flags().StringVar(&qorPath, "qor", "", "QoR JSON report (mrgen qor --json, make qor); skipped when missing")
	return cmd
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// qorLines are one summary row per block of a QoR report: its worst unit's critical path in
// FO4 (ASIC, pre-layout) and in LUT6 levels (UltraScale+) against the report's budgets, "ok"
// or "OVER".
func qorLines(r *qor.Report) [][2]string {
	type worst struct {
		fo4, levels         float64
		fo4Unit, levelsUnit string
	}
	byBlock := map[string]*worst{}
	var order []string
	for _, u := range r.Units {
		w := byBlock[u.Block]
		if w == nil {
			w = &worst{fo4: -1, levels: -1}
			byBlock[u.Block] = w
			order = append(order, u.Block)
		}
		if u.ASIC != nil && u.ASIC.CriticalFO4 > w.fo4 {
			w.fo4, w.fo4Unit = u.ASIC.CriticalFO4, u.Unit
		}
		if u.XCUP != nil && float64(u.XCUP.LUTLevels) > w.levels {
			w.levels, w.levelsUnit = float64(u.XCUP.LUTLevels), u.Unit
		}
	}
	verdict := func(v float64, budget int) string {
		if v <= float64(budget) {
			return "ok"
		}
		return "OVER"
	}
	var out [][2]string
	for _, b := range order {
		w := byBlock[b]
		var parts []string
		if w.fo4 >= 0 {
			parts = append(parts, fmt.Sprintf("%.1f FO4 / %d %s (%s)", w.fo4, r.BudgetFO4, verdict(w.fo4, r.BudgetFO4), w.fo4Unit))
		}
		if w.levels >= 0 {
			parts = append(parts, fmt.Sprintf("%.0f LUT6 levels / %d %s (%s)", w.levels, r.BudgetLUTLevels, verdict(w.levels, r.BudgetLUTLevels), w.levelsUnit))
		}
		if len(parts) == 0 {
			parts = []string{"not measured"}
		}
		out = append(out, [2]string{"QoR " + b + " (" + r.Config + ")", strings.Join(parts, ", ")})
	}
	return out
}

// readOptionalJSON reads the report a flag names into v: false when the flag is empty or the
// file does not exist, a usage error naming the flag when it cannot be read.
func readOptionalJSON(flag, path string, v any) (bool, error) {
	if path == "" {
		return false, nil
	}
	switch err := readJSON(path, v); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, &usageError{fmt.Errorf("%s: %w", flag, err)}
	}
}
