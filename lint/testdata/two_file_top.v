`resetall
`timescale 1ns / 1ps
`default_nettype none

// two_file_top: instantiates sub_inverter from another file and registers its output.
module two_file_top (
  input  wire       clk,  // clock
  input  wire [3:0] d,    // input
  output wire [3:0] q     // d inverted, one cycle later
);

  wire [3:0] inv;
  reg  [3:0] q_reg;

  sub_inverter u_inv (
    .d(d),
    .q(inv)
  );

  always @(posedge clk) begin
    q_reg <= inv;
  end

  assign q = q_reg;

endmodule

`resetall
