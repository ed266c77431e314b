package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/pipeline"
)

// nic is the NIC top (nic_rx, nic_tx and the egress merge): its cosim is the closed loop (the
// RTL as host 0 of the golden transport).
func init() {
	register(unitBlock("nic", pipeline.NewNIC,
		func(n *pipeline.NIC) ([]*hdl.Module, *hdl.Module) { return []*hdl.Module{n.Module()}, n.Module() },
		cosim.RunLoop, cosim.LoopScenarios))
}
