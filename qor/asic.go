package qor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mrgen/mrgen/constraints"
)

// FO4NS is the fan-out-of-4 inverter delay of osu018, ns (docs/toolchain.md: an INVX1
// driving four INVX1, 93-105 ps a stage in OpenSTA).
const FO4NS = 0.1

// ASICResult is the ASIC timing and area of one unit.
type ASICResult struct {
	Unit     string  `json:"unit"`
	Library  string  `json:"library"`
	Stage    string  `json:"stage"` // "pre-layout"
	ClockMHz int     `json:"clock_mhz"`
	PeriodNS float64 `json:"period_ns"`
	// CriticalNS is the worst path's need of the clock (period - slack); CriticalFO4 the same
	// in FO4 delays; WNSNS the worst negative slack (0 when met).
	CriticalNS  float64 `json:"critical_ns"`
	CriticalFO4 float64 `json:"critical_fo4"`
	WNSNS       float64 `json:"wns_ns"`
	TNSNS       float64 `json:"tns_ns"`
	Start       string  `json:"start"`
	End         string  `json:"end"`
	Levels      int     `json:"levels"`
	Paths       []Path  `json:"paths"` // the three worst, one per endpoint
	// Area: standard cells (Yosys stat with the liberty), and the macros' model area.
	CellAreaUM2  float64        `json:"cell_area_um2"`
	MacroAreaUM2 float64        `json:"macro_area_um2"`
	Cells        int            `json:"cells"`
	Flops        int            `json:"flops"`
	Macros       int            `json:"macros"`
	MacroBits    int            `json:"macro_bits"`
	CellTypes    map[string]int `json:"cell_types"`
	Note         string         `json:"note,omitempty"`
	// ComposedOf names the parts measured on their own and linked in (compose.go).
	ComposedOf []string          `json:"composed_of,omitempty"`
	Seconds    float64           `json:"seconds"`
	Logs       map[string]string `json:"logs"`
	// netlists are the gate-level netlists OpenSTA linked: the unit's and its parts'.
	netlists []string
	names    map[string]string // netlist instance -> RTL name
}

// flopOverheadPS is what a register-to-register path spends in its flip-flops in osu018:
// DFFPOSX1's clock-to-Q (about 270 ps at its usual load) and setup (about 190 ps), as OpenSTA
// reports them.
const flopOverheadPS = 460

// abcDelayPS is the delay target ABC maps to: the period less the flip-flops' share, because ABC
// sees only the logic between them. (Measured alone it changed little; it keeps the target
// honest when the period is tight.)
func abcDelayPS(periodNS float64) int {
	d := int(periodNS*1000) - flopOverheadPS
	if d < 100 {
		d = 100
	}
	return d
}

// abcScript maps to the liberty with the delay target (ps) and buffers and sizes inside the
// logic (docs/toolchain.md: Yosys 0.23's own -liberty script does neither). It keeps, of Yosys's
// default liberty script, the choice computation (&dch -f) and the delay-driven mapper (&nf),
// without the sequential steps (scorr, dretime: the flip-flops are outside ABC's network) and
// without the restructuring steps before the choices: every one of them (dc2, &fraig, &synch2)
// rebuilt some carry logic, whose parallel-prefix form techmap gives, as a ripple chain the
// mapper could not undo. Measured on the default configuration (docs/qor-flow.md): a 32-bit
// counter with a 64-bit constant subtract 5.22 ns with "&fraig -x -C 100; &synch2", 5.00 with
// &fraig alone, 5.06 with &synch2 alone, 1.59 ns with neither; rx_acker 6.43 -> 3.76 ns
// (t_op - MAX_GATHER rippled through 33 cells), placement_engine 7.52 -> 7.14, window_unit
// 13.13 -> 12.91; the XOR trees map a little larger (crc32_d64 area +71%, delay 1.60 -> 1.43)
// and nic_tx 3.41 -> 3.87 ns (a 32-bit counter there ripples either way); the whole
// run is faster (139 s against 155 s).
func abcScript(delayPS int) string {
	return fmt.Sprintf(`strash
&get -n
&dch -f
&nf -D %[1]d
&put
buffer -p
upsize -D %[1]d
dnsize -D %[1]d
stime -p
`, delayPS)
}

