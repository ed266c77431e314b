package blocks

import (
	"sort"

	"github.com/mrgen/mrgen/formal"
	"github.com/mrgen/mrgen/hdl/sack"
)

// properties are the labelled formal properties of each block's templates (mrgen formal).
var properties = map[string][]formal.Property{
	"sack": sack.Properties,
}

// Properties lists a block's formal properties (none for a block without them).
func Properties(block string) []formal.Property {
	return properties[block]
}

// FormalBlocks lists the blocks with formal properties.
func FormalBlocks() []string {
	out := make([]string, 0, len(properties))
	for b := range properties {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}
