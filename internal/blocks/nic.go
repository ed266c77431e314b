package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/pipeline"
)

// nic is the receive pipeline top: its cosim is the closed loop (the RTL as host 0 of the
// golden transport).
func init() {
	register(unitBlock("nic", pipeline.NewRx,
		func(r *pipeline.Rx) ([]*hdl.Module, *hdl.Module) { return []*hdl.Module{r.Module()}, r.Module() },
		cosim.RunLoop, cosim.LoopScenarios))
}
