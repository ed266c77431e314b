package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

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
			"Without --loss, the loss scenario sweeps " + fmt.Sprint(sim.LossSweep) + ".",
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
			r, err := sim.Run(o)
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
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the fabric and the traffic")
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
	fmt.Fprintf(w, "sim %s\n", r.Scenario)
	for _, q := range pts {
		keys := make([]string, 0, len(q.Params))
		for k := range q.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ps []string
		for _, k := range keys {
			ps = append(ps, fmt.Sprintf("%s=%v", k, q.Params[k]))
		}
		fmt.Fprintf(w, "  %s\n", strings.Join(ps, " "))
		row := func(f *sim.Figures, name string) {
			if f == nil {
				return
			}
			fmt.Fprintf(w, "    %-10s goodput %.3f (%.0f Gb/s)  retx %d (spurious %d)  verified %d/%d msgs  p99 FCT %.0f us  peak queue %d B",
				name, f.GoodputFraction, f.GoodputGbps, f.Retransmissions, f.SpuriousRetransmissions, f.MessagesVerified, f.Messages, f.P99FCTus, f.PeakQueueBytes)
			if f.ConvergenceRTTs != nil {
				fmt.Fprintf(w, "  converged %.1f RTTs", *f.ConvergenceRTTs)
				if f.ConvergenceAfterAll != nil {
					fmt.Fprintf(w, " (%.1f after the last sender arrived)", *f.ConvergenceAfterAll)
				}
			}
			if f.JainFairness != nil {
				fmt.Fprintf(w, "  Jain %.3f", *f.JainFairness)
			}
			if f.RecoveryUs != nil {
				fmt.Fprintf(w, "  recovery %.0f us", *f.RecoveryUs)
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
