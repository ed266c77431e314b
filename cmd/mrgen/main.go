// Command mrgen generates the MetaRoCE NIC datapath as Verilog, co-simulates it against the Go
// golden model, builds it for FPGA boards and packs it for silicon teams. See README.md.
package main

import (
	"os"

	"github.com/mrgen/mrgen/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
