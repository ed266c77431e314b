package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/sender"
)

func init() {
	register(unitBlock("sender", sender.New,
		func(u *sender.Unit) ([]*hdl.Module, *hdl.Module) { m := u.Module(); return []*hdl.Module{m}, m },
		cosim.RunSender, cosim.SenderScenarios))
}
