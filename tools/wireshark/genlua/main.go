// Command genlua writes tools/wireshark/metaroce.lua from golden/wire's constants
// (`go generate ./tools/wireshark`).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mrgen/mrgen/tools/wireshark"
)

func main() {
	out := flag.String("o", wireshark.LuaFile, "output file")
	flag.Parse()
	b, err := wireshark.Lua()
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genlua:", err)
		os.Exit(1)
	}
}
