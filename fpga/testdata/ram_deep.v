`resetall
`timescale 1ns / 1ps
`default_nettype none

// ram_deep: an 8192 x 16 table (128 kbit) with one write and one registered read port: 32
// 4-kbit block RAMs on iCE40, more than an UP5K's 30. It exists to be too big.
module ram_deep (
  input  wire        clk,      // clock
  input  wire        rst,      // synchronous active-high reset
  input  wire        wr_en,    // write wr_data to wr_addr this cycle
  input  wire [12:0] wr_addr,  // write address
  input  wire [15:0] wr_data,  // write data
  input  wire        rd_en,    // read rd_addr this cycle
  input  wire [12:0] rd_addr,  // read address
  output reg         rd_valid, // rd_data holds the entry read one cycle ago
  output reg  [15:0] rd_data   // read data
);

  reg [15:0] mem [0:8191];

  always @(posedge clk) begin
    if (wr_en) begin
      mem[wr_addr] <= wr_data;
    end
    if (rd_en) begin
      rd_data <= mem[rd_addr];
    end
    rd_valid <= rd_en;
    if (rst) begin
      rd_valid <= 1'b0;
    end
  end

endmodule

`resetall
