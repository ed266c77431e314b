// Package fpga builds hardware blocks for FPGA boards and reports what they cost: board
// definitions, the board-top wrapper every block is measured in, the Yosys synthesis and
// nextpnr place-and-route flow, and the parsing of their reports.
//
// What the numbers mean. Synth wraps the block (see Wrapper), marks the block keep_hierarchy
// and synthesizes the whole design, so the block is synthesized exactly as it would be on its
// own (out of context) and its cells are counted from its own module in the netlist: LUTs, FFs
// and RAMs are the block's alone. The wrapper's cells are reported separately as
// WrapperOverhead, counted from the wrapper module, so nothing is estimated or subtracted. Fmax
// and Utilization come from place-and-route of the whole wrapped design; the wrapper has at most
// one LUT between flip-flops, so any path slower than that is the block's or runs into or out of
// it.
package fpga

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mrgen/mrgen/hdl"
)

// ErrToolMissing is wrapped by the error Synth returns when yosys or nextpnr-ice40 is not on
// PATH.
var ErrToolMissing = errors.New("tool not found on PATH")

// SynthRequest says what to build where.
type SynthRequest struct {
	Board     string      // a name from Boards()
	Module    *hdl.Module // the block; its Verilog is in Files
	Files     []string    // the block's Verilog and that of any module it instantiates
	TargetMHz int         // clock target: nextpnr --freq and the SDC period
	// WorkDir receives the wrapper, constraints, netlist, reports and logs; it is created if
	// missing. Empty means a new temporary directory, which is kept (its paths are in the Result).
	WorkDir string
	Seed    int // nextpnr placement seed; 0 leaves nextpnr's default
	// PackOnly stops once nextpnr has packed the design into the device's cells: the cell
	// counts and the packed Utilization (logic cells hold a LUT and a flip-flop each, so the
	// packed count is what fills the device), no placement and no Fmax.
	PackOnly bool
	Wrapper  WrapperOptions // banner of the generated wrapper
}

// Result is what one synthesis run measured. The JSON tags follow DESIGN.md's `mrgen synth
// --json` contract for a block.
type Result struct {
	Board     string  `json:"board"`
	Device    string  `json:"device"`
	Top       string  `json:"top"`     // the block's module
	Wrapper   string  `json:"wrapper"` // the board-top module place-and-route saw
	LUTs      int     `json:"luts"`    // the block's own, see Board.Count
	FFs       int     `json:"ffs"`
	RAMs      int     `json:"rams"`
	FmaxMHz   float64 `json:"fmax_mhz"` // achieved by the wrapped design; 0 without place-and-route
	TargetMHz int     `json:"target_mhz"`
	// TimingMet says whether FmaxMHz reaches TargetMHz; nil without place-and-route.
	TimingMet *bool `json:"timing_met,omitempty"`
	// CriticalPath says which path limits FmaxMHz: "START (file:line) -> END (file:line) (into
	// CELL.PORT): N logic levels, T ns (...)"; see CriticalPath.Describe.
	CriticalPath    string         `json:"critical_path,omitempty"`
	Cells           map[string]int `json:"cells"`            // the block's cells by type
	WrapperOverhead Resources      `json:"wrapper_overhead"` // the wrapper's own cells
	// Utilization is nextpnr's count of the whole design's cells: after placement, or after
	// packing when the design was not placed.
	Utilization map[string]Utilization `json:"utilization,omitempty"`
	Seed        int                    `json:"seed,omitempty"`
	Note        string                 `json:"note,omitempty"`
	// OverCapacity names the resources the synthesized design (block and wrapper) needs beyond
	// the device's, with the device's amount in parentheses ("36846 LUTs (7680), 216 RAMs
	// (32)"), or, within them, the packed cells ("9464 ICESTORM_LC (7680)"); placement is then
	// not attempted, since it can only fail.
	OverCapacity string  `json:"over_capacity,omitempty"`
	SynthSeconds float64 `json:"synth_seconds"`
	PnRSeconds   float64 `json:"pnr_seconds,omitempty"`
	// LogPaths names every file the run wrote: wrapper, pcf, sdc, yosys_script, yosys_log,
	// netlist, pack_log, pack_report (nextpnr --pack-only), nextpnr_log, nextpnr_report.
	LogPaths map[string]string `json:"logs"`
}