// flopTypes are osu018's state cells and their output pin.
var flopTypes = map[string]string{"DFFPOSX1": "Q", "DFFNEGX1": "Q", "DFFSR": "Q", "LATCH": "Q"}

// RunASIC synthesizes the unit to osu018, buffers its fanout, and times it with OpenSTA under
// the configuration's generated SDC, its memories at or above the macro threshold as black
// boxes with the timing model. Work files go to dir.
func RunASIC(ctx context.Context, u Unit, dir string, model MacroModel, log io.Writer) (*ASICResult, error) {
	start := time.Now()
	paths, err := findAll(toolYosys, toolSTA, toolFanout, toolLiberty)
	if err != nil {
		return nil, err
	}
	yosys, sta, fanout, lib := paths[0], paths[1], paths[2], paths[3]
	if strings.ContainsAny(lib, " \t\n\"") {
		return nil, fmt.Errorf("qor: liberty %q: spaces and quotes are not supported", lib)
	}
	if log == nil {
		log = io.Discard
	}
	if dir, err = workDir(dir); err != nil {
		return nil, err
	}
	files, err := absAll(u.logicFiles())
	if err != nil {
		return nil, err
	}
	top := u.Name()
	period := u.Config.Timing.ASICPeriodNS()
	macros := u.MacroTables()
	p := func(name string) string { return filepath.Join(dir, name) }
	logs := map[string]string{"yosys_script": p("asic.ys"), "yosys_log": p("asic-yosys.log"), "abc_script": p("asic.abc"),
		"macro_stubs": p("macros.v"), "macro_liberty": p("macros.lib"), "sdc": p(top + ".sdc"),
		"netlist": p(top + ".v"), "sta_script": p("sta.tcl"), "sta_report": p("sta.log"), "fanout_log": p("fanout.log")}
	sdc, err := constraints.ModuleSDC(u.Module, u.Config)
	if err != nil {
		return nil, err
	}
	stubs := MacroStubs(macros)
	if stubs == "" {
		stubs = "// no macros\n"
	}
	inputs := append(files, logs["macro_stubs"])
	boxes := (*partBoxes)(nil)
	if len(u.Parts) > 0 {
		boxes = newPartBoxes(u.Parts)
		for _, pt := range u.Parts {
			if pt.ASIC == nil || len(pt.ASIC.netlists) == 0 {
				return nil, fmt.Errorf("qor: %s: its part %s has no ASIC netlist", top, pt.Name)
			}
		}
	}
	script := scriptLines(
		"read_liberty -lib "+lib,
		yosysRead(inputs),
		"hierarchy -check -top "+top,
		u.blackboxParts(),
		"synth -flatten -top "+top+" -run :fine",
		"opt -fast -full", "memory_map", "opt -full", "techmap", "opt -fast",
		"dfflibmap -liberty "+lib, "opt",
		fmt.Sprintf("abc -liberty %s -script %s", lib, logs["abc_script"]),
		"opt_clean -purge", "setundef -zero", "rename -enumerate",
		fmt.Sprintf("tee -q -o %s stat -liberty %s", p("asic-stat.txt"), lib),
		"write_blif -gates -cname -buf BUFX2 A Y -true - vdd -false - gnd -undef - gnd "+p("mapped.blif"),
	)
	for k, text := range map[string]string{"yosys_script": script, "abc_script": abcScript(abcDelayPS(period)), "macro_stubs": stubs,
		"macro_liberty": model.Liberty(macros), "sdc": sdc} {
		if err := os.WriteFile(logs[k], []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("qor: writing %s: %w", k, err)
		}
	}
	if _, err := runTool(ctx, log, dir, logs["yosys_log"], yosys, "-q", "-s", logs["yosys_script"]); err != nil {
		return nil, err
	}
	blif, err := os.ReadFile(p("mapped.blif"))
	if err != nil {
		return nil, fmt.Errorf("qor: reading the mapped netlist: %w", err)
	}
	nl, err := parseBLIF(blif)
	if err != nil {
		return nil, fmt.Errorf("qor: %s: %w", top, err)
	}
	isMacro := map[string]bool{}
	for _, t := range macros {
		isMacro[t.MemModule()] = true
	}
	state, err := nl.prepare(isMacro, flopTypes, boxes)
	if err != nil {
		return nil, fmt.Errorf("qor: %s: %w", top, err)
	}
	if err := os.WriteFile(p("fanout-in.blif"), nl.write(), 0o644); err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	// Fanout buffering, repeated until blifFanout changes nothing (qflow's loop).
	if err := os.WriteFile(p("nofanout"), []byte("clk\nvdd\ngnd\n"), 0o644); err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	cur := p("fanout-in.blif")
	var fanLog strings.Builder
	for i := 0; ; i++ {
		if i == 20 {
			return nil, fmt.Errorf("qor: blifFanout did not converge in 20 passes (%s)", logs["fanout_log"])
		}
		next := p(fmt.Sprintf("fanout-%d.blif", i))
		args := []string{"-l", "200", "-c", "75", "-I", p("nofanout"), "-b", "BUFX2", "-i", "A", "-o", "Y",
			"-p", lib, cur, next}
		out, err := runTool(ctx, log, dir, "", fanout, args...)
		fanLog.WriteString(out)
		if err != nil && !fanoutExitOK(out) {
			_ = os.WriteFile(logs["fanout_log"], []byte(fanLog.String()), 0o644)
			return nil, err
		}
		if i > 0 {
			_ = os.Remove(cur)
		}
		cur = next
		if n, ok := fanoutChanged(out); !ok || n == 0 {
			break
		}
	}
	if err := os.WriteFile(logs["fanout_log"], []byte(fanLog.String()), 0o644); err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	data, err := os.ReadFile(cur)
	if err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	final, err := parseBLIF(data)
	if err != nil {
		return nil, fmt.Errorf("qor: after blifFanout: %w", err)
	}
	v, names := final.writeVerilog(isMacro, flopTypes, state, boxes)
	if err := os.WriteFile(logs["netlist"], v, 0o644); err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	// A part's registers are named through its instance: u_rx/ff_n12 is u_rx.<its RTL name>.
	netlists := []string{logs["netlist"]}
	if boxes != nil {
		for _, path := range boxes.inst {
			pt, _ := u.partOf(boxes.typeOf[path])
			inst := safeIdent(path)
			if names[inst] != path {
				continue
			}
			for k, rtl := range pt.ASIC.names {
				names[inst+"/"+k] = path + "." + rtl
			}
		}
		for _, pt := range u.Parts {
			netlists = appendUnique(netlists, pt.ASIC.netlists...)
		}
	}
	libs := []string{lib}
	if len(macros) > 0 {
		libs = append(libs, logs["macro_liberty"])
	}
	if err := os.WriteFile(logs["sta_script"], []byte(staScript(libs, netlists, top, logs["sdc"])), 0o644); err != nil {
		return nil, fmt.Errorf("qor: %w", err)
	}
	out, err := runTool(ctx, log, dir, logs["sta_report"], sta, "-no_init", "-exit", logs["sta_script"])
	if err != nil {
		return nil, err
	}
	if msg := staErrors(out); msg != "" {
		return nil, fmt.Errorf("qor: OpenSTA on %s: %s (see %s)", top, msg, logs["sta_report"])
	}
	rep, err := parseSTA(out, period, names)
	if err != nil {
		return nil, fmt.Errorf("qor: %s: %w (see %s)", top, err, logs["sta_report"])
	}
	res := &ASICResult{Unit: top, Library: "osu018 (qflow-tech-osu018)", Stage: "pre-layout",
		ClockMHz: u.Config.Timing.ASICClockMHz, PeriodNS: period, WNSNS: rep.WNS, TNSNS: rep.TNS,
		Paths: rep.Paths, CellTypes: map[string]int{}, Logs: logs, netlists: netlists, names: names}
	if len(rep.Paths) > 0 {
		w := rep.Paths[0]
		d := w.DelayNS
		if u.Module.Clock == "" {
			// A combinational unit: its paths run input to output, and the SDC's external
			// delays are the surrounding stages', not its own.
			d -= period * float64(u.Config.Timing.InputDelayPct+u.Config.Timing.OutputDelayPct) / 100
			res.Note = "combinational: the logic delay from input to output (the external delays of the SDC left out)"
		}
		res.CriticalNS, res.Start, res.End, res.Levels = round3(d), w.Start, w.End, w.Levels
		res.CriticalFO4 = round1(d / FO4NS)
	}
	var own []gate
	for _, g := range final.gates {
		if pt, ok := u.partOf(g.typ); ok {
			res.addPart(pt.ASIC)
			continue
		}
		own = append(own, g)
		res.CellTypes[g.typ]++
		switch {
		case isMacro[g.typ]:
			res.Macros++
		case flopTypes[g.typ] != "":
			res.Flops++
			res.Cells++
		default:
			res.Cells++
		}
	}
	for _, t := range macros {
		n := ownCount(own, t.MemModule())
		res.MacroAreaUM2 += float64(n) * model.Area(t)
		res.MacroBits += n * t.Bits()
	}
	area, err := cellArea(&netlist{gates: own}, lib)
	if err != nil {
		return nil, err
	}
	res.CellAreaUM2 = round1(res.CellAreaUM2 + area)
	res.MacroAreaUM2 = round1(res.MacroAreaUM2)
	if len(u.Parts) > 0 {
		res.ComposedOf = u.partNames()
	}
	res.Seconds = round1(time.Since(start).Seconds())
	return res, nil
}

