package blocks

import (
	"fmt"
	"os"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/qor"
)

// qorUnits are the modules mrgen qor measures in each block's design: its own units (a name
// ending in _ matches every module with that prefix, for the CRC units named by beat width).
var qorUnits = map[string][]string{
	"sack":      {"sack_rx", "sack_tx", "sack_unit"},
	"parser":    {"rx_parser", "crc32_"},
	"deparser":  {"tx_deparser", "crc32_"},
	"acker":     {"rx_acker"},
	"window":    {"window_unit"},
	"placement": {"placement_engine"},
	"sender":    {"tx_engine", "tx_window_unit"},
	"nictx":     {"nic_tx"},
	"nic":       {"nic_rx", "nic_egress_merge", "nic_top"},
}

// QoROrder is the order mrgen qor measures the blocks in: the units first, the NIC last.
var QoROrder = []string{"sack", "parser", "deparser", "acker", "window", "placement", "sender", "nictx", "nic"}

// QoRUnits lists the modules of block's design d that mrgen qor measures.
func QoRUnits(block string, d *gen.Design) ([]string, error) {
	pats, ok := qorUnits[block]
	if !ok {
		return nil, fmt.Errorf("block %s has no QoR units", block)
	}
	var out []string
	for _, p := range pats {
		n := 0
		for _, m := range d.Modules {
			if m == p || strings.HasSuffix(p, "_") && strings.HasPrefix(m, p) {
				out = append(out, m)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("block %s: design %s has no module %s", block, d.Top, p)
		}
	}
	return out, nil
}

// QoRDesign generates block for c into dir (replacing what is there) and lists its QoR units.
func QoRDesign(block string, c config.Config, st gen.Stamp, dir string) (qor.BlockDesign, error) {
	d, err := Generate(block, c, st, nil)
	if err != nil {
		return qor.BlockDesign{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return qor.BlockDesign{}, fmt.Errorf("qor: %w", err)
	}
	if err := d.Write(dir); err != nil {
		return qor.BlockDesign{}, err
	}
	units, err := QoRUnits(block, d)
	if err != nil {
		return qor.BlockDesign{}, err
	}
	return qor.BlockDesign{Block: block, Design: d, Dir: dir, Units: units, Config: c}, nil
}
