package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/handoff"
	"github.com/mrgen/mrgen/internal/progress"
)

func init() { extraCommands = append(extraCommands, newHandoffCmd) }

func newHandoffCmd(g *globals) *cobra.Command {
	var out string
	var force bool
	var packets int
	var seed uint64
	var noTopGates, noSynthesis bool
	cmd := &cobra.Command{
		Use:   "handoff",
		Short: "Write the silicon handoff bundle: RTL, memory models, SDC, golden vectors, testbenches, verify.sh",
		Long: "handoff writes, for one configuration, a bundle a silicon team checks with no Go: the RTL with " +
			"the memory models apart, the memory list, the SDC, golden vectors recorded from co-simulation " +
			"runs that matched the golden model, a plain-Verilog testbench per block that replays them, " +
			"each block's and nic_top's osu018 netlist from the QoR flow with its timing report, UltraScale+ " +
			"and iCE40 synthesis estimates, the SACK " +
			"unit's bounded model check, SHA256SUMS, manifest.json and verify.sh (the hashes, then every " +
			"testbench under Icarus and Verilator, then on the netlists under Icarus). The bundle is built " +
			"in a temporary folder and renamed into place.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return &usageError{fmt.Errorf("--out is required")}
			}
			if packets <= 0 {
				return &usageError{fmt.Errorf("--packets %d: must be > 0", packets)}
			}
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			opt := handoff.Options{Config: c, ConfigPath: g.configPath, Version: Version, Out: out, Force: force,
				Packets: packets, Seed: seed, NoTopGates: noTopGates, NoSynthesis: noSynthesis}
			pr := progress.New(g.stderr, "handoff "+c.Name, "steps", 0)
			opt.Progress = pr.Update
			if g.verbose {
				opt.Log = pr
			}
			// Ctrl-C or a TERM cancels the build, which then removes its temporary folder.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			sum, err := handoff.Build(ctx, opt)
			pr.End(err)
			if errors.Is(err, handoff.ErrExists) {
				return &usageError{fmt.Errorf("%s: %w", out, err)}
			}
			if err != nil {
				return err
			}
			if g.json {
				return g.emitJSON(sum)
			}
			fmt.Fprintf(g.stdout, "handoff bundle in %s: %d files, %d bytes; vectors:", sum.Out, sum.Files, sum.Bytes)
			for _, m := range slices.Sorted(maps.Keys(sum.Transactions)) {
				fmt.Fprintf(g.stdout, " %s %d transactions", m, sum.Transactions[m])
			}
			fmt.Fprintf(g.stdout, "\nrun %s/verify.sh to check it\n", sum.Out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the bundle's folder (required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace a non-empty --out")
	cmd.Flags().IntVar(&packets, "packets", 300, "packets per recorded co-simulation scenario (300 give every block at least 10^4 transactions)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the recorded scenarios")
	cmd.Flags().BoolVar(&noTopGates, "no-top-gates", false, "leave nic_top's netlist out of the gate level "+
		"(its whole synthesis and gate-level simulation grow with the configuration; the blocks' netlists stay)")
	cmd.Flags().BoolVar(&noSynthesis, "no-synthesis", false, "leave reports/synthesis/ out (the UltraScale+ and iCE40 "+
		"estimates; their flows take minutes, tens of minutes at large configurations)")
	return cmd
}
