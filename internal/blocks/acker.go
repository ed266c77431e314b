package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/acker"
)

func init() {
	register(unitBlock("acker", acker.New,
		func(u *acker.Unit) ([]*hdl.Module, *hdl.Module) { m := u.Module(); return []*hdl.Module{m}, m },
		cosim.RunAcker, cosim.AckerScenarios))
}
