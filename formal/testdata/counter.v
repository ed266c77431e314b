// A counter that stops at 9: p_bound holds (q never passes 9); p_small fails once q reaches 5.
module counter(input clk, input rst, input en, output reg [3:0] q);
  always @(posedge clk) if (rst) q <= 4'd0; else if (en && q != 4'd9) q <= q + 4'd1;
`ifdef FORMAL
  reg f_past_valid;
  initial f_past_valid = 1'b0;
  always @(posedge clk) f_past_valid <= 1'b1;
  always @* if (!f_past_valid) assume(rst);
  always @* if (f_past_valid) p_bound: assert(q <= 4'd9);
  always @* if (f_past_valid) p_small: assert(q < 4'd5);
`endif
endmodule