// Whole is what the synthesized design takes, block and wrapper.
func (r *Result) Whole() Resources {
	return Resources{LUTs: r.LUTs + r.WrapperOverhead.LUTs, FFs: r.FFs + r.WrapperOverhead.FFs,
		RAMs: r.RAMs + r.WrapperOverhead.RAMs}
}

// DoesNotFit says what the design needs beyond the device ("does not fit: needs ..."), or ""
// when it is within the device's capacity.
func (r *Result) DoesNotFit() string {
	if r.OverCapacity == "" {
		return ""
	}
	return "does not fit: needs " + r.OverCapacity
}

// Synth generates the wrapper for req.Module, synthesizes it with Yosys for req.Board and, where
// the board has place-and-route, places and routes it with nextpnr and reads the achieved Fmax.
// Tool output is copied to log (nil discards it); the full logs are files in WorkDir.
func Synth(ctx context.Context, req SynthRequest, log io.Writer) (*Result, error) {
	if log == nil {
		log = io.Discard
	}
	board, err := LookupBoard(req.Board)
	if err != nil {
		return nil, err
	}
	if req.TargetMHz <= 0 {
		return nil, fmt.Errorf("fpga: target clock %d MHz: must be > 0", req.TargetMHz)
	}
	if len(req.Files) == 0 {
		return nil, fmt.Errorf("fpga: synth: no Verilog files given")
	}
	files := make([]string, len(req.Files))
	for i, f := range req.Files {
		if strings.ContainsAny(f, "\"\n\r") {
			return nil, fmt.Errorf("fpga: file name %q: quotes and line breaks are not supported", f)
		}
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("fpga: synth: %w", err)
		}
		if files[i], err = filepath.Abs(f); err != nil {
			return nil, fmt.Errorf("fpga: synth: %s: %w", f, err)
		}
	}
	w, err := NewWrapper(req.Module, req.Wrapper)
	if err != nil {
		return nil, err
	}
	yosys, err := lookTool("yosys")
	if err != nil {
		return nil, err
	}
	nextpnr := ""
	if board.PlaceAndRoute() {
		if nextpnr, err = lookTool("nextpnr-ice40"); err != nil {
			return nil, err
		}
	}

	dir := req.WorkDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "mrgen-synth-"+w.Block+"-"); err != nil {
			return nil, fmt.Errorf("fpga: work directory: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fpga: work directory: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("fpga: work directory: %w", err)
	}
	paths := map[string]string{
		"wrapper":      filepath.Join(dir, w.FileName()),
		"sdc":          filepath.Join(dir, w.Name+".sdc"),
		"yosys_script": filepath.Join(dir, "synth.ys"),
		"yosys_log":    filepath.Join(dir, "yosys.log"),
		"netlist":      filepath.Join(dir, "synth.json"),
	}
	sdc, err := w.SDC(req.TargetMHz)
	if err != nil {
		return nil, err
	}
	script := SynthScript(board, append(files, paths["wrapper"]), w, paths["netlist"])
	outputs := map[string]string{
		"wrapper":      w.Verilog,
		"sdc":          sdc,
		"yosys_script": strings.Join(script, "\n") + "\n",
	}
	if board.PlaceAndRoute() {
		pcf, err := w.PCF(board)
		if err != nil {
			return nil, err
		}
		paths["pcf"] = filepath.Join(dir, w.Name+".pcf")
		paths["pack_log"] = filepath.Join(dir, "nextpnr-pack.log")
		paths["pack_report"] = filepath.Join(dir, "nextpnr-pack-report.json")
		paths["nextpnr_log"] = filepath.Join(dir, "nextpnr.log")
		paths["nextpnr_report"] = filepath.Join(dir, "nextpnr-report.json")
		outputs["pcf"] = pcf
	}
	for k, text := range outputs {
		if err := os.WriteFile(paths[k], []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("fpga: writing %s: %w", k, err)
		}
	}

	res := &Result{
		Board: board.Name, Device: board.Device, Top: w.Block, Wrapper: w.Name,
		TargetMHz: req.TargetMHz, Note: board.Note, LogPaths: paths,
	}

	// Synthesis.
	start := time.Now()
	if err := run(ctx, log, "yosys", paths["yosys_log"], dir,
		yosys, "-q", "-l", paths["yosys_log"], "-s", paths["yosys_script"]); err != nil {
		return nil, err
	}
	res.SynthSeconds = time.Since(start).Seconds()
	data, err := os.ReadFile(paths["netlist"])
	if err != nil {
		return nil, fmt.Errorf("fpga: reading the synthesized netlist: %w", err)
	}
	nl, err := ParseNetlist(data)
	if err != nil {
		return nil, err
	}
	if res.Cells, err = nl.Cells(w.Block); err != nil {
		return nil, err
	}
	r := board.Count(res.Cells)
	res.LUTs, res.FFs, res.RAMs = r.LUTs, r.FFs, r.RAMs
	own, err := nl.OwnCells(w.Name)
	if err != nil {
		return nil, err
	}
	res.WrapperOverhead = board.Count(own)
	res.OverCapacity = res.Whole().Beyond(board.Capacity)
	if !board.PlaceAndRoute() {
		return res, nil
	}
	if res.OverCapacity != "" {
		for _, k := range []string{"pack_log", "pack_report", "nextpnr_log", "nextpnr_report"} {
			delete(paths, k)
		}
		return res, nil
	}
	res.Seed = req.Seed

	// Pack: the cells the design takes once nextpnr has paired LUTs with flip-flops (under a
	// second). A design that packs into more cells than the device has is not placed.
	common := slices.Clip(append(append([]string{}, board.Nextpnr...), "--json", paths["netlist"], "--pcf", paths["pcf"]))
	start = time.Now()
	if err := run(ctx, log, "nextpnr-ice40", paths["pack_log"], dir, nextpnr, append(common, "--pack-only",
		"--report", paths["pack_report"], "--quiet", "--log", paths["pack_log"])...); err != nil {
		return nil, err
	}
	data, err = os.ReadFile(paths["pack_report"])
	if err != nil {
		return nil, fmt.Errorf("fpga: reading the nextpnr pack report: %w", err)
	}
	if res.Utilization, err = ParseUtilization(data); err != nil {
		return nil, err
	}
	res.PnRSeconds = time.Since(start).Seconds()
	if res.OverCapacity = overPacked(res.Utilization); res.OverCapacity != "" || req.PackOnly {
		delete(paths, "nextpnr_log")
		delete(paths, "nextpnr_report")
		return res, nil
	}

	// Place and route.
	args := append(common,
		"--freq", strconv.Itoa(req.TargetMHz),
		"--timing-allow-fail",
		"--report", paths["nextpnr_report"],
		"--quiet", "--log", paths["nextpnr_log"],
	)
	if req.Seed != 0 {
		args = append(args, "--seed", strconv.Itoa(req.Seed))
	}
	start = time.Now()
	if err := run(ctx, log, "nextpnr-ice40", paths["nextpnr_log"], dir, nextpnr, args...); err != nil {
		// Within the device's LUTs and FFs, a design can still need more logic cells than it
		// has once they are packed (a cell holds one LUT and one flip-flop): it does not fit.
		if outOfCells(err.Error()) {
			res.OverCapacity = fmt.Sprintf("more logic cells than the %d of the device after packing (nextpnr: %s)",
				board.Capacity.LUTs, errorLines([]byte(err.Error())))
			res.PnRSeconds += time.Since(start).Seconds()
			delete(paths, "nextpnr_report")
			return res, nil
		}
		return nil, err
	}
	res.PnRSeconds += time.Since(start).Seconds()
	data, err = os.ReadFile(paths["nextpnr_report"])
	if err != nil {
		return nil, fmt.Errorf("fpga: reading the nextpnr report: %w", err)
	}
	if req.PackOnly {
		if res.Utilization, err = ParseUtilization(data); err != nil {
			return nil, err
		}
		return res, nil
	}
	rep, err := ParsePnRReport(data, ClockPin)
	if err != nil {
		return nil, err
	}
	res.FmaxMHz = rep.FmaxMHz
	met := rep.FmaxMHz >= float64(req.TargetMHz)
	res.TimingMet = &met
	if rep.CriticalPath != nil {
		res.CriticalPath = rep.CriticalPath.Describe(func(net string) string { return nl.Source(w.Name, net) })
	}
	res.Utilization = rep.Utilization
	return res, nil
}

