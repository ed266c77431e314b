package blocks

import (
	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/acker"
)

func init() {
	register(Block{
		Name: "acker",
		Design: func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
			u, err := acker.New(c)
			if err != nil {
				return nil, err
			}
			return u.Design(st, mutate)
		},
		SynthUnits: func(c config.Config) ([]*hdl.Module, *hdl.Module, error) {
			u, err := acker.New(c)
			if err != nil {
				return nil, nil, err
			}
			m := u.Module()
			return []*hdl.Module{m}, m, nil
		},
		Cosim:     cosim.RunAcker,
		Scenarios: cosim.AckerScenarios,
	})
}
