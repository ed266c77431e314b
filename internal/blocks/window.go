package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/window"
)

func init() {
	register(unitBlock("window", window.New,
		// window_pick is combinational (no clock for the board wrapper): it is measured inside
		// window_unit, the one clocked unit, which is also the top.
		func(u *window.Unit) ([]*hdl.Module, *hdl.Module) {
			return []*hdl.Module{u.UnitModule()}, u.UnitModule()
		},
		cosim.RunWindow, cosim.WindowScenarios))
}
