// Package docs embeds the documents the tool ships in its outputs: the wire format goes into
// the silicon handoff bundle.
package docs

import _ "embed"

// WireFormat is wire-format.md, mrgen's MetaRoCE wire format.
//
//go:embed wire-format.md
var WireFormat []byte
