package handoff

import (
	"fmt"
	"strings"
)

// TimedTestbench renders tb_<module>.v for Timed recordings: a self-checking testbench in plain
// Verilog (Icarus -g2012 and Verilator --binary --timing) that drives every input of the module,
// the reset, the time and the output streams' readies included, cycle by cycle from its input
// groups' files (in_<group>.hex: a line per run of cycles with the same values), and compares
// every output stream's transactions in order with its file. The device's outputs depend on when its inputs come (a
// `now` input and its timers, or a closed loop whose stimulus answered the device's outputs), so
// the timing is the recording's, not random. +cycles=N replays only the first N cycles and
// expects only the output transactions recorded before them (a subset for slow simulations, the
// gate level); the status outputs are then not compared. maxIn bounds any input group's lines and maxN
// every output stream's transactions over the recordings it will replay.
func TimedTestbench(it *Interface, maxIn, maxN int, banner string) string {
	m := it.Module
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	head(w, banner, m)
	w("  localparam integer MAXIN = %d;  // lines per input group file, the end mark included\n", maxIn+1)
	w("  localparam integer MAXN = %d;   // lines per output stream file, the end mark included\n", maxN+1)
	w("\n")
	w("  reg clk = 1'b0;\n  always #5 clk = ~clk;\n")
	resetOn, _ := resetLevels(m)
	w("  string dir;\n  integer seed;                   // (printed only: the timing is the recording's)\n")
	w("  reg run;                        // replaying the recorded cycles\n")
	w("  reg cut;                        // +cycles= ended the replay early\n")
	w("  integer cycle, last_cycle, total, k;\n  reg xbad;                       // an unknown handshake was seen\n\n")
	// The recorded reset drives the device's once the testbench's own reset is over.
	rec := "rec_" + m.Reset
	w("  wire %s;\n  wire %s = run ? %s : %s;\n", rec, m.Reset, rec, resetOn)
	instance(w, m)
	groups := it.InputGroups()
	for _, g := range groups {
		gw, id := width(g.Ports), g.Name
		var conns []string
		for _, p := range g.Ports {
			if p.Name == m.Reset {
				conns = append(conns, rec)
			} else {
				conns = append(conns, p.Name)
			}
		}
		w("  // input group %s: %s\n", id, fieldList(g.Ports))
		w("  reg [%d:0] in_%s [0:MAXIN-1];\n", gw+16, id)
		w("  reg [%d:0] cur_%s;\n  reg [15:0] left_%s;  // cycles left on cur_%s\n  integer k_%s;\n", gw-1, id, id, id, id)
		w("  assign {%s} = cur_%s;\n", strings.Join(conns, ", "), id)
		w("  always @(posedge clk) begin\n    if (run) begin\n")
		w("      if (left_%s > 16'd1) begin\n        left_%s <= left_%s - 16'd1;\n", id, id, id)
		w("      end else if (in_%s[k_%s][%d] === 1'b1) begin\n", id, id, gw+16)
		w("        cur_%s <= in_%s[k_%s][%d:0];\n        left_%s <= in_%s[k_%s][%d:%d];\n        k_%s <= k_%s + 1;\n",
			id, id, id, gw-1, id, id, id, gw+15, gw, id, id)
		w("      end else begin\n        left_%s <= 16'd0;  // the recording is over: the inputs hold\n", id)
		w("      end\n    end\n  end\n\n")
	}
	var doneTerms, passTerms, failTerms, hs []string
	for _, s := range it.Streams {
		if s.Input {
			hs = append(hs, fmt.Sprintf("(%s & %s)", s.Valid(), s.Ready()))
			continue
		}
		hs = append(hs, s.Valid())
		id := s.Name
		w("  // %s: %s\n", id, fieldList(s.Payload))
		w("  reg [%d:0] v_%s [0:MAXN-1];\n", s.Width()+64, id)
		w("  integer i_%s, pass_%s, fail_%s;\n  reg [31:0] rep_%s;    // cycles of the line's run seen\n", id, id, id, id)
		outputStream(w, s, true)
		doneTerms = append(doneTerms, "done_"+id)
		passTerms = append(passTerms, "pass_"+id)
		failTerms = append(failTerms, "fail_"+id)
	}
	if len(doneTerms) == 0 {
		doneTerms, passTerms, failTerms = []string{"1'b1"}, []string{"0"}, []string{"0"}
	}
	sw := width(it.Status)
	if sw > 0 {
		w("  reg [%d:0] status_v [0:0];\n  wire [%d:0] status_now = {%s};\n\n", sw, sw-1, names(it.Status))
	}
	w("  wire all_done = %s;\n\n", strings.Join(doneTerms, " && "))
	w("  integer passed, failed;\n")
	w("  initial begin\n")
	w("    if (!$value$plusargs(\"vectors=%%s\", dir)) dir = \".\";\n")
	w("    if (!$value$plusargs(\"seed=%%d\", seed)) seed = 1;\n")
	for _, g := range groups {
		w("    $readmemh($sformatf(\"%%s/%s\", dir), in_%s);\n", g.File(), g.Name)
	}
	for _, s := range it.Streams {
		if !s.Input {
			w("    $readmemh($sformatf(\"%%s/%s.hex\", dir), v_%s);\n", s.Name, s.Name)
			w("    i_%s = 0; pass_%s = 0; fail_%s = 0; rep_%s = 0;\n", s.Name, s.Name, s.Name, s.Name)
		}
	}
	if sw > 0 {
		w("    $readmemh($sformatf(\"%%s/status.hex\", dir), status_v);\n")
	}
	// Every group's runs add up to the recording's cycles: the first group's give the total.
	g0, g0w := groups[0].Name, width(groups[0].Ports)
	w("    total = 0;\n")
	w("    for (k = 0; k < MAXIN && in_%s[k][%d] === 1'b1; k = k + 1) total = total + in_%s[k][%d:%d];\n",
		g0, g0w+16, g0, g0w+15, g0w)
	w("    if (!$value$plusargs(\"cycles=%%d\", last_cycle) || last_cycle > total) last_cycle = total;\n")
	w("    cut = (last_cycle < total);\n")
	if sw > 0 {
		w("    if (cut) status_v[0][%d] = 1'b0;       // a cut replay does not reach the settled status\n", sw)
	}
	for _, g := range groups {
		gw, id := width(g.Ports), g.Name
		w("    cur_%s = in_%s[0][%d:0];\n    left_%s = in_%s[0][%d:%d];\n    k_%s = 1;\n", id, id, gw-1, id, id, gw+15, gw, id)
	}
	w("    run = 1'b0; cycle = 0; xbad = 1'b0;\n")
	// run rises just after a rising edge, away from every edge: the input groups move on from
	// the next rising edge, and the outputs are sampled at falling edges (no race in any simulator).
	w("    repeat (8) @(posedge clk);\n    #1 run = 1'b1;\n")
	// (The recording ends with its own drain: cycles with no input offered and every output ready,
	// in which a transaction on a stream with a ready would have failed the recording.)
	w("    while (cycle < last_cycle && !xbad) begin\n")
	w("      @(posedge clk);\n      cycle = cycle + 1;\n")
	unknownCheck(w, hs)
	w("    end\n")
	// (run stays high: dropping it would reset the device before its status is compared.)
	w("    #1;\n")
	tally(w, passTerms, failTerms)
	w("    if (total == 0 || all_done !== 1'b1) begin\n      failed = failed + 1;\n")
	w("      $display(\"FAIL incomplete: not every output transaction before cycle %%0d was received\", last_cycle);\n")
	for _, s := range it.Streams {
		if !s.Input {
			w("      $display(\"  %s at %%0d\", i_%s);\n", s.Name, s.Name)
		}
	}
	w("    end\n")
	finish(w, it)
	w("    $finish;\n  end\nendmodule\n")
	return b.String()
}
