package hdl

import "github.com/mrgen/mrgen/config"

// ResetStyle tells a block's templates how to write control registers: which reset port the
// module has and what "in reset" is.
type ResetStyle struct {
	Port      string // rst or rst_n
	AsyncLow  bool
	Condition string // the Verilog condition that means "in reset"
}

// ResetFor is the reset style of a configuration's reset_style (config.ResetSyncHigh or
// config.ResetAsyncLow).
func ResetFor(style string) ResetStyle {
	if style == config.ResetAsyncLow {
		return ResetStyle{Port: "rst_n", AsyncLow: true, Condition: "!rst_n"}
	}
	return ResetStyle{Port: "rst", Condition: "rst"}
}

// Ports are the clock and reset ports every clocked block module starts with.
func (r ResetStyle) Ports() []Port {
	doc := "synchronous reset, active high"
	if r.AsyncLow {
		doc = "asynchronous reset, active low"
	}
	return []Port{In("clk", 1, "clock"), In(r.Port, 1, doc)}
}

// Always is the head of a control-register block for the reset style.
func (r ResetStyle) Always() string {
	if r.AsyncLow {
		return "always @(posedge clk or negedge rst_n)"
	}
	return "always @(posedge clk)"
}
