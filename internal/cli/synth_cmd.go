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
	"github.com/mrgen/mrgen/hdl/sack"
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
	var board, out string
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
			d, dir, cleanup, err := generateInto(g, "sack", filepath.Join(out, "rtl-src"))
			if err != nil {
				return err
			}
			defer cleanup()
			u, err := sack.New(c)
			if err != nil {
				return err
			}
			var log io.Writer
			if g.verbose {
				log = g.stderr
			}
			rep := synthReport{Board: b.Name, Device: b.Device}
			files := d.RTLFiles(dir)
			for _, m := range []struct {
				mod   *hdl.Module
				isTop bool
			}{{u.RxModule(), false}, {u.TxModule(), false}, {u.UnitModule(), true}} {
				if m.isTop && blocksOnly {
					continue
				}
				fmt.Fprintf(g.stderr, "synth %s on %s ...\n", m.mod.Name, b.Name)
				r, err := fpga.Synth(context.Background(), fpga.SynthRequest{Board: b.Name, Module: m.mod, Files: files,
					TargetMHz: c.TargetClockMHz, WorkDir: filepath.Join(out, m.mod.Name), Seed: seed,
					Wrapper: fpga.WrapperOptions{Version: Version, Command: "mrgen synth --board " + b.Name,
						ConfigHash: c.Hash(), RegisteredOutputs: true}}, log)
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
			if g.json {
				return g.emitJSON(rep)
			}
			w := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintf(w, "module\tLUTs\tFFs\tRAMs\tFmax MHz\ttarget\tcritical path\n")
			rows := append([]*fpga.Result(nil), rep.Blocks...)
			if rep.Top != nil {
				rows = append(rows, rep.Top)
			}
			for _, r := range rows {
				fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.1f\t%d\t%s\n", r.Top, r.LUTs, r.FFs, r.RAMs, r.FmaxMHz, r.TargetMHz, r.CriticalPath)
			}
			if rep.TopError != "" {
				fmt.Fprintf(w, "%s\t-\t-\t-\t-\t-\t%s\n", sack.Top, oneLine(rep.TopError))
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&board, "board", "ice40-hx8k", "board: "+fmt.Sprint(fpga.BoardNames()))
	f.StringVar(&out, "out", filepath.Join("out", "synth"), "work directory for netlists, reports and logs")
	f.IntVar(&seed, "seed", 1, "nextpnr placement seed")
	f.BoolVar(&blocksOnly, "blocks-only", false, "skip the top (both sides together)")
	return cmd
}
