package sim

import (
	"github.com/mrgen/mrgen/golden/baseline"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
)

// newBaselineHosts builds the RoCEv2 baseline's NICs (golden/baseline) with its documented
// defaults, the run's seed and, for the reorder experiment, spraying over as many source
// ports as MetaRoCE has paths.
func newBaselineHosts(n *fabric.Network, l *traffic.Ledger, s runSpec) ([]traffic.Host, error) {
	cfg := baseline.DefaultConfig()
	cfg.SprayPaths = max(1, s.sprayPaths)
	cfg.MTU = min(s.nic.MTU, cfg.MTU)
	cfg.Seed = s.topo.Seed
	return baseline.NewHosts(n, l, cfg)
}
