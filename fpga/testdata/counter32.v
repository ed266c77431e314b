`resetall
`timescale 1ns / 1ps
`default_nettype none

// counter32: a loadable 32-bit up-counter, the smallest block the synthesis tests place and
// route. Latency 1 cycle (count updates on the clock after en or load), initiation interval 1.
module counter32 (
  input  wire        clk,         // clock
  input  wire        rst,         // synchronous active-high reset
  input  wire        en,          // count up by one this cycle
  input  wire        load,        // load load_value this cycle (wins over en)
  input  wire [31:0] load_value,  // value taken when load is high
  output wire [31:0] count,       // current count
  output wire        wrap         // high for one cycle after the count wrapped to zero
);

  reg [31:0] count_reg, count_next;
  reg        wrap_reg, wrap_next;

  always @* begin
    count_next = count_reg;
    wrap_next = 1'b0;
    if (load) begin
      count_next = load_value;
    end else if (en) begin
      count_next = count_reg + 32'd1;
      wrap_next = (count_reg == 32'hffff_ffff);
    end
  end

  always @(posedge clk) begin
    count_reg <= count_next;
    wrap_reg <= wrap_next;
    if (rst) begin
      count_reg <= 32'd0;
      wrap_reg <= 1'b0;
    end
  end

  assign count = count_reg;
  assign wrap = wrap_reg;

endmodule

`resetall