// addPart adds one instance of a part's cells and area.
func (r *ASICResult) addPart(p *ASICResult) {
	for t, n := range p.CellTypes {
		r.CellTypes[t] += n
	}
	r.Cells += p.Cells
	r.Flops += p.Flops
	r.Macros += p.Macros
	r.MacroBits += p.MacroBits
	r.CellAreaUM2 += p.CellAreaUM2
	r.MacroAreaUM2 += p.MacroAreaUM2
}

func ownCount(gates []gate, typ string) int {
	n := 0
	for _, g := range gates {
		if g.typ == typ {
			n++
		}
	}
	return n
}

var fanoutRE = regexp.MustCompile(`Number of gates changed: (\d+)`)

func fanoutChanged(out string) (int, bool) {
	m := fanoutRE.FindStringSubmatch(out)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// fanoutExitOK: blifFanout's exit status is the number of gates it changed, not an error.
func fanoutExitOK(out string) bool { _, ok := fanoutChanged(out); return ok }

// staErrors picks OpenSTA's error lines (an unlinked cell, an unread file).
func staErrors(out string) string {
	var errs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Error") || strings.Contains(l, "unknown") && strings.Contains(l, "Warning") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) > 5 {
		errs = errs[:5]
	}
	return strings.Join(errs, "; ")
}

