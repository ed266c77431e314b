`resetall
`timescale 1ns / 1ps
`default_nettype none

// latch_mux: q is assigned only when sel is high, so the always @* block infers a latch.
module latch_mux (
  input  wire       sel,  // select
  input  wire [3:0] d,    // data
  output reg  [3:0] q     // d while sel is high, otherwise held: a latch
);

  always @* begin
    if (sel) begin
      q = d;
    end
  end

endmodule

`resetall
