`resetall
`timescale 1ns / 1ps
`default_nettype none

// syntax_error: a missing semicolon that every tool rejects.
module syntax_error (
  input  wire a,  // input
  output wire y   // a
);

  assign y = a

endmodule

`resetall