// overPacked names the kinds of cell a packed design needs more of than the device has, as
// "9464 ICESTORM_LC (7680)", joined by ", "; "" when it packs into the device.
func overPacked(u map[string]Utilization) string {
	var kinds []string
	for k := range u {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var over []string
	for _, k := range kinds {
		if u[k].Used > u[k].Available {
			over = append(over, fmt.Sprintf("%d %s (%d)", u[k].Used, k, u[k].Available))
		}
	}
	return strings.Join(over, ", ")
}

// outOfCells reports whether a nextpnr error says the packed design has more cells than the
// device ("no BELs remaining to implement cell type", "Failed to expand region ... of N
// ICESTORM_LCs").
func outOfCells(msg string) bool {
	return strings.Contains(msg, "no BELs remaining") ||
		strings.Contains(msg, "Failed to expand region") && strings.Contains(msg, "ICESTORM_LC")
}

// SynthScript is the Yosys script Synth runs, one command per element: read the block and the
// wrapper, check the hierarchy, keep the block's boundary so its cells can be counted on their
// own, synthesize for the board's family and write the JSON netlist.
func SynthScript(board Board, files []string, w *Wrapper, netlist string) []string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = `"` + f + `"`
	}
	return []string{
		"read_verilog -sv " + strings.Join(q, " "),
		"hierarchy -check -top " + w.Name,
		"setattr -mod -set keep_hierarchy 1 " + w.Block,
		fmt.Sprintf("%s -top %s -json \"%s\"", board.SynthCommand(), w.Name, netlist),
	}
}

