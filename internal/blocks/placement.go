package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/placement"
)

func init() {
	register(unitBlock("placement", placement.New,
		func(u *placement.Unit) ([]*hdl.Module, *hdl.Module) { m := u.Module(); return []*hdl.Module{m}, m },
		cosim.RunPlacement, cosim.PlacementScenarios))
}
