package blocks

import (
	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/pipeline"
)

// nic is the receive pipeline top: its cosim is the closed loop (the RTL as host 0 of the
// golden transport).
func init() {
	register(Block{
		Name: "nic",
		Design: func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
			r, err := pipeline.NewRx(c)
			if err != nil {
				return nil, err
			}
			return r.Design(st, mutate)
		},
		SynthUnits: func(c config.Config) ([]*hdl.Module, *hdl.Module, error) {
			r, err := pipeline.NewRx(c)
			if err != nil {
				return nil, nil, err
			}
			return []*hdl.Module{r.Module()}, r.Module(), nil
		},
		Cosim:     cosim.RunLoop,
		Scenarios: cosim.LoopScenarios,
	})
}
