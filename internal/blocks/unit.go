package blocks

import (
	"context"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
)

// designer is a block's Go description for one configuration: it renders its design.
type designer interface {
	Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error)
}

// unitBlock is a block whose description newUnit derives from a configuration; synth names the
// modules `mrgen synth` places one by one and the top.
func unitBlock[U designer](name string, newUnit func(config.Config) (U, error), synth func(U) ([]*hdl.Module, *hdl.Module),
	run func(context.Context, cosim.Options) (*cosim.Result, error), scenarios func() []string) Block {
	return Block{
		Name: name,
		Design: func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
			u, err := newUnit(c)
			if err != nil {
				return nil, err
			}
			return u.Design(st, mutate)
		},
		SynthUnits: func(c config.Config) ([]*hdl.Module, *hdl.Module, error) {
			u, err := newUnit(c)
			if err != nil {
				return nil, nil, err
			}
			units, top := synth(u)
			return units, top, nil
		},
		Cosim:     run,
		Scenarios: scenarios,
	}
}
