package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/internal/progress"
	"github.com/mrgen/mrgen/sim"
)

func init() { extraCommands = append(extraCommands, newSimCmd) }

func newSimCmd(g *globals) *cobra.Command {
	var o sim.Options
	var plotPath string
	var loss float64
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run a protocol experiment: MetaRoCE against the RoCEv2 baseline on the golden fabric",
		Long: "Runs the golden transport (and the RoCEv2 baseline, same fabric, traffic and seed) in one of the\n" +
			"scenarios " + strings.Join(sim.Scenarios(), ", ") + ". Every message is verified byte for byte.\n" +
			"Without --loss, the loss scenario sweeps " + fmt.Sprint(sim.LossSweep) + ".\n" +
			"Each point runs over --seeds seeds (--seed and those after it), --jobs at a time, and reports\n" +
			"every key figure's mean and 95% confidence interval (\"spread\" in the JSON).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			o.NIC = c
			o.Loss = loss
			if !cmd.Flags().Changed("loss") {
				o.Loss = -1
			}
			switch {
			case o.Loss > 0.5:
				return &usageError{fmt.Errorf("--loss %g: a probability in 0..0.5", o.Loss)}
			case o.Hosts < 0 || o.Hosts == 1 || o.Hosts > 256:
				return &usageError{fmt.Errorf("--hosts %d: 2..256", o.Hosts)}
			case o.Seeds < 1 || o.Seeds > 1000:
				return &usageError{fmt.Errorf("--seeds %d: 1..1000", o.Seeds)}
			case o.Jobs < 0:
				return &usageError{fmt.Errorf("--jobs %d: 0 (one per CPU) or more", o.Jobs)}
			case o.DurationUs < 0 || o.Planes < 0 || o.Incast < 0:
				return &usageError{fmt.Errorf("--duration-us, --planes and --incast must not be negative")}
			}
			if o.Pattern != "" && !contains(sim.Patterns(), o.Pattern) {
				return &usageError{fmt.Errorf("unknown pattern %q; patterns: %s", o.Pattern, strings.Join(sim.Patterns(), ", "))}
			}
			if o.Fail != "" && !contains(sim.Failures(), o.Fail) {
				return &usageError{fmt.Errorf("unknown failure %q; failures: %s", o.Fail, strings.Join(sim.Failures(), ", "))}
			}
			if !contains(sim.Scenarios(), o.Scenario) {
				return &usageError{fmt.Errorf("unknown scenario %q; scenarios: %s", o.Scenario, strings.Join(sim.Scenarios(), ", "))}
			}
			pr := progress.New(g.stderr, "sim "+o.Scenario, "runs", 0)
			o.Progress = pr.Update
			r, err := sim.Run(o)
			pr.End(err)
			if err != nil {
				return err
			}
			if plotPath != "" {
				if err := sim.Plot(r, plotPath); err != nil {
					return err
				}
			}
			if g.json {
				return g.emitJSON(r)
			}
			printSim(g, r)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Scenario, "scenario", "loss", "scenario: "+strings.Join(sim.Scenarios(), ", "))
	f.Float64Var(&loss, "loss", 0, "random loss probability per packet (loss: one point of the sweep)")
	f.IntVar(&o.Hosts, "hosts", 0, "hosts (0: the scenario's default)")
	f.StringVar(&o.Pattern, "pattern", "", "traffic pattern: all-to-all or ring")
	f.Uint64Var(&o.Seed, "seed", 1, "first seed of the fabric and the traffic")
	f.IntVar(&o.Seeds, "seeds", sim.DefaultSeeds, "seeds per point (mean and 95% interval over them)")
	f.IntVar(&o.Jobs, "jobs", 0, "runs at once (0: one per CPU)")
	f.Float64Var(&o.DurationUs, "duration-us", 0, "measurement window in microseconds (0: the scenario's default)")
	f.IntVar(&o.Planes, "planes", 0, "planes: one plane count (0: sweep 1, 2, 4, 8)")
	f.IntVar(&o.Incast, "incast", 0, "incast: senders (0: both 8 and 64)")
	f.StringVar(&o.Fail, "fail", "", "failure: spine or plane")
	f.IntVar(&o.InitCwnd, "init-cwnd", 0, fmt.Sprintf("initial window per path in packets (0: %d)", sim.DefaultInitCwnd))
	f.StringVar(&plotPath, "plot", "", "write the scenario's figure to this .svg or .png file")
	return cmd
}

