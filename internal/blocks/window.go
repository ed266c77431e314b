package blocks

import (
	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/window"
)

func init() {
	register(Block{
		Name: "window",
		Design: func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
			u, err := window.New(c)
			if err != nil {
				return nil, err
			}
			return u.Design(st, mutate)
		},
		SynthUnits: func(c config.Config) ([]*hdl.Module, *hdl.Module, error) {
			u, err := window.New(c)
			if err != nil {
				return nil, nil, err
			}
			// window_pick is combinational (no clock for the board wrapper): it is measured inside
			// window_unit, the one clocked unit, which is also the top.
			return []*hdl.Module{u.UnitModule()}, u.UnitModule(), nil
		},
		Cosim:     cosim.RunWindow,
		Scenarios: cosim.WindowScenarios,
	})
}
