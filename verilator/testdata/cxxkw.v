// cxxkw: ports whose names Verilator changes in the C++ it generates: C++ keywords
// (__SYM__goto, warning SYMRSVDWORD) and double underscores (a___05Fb for a__b). The harness
// must still reach them.
module cxxkw (
    input  wire       clk,
    input  wire       rst,
    input  wire [3:0] goto,
    input  wire [3:0] a__b,
    output reg  [3:0] switch,
    output wire [3:0] c___d    // combinational: a__b
);
    assign c___d = a__b;

    always @(posedge clk) begin
        if (rst) switch <= 4'd0;
        else switch <= goto;
    end
endmodule
