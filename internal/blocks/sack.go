package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/sack"
)

func init() {
	register(unitBlock("sack", sack.New,
		func(u *sack.Unit) ([]*hdl.Module, *hdl.Module) {
			return []*hdl.Module{u.RxModule(), u.TxModule()}, u.UnitModule()
		},
		cosim.RunSack, cosim.SackScenarios))
}
