package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/config"
)

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect and check a configuration",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return &usageError{fmt.Errorf("config needs a subcommand: show or check")}
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print the resolved configuration with derived values",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			d := c.Derived()
			if g.json {
				return g.emitJSON(map[string]any{"file": g.configPath, "hash": c.Hash(), "config": c, "derived": d})
			}
			w := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintf(w, "# %s (hash %s)\n", g.configPath, c.ShortHash())
			for _, row := range showRows(c, d) {
				fmt.Fprintf(w, "%s\t%v\t%s\n", row[0], row[1], row[2])
			}
			return w.Flush()
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Validate a configuration; exit 2 with the offending field if it is invalid",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.loadConfig()
			if err != nil {
				return err
			}
			if g.json {
				return g.emitJSON(map[string]any{"file": g.configPath, "valid": true, "hash": c.Hash()})
			}
			fmt.Fprintf(g.stdout, "%s: valid (hash %s)\n", g.configPath, c.ShortHash())
			return nil
		},
	})
	return cmd
}

func showRows(c config.Config, d config.Derived) [][3]any {
	return [][3]any{
		{"name", c.Name, ""},
		{"datapath_width", c.DatapathWidth, "bits"},
		{"connections", c.Connections, ""},
		{"paths_per_connection", c.PathsPerConnection, ""},
		{"sack_width", c.SackWidth, "bits per path"},
		{"psn_width", c.PSNWidth, "bits"},
		{"streams_per_connection", c.StreamsPerConnection, ""},
		{"memory_regions", c.MemoryRegions, ""},
		{"posted_receives_per_stream", c.PostedReceivesPerStream, ""},
		{"mtu", c.MTU, "bytes"},
		{"udp_dest_port", c.UDPDestPort, ""},
		{"reset_style", c.ResetStyle, ""},
		{"target_clock_mhz", c.TargetClockMHz, "MHz"},
		{"ack_policy.mode", c.AckPolicy.Mode, ""},
		{"ack_policy.every_n", c.AckPolicy.EveryN, "packets"},
		{"pipeline.tree_register_every", c.Pipeline.TreeRegisterEvery, "tree levels (0: none)"},
		{"seed", c.Seed, ""},
		{"derived.keep_width", d.KeepWidth, "bits"},
		{"derived.conn_id_width", d.ConnIDWidth, "bits"},
		{"derived.path_id_width", d.PathIDWidth, "bits"},
		{"derived.path_table_depth", d.PathTableDepth, "entries (power of two)"},
		{"derived.path_table_addr_width", d.PathTableAddrWidth, "bits"},
		{"derived.sack_index_width", d.SackIndexWidth, "bits"},
		{"derived.sack_tree_levels", d.SackTreeLevels, "levels"},
		{"derived.stream_id_width", d.StreamIDWidth, "bits"},
		{"derived.region_index_width", d.RegionIndexWidth, "bits"},
		{"derived.posted_receive_depth", d.PostedReceiveDepth, "slots"},
		{"derived.clock_period_ns", fmt.Sprintf("%.3f", d.ClockPeriodNS), "ns"},
	}
}