var (
	libCellRE = regexp.MustCompile(`^\s*cell\s*\(\s*"?([A-Za-z0-9_]+)"?\s*\)`)
	libAreaRE = regexp.MustCompile(`^\s*area\s*:\s*([\d.]+)`)
)

// cellArea sums the liberty areas of the netlist's standard cells (macros excluded), um^2.
func cellArea(nl *netlist, lib string) (float64, error) {
	data, err := os.ReadFile(lib)
	if err != nil {
		return 0, fmt.Errorf("qor: %w", err)
	}
	area := map[string]float64{}
	cell := ""
	for _, line := range strings.Split(string(data), "\n") {
		if m := libCellRE.FindStringSubmatch(line); m != nil {
			cell = m[1]
		} else if m := libAreaRE.FindStringSubmatch(line); m != nil && cell != "" {
			if _, seen := area[cell]; !seen {
				area[cell], _ = strconv.ParseFloat(m[1], 64)
			}
		}
	}
	total := 0.0
	var unknown []string
	for _, g := range nl.gates {
		a, ok := area[g.typ]
		if !ok {
			if !strings.HasPrefix(g.typ, "mrgen_") {
				unknown = append(unknown, g.typ)
			}
			continue
		}
		total += a
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return 0, fmt.Errorf("qor: cells without an area in %s: %s", lib, strings.Join(unknown[:min(5, len(unknown))], ", "))
	}
	return round1(total), nil
}

func round1(x float64) float64 { return float64(int64(x*10+0.5*sign(x))) / 10 }
func round3(x float64) float64 { return float64(int64(x*1000+0.5*sign(x))) / 1000 }

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}
