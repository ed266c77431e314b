package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/deparser"
)

func init() {
	register(unitBlock("deparser", deparser.New,
		// The deparser is one block: no sub-unit worth a separate place and route.
		func(u *deparser.Unit) ([]*hdl.Module, *hdl.Module) { return nil, u.DeparserModule() },
		cosim.RunDeparser, cosim.DeparserScenarios))
}
