package blocks

import (
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/parser"
)

func init() {
	register(unitBlock("parser", parser.New,
		// The parser is one block: no sub-unit worth a separate place and route.
		func(u *parser.Unit) ([]*hdl.Module, *hdl.Module) { return nil, u.ParserModule() },
		cosim.RunParser, cosim.ParserScenarios))
}
