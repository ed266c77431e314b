package sim

import (
	"errors"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
)

// newBaselineHosts builds the RoCEv2 baseline's NICs (golden/baseline).
func newBaselineHosts(n *fabric.Network, l *traffic.Ledger, s runSpec) ([]traffic.Host, error) {
	return nil, errors.New("sim: the RoCEv2 baseline is not merged yet")
}
