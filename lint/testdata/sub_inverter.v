`resetall
`timescale 1ns / 1ps
`default_nettype none

// sub_inverter: a leaf module instantiated by two_file_top, to lint a design spread over files.
module sub_inverter (
  input  wire [3:0] d,  // input
  output wire [3:0] q   // d inverted
);

  assign q = ~d;

endmodule

`resetall
