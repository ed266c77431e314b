package qor

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Part is an UltraScale+ device's capacity.
type Part struct {
	Name                         string
	LUTs, FFs, BRAM36, URAM, DSP int
}

// XCU55C is the Alveo U55C's device (AMD's UltraScale+ product table).
var XCU55C = Part{Name: "xcu55c", LUTs: 1303680, FFs: 2607360, BRAM36: 2016, URAM: 960, DSP: 9024}

// NSPerLevel is the delay per LUT level of the Fmax estimate: a Vivado report of a 15-level
// path on a VU9P at 250 MHz was 4.17 ns, logic and routing (docs/toolchain.md), about 0.28 ns a
// level. It is a rule of thumb, not timing.
const NSPerLevel = 0.28

// XCUPResult is the UltraScale+ view of one unit.
type XCUPResult struct {
	Unit string `json:"unit"`
	Part string `json:"part"`
	// LUTLevels is the longest register-to-register path in LUT6 levels (generic synth -lut 6,
	// ltp -noff), the memories that are macros as registered boundaries.
	LUTLevels int `json:"lut_levels"`
	// FmaxEstimateMHz is 1000 / (LUTLevels x NSPerLevel): an estimate, labelled so.
	FmaxEstimateMHz float64 `json:"fmax_estimate_mhz"`
	Estimate        string  `json:"estimate"`
	// Resources of synth_xilinx -family xcup -uram (memories inferred from the behavioural models).
	LUTs   int            `json:"luts"`
	LUTRAM int            `json:"lutram"` // LUTs used as distributed RAM or shift registers
	FFs    int            `json:"ffs"`
	RAMB36 int            `json:"ramb36"`
	RAMB18 int            `json:"ramb18"`
	URAM   int            `json:"uram"`
	DSP    int            `json:"dsp"`
	Fits   bool           `json:"fits"`
	Over   string         `json:"over,omitempty"` // what exceeds the part
	Cells  map[string]int `json:"cells"`
	// ComposedOf names the parts measured on their own and put back in (compose.go).
	ComposedOf []string          `json:"composed_of,omitempty"`
	Seconds    float64           `json:"seconds"`
	Logs       map[string]string `json:"logs"`
	// netlists are the LUT netlists (Yosys JSON) of the unit's logic and of its parts'.
	netlists []string
}

// RegisterStubs are the macros as register boundaries for the LUT-depth flow: every input lands
// in a register and rdata leaves one, with no logic between, so a path ends at a macro's
// inputs and starts at its output, as at a block RAM's.
func RegisterStubs(u Unit) string {
	var b strings.Builder
	for _, t := range u.MacroTables() {
		in := 2 + 2*t.AddrWidth() + t.Width
		fmt.Fprintf(&b, "module %s (\n  input wire clk,\n  input wire we,\n  input wire [%d:0] waddr,\n", t.MemModule(), t.AddrWidth()-1)
		fmt.Fprintf(&b, "  input wire [%d:0] wdata,\n  input wire re,\n  input wire [%d:0] raddr,\n  output reg [%d:0] rdata\n);\n",
			t.Width-1, t.AddrWidth()-1, t.Width-1)
		fmt.Fprintf(&b, "  (* keep *) reg [%d:0] in_q;\n  always @(posedge clk) begin\n", in-1)
		b.WriteString("    in_q <= {we, waddr, wdata, re, raddr};\n")
		fmt.Fprintf(&b, "    rdata <= {%d{in_q}};\n  end\nendmodule\n\n", (t.Width+in-1)/in)
	}
	return b.String()
}

var (
	ltpRE  = regexp.MustCompile(`Longest topological path in \S+ \(length=(\d+)\)`)
	statRE = regexp.MustCompile(`^\s+(\S+)\s+(\d+)\s*$`)
)

