package blocks

import (
	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/pipeline"
)

// nictx is the transmit data path top (descriptors, DMA reads, peer table, tx_deparser); its
// cosim compares every frame and every read request with golden/transport's data packets.
func init() {
	register(Block{
		Name: "nictx",
		Design: func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
			t, err := pipeline.NewTx(c)
			if err != nil {
				return nil, err
			}
			return t.Design(st, mutate)
		},
		SynthUnits: func(c config.Config) ([]*hdl.Module, *hdl.Module, error) {
			t, err := pipeline.NewTx(c)
			if err != nil {
				return nil, nil, err
			}
			return []*hdl.Module{t.Module()}, t.Module(), nil
		},
		Cosim:     cosim.RunNicTx,
		Scenarios: cosim.NicTxScenarios,
	})
}
