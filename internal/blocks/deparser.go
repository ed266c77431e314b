package blocks

import (
	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/deparser"
)

func init() {
	register(Block{
		Name: "deparser",
		Design: func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
			u, err := deparser.New(c)
			if err != nil {
				return nil, err
			}
			return u.Design(st, mutate)
		},
		SynthUnits: func(c config.Config) ([]*hdl.Module, *hdl.Module, error) {
			u, err := deparser.New(c)
			if err != nil {
				return nil, nil, err
			}
			// The deparser is one block: no sub-unit worth a separate place and route.
			return nil, u.DeparserModule(), nil
		},
		Cosim:     cosim.RunDeparser,
		Scenarios: cosim.DeparserScenarios,
	})
}