func printSim(g *globals, r *sim.Result) {
	w := g.stdout
	pts := r.Points
	if len(pts) == 0 {
		pts = []sim.Result{*r}
	}
	seeds := 0
	if s, ok := pts[0].Params["seeds"].([]uint64); ok {
		seeds = len(s)
	}
	fmt.Fprintf(w, "sim %s, %d seeds per point: mean ± half the 95%% interval\n", r.Scenario, seeds)
	for _, q := range pts {
		keys := make([]string, 0, len(q.Params))
		for k := range q.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ps []string
		for _, k := range keys {
			if k == "seeds" {
				continue
			}
			ps = append(ps, fmt.Sprintf("%s=%v", k, q.Params[k]))
		}
		fmt.Fprintf(w, "  %s\n", strings.Join(ps, " "))
		row := func(f *sim.Figures, name string) {
			if f == nil {
				return
			}
			sp := f.Spread
			fmt.Fprintf(w, "    %-10s goodput %s (%s Gb/s)  retx %s (spurious %s)  verified %.0f/%.0f msgs  p99 FCT %s us  peak queue %s B",
				name, meanCI(sp, "goodput_fraction", "%.3f"), meanCI(sp, "goodput_gbps", "%.0f"), meanCI(sp, "retransmissions", "%.0f"),
				meanCI(sp, "spurious_retransmissions", "%.0f"), total(sp, "messages_verified"), total(sp, "messages"),
				meanCI(sp, "p99_fct_us", "%.0f"), meanCI(sp, "peak_queue_bytes", "%.0f"))
			if s := sp["convergence_rtts"]; s.N > 0 {
				fmt.Fprintf(w, "  converged %s RTTs in %d of %d seeds", meanCI(sp, "convergence_rtts", "%.2f"), s.N, seeds)
				if sp["convergence_rtts_after_all_arrived"].N > 0 {
					fmt.Fprintf(w, " (%s after the last sender arrived)", meanCI(sp, "convergence_rtts_after_all_arrived", "%.2f"))
				}
			}
			if sp["jain_fairness"].N > 0 {
				fmt.Fprintf(w, "  Jain %s", meanCI(sp, "jain_fairness", "%.3f"))
			}
			if s := sp["recovery_us"]; s.N > 0 {
				fmt.Fprintf(w, "  recovery %s us in %d of %d seeds", meanCI(sp, "recovery_us", "%.0f"), s.N, seeds)
			}
			fmt.Fprintln(w)
		}
		row(&q.Figures, "MetaRoCE")
		row(q.Contrast, "hints off")
		row(q.Baseline, "RoCEv2")
	}
	if r.Fit != nil {
		fmt.Fprintf(w, "  fit: %.1f Gb/s per plane + %.1f, R^2 %.4f\n", r.Fit.Slope, r.Fit.Intercept, r.Fit.R2)
	}
}

// meanCI formats a figure's mean over the seeds and half its 95% interval ("-" when no seed
// has it).
func meanCI(sp map[string]sim.Summary, name, format string) string {
	s, ok := sp[name]
	if !ok || s.N == 0 {
		return "-"
	}
	if s.N == 1 || s.Hi == s.Lo {
		return fmt.Sprintf(format, s.Mean)
	}
	return fmt.Sprintf(format+"±"+format, s.Mean, s.HalfWidth())
}

// total is a figure summed over the seeds.
func total(sp map[string]sim.Summary, name string) float64 {
	var t float64
	for _, v := range sp[name].Values {
		t += v
	}
	return t
}
