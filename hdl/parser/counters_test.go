package parser_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl/parser"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// counterSweepTB resets the parser in a four-state simulator, where its counter RAMs start
// unknown (X), waits for s_axis_tready, and reads every counter: each must read exactly 0 (no
// X), during the sweep as after it, and the input must wait exactly one cycle per counter slot.
const counterSweepTB = `
module tb;
  reg clk = 1'b0;
  reg rst = 1'b1;
  reg [5:0] idx = 6'd0;
  wire ready;
  wire [31:0] data;
  integer cycles, i, bad;
  always #5 clk = ~clk;
  rx_parser dut (
    .clk(clk), .rst(rst),
    .s_axis_tdata({%d{1'b0}}), .s_axis_tkeep({%d{1'b0}}), .s_axis_tvalid(1'b0),
    .s_axis_tready(ready), .s_axis_tlast(1'b0),
    .m_hdr_ready(1'b1), .m_axis_tready(1'b1),
    .cnt_rd_idx(idx), .cnt_rd_data(data));
  initial begin
    bad = 0;
    repeat (3) @(posedge clk);
    #1 rst = 1'b0;
    cycles = 0;
    while (ready !== 1'b1 && cycles < 1000) begin
      if (data !== 32'd0) begin
        $display("FAIL: cnt_rd_data %%h during the sweep", data);
        bad = bad + 1;
      end
      @(posedge clk); #1 cycles = cycles + 1;
    end
    $display("INIT %%0d", cycles);
    for (i = 0; i < 64; i = i + 1) begin
      idx = i;
      @(posedge clk); #1;
      if (data !== 32'd0) begin
        $display("FAIL: counter %%0d reads %%h", i, data);
        bad = bad + 1;
      end
    end
    if (bad == 0) $display("PASS");
    $finish;
  end
endmodule
`

// TestCountersReadZeroAfterReset runs the sweep in Icarus (Verilator starts every register at
// zero, so cosim cannot see a counter the sweep missed), and requires that skipping or
// shortening the sweep fails.
func TestCountersReadZeroAfterReset(t *testing.T) {
	tooltest.Require(t, "iverilog", "vvp")
	tests := []struct {
		name     string
		from, to string // a template fault ("" for none)
		wantPass bool
	}{
		{"sweep", "", "", true},
		{"no sweep", "clr_busy <= 1'b1;", "clr_busy <= 1'b0;", false},
		{"sweep one short", "clr_busy <= clr_idx != 6'd{% sub $.D.InitCycles 1 %};",
			"clr_busy <= clr_idx != 6'd{% sub $.D.InitCycles 2 %};", false},
	}
	c := config.Default()
	u, err := parser.New(c)
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mutate func([]gen.Source) error
			if tc.from != "" {
				mutate = func(srcs []gen.Source) error {
					for i := range srcs {
						if srcs[i].Module.Name == parser.Top {
							require.Contains(t, srcs[i].Template, tc.from, "fault anchor")
							srcs[i].Template = strings.Replace(srcs[i].Template, tc.from, tc.to, 1)
						}
					}
					return nil
				}
			}
			d, err := u.Design(gen.Stamp{Version: "test", Command: "go test", ConfigName: c.Name, ConfigHash: "0"}, mutate)
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, d.Write(dir))
			files := d.RTLFiles(dir)
			tb := filepath.Join(dir, "tb.v")
			require.NoError(t, os.WriteFile(tb, []byte(fmt.Sprintf(counterSweepTB, u.W, u.B)), 0o644))
			sim := filepath.Join(dir, "sim")
			out, err := exec.Command("iverilog", append([]string{"-g2012", "-o", sim, "-s", "tb", tb}, files...)...).CombinedOutput()
			require.NoError(t, err, string(out))
			out, err = exec.Command("vvp", "-n", sim).CombinedOutput()
			require.NoError(t, err, string(out))
			pass := strings.Contains(string(out), "PASS") && strings.Contains(string(out), fmt.Sprintf("INIT %d\n", u.InitCycles()))
			require.Equal(t, tc.wantPass, pass, string(out))
		})
	}
}
