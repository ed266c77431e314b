`resetall
`timescale 1ns / 1ps
`default_nettype none

// icarus_reject: a SystemVerilog `var logic` declaration. Verilator and Yosys accept it; Icarus
// 11 reports a syntax error, which is why the Icarus compile is one of the three checks.
module icarus_reject (
  input  wire [7:0] a,  // input
  output wire [7:0] y   // a, through a variable
);

  var logic [7:0] v;

  assign v = a;
  assign y = v;

endmodule

`resetall
