package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/internal/progress"
	"github.com/mrgen/mrgen/internal/regress"
)

func init() { extraCommands = append(extraCommands, newRegressCmd) }

func newRegressCmd(g *globals) *cobra.Command {
	var seedsFlag, shardFlag, vcdDir, out string
	var packets int
	var configs, suites, scenarios []string
	var list bool
	cmd := &cobra.Command{
		Use:   "regress --seeds A..B [--shard i/n] [--packets N] [--configs FILE,...]",
		Short: "Run many co-simulation jobs (suite x config x scenario x seed), sharded, with one report",
		Long: `Enumerates the jobs, suite by suite (every block's cosim, and any registered closed-loop
suite), then configuration (default: configs/default.yaml and configs/matrix/*.yaml, those the
suite accepts), scenario and seed, and runs those of the shard: job j when j mod n = i.
Prints a table (or, with --json, the report); exits 1 if any job failed.
'mrgen regress merge' puts shard reports back together. See docs/regress.md.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			seeds, err := regress.ParseSeeds(seedsFlag)
			if err != nil {
				return &usageError{err}
			}
			shard, err := regress.ParseShard(shardFlag)
			if err != nil {
				return &usageError{err}
			}
			plan, all, cfgs, err := regressPlan(configs, suites, scenarios, seeds, packets)
			if err != nil {
				return err
			}
			if list {
				return printPlan(g, plan, shard)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			regress.SetVersion(Version)
			pr := progress.New(g.stderr, "regress shard "+shard.String(), "jobs", plan.ShardJobs(shard))
			opt := regress.RunOptions{Shard: shard, Configs: cfgs, VCDDir: vcdDir, Progress: pr.Update}
			if g.verbose {
				opt.Log = pr
			}
			rep, runErr := regress.Run(ctx, all, plan, seeds, opt)
			pr.End(runErr)
			if rep == nil {
				return runErr
			}
			if err := emitReport(g, rep, out); err != nil {
				return err
			}
			if runErr != nil {
				return runErr
			}
			return rep.Err()
		},
	}
	f := cmd.Flags()
	f.StringVar(&seedsFlag, "seeds", "1..1", "seed range A..B (inclusive) or one seed")
	f.StringVar(&shardFlag, "shard", "0/1", "run the jobs j with j mod n = i (i/n, 0 ≤ i < n)")
	f.IntVar(&packets, "packets", 2000, "packets per job")
	f.StringSliceVar(&configs, "configs", nil, "configuration files (default configs/default.yaml and configs/matrix/*.yaml)")
	f.StringSliceVar(&suites, "suites", nil, "suites to run, e.g. sack,parser or block/window (default all)")
	f.StringSliceVar(&scenarios, "scenarios", nil, "only these scenarios (default every scenario of each suite)")
	f.StringVar(&vcdDir, "vcd-dir", "", "write a VCD window of each mismatching block job here")
	f.StringVar(&out, "out", "", "also write the JSON report to this file")
	f.BoolVar(&list, "list", false, "print the job list with each job's shard and exit")
	cmd.AddCommand(newRegressMergeCmd(g))
	return cmd
}

func newRegressMergeCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge REPORT.json...",
		Short: "Merge shard reports into one, checking that they cover the job list exactly once",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{fmt.Errorf("%s needs at least one report file", cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var reps []*regress.Report
			for _, p := range args {
				r, err := readReportFile(p)
				if err != nil {
					return &usageError{err}
				}
				reps = append(reps, r)
			}
			merged, cover := regress.Merge(reps)
			if merged == nil {
				return cover
			}
			if err := emitReport(g, merged, out); err != nil {
				return err
			}
			if cover != nil {
				return cover
			}
			return merged.Err()
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "also write the merged JSON report to this file")
	return cmd
}

func readReportFile(path string) (*regress.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	r, err := regress.ReadReport(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// regressPlan loads the configurations and suites and enumerates the job list.
func regressPlan(configPaths, suiteNames, scenarios []string, seeds regress.Seeds, packets int) (regress.Plan, []regress.Suite, map[string]config.Config, error) {
	fail := func(err error) (regress.Plan, []regress.Suite, map[string]config.Config, error) {
		if errors.Is(err, regress.ErrUsage) {
			err = &usageError{err}
		}
		return regress.Plan{}, nil, nil, err
	}
	defaults := len(configPaths) == 0
	if defaults {
		var err error
		if configPaths, err = regress.DefaultConfigPaths("."); err != nil {
			return fail(err)
		}
	}
	for i, p := range configPaths {
		configPaths[i] = filepath.Clean(p)
	}
	cfgs, err := regress.LoadConfigs(configPaths)
	if err != nil {
		if defaults {
			err = fmt.Errorf("%w (the default configuration set is relative to the repository root: run from the repository root or pass --configs)", err)
		}
		return fail(err) // config.ErrConfig: exit 2
	}
	all, err := regress.Suites()
	if err != nil {
		return fail(err)
	}
	sel, err := regress.SelectSuites(all, suiteNames)
	if err != nil {
		return fail(err)
	}
	plan, err := regress.Enumerate(sel, cfgs, scenarios, seeds, packets)
	if err != nil {
		return fail(err)
	}
	byPath := map[string]config.Config{}
	for _, c := range cfgs {
		byPath[c.Path] = c.Config
	}
	return plan, sel, byPath, nil
}

func printPlan(g *globals, p regress.Plan, shard regress.Shard) error {
	type line struct {
		Index int         `json:"index"`
		Shard int         `json:"shard"`
		Job   regress.Job `json:"job"`
	}
	lines := make([]line, len(p.Jobs))
	for i, j := range p.Jobs {
		lines[i] = line{i, i % shard.Count, j}
	}
	if p.Skipped == nil {
		p.Skipped = []string{}
	}
	if g.json {
		return g.emitJSON(map[string]any{"jobs_total": len(p.Jobs), "job_list_hash": p.Hash(), "shards": shard.Count, "jobs": lines, "skipped": p.Skipped})
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tshard\tsuite\tconfig\tscenario\tseed\tpackets\n")
	for _, l := range lines {
		fmt.Fprintf(tw, "%d\t%d/%d\t%s\t%s\t%s\t%d\t%d\n", l.Index, l.Shard, shard.Count, l.Job.Suite, l.Job.Config, l.Job.Scenario, l.Job.Seed, l.Job.Packets)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the job list: %w", err)
	}
	fmt.Fprintf(g.stdout, "%d jobs, list %s\n", len(p.Jobs), p.Hash()[:12])
	return nil
}

// emitReport prints the report (JSON or a table) and writes it to out when set.
func emitReport(g *globals, rep *regress.Report, out string) error {
	if out != "" {
		if err := writeReportFile(rep, out); err != nil {
			return err
		}
	}
	if g.json {
		return g.emitJSON(rep)
	}
	return printReport(g.stdout, rep)
}

func writeReportFile(rep *regress.Report, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	gw := &globals{stdout: f}
	if err := gw.emitJSON(rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

func printReport(w io.Writer, rep *regress.Report) error {
	shards := ""
	for i, s := range rep.Shards {
		if i > 0 {
			shards += ","
		}
		shards += s.String()
	}
	fmt.Fprintf(w, "regress seeds %s, shards %s: %d of %d jobs (list %.12s)\n", rep.Seeds, shards, rep.Totals.Jobs, rep.JobsTotal, rep.JobListHash)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tsuite\tconfig\tscenario\tseed\tpackets\tmismatches\twall s\tresult\n")
	for _, r := range rep.Results {
		res := "pass"
		if !r.Pass {
			res = "FAIL: " + r.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%.2f\t%s\n", r.Index, r.Suite, r.Config, r.Scenario, r.Seed, r.Packets, r.Mismatches, r.WallSeconds, res)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	t := rep.Totals
	verdict := "PASS"
	if !rep.Pass {
		verdict = "FAIL"
	}
	_, err := fmt.Fprintf(w, "totals: %d jobs, %d passed, %d failed, %d packets, %d mismatches, %.1f s: %s\n",
		t.Jobs, t.Passed, t.Failed, t.Packets, t.Mismatches, t.WallSeconds, verdict)
	return err
}
