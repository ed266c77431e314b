package blocks

import (
	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/sack"
)

func init() {
	register(Block{
		Name: "sack",
		Design: func(c config.Config, st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
			u, err := sack.New(c)
			if err != nil {
				return nil, err
			}
			return u.Design(st, mutate)
		},
		SynthUnits: func(c config.Config) ([]*hdl.Module, *hdl.Module, error) {
			u, err := sack.New(c)
			if err != nil {
				return nil, nil, err
			}
			return []*hdl.Module{u.RxModule(), u.TxModule()}, u.UnitModule(), nil
		},
		Cosim:     cosim.RunSack,
		Scenarios: cosim.SackScenarios,
	})
}
