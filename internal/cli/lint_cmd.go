package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/lint"
)

func init() { extraCommands = append(extraCommands, newLintCmd) }

// generateInto renders a block into dir (a temporary one when dir is empty) and returns the
// design and the directory.
func generateInto(g *globals, block, dir string) (*gen.Design, string, func(), error) {
	c, err := g.loadConfig()
	if err != nil {
		return nil, "", nil, err
	}
	if _, err := blocks.Lookup(block); err != nil {
		return nil, "", nil, &usageError{err}
	}
	d, err := blocks.Generate(block, c, blocks.Stamp(Version, g.configPath, block, c), nil)
	if err != nil {
		return nil, "", nil, err
	}
	cleanup := func() {}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "mrgen-"); err != nil {
			return nil, "", nil, fmt.Errorf("temp dir: %w", err)
		}
		tmp := dir
		cleanup = func() { os.RemoveAll(tmp) }
	}
	if err := d.Write(dir); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	return d, dir, cleanup, nil
}

func newLintCmd(g *globals) *cobra.Command {
	var out, block string
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Generate, then run Verilator -Wall, the Yosys latch/loop checks and Icarus on the RTL",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, dir, cleanup, err := generateInto(g, block, out)
			if err != nil {
				return err
			}
			defer cleanup()
			var log io.Writer
			if g.verbose {
				log = g.stderr
			}
			rep, err := lint.Run(context.Background(), d.RTLFiles(dir), d.Top, lint.Options{Log: log})
			if err != nil {
				return err
			}
			if g.json {
				if err := g.emitJSON(map[string]any{"block": block, "top": d.Top, "ok": rep.OK(), "report": rep}); err != nil {
					return err
				}
			} else {
				fmt.Fprint(g.stdout, rep.String())
			}
			if !rep.OK() {
				return fmt.Errorf("lint of %s failed: %d check(s)", d.Top, len(rep.Failures()))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "generate into this directory (default: a temporary one)")
	cmd.Flags().StringVar(&block, "block", blocks.Default, "block to lint")
	return cmd
}
