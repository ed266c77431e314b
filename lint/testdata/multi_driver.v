`resetall
`timescale 1ns / 1ps
`default_nettype none

// multi_driver: y has two continuous drivers. Verilator -Wall accepts this (a wire may have
// several drivers); Yosys `check -assert` reports multiple conflicting drivers.
module multi_driver (
  input  wire [1:0] a,  // first driver
  input  wire [1:0] b,  // second driver
  output wire [1:0] y   // driven twice
);

  assign y = a;
  assign y = b;

endmodule

`resetall
