package handoff

import (
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// Testbench renders tb_<module>.v: a self-checking testbench in plain Verilog (Icarus -g2012 and
// Verilator --binary --timing) that replays one recording of the module's vectors. It reads the
// recording's folder from +vectors=DIR, drives every input stream from its file with seeded
// random gaps (+seed=N, +valid_pct=P), drives every output stream's ready at random
// (+ready_pct=P), compares each output transaction in order with the expected one (so any
// latency passes), holds the side inputs at the recorded values, then, with every stream done,
// idles for a while, treats any further output as a failure, compares the status outputs when
// the recording had settled, prints "N passed, M failed" and ends with $fatal on a failure.
// maxN bounds every stream's transactions over the recordings it will replay. ordered: the input
// lines carry their rank (Recorder), and a stream offers its next transaction only when no input
// transaction of a lower rank is left, so the inputs keep their recorded order across streams.
func Testbench(it *Interface, maxN int, ordered bool, banner string) string {
	m := it.Module
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	head(w, banner, m)
	w("  localparam integer MAXN = %d;          // lines per stream file, the end mark included\n", maxN+1)
	w("  localparam integer STALL_LIMIT = 200000; // cycles without a transaction before giving up\n")
	w("  localparam integer DRAIN = 64;           // idle cycles after the last transaction\n\n")
	w("  reg clk = 1'b0;\n  always #5 clk = ~clk;\n")
	resetOn, resetOff := resetLevels(m)
	w("  reg %s = %s;\n", m.Reset, resetOn)
	w("  string dir;\n  integer seed, valid_pct, ready_pct;\n")
	w("  reg run;                        // out of reset, replaying\n")
	w("  integer cycle, idle, drained;\n  reg xbad;                       // an unknown handshake was seen\n\n")
	instance(w, m)
	// xorshift32, one state per stream.
	w("  function automatic [31:0] xs(input [31:0] s);\n    reg [31:0] t;\n    begin\n")
	w("      t = s ^ (s << 13);\n      t = t ^ (t >> 17);\n      xs = t ^ (t << 5);\n    end\n  endfunction\n\n")
	if n := width(it.Side); n > 0 {
		w("  reg [%d:0] side_v [0:0];\n  assign {%s} = side_v[0][%d:0];\n\n", n, names(it.Side), n-1)
	}
	var doneTerms, failTerms, passTerms, takeTerms, rankTerms []string
	if ordered {
		// min_rank is declared here and assigned below, once every stream's rank exists.
		w("  wire [31:0] min_rank;\n")
	}
	for _, s := range it.Streams {
		n := s.Width()
		id := s.Name
		top := n // the line's present bit
		if ordered && s.Input {
			top = n + 32
		}
		w("  // %s: %s\n", id, fieldList(s.Payload))
		w("  reg [%d:0] v_%s [0:MAXN-1];\n", top, id)
		w("  integer i_%s, pass_%s, fail_%s;\n  reg [31:0] rnd_%s;\n", id, id, id, id)
		if s.Input {
			w("  reg val_%s;\n  reg [%d:0] dat_%s = %d'd0;\n", id, n-1, id, n)
			w("  assign %s = val_%s;\n", s.Valid(), id)
			if n > 0 {
				w("  assign {%s} = dat_%s;\n", names(s.Payload), id)
			}
			w("  wire take_%s = val_%s && %s;\n", id, id, s.Ready())
			w("  wire [31:0] nxt_%s = i_%s + (take_%s ? 1 : 0);\n", id, id, id)
			eligible := "1'b1"
			if ordered {
				w("  wire [31:0] rank_%s = (v_%s[nxt_%s][%d] === 1'b1) ? v_%s[nxt_%s][%d:%d] : 32'hFFFFFFFF;\n",
					id, id, id, top, id, id, top-1, n)
				rankTerms = append(rankTerms, "rank_"+id)
				eligible = fmt.Sprintf("(rank_%s == min_rank)", id)
			}
			w("  always @(posedge clk) begin\n")
			w("    rnd_%s <= xs(rnd_%s);\n", id, id)
			w("    if (!run) begin\n      val_%s <= 1'b0;\n    end else begin\n", id)
			w("      i_%s <= nxt_%s;\n", id, id)
			w("      if (!val_%s || take_%s) begin\n", id, id)
			w("        val_%s <= (v_%s[nxt_%s][%d] === 1'b1) && %s && ((rnd_%s %% 100) < valid_pct);\n",
				id, id, id, top, eligible, id)
			// The payload holds its last value between transactions (never X from past the end).
			w("        if (v_%s[nxt_%s][%d] === 1'b1) dat_%s <= v_%s[nxt_%s][%d:0];\n      end\n    end\n  end\n",
				id, id, top, id, id, id, max(n-1, 0))
			w("  wire done_%s = !val_%s && (v_%s[i_%s][%d] !== 1'b1);\n\n", id, id, id, id, top)
			takeTerms = append(takeTerms, "take_"+id)
		} else {
			outputStream(w, s, false)
			takeTerms = append(takeTerms, "take_"+id)
		}
		doneTerms = append(doneTerms, "done_"+id)
		passTerms = append(passTerms, "pass_"+id)
		failTerms = append(failTerms, "fail_"+id)
	}
	if ordered {
		expr := "32'hFFFFFFFF"
		for _, r := range rankTerms {
			expr = fmt.Sprintf("((%s < %s) ? %s : %s)", r, expr, r, expr)
		}
		w("  assign min_rank = %s;\n\n", expr)
	}
	sw := width(it.Status)
	if sw > 0 {
		w("  reg [%d:0] status_v [0:0];\n  wire [%d:0] status_now = {%s};\n\n", sw, sw-1, names(it.Status))
	}
	w("  wire all_done = %s;\n", strings.Join(doneTerms, " && "))
	w("  wire any_take = %s;\n\n", strings.Join(takeTerms, " || "))
	w("  integer passed, failed;\n")
	w("  initial begin\n")
	w("    if (!$value$plusargs(\"vectors=%%s\", dir)) dir = \".\";\n")
	w("    if (!$value$plusargs(\"seed=%%d\", seed)) seed = 1;\n")
	w("    if (!$value$plusargs(\"valid_pct=%%d\", valid_pct)) valid_pct = 80;\n")
	w("    if (!$value$plusargs(\"ready_pct=%%d\", ready_pct)) ready_pct = 70;\n")
	for i, s := range it.Streams {
		w("    $readmemh($sformatf(\"%%s/%s.hex\", dir), v_%s);\n", s.Name, s.Name)
		w("    i_%s = 0; pass_%s = 0; fail_%s = 0; rnd_%s = seed * 32'h9E3779B1 + 32'd%d;\n",
			s.Name, s.Name, s.Name, s.Name, 7919*(i+1))
		w("    if (rnd_%s == 0) rnd_%s = 32'd1;\n", s.Name, s.Name)
	}
	if width(it.Side) > 0 {
		w("    $readmemh($sformatf(\"%%s/side.hex\", dir), side_v);\n")
	}
	if sw > 0 {
		w("    $readmemh($sformatf(\"%%s/status.hex\", dir), status_v);\n")
	}
	// The handshakes the device drives: an input stream's ready while its valid is high (a ready
	// may follow the payload, which is arbitrary while valid is low), an output stream's valid.
	var hs []string
	for _, s := range it.Streams {
		if s.Input {
			hs = append(hs, fmt.Sprintf("(%s & %s)", s.Valid(), s.Ready()))
		} else {
			hs = append(hs, s.Valid())
		}
	}
	w("    run = 1'b0; cycle = 0; idle = 0; drained = 0; xbad = 1'b0;\n")
	w("    repeat (8) @(posedge clk);\n    %s <= %s;\n    @(posedge clk);\n    run <= 1'b1;\n", m.Reset, resetOff)
	// An unknown (X or Z) handshake from the device ends the run as a failure: 4-state simulation
	// shows state used before it was written or reset.
	w("    while (!((all_done === 1'b1) && drained >= DRAIN) && idle < STALL_LIMIT && !xbad) begin\n")
	w("      @(posedge clk);\n      cycle = cycle + 1;\n")
	unknownCheck(w, hs)
	w("      idle = (any_take === 1'b1) ? 0 : idle + 1;\n")
	w("      drained = (all_done === 1'b1) ? drained + 1 : 0;\n    end\n")
	w("    @(posedge clk);\n")
	tally(w, passTerms, failTerms)
	w("    if (all_done !== 1'b1) begin\n      failed = failed + 1;\n")
	w("      $display(\"FAIL incomplete: not every transaction was replayed or received\");\n")
	for _, s := range it.Streams {
		w("      $display(\"  %s at %%0d\", i_%s);\n", s.Name, s.Name)
	}
	w("    end\n")
	// (A stall leaves the replay incomplete too: the positions are printed above.)
	w("    if (idle >= STALL_LIMIT) begin\n      failed = failed + 1;\n")
	w("      $display(\"FAIL stalled: no transaction for %%0d cycles at cycle %%0d\", STALL_LIMIT, cycle);\n")
	w("    end\n")
	finish(w, it)
	w("    $finish;\n  end\nendmodule\n")
	return b.String()
}

// head starts a testbench: its banner, the timescale and the module line.
func head(w func(string, ...any), banner string, m *hdl.Module) {
	w("%s", banner)
	w("`timescale 1ns / 1ps\n`default_nettype none\n\n")
	w("module tb_%s;\n", m.Name)
}

// resetLevels are the values of m's reset port in reset and out of it.
func resetLevels(m *hdl.Module) (on, off string) {
	if m.Reset == "rst_n" {
		return "1'b0", "1'b1"
	}
	return "1'b1", "1'b0"
}

// instance declares a wire per port of the device but its clock and reset, and instantiates it.
func instance(w func(string, ...any), m *hdl.Module) {
	for _, p := range m.Ports {
		if p.Name == m.Clock || p.Name == m.Reset {
			continue
		}
		w("  wire %s%s;\n", rangeSp(p.Width), p.Name)
	}
	w("\n  %s dut (\n", m.Name)
	for i, p := range m.Ports {
		sep := ","
		if i == len(m.Ports)-1 {
			sep = ""
		}
		w("    .%s(%s)%s\n", p.Name, p.Name, sep)
	}
	w("  );\n\n")
}

// unknownCheck writes the replay loop's check of the device's handshakes hs: an unknown (X or Z)
// one sets xbad and ends the run as a failure (4-state simulation shows state used before it was
// written or reset).
func unknownCheck(w func(string, ...any), hs []string) {
	w("      if ((^{%s}) === 1'bx) begin\n        xbad = 1'b1;\n", strings.Join(hs, ", "))
	w("        $display(\"FAIL unknown handshake at cycle %%0d: {%s} = %%b\", cycle, {%s});\n      end\n",
		strings.Join(hs, ", "), strings.Join(hs, ", "))
}

// tally sums the streams' passes and failures, an unknown handshake counted as one more failure.
func tally(w func(string, ...any), passTerms, failTerms []string) {
	w("    passed = %s;\n    failed = %s;\n", strings.Join(passTerms, " + "), strings.Join(failTerms, " + "))
	w("    if (xbad) failed = failed + 1;\n")
}

// finish compares the settled status outputs when the recording says so (status_v, status_now),
// prints the result line and ends the run with $fatal on a failure.
func finish(w func(string, ...any), it *Interface) {
	m, sw := it.Module, width(it.Status)
	if sw > 0 {
		w("    if (status_v[0][%d] === 1'b1) begin\n", sw)
		w("      if (status_now !== status_v[0][%d:0]) begin\n        failed = failed + 1;\n", sw-1)
		w("        $display(\"FAIL status {%s}: got %%h, expected %%h\", status_now, status_v[0][%d:0]);\n",
			names(it.Status), sw-1)
		w("      end else begin\n        passed = passed + 1;\n      end\n    end\n")
	}
	w("    $display(\"tb_%s: %%0d passed, %%0d failed (%%0d cycles, seed %%0d)\", passed, failed, cycle, seed);\n", m.Name)
	w("    if (failed != 0) $fatal(1, \"tb_%s: FAILED\");\n", m.Name)
}

// outputStream writes an output stream's checker: each transaction (valid, and ready when the
// stream has one) compared in order with the next line of v_<name>; else the ready is driven at
// random. timed: the ready is the recording's (an input of inputs.hex), and a line is {cycle,
// cycles, payload}: an event stream's run of that many cycles with the same payload, ending at
// that cycle (cycles is 1 for a stream with a ready); the stream is done once no line ending
// before the replay's last cycle (last_cycle) is left.
func outputStream(w func(string, ...any), s Stream, timed bool) {
	n, id := s.Width(), s.Name
	top := n
	if timed {
		top = n + 64
	}
	w("  wire [%d:0] got_%s = {%s};\n", n-1, id, names(s.Payload))
	switch {
	case s.Ready() == "":
		w("  wire take_%s = %s;  // an event stream: no ready\n", id, s.Valid())
	case timed:
		w("  wire take_%s = %s && %s;\n", id, s.Valid(), s.Ready())
	default:
		w("  reg rdy_%s;\n  assign %s = rdy_%s;\n", id, s.Ready(), id)
		w("  wire take_%s = %s && rdy_%s;\n", id, s.Valid(), id)
	}
	if timed {
		// Sampled mid-cycle: the inputs change at the rising edge, and an output that follows
		// an input combinationally must be read after it settled, in every simulator.
		w("  always @(negedge clk) begin\n")
	} else {
		w("  always @(posedge clk) begin\n")
		w("    rnd_%s <= xs(rnd_%s);\n", id, id)
		if s.Ready() != "" {
			w("    rdy_%s <= run && ((rnd_%s %% 100) < ready_pct);\n", id, id)
		}
	}
	w("    if (run && take_%s) begin\n", id)
	w("      if (v_%s[i_%s][%d] !== 1'b1) begin\n", id, id, top)
	w("        fail_%s <= fail_%s + 1;\n", id, id)
	w("        $display(\"FAIL %s #%%0d: unexpected output %%h\", i_%s, got_%s);\n", id, id, id)
	w("      end else if (got_%s !== v_%s[i_%s][%d:0]) begin\n", id, id, id, n-1)
	w("        fail_%s <= fail_%s + 1;\n", id, id)
	w("        $display(\"FAIL %s #%%0d: got %%h, expected %%h\", i_%s, got_%s, v_%s[i_%s][%d:0]);\n",
		id, id, id, id, id, n-1)
	w("      end else begin\n        pass_%s <= pass_%s + 1;\n      end\n", id, id)
	if timed {
		w("      if (rep_%s + 32'd1 >= v_%s[i_%s][%d:%d]) begin\n", id, id, id, n+31, n)
		w("        i_%s <= i_%s + 1;\n        rep_%s <= 32'd0;\n", id, id, id)
		w("      end else begin\n        rep_%s <= rep_%s + 32'd1;\n      end\n    end\n  end\n", id, id)
		w("  wire done_%s = (v_%s[i_%s][%d] !== 1'b1) || (v_%s[i_%s][%d:%d] >= last_cycle);\n\n",
			id, id, id, top, id, id, n+63, n+32)
		return
	}
	w("      i_%s <= i_%s + 1;\n    end\n  end\n", id, id)
	w("  wire done_%s = (v_%s[i_%s][%d] !== 1'b1);\n\n", id, id, id, n)
}

// rangeSp is hdl.Range followed by a space when there is a range.
func rangeSp(width int) string {
	if r := hdl.Range(width); r != "" {
		return r + " "
	}
	return ""
}

func names(ports []hdl.Port) string {
	out := make([]string, len(ports))
	for i, p := range ports {
		out[i] = p.Name
	}
	return strings.Join(out, ", ")
}
