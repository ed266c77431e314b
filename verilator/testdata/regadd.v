// regadd: a registered adder with a valid/ready handshake, used by the verilator package tests.
// Its ports cover every storage class of a Verilated port: 1 bit (CData), 16 (SData), 17 and 32
// (IData), 40 and 64 (QData), 256 and 300 (VlWide), with combinational paths from inputs to
// outputs (in_ready, mix, bmx, w_nz) and a synchronous active-high reset.
module regadd (
    input  wire         clk,
    input  wire         rst,        // synchronous, active high
    input  wire         in_valid,
    input  wire [15:0]  a,
    input  wire [39:0]  b,
    input  wire [299:0] w,
    input  wire [255:0] bm,
    input  wire         out_ready,
    output wire         in_ready,   // combinational: !out_valid || out_ready
    output reg          out_valid,
    output reg  [16:0]  sum,        // a + b[15:0] of the last accepted input
    output reg  [39:0]  acc,        // running sum of the accepted b, mod 2^40
    output reg  [299:0] wsum,       // w + b of the last accepted input, mod 2^300
    output wire [63:0]  mix,        // combinational: {count, a, a} ^ b
    output wire [255:0] bmx,        // combinational: bm ^ w[255:0]
    output reg  [31:0]  count,      // accepted inputs since reset, mod 2^32
    output wire         w_nz        // combinational: |w
);
    localparam [31:0] COUNT_STEP = 32'd1;

    wire accept = in_valid && in_ready;

    assign in_ready = !out_valid || out_ready;
    assign mix      = {count, a, a} ^ {24'd0, b};
    assign bmx      = bm ^ w[255:0];
    assign w_nz     = |w;

    always @(posedge clk) begin
        if (rst) begin
            out_valid <= 1'b0;
            sum       <= 17'd0;
            acc       <= 40'd0;
            wsum      <= 300'd0;
            count     <= 32'd0;
        end else begin
            if (out_valid && out_ready) out_valid <= 1'b0;
            if (accept) begin
                out_valid <= 1'b1;
                sum       <= {1'b0, a} + {1'b0, b[15:0]};
                acc       <= acc + b;
                wsum      <= w + {260'd0, b};
                count     <= count + COUNT_STEP;
            end
        end
    end
endmodule