// RunXCUP measures the unit's LUT6 depth and its UltraScale+ resources on part.
// With resources false only the depth is measured.
func RunXCUP(ctx context.Context, u Unit, dir string, part Part, resources bool, log io.Writer) (*XCUPResult, error) {
	start := time.Now()
	yosys, dir, log, err := yosysRun(dir, log)
	if err != nil {
		return nil, err
	}
	top := u.Name()
	p := func(n string) string { return filepath.Join(dir, n) }
	logs := map[string]string{"depth_script": p("depth.ys"), "depth_log": p("depth.log"), "stubs": p("register-stubs.v"),
		"resource_script": p("xcup.ys"), "resource_log": p("xcup.log"), "stat": p("xcup-stat.txt")}
	logic, err := absAll(u.logicFiles())
	if err != nil {
		return nil, err
	}
	all, err := absAll(u.Files)
	if err != nil {
		return nil, err
	}
	stubs := RegisterStubs(u)
	if stubs == "" {
		stubs = "// no macros\n"
	}
	logs["lut_netlist"] = p(top + "-lut6.json")
	// The LUT netlist of the unit's own logic, kept for the units composed of it; with parts,
	// theirs are read back beside it, and ltp runs over the whole.
	depthCmds := []string{yosysRead(append(logic, logs["stubs"])), "hierarchy -check -top " + top, u.blackboxParts(),
		"synth -flatten -top " + top + " -lut 6"}
	netlists := []string{logs["lut_netlist"]}
	if len(u.Parts) > 0 {
		depthCmds = append(depthCmds, u.deleteParts(), "write_json "+logs["lut_netlist"])
		for _, pt := range u.Parts {
			if pt.XCUP == nil || len(pt.XCUP.netlists) == 0 {
				return nil, fmt.Errorf("qor: %s: its part %s has no xcup LUT netlist", top, pt.Name)
			}
			netlists = appendUnique(netlists, pt.XCUP.netlists...)
		}
		for _, n := range netlists[1:] {
			depthCmds = append(depthCmds, "read_json "+n)
		}
		depthCmds = append(depthCmds, "hierarchy -check -top "+top, "flatten")
	} else {
		depthCmds = append(depthCmds, "write_json "+logs["lut_netlist"])
	}
	depth := scriptLines(append(depthCmds, "ltp -noff")...)
	res := scriptLines(yosysRead(all), "hierarchy -check -top "+top, u.blackboxParts(),
		"synth_xilinx -family xcup -uram -noiopad -noclkbuf -flatten -top "+top,
		"tee -q -o "+logs["stat"]+" stat")
	scripts := map[string]string{"depth_script": depth, "stubs": stubs}
	if resources {
		scripts["resource_script"] = res
	}
	for k, text := range scripts {
		if err := os.WriteFile(logs[k], []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("qor: %w", err)
		}
	}
	out, err := runTool(ctx, log, dir, logs["depth_log"], yosys, "-s", logs["depth_script"])
	if err != nil {
		return nil, err
	}
	m := ltpRE.FindAllStringSubmatch(out, -1)
	if m == nil {
		return nil, fmt.Errorf("qor: %s: yosys ltp printed no longest path (see %s)", top, logs["depth_log"])
	}
	r := &XCUPResult{Unit: top, Part: part.Name, Cells: map[string]int{}, Logs: logs, netlists: netlists,
		Estimate: fmt.Sprintf("estimate: %.2f ns per LUT level (logic and routing), not timing", NSPerLevel)}
	if len(u.Parts) > 0 {
		r.ComposedOf = u.partNames()
	}
	r.LUTLevels, _ = strconv.Atoi(m[len(m)-1][1])
	if r.LUTLevels > 0 {
		r.FmaxEstimateMHz = math.Round(1000/(float64(r.LUTLevels)*NSPerLevel)*10) / 10
	}
	if !resources {
		delete(logs, "resource_script")
		delete(logs, "resource_log")
		delete(logs, "stat")
		r.Seconds = round1(time.Since(start).Seconds())
		return r, nil
	}
	if _, err := runTool(ctx, log, dir, logs["resource_log"], yosys, "-q", "-s", logs["resource_script"]); err != nil {
		return nil, err
	}
	stat, err := os.ReadFile(logs["stat"])
	if err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	r.Cells = parseStatCells(string(stat))
	glue := map[string]int{}
	for typ, n := range r.Cells {
		if pt, ok := u.partOf(typ); ok {
			if pt.XCUP == nil || pt.XCUP.Cells == nil {
				return nil, fmt.Errorf("qor: %s: its part %s has no xcup resources", top, pt.Name)
			}
			for t, k := range pt.XCUP.Cells {
				glue[t] += n * k
			}
			continue
		}
		glue[typ] += n
	}
	r.Cells = glue
	for typ, n := range r.Cells {
		switch {
		case strings.HasPrefix(typ, "LUT"):
			r.LUTs += n
		case strings.HasPrefix(typ, "RAM32") || strings.HasPrefix(typ, "RAM64") || strings.HasPrefix(typ, "RAM128") ||
			strings.HasPrefix(typ, "RAM256") || strings.HasPrefix(typ, "SRL"):
			r.LUTRAM += lutramLUTs(typ) * n
		case typ == "FDRE" || typ == "FDSE" || typ == "FDCE" || typ == "FDPE":
			r.FFs += n
		case strings.HasPrefix(typ, "RAMB36"):
			r.RAMB36 += n
		case strings.HasPrefix(typ, "RAMB18"):
			r.RAMB18 += n
		case strings.HasPrefix(typ, "URAM"):
			r.URAM += n
		case strings.HasPrefix(typ, "DSP"):
			r.DSP += n
		}
	}
	var over []string
	bram := r.RAMB36 + (r.RAMB18+1)/2
	for _, c := range []struct {
		what      string
		need, cap int
	}{{"LUTs", r.LUTs + r.LUTRAM, part.LUTs}, {"FFs", r.FFs, part.FFs}, {"RAMB36", bram, part.BRAM36},
		{"URAM", r.URAM, part.URAM}, {"DSP", r.DSP, part.DSP}} {
		if c.need > c.cap {
			over = append(over, fmt.Sprintf("%d %s (%d)", c.need, c.what, c.cap))
		}
	}
	r.Fits, r.Over = len(over) == 0, strings.Join(over, ", ")
	r.Seconds = round1(time.Since(start).Seconds())
	return r, nil
}

// lutramLUTs is the LUTs one distributed-RAM or SRL primitive occupies.
func lutramLUTs(typ string) int {
	switch typ {
	case "RAM32M", "RAM64M":
		return 4
	case "RAM32M16", "RAM64M8":
		return 8
	case "RAM128X1D", "RAM128X1S":
		return 2
	case "RAM256X1S", "RAM256X1D":
		return 4
	}
	return 1
}

// parseStatCells reads the cell counts of Yosys stat's last module.
func parseStatCells(stat string) map[string]int {
	out := map[string]int{}
	in := false
	for _, l := range strings.Split(stat, "\n") {
		if strings.Contains(l, "Number of cells:") {
			in = true
			out = map[string]int{}
			continue
		}
		if !in {
			continue
		}
		m := statRE.FindStringSubmatch(l)
		if m == nil {
			if strings.TrimSpace(l) == "" || strings.Contains(l, "Chip area") {
				in = false
			}
			continue
		}
		n, _ := strconv.Atoi(m[2])
		out[strings.TrimPrefix(m[1], "$")] = n
	}
	return out
}
