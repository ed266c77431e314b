package cli

import (
	"fmt"
	"reflect"
	"strings"
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

// showRows lists every configuration field by its YAML path (walked by reflection, so a new
// field can never be missing here), then the derived values, with units where they help.
func showRows(c config.Config, d config.Derived) [][3]any {
	var rows [][3]any
	walkFields("", reflect.ValueOf(c), &rows)
	rows = append(rows,
		[3]any{"derived.keep_width", d.KeepWidth, "bits"},
		[3]any{"derived.conn_id_width", d.ConnIDWidth, "bits"},
		[3]any{"derived.path_id_width", d.PathIDWidth, "bits"},
		[3]any{"derived.path_table_depth", d.PathTableDepth, "entries (power of two)"},
		[3]any{"derived.path_table_addr_width", d.PathTableAddrWidth, "bits"},
		[3]any{"derived.sack_index_width", d.SackIndexWidth, "bits"},
		[3]any{"derived.sack_tree_levels", d.SackTreeLevels, "levels"},
		[3]any{"derived.stream_id_width", d.StreamIDWidth, "bits"},
		[3]any{"derived.region_index_width", d.RegionIndexWidth, "bits"},
		[3]any{"derived.posted_receive_depth", d.PostedReceiveDepth, "slots"},
		[3]any{"derived.clock_period_ns", fmt.Sprintf("%.3f", d.ClockPeriodNS), "ns"},
		[3]any{"derived.window_max_cwnd", c.WindowMaxCwnd(), "packets"},
		[3]any{"derived.window_conn_max_cwnd", c.WindowConnMaxCwnd(), "packets"},
	)
	return rows
}

// fieldUnits are the units shown beside fields whose name does not say them.
var fieldUnits = map[string]string{
	"datapath_width": "bits", "sack_width": "bits per path", "psn_width": "bits", "mtu": "bytes",
	"target_clock_mhz": "MHz", "ack_policy.every_n": "packets",
	"pipeline.tree_register_every": "tree levels (0: one register after the tree)",
}

func walkFields(prefix string, v reflect.Value, rows *[][3]any) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := prefix + strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if v.Field(i).Kind() == reflect.Struct {
			walkFields(name+".", v.Field(i), rows)
			continue
		}
		*rows = append(*rows, [3]any{name, v.Field(i).Interface(), fieldUnits[name]})
	}
}
