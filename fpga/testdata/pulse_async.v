`resetall
`timescale 1ns / 1ps
`default_nettype none

// pulse_async: an ASIC-style (asynchronous, active-low rst_n) edge detector used to test the
// board-top wrapper with a rst_n reset and a single-bit input and output. Latency 1 cycle.
module pulse_async (
  input  wire clk,    // clock
  input  wire rst_n,  // asynchronous active-low reset
  input  wire level,  // input level
  output wire pulse   // high for one cycle after level rose
);

  reg level_reg;
  reg pulse_reg;

  always @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      level_reg <= 1'b0;
      pulse_reg <= 1'b0;
    end else begin
      level_reg <= level;
      pulse_reg <= level & ~level_reg;
    end
  end

  assign pulse = pulse_reg;

endmodule

`resetall
