`resetall
`timescale 1ns / 1ps
`default_nettype none

// unused_signal: spare is declared and driven but never read, which verilator -Wall reports.
module unused_signal (
  input  wire [3:0] a,  // input
  output wire [3:0] y   // a inverted
);

  wire [3:0] spare;

  assign spare = a & 4'h5;
  assign y = ~a;

endmodule

`resetall
