package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/pipeline"
)

// nictx is the transmit data path top (descriptors, DMA reads, peer table, tx_deparser); its
// cosim compares every frame and every read request with golden/transport's data packets.
func init() {
	register(unitBlock("nictx", pipeline.NewTx,
		func(t *pipeline.Tx) ([]*hdl.Module, *hdl.Module) { return []*hdl.Module{t.Module()}, t.Module() },
		cosim.RunNicTx, cosim.NicTxScenarios))
}
