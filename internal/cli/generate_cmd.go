package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/internal/blocks"
)

func init() { extraCommands = append(extraCommands, newGenerateCmd) }

func newGenerateCmd(g *globals) *cobra.Command {
	var out, block string
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Render the configuration's RTL, filelist, FuseSoC core and manifest into --out",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, _, cleanup, err := generateInto(g, block, out)
			if err != nil {
				return err
			}
			defer cleanup()
			if g.json {
				files := make([]string, len(d.Files))
				for i, f := range d.Files {
					files[i] = filepath.Join(out, f.Path)
				}
				return g.emitJSON(map[string]any{"block": block, "top": d.Top, "out": out, "config_hash": d.Stamp.ConfigHash, "files": files})
			}
			fmt.Fprintf(g.stdout, "generated %s (top %s, %d modules) into %s\n", block, d.Top, len(d.Modules), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "out/"+"default", "output directory")
	cmd.Flags().StringVar(&block, "block", blocks.Default, "block to generate")
	return cmd
}
