// acount: an 8-bit counter with an asynchronous active-low reset, used by the verilator
// package tests to check that an asynchronous reset acts within the cycle it is asserted.
module acount (
    input  wire       clk,
    input  wire       rst_n,  // asynchronous, active low
    input  wire       en,
    output reg  [7:0] q,      // enabled rising edges since reset, mod 256
    output wire [8:0] next    // combinational: q + en
);
    assign next = {1'b0, q} + {8'd0, en};

    always @(posedge clk or negedge rst_n) begin
        if (!rst_n) q <= 8'd0;
        else if (en) q <= q + 8'd1;
    end
endmodule
