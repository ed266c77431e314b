`resetall
`timescale 1ns / 1ps
`default_nettype none

// comb_loop: x feeds y and y feeds x through logic with no register, a combinational loop.
module comb_loop (
  input  wire a,  // input
  output wire y   // output of the loop
);

  wire x;

  assign x = a ^ y;
  assign y = ~x;

endmodule

`resetall
