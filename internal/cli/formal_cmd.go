package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/formal"
	"github.com/mrgen/mrgen/internal/blocks"
)

func init() { extraCommands = append(extraCommands, newFormalCmd) }

// formalReport is `mrgen formal --json`.
type formalReport struct {
	Config  string            `json:"config"`
	Depth   int               `json:"depth"`
	Limit   float64           `json:"limit_seconds"`
	Results []formalRunResult `json:"results"`
}

type formalRunResult struct {
	Block string `json:"block"`
	Rule  string `json:"rule"`
	formal.Verdict
}

func newFormalCmd(g *globals) *cobra.Command {
	var block, props, out string
	var depth int
	var limit float64
	cmd := &cobra.Command{
		Use:   "formal",
		Short: "Prove the blocks' formal properties (abc pdr), or search them for counterexamples (bmc3)",
		Long: `formal checks each labelled property of a block's ` + "`ifdef FORMAL" + ` block alone: abc pdr
tries to prove it in every reachable state from reset; when that does not finish within --limit,
bmc3 searches --depth cycles from reset for a counterexample. Each property is reported as
proved, bounded (no counterexample within the depth) or failed, with the failing cycle and the
counterexample as a VCD under --out. Exit 1 when a property fails.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if depth < 1 || depth > 1000 {
				return &usageError{fmt.Errorf("--depth %d: out of range 1..1000", depth)}
			}
			if limit <= 0 || limit > 86400 {
				return &usageError{fmt.Errorf("--limit %g: out of range (0, 86400] seconds", limit)}
			}
			names := blocks.FormalBlocks()
			if block != "all" {
				if len(blocks.Properties(block)) == 0 {
					return &usageError{fmt.Errorf("block %q has no formal properties; blocks with them: %s",
						block, strings.Join(names, ", "))}
				}
				names = []string{block}
			}
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			want := map[string]bool{}
			for _, p := range strings.Split(props, ",") {
				if p = strings.TrimSpace(p); p != "" {
					want[p] = true
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep := formalReport{Config: c.Name, Depth: depth, Limit: limit}
			found := map[string]bool{}
			for _, b := range names {
				var todo []formal.Property
				for _, p := range blocks.Properties(b) {
					if len(want) == 0 || want[p.Label] {
						todo = append(todo, p)
						found[p.Label] = true
					}
				}
				if len(todo) == 0 {
					continue
				}
				d, rtl, _, err := generateInto(g, b, filepath.Join(out, b))
				if err != nil {
					return err
				}
				for _, p := range todo {
					if g.verbose {
						fmt.Fprintf(g.stderr, "formal: %s %s.%s ...\n", b, p.Top, p.Label)
					}
					v, err := formal.Check(ctx, formal.Request{Files: d.RTLFiles(rtl), Top: p.Top, Property: p.Label,
						Depth: depth, Limit: time.Duration(limit * float64(time.Second)),
						WorkDir: filepath.Join(out, b, "work")})
					if err != nil {
						return err
					}
					if v.Trace != "" {
						v.Trace = filepath.Join(out, b, "work", v.Trace)
					}
					rep.Results = append(rep.Results, formalRunResult{Block: b, Rule: p.Rule, Verdict: *v})
				}
			}
			for p := range want {
				if !found[p] {
					return &usageError{fmt.Errorf("--property %s: no such property in %s", p, strings.Join(names, ", "))}
				}
			}
			failed := 0
			for _, r := range rep.Results {
				if r.Status == formal.Failed {
					failed++
				}
			}
			if g.json {
				if err := g.emitJSON(rep); err != nil {
					return err
				}
			} else {
				printFormal(g, rep)
			}
			if failed > 0 {
				return fmt.Errorf("formal: %d of %d properties fail (counterexamples under %s)", failed, len(rep.Results), out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&block, "block", "all", "block to check: all, or one of "+strings.Join(blocks.FormalBlocks(), ", "))
	cmd.Flags().StringVar(&props, "property", "", "check only these properties (labels, comma-separated)")
	cmd.Flags().IntVar(&depth, "depth", 20, "cycles from reset the bounded search covers when a proof does not finish")
	cmd.Flags().Float64Var(&limit, "limit", 60, "seconds each engine may run per property")
	cmd.Flags().StringVar(&out, "out", filepath.Join("out", "formal"), "work directory: generated RTL, models, counterexample VCDs")
	return cmd
}

func printFormal(g *globals, rep formalReport) {
	fmt.Fprintf(g.stdout, "formal at %s (bounded search %d cycles, %g s per engine):\n", rep.Config, rep.Depth, rep.Limit)
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "block\tmodule\tproperty\tstatus\tengine\tseconds\tdetail")
	for _, r := range rep.Results {
		detail := ""
		switch r.Status {
		case formal.Bounded:
			detail = fmt.Sprintf("no counterexample in %d cycles", r.Depth)
		case formal.Failed:
			detail = fmt.Sprintf("fails in cycle %d: %s", r.Frame, r.Trace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n", r.Block, r.Top, r.Property, r.Status, r.Engine, r.Seconds, detail)
	}
	tw.Flush()
}
