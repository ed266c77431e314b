`resetall
`timescale 1ns / 1ps
`default_nettype none

// ram_table: a 256 x 16 table with one write and one registered read port, written so that
// synthesis infers one block RAM (SB_RAM40_4K on iCE40). Read latency 1 cycle, initiation
// interval 1. Only the read-valid flag is reset; the table contents are not.
module ram_table (
  input  wire        clk,      // clock
  input  wire        rst,      // synchronous active-high reset
  input  wire        wr_en,    // write wr_data to wr_addr this cycle
  input  wire [7:0]  wr_addr,  // write address
  input  wire [15:0] wr_data,  // write data
  input  wire        rd_en,    // read rd_addr this cycle
  input  wire [7:0]  rd_addr,  // read address
  output wire        rd_valid, // rd_data holds the entry read one cycle ago
  output wire [15:0] rd_data   // read data
);

  reg [15:0] mem [0:255];
  reg [15:0] rd_data_reg;
  reg        rd_valid_reg;

  always @(posedge clk) begin
    if (wr_en) begin
      mem[wr_addr] <= wr_data;
    end
    if (rd_en) begin
      rd_data_reg <= mem[rd_addr];
    end
    rd_valid_reg <= rd_en;
    if (rst) begin
      rd_valid_reg <= 1'b0;
    end
  end

  assign rd_valid = rd_valid_reg;
  assign rd_data = rd_data_reg;

endmodule

`resetall
