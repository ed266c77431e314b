package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/fpga"
)

func init() { extraCommands = append(extraCommands, newSummaryCmd) }

// newSummaryCmd prints the demo's summary table from a cosim JSON report and, when it exists,
// a synthesis JSON report.
func newSummaryCmd(g *globals) *cobra.Command {
	var cosimPath, synthPath string
	cmd := &cobra.Command{
		Use:   "summary",
		Short: "Print a summary table of a cosim report (and the Fmax of each block from a synth report, if present)",
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
			haveSynth := false
			if synthPath != "" {
				switch err := readJSON(synthPath, &syn); {
				case err == nil:
					haveSynth = true
				case errors.Is(err, fs.ErrNotExist):
				default:
					return &usageError{fmt.Errorf("--synth: %w", err)}
				}
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
