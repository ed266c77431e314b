`resetall
`timescale 1ns / 1ps
`default_nettype none

// clean_adder: a registered 8-bit adder that passes every lint check.
module clean_adder (
  input  wire       clk,  // clock
  input  wire       rst,  // synchronous active-high reset
  input  wire [7:0] a,    // first operand
  input  wire [7:0] b,    // second operand
  output wire [8:0] sum   // a + b, one cycle later
);

  reg [8:0] sum_reg;

  always @(posedge clk) begin
    sum_reg <= {1'b0, a} + {1'b0, b};
    if (rst) begin
      sum_reg <= 9'd0;
    end
  end

  assign sum = sum_reg;

endmodule

`resetall
