package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/fpga"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/internal/progress"
)

func init() { extraCommands = append(extraCommands, newSynthCmd) }

// synthReport is the JSON contract of `mrgen synth` (DESIGN.md).
type synthReport struct {
	Board  string         `json:"board"`
	Device string         `json:"device"`
	Top    *fpga.Result   `json:"top"`
	Blocks []*fpga.Result `json:"blocks"`
	// TopError says why the top did not place (e.g. more RAM than the device has).
	TopError string `json:"top_error,omitempty"`
}

func newSynthCmd(g *globals) *cobra.Command {
	var board, out, block string
	var seed int
	var blocksOnly bool
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Synthesize and place-and-route each block and the top for an FPGA board; report LUTs, FFs, RAMs, Fmax",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := fpga.LookupBoard(board)
			if err != nil {
				return &usageError{err}
			}
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			blk, err := blocks.Lookup(block)
			if err != nil {
				return &usageError{err}
			}
			d, dir, cleanup, err := generateInto(g, block, filepath.Join(out, "rtl-src"))
			if err != nil {
				return err
			}
			defer cleanup()
			units, top, err := blk.SynthUnits(c)
			if err != nil {
				return err
			}
			var log io.Writer
			if g.verbose {
				log = g.stderr
			}
			rep := synthReport{Board: b.Name, Device: b.Device}
			files := d.RTLFiles(dir)
			type target struct {
				mod   *hdl.Module
				isTop bool
			}
			var targets []target
			topIsUnit := false
			for _, m := range units {
				targets = append(targets, target{m, false})
				topIsUnit = topIsUnit || m.Name == top.Name
			}
			// A block whose top is one of its units (window, placement, parser) is placed once.
			if !blocksOnly && !topIsUnit {
				targets = append(targets, target{top, true})
			}
			pr := progress.New(g.stderr, "synth "+block+" on "+b.Name, "modules", len(targets))
			defer pr.Stop() // a failed module: no final line (Finish below on success)
			pr.Update(0, len(targets))
			for i, m := range targets {
				fmt.Fprintf(pr, "synth %s on %s ...\n", m.mod.Name, b.Name)
				r, err := fpga.Synth(context.Background(), fpga.SynthRequest{Board: b.Name, Module: m.mod, Files: files,
					TargetMHz: c.TargetClockMHz, WorkDir: filepath.Join(out, m.mod.Name), Seed: seed,
					Wrapper: fpga.WrapperOptions{Version: Version, Command: "mrgen synth --board " + b.Name,
						ConfigHash: c.Hash(), RegisteredOutputs: true}}, log)
				pr.Update(i+1, len(targets))
				if err != nil {
					if m.isTop {
						rep.TopError = err.Error()
						continue
					}
					return fmt.Errorf("synth %s: %w", m.mod.Name, err)
				}
				if m.isTop {
					rep.Top = r
				} else {
					rep.Blocks = append(rep.Blocks, r)
				}
			}
			if !blocksOnly && topIsUnit {
				for _, r := range rep.Blocks {
					if r.Top == top.Name {
						rep.Top = r
					}
				}
			}
			pr.Finish()
			if g.json {
				return g.emitJSON(rep)
			}
			w := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintf(w, "module\tLUTs\tFFs\tRAMs\tFmax MHz\ttarget\tcritical path\n")
			rows := append([]*fpga.Result(nil), rep.Blocks...)
			if rep.Top != nil && !topIsUnit {
				rows = append(rows, rep.Top)
			}
			for _, r := range rows {
				path := r.CriticalPath
				if nf := r.DoesNotFit(); nf != "" {
					path = nf
				}
				fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.1f\t%d\t%s\n", r.Top, r.LUTs, r.FFs, r.RAMs, r.FmaxMHz, r.TargetMHz, path)
			}
			if rep.TopError != "" {
				fmt.Fprintf(w, "%s\t-\t-\t-\t-\t-\t%s\n", top.Name, oneLine(rep.TopError))
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&board, "board", "ice40-hx8k", "board: "+fmt.Sprint(fpga.BoardNames()))
	f.StringVar(&out, "out", filepath.Join("out", "synth"), "work directory for netlists, reports and logs")
	f.IntVar(&seed, "seed", 1, "nextpnr placement seed")
	f.BoolVar(&blocksOnly, "blocks-only", false, "skip the top (all units together)")
	f.StringVar(&block, "block", blocks.Default, "block to synthesize")
	return cmd
}