func lookTool(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("fpga: %w: %s; run `make deps` to install the toolchain", ErrToolMissing, name)
	}
	return p, nil
}

// run runs one tool, copying its console output to log. On failure the error quotes the error
// lines of the tool's log file (or of its console output).
func run(ctx context.Context, log io.Writer, tool, logFile, dir, prog string, args ...string) error {
	var out bytes.Buffer
	fmt.Fprintf(log, "fpga: %s %s\n", tool, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Stdout = io.MultiWriter(log, &out)
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("fpga: %s: %w", tool, ctx.Err())
	}
	if err == nil {
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return fmt.Errorf("fpga: running %s: %w", tool, err)
	}
	text := out.Bytes()
	if b, rerr := os.ReadFile(logFile); rerr == nil && len(b) > 0 {
		text = b
	}
	msg := errorLines(text)
	if msg == "" {
		msg = "no error message; see " + logFile
	}
	return fmt.Errorf("fpga: %s failed (%w): %s", tool, err, msg)
}

// errorLines picks the lines carrying "ERROR:" from a Yosys or nextpnr log, at most ten.
func errorLines(log []byte) string {
	var keep []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() && len(keep) < 10 {
		l := strings.TrimSpace(sc.Text())
		if strings.Contains(l, "ERROR:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "; ")
}
