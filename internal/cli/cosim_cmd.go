package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/internal/pcapout"
	"github.com/mrgen/mrgen/internal/progress"
)

func init() { extraCommands = append(extraCommands, newCosimCmd) }

// errMismatch marks a co-simulation divergence (exit 1).
type errMismatch struct{ m *cosim.Mismatch }

func (e *errMismatch) Error() string { return e.m.Error() }

func newCosimCmd(g *globals) *cobra.Command {
	var block, scenario, vcd, pcap string
	var packets int
	var seed uint64
	var faults loopFaultFlags
	cmd := &cobra.Command{
		Use:   "cosim",
		Short: "Co-simulate a block's RTL, or the NIC in the closed loop, under Verilator against the golden model",
		Long:  "Runs the block's generated RTL in lockstep with its golden unit and compares every output.\n" + cosimScenarioHelp(),
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			// A closed-loop scenario named without --block runs the NIC top in the loop.
			if !cmd.Flags().Changed("block") && contains(cosim.LoopScenarios(), scenario) {
				block = "nic"
			}
			blk, err := blocks.Lookup(block)
			if err != nil {
				return &usageError{err}
			}
			if !contains(blk.Scenarios(), scenario) {
				return &usageError{fmt.Errorf("unknown %s scenario %q; scenarios: %s", block, scenario, strings.Join(blk.Scenarios(), ", "))}
			}
			if packets <= 0 {
				return &usageError{fmt.Errorf("--packets must be positive, got %d", packets)}
			}
			if pcap != "" && block != "parser" && block != "nic" {
				return &usageError{fmt.Errorf("--pcap is for --block parser (every input frame) or the closed loop (the traffic before a mismatch), got --block %s", block)}
			}
			if set := faults.changed(cmd); len(set) > 0 && block != "nic" {
				return &usageError{fmt.Errorf("--%s applies to the closed-loop scenarios (%s) only", set[0], strings.Join(cosim.LoopScenarios(), ", "))}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			opt := cosim.Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
				Stamp: blocks.Stamp(Version, g.configPath, block, c), VCD: vcd}
			if g.verbose {
				opt.Log = g.stderr
			}
			pr := progress.New(g.stderr, "cosim "+block+"/"+scenario, "packets", packets)
			opt.Progress = pr.Update
			opt.Faults = faults.overrides(cmd)
			if block == "nic" {
				if err := cosim.CheckLoop(opt); err != nil {
					return &usageError{err}
				}
			}
			var res *cosim.Result
			if block == "nic" {
				if pcap == "" {
					pcap = filepath.Join("out", "mismatch.pcap")
				}
				opt.Pcap = pcap
				res, err = blk.Cosim(ctx, opt)
			} else if pcap != "" {
				res, err = cosimParserPcap(ctx, opt, pcap)
			} else {
				res, err = blk.Cosim(ctx, opt)
			}
			pr.End(err)
			if err != nil {
				return err
			}
			if g.json {
				if err := g.emitJSON(res); err != nil {
					return err
				}
			} else {
				printCosim(g, res)
			}
			if res.Mismatch != nil {
				return &errMismatch{res.Mismatch}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&block, "block", "sack", "block to co-simulate")
	f.StringVar(&scenario, "scenario", "random", "stimulus scenario")
	f.IntVar(&packets, "packets", 100000, "data packets to run")
	f.Uint64Var(&seed, "seed", 1, "stimulus seed")
	f.StringVar(&vcd, "vcd", filepath.Join("out", "mismatch.vcd"), "where to dump the cycles around a mismatch (\"\" = no VCD)")
	f.StringVar(&pcap, "pcap", "", "parser: record every input frame in this nanosecond pcap (time = cycle x clock period), notes in FILE.notes.jsonl; closed loop: where the traffic before a mismatch goes (default out/mismatch.pcap)")
	faults.register(f)
	return cmd
}

// cosimParserPcap runs the parser cosim recording every input frame at its cycle's time
// (target_clock_mhz) in a pcap, with the golden verdict of each in the notes sidecar.
func cosimParserPcap(ctx context.Context, opt cosim.Options, path string) (*cosim.Result, error) {
	w, err := pcapout.Create(path, pcapout.Options{Sidecar: true})
	if err != nil {
		return nil, &usageError{fmt.Errorf("--pcap %s: %w", path, err)}
	}
	psPerCycle := 1e6 / float64(opt.Config.TargetClockMHz)
	res, err := cosim.RunParserTap(ctx, opt, func(cycle uint64, frame []byte, note string) error {
		return w.Write(pcapout.Frame{PS: uint64(float64(cycle) * psPerCycle), Data: frame, Note: note})
	})
	if cerr := w.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("--pcap %s: %w", path, cerr)
	}
	return res, err
}

func printCosim(g *globals, r *cosim.Result) {
	w := g.stdout
	fmt.Fprintf(w, "cosim %s, scenario %s, seed %d\n", r.Block, r.Scenario, r.Seed)
	fmt.Fprintf(w, "  packets %d, acks %d, outputs compared %d, mismatches %d, resets %d\n", r.Packets, r.Acks, r.Compared, r.Mismatches, r.Resets)
	fmt.Fprintf(w, "  rtl cycles %d\n", r.RTLCycles)
	for _, k := range sortedKeys(r.DeclaredLatency) {
		fmt.Fprintf(w, "  latency %s %d..%d (declared %d)\n", k, r.MinLatency[k], r.MaxLatency[k], r.DeclaredLatency[k])
	}
	for _, k := range sortedKeys(r.Counts) {
		fmt.Fprintf(w, "  %-24s %d\n", k, r.Counts[k])
	}
	for _, k := range sortedKeys(r.Drops) {
		fmt.Fprintf(w, "  dropped %-16s %d\n", k, r.Drops[k])
	}
	fmt.Fprintf(w, "  %.2f s wall, %.0f packets/s (model %s)\n", r.WallSeconds, r.PacketsPerSecond, map[bool]string{true: "cached", false: "built"}[r.ModelCached])
	if r.Mismatch != nil {
		fmt.Fprintf(w, "MISMATCH on %s output %d at cycle %d\n  input: %s\n%s\n", r.Mismatch.Stream, r.Mismatch.Transaction, r.Mismatch.Cycle, r.Mismatch.Input, r.Mismatch.Diff)
		if r.Mismatch.VCD != "" {
			fmt.Fprintf(w, "  VCD of the cycles around it: %s\n", r.Mismatch.VCD)
		}
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cosimScenarioHelp lists every block's scenarios for the command's help text.
func cosimScenarioHelp() string {
	var b strings.Builder
	for _, n := range blocks.Names() {
		blk, err := blocks.Lookup(n)
		if err != nil || blk.Scenarios == nil {
			continue
		}
		fmt.Fprintf(&b, "Scenarios (%s): %s\n", n, strings.Join(blk.Scenarios(), ", "))
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
