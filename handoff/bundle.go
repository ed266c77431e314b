package handoff

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/docs"
	"github.com/mrgen/mrgen/formal"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/blocks"
	"github.com/mrgen/mrgen/internal/version"
	"github.com/mrgen/mrgen/lint"
	"github.com/mrgen/mrgen/qor"
	"github.com/mrgen/mrgen/verilator"
)

// Options configure one bundle.
type Options struct {
	Config      config.Config
	ConfigPath  string
	Version     string // the generator's version
	Out         string // the bundle's folder
	Force       bool   // replace a non-empty Out
	Packets     int    // packets per recorded scenario
	Seed        uint64
	NoTopGates  bool   // no gate level for nic_top (the blocks' netlists stay)
	NoSynthesis bool   // no reports/synthesis/ (its FPGA flows take minutes)
	CacheDir    string // Verilated models ("" = default)
	// ToolCache keeps the gate-level netlists and reports/synthesis/ by executable, tools'
	// versions, configuration and RTL ("" = $MRGEN_CACHE/handoff, or the user's cache folder's
	// mrgen/handoff): a second bundle of the same design reuses them.
	ToolCache string
	Log       io.Writer // each step's line; nil discards
	// Progress, when set, is called as each step ends (a recording, a gate-level netlist, a
	// lint) with the steps done and in all.
	Progress func(done, total int)
}

// ErrExists is returned when Out is a non-empty folder and Force is not set.
var ErrExists = errors.New("handoff: the output folder exists and is not empty (use --force to replace it)")

// Recording is one block's replayable run: the cosim block (internal/blocks, whose Cosim runs
// it) and scenario it comes from. Its module is the block's top.
type Recording struct {
	Block, Scenario string
	Replay          Replay // how the testbench replays it
	Scale           int    // packets per run: Options.Packets times this (0: once)
}

// GateSubset are the modules whose gate-level replays in verify.sh run only the first
// gateSubsetCycles cycles of each recording (GLS_CYCLES=0 runs them whole), and why.
var GateSubset = map[string]string{
	"nic_top": "its netlist replays about 35 cycles a second under Icarus (3,000 cycles in 85 s at " +
		"nic-tiny): the whole recordings (over 250,000 cycles at nic-tiny) would take about two hours",
}

// gateSubsetCycles is how many cycles of each recording GateSubset's modules replay at the gate
// level: the reset, the tables' clear and the first few hundred frames of the closed loop.
const gateSubsetCycles = 2000

// Recordings are the runs the bundle's vectors come from, one per scenario of every block:
//   - the SACK unit, the header parser, the header builder and the placement engine, replayed
//     per stream with random timing: every scenario that resets only at its start (random,
//     reset and the wrap scenarios reset in the middle of traffic, which a replay at other
//     timing cannot reproduce). Placement keeps its inputs in order across its descriptor and
//     control streams (both act on its tables).
//   - the ACK scheduler, the window unit, the send engine, the transmit path and the whole NIC,
//     replayed cycle by cycle (Timed): every scenario, a reset in the middle included, but the
//     sender's overflow, which runs a configuration of its own.
func Recordings() []Recording {
	var out []Recording
	scale := map[string]int{"acker": 3, "sender": 2} // at least 10^4 transactions per block
	add := func(block string, mode Replay, scenarios ...string) {
		for _, sc := range scenarios {
			out = append(out, Recording{Block: block, Scenario: sc, Replay: mode, Scale: scale[block]})
		}
	}
	add("sack", PerStream, "in-order", "single-loss", "burst-loss", "reorder", "duplicates",
		"window-edge", "wraparound", "back-to-back", "line-rate", "all-paths", "ack-loss", "backpressure", "peek",
		"path-init")
	add("parser", PerStream, "random", "valid", "malformed", "line-rate", "backpressure")
	add("deparser", PerStream, "random", "backpressure", "line-rate",
		"line-rate-small", "length-error")
	add("placement", Ordered, "in-order", "reorder", "duplicates",
		"violations", "missing-receives", "back-to-back", "long-messages", "backpressure", "cpl-backpressure")
	add("acker", Timed, cosim.AckerScenarios()...)
	add("window", Timed, cosim.WindowScenarios()...)
	// (The sender's overflow scenario runs a configuration of its own, with tiny FIFOs.)
	add("sender", Timed, slices.DeleteFunc(cosim.SenderScenarios(), func(s string) bool { return s == "overflow" })...)
	add("nictx", Timed, cosim.NicTxScenarios()...)
	add("nic", Timed, cosim.LoopScenarios()...)
	return out
}

// Summary is what Build reports.
type Summary struct {
	Out          string         `json:"out"`
	Files        int            `json:"files"`
	Bytes        int64          `json:"bytes"`
	Transactions map[string]int `json:"transactions"` // per module, over its recordings
	Commit       string         `json:"commit"`
}

// Build writes the bundle: into a temporary folder beside Out, renamed into place at the end, so
// a failure leaves nothing half-written.
func Build(ctx context.Context, opt Options) (*Summary, error) {
	if opt.Packets <= 0 {
		return nil, fmt.Errorf("handoff: packets %d: must be > 0", opt.Packets)
	}
	if st, err := os.Stat(opt.Out); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("handoff: %s exists and is not a folder", opt.Out)
	}
	if entries, err := os.ReadDir(opt.Out); err == nil && len(entries) > 0 && !opt.Force {
		return nil, ErrExists
	}
	parent := filepath.Dir(filepath.Clean(opt.Out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".handoff-")
	if err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	defer os.RemoveAll(tmp)
	sum, err := build(ctx, opt, tmp)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(opt.Out); err != nil {
		return nil, fmt.Errorf("handoff: replace %s: %w", opt.Out, err)
	}
	if err := os.Rename(tmp, opt.Out); err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	sum.Out = opt.Out
	return sum, nil
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format, a...)
	}
}

func build(ctx context.Context, opt Options, dir string) (*Summary, error) {
	commit := version.Commit()
	stamp := func(block string) gen.Stamp { return blocks.Stamp(opt.Version, opt.ConfigPath, block, opt.Config) }
	files := map[string][]byte{}
	recs := Recordings()
	rtl, err := designFiles(opt.Config, stamp, recs, files)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Transactions: map[string]int{}, Commit: commit}
	distinct := map[string]bool{}
	for _, r := range recs {
		distinct[rtl.top[r.Block]] = true
	}
	// Steps: each recording, each module's gate-level netlist, each module's lint and nic_top's
	// (once, when nic_top has vectors of its own).
	gates := len(distinct)
	if _, ok := distinct["nic_top"]; ok && opt.NoTopGates {
		gates--
	}
	distinct["nic_top"] = true
	work, err := os.MkdirTemp("", "mrgen-handoff-work-")
	if err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	defer os.RemoveAll(work)
	tools, err := toolVersions(!opt.NoSynthesis)
	if err != nil {
		return nil, err
	}
	cache := openToolCache(opt.ToolCache, tools)
	var synthDesigns []qor.BlockDesign
	synthSteps := 0
	if !opt.NoSynthesis {
		if synthDesigns, synthSteps, err = synthesisDesigns(opt, stamp, nil, filepath.Join(work, "synthesis")); err != nil {
			return nil, err
		}
	}
	done, total := 0, len(recs)+gates+len(distinct)+len(formalTops)+synthSteps
	step := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	if opt.Progress != nil {
		opt.Progress(0, total)
	}
	maxN := map[string]int{}
	ifaces := map[string]*Interface{}
	modes := map[string]Replay{}
	maxIn := map[string]int{}
	blockOf := map[string]string{}
	for _, r := range recs {
		module := rtl.top[r.Block]
		blockOf[module] = r.Block
		b, err := blocks.Lookup(r.Block)
		if err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
		packets := opt.Packets * max(r.Scale, 1)
		logf(opt.Log, "handoff: recording %s %s (%d packets)\n", module, r.Scenario, packets)
		var rec *Recorder
		res, err := b.Cosim(ctx, cosim.Options{Config: opt.Config, Scenario: r.Scenario, Seed: opt.Seed,
			Packets: packets, Stamp: stamp(r.Block), CacheDir: opt.CacheDir, Log: nil,
			Probe: func(lib *verilator.Library) (cosim.Probe, error) {
				if err := sameInterface(lib.Module(), rtl.module(module)); err != nil {
					return nil, fmt.Errorf("scenario %s runs another configuration of the block than the "+
						"bundle's, so its vectors would not fit the bundle's RTL: %w", r.Scenario, err)
				}
				var err error
				rec, err = NewRecorder(lib.Module(), lib.Layout(), r.Replay)
				if err != nil {
					return nil, err
				}
				ifaces[module], modes[module] = rec.it, r.Replay
				return rec, nil
			}})
		if err != nil {
			return nil, fmt.Errorf("handoff: record %s %s: %w", module, r.Scenario, err)
		}
		if res.Mismatches != 0 || rec == nil {
			return nil, fmt.Errorf("handoff: record %s %s: %d mismatches against golden", module, r.Scenario,
				res.Mismatches)
		}
		vdir := filepath.Join(dir, "vectors", module, r.Scenario)
		meta := Meta{Scenario: r.Scenario, Seed: opt.Seed, ConfigHash: opt.Config.Hash(), Coverage: res.Counts}
		if err := rec.Write(vdir, meta); err != nil {
			return nil, fmt.Errorf("handoff: record %s %s: %w", module, r.Scenario, err)
		}
		for _, s := range rec.streams {
			maxN[module] = max(maxN[module], len(s.tx))
		}
		maxIn[module] = max(maxIn[module], rec.InputLines())
		sum.Transactions[module] += rec.Transactions()
		step()
	}
	modules := make([]string, 0, len(ifaces))
	for m := range ifaces {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	for _, m := range modules {
		banner := fmt.Sprintf("// tb_%s.v -- generated by mrgen %s (%s) -- do not edit\n// Replays the recordings "+
			"under vectors/%s/ (verify.sh runs it under Icarus and Verilator).\n", m, opt.Version, commit, m)
		tb := Testbench(ifaces[m], maxN[m], modes[m] == Ordered, banner)
		if modes[m] == Timed {
			tb = TimedTestbench(ifaces[m], maxIn[m], maxN[m], banner)
		}
		files["tb/tb_"+m+".v"] = []byte(tb)
		list, err := moduleFiles(rtl, m)
		if err != nil {
			return nil, err
		}
		files["tb/"+m+".f"] = []byte(strings.Join(append(list, "tb/tb_"+m+".v"), "\n") + "\n")
	}
	// Gate level: each module's osu018 netlist from the QoR flow, replayed on the same vectors.
	var gateModules []string
	for _, m := range modules {
		if m != "nic_top" || !opt.NoTopGates {
			gateModules = append(gateModules, m)
		}
	}
	netlists, err := synthesizeAll(ctx, opt, cache, gateModules, blockOf, stamp, filepath.Join(work, "gates"), step)
	if err != nil {
		return nil, err
	}
	if !opt.NoSynthesis {
		logf(opt.Log, "handoff: synthesis reports (%v)\n", synthesisTargets)
		synthFiles, err := synthesisReports(ctx, opt, cache, synthDesigns, synthSteps, filepath.Join(work, "synthesis"), step)
		if err != nil {
			return nil, err
		}
		maps.Copy(files, synthFiles)
	}
	var flops, subset []string
	for i, m := range gateModules {
		g := netlists[i]
		files["gls/"+m+".v"] = g.Netlist
		cells, err := netlistFlops(m, g.Netlist)
		if err != nil {
			return nil, err
		}
		flops = append(flops, cells...)
		files["reports/timing/"+m+".json"] = g.Timing
		var list []string
		for mac, text := range g.Macros {
			path := "gls/macros/" + mac + ".v"
			if old, ok := files[path]; ok && !bytes.Equal(gen.WithoutStamp(old), gen.WithoutStamp(text)) {
				return nil, fmt.Errorf("handoff: macro %s differs between netlists", mac)
			}
			files[path] = text
			list = append(list, path)
		}
		sort.Strings(list)
		list = append(list, "gls/"+m+".v", "tb/tb_"+m+".v")
		files["gls/"+m+".f"] = []byte(strings.Join(list, "\n") + "\n")
	}
	specFiles(rtl.designs, docs.WireFormat, files)
	slices.Sort(flops)
	flops = slices.Compact(flops)
	files["gls/power_up.v"] = powerUpModels(flops)
	var timed []string
	for _, m := range gateModules {
		if _, ok := GateSubset[m]; ok {
			subset = append(subset, m)
		}
		if modes[m] == Timed {
			timed = append(timed, m)
		}
	}
	files["verify.sh"] = []byte(verifyScript(modules, gateModules, flops, subset, timed, gateSubsetCycles))
	files["README.md"] = []byte(readme(opt, commit, modules, gateModules, sum.Transactions, tools))
	files["CHECKLIST.md"] = []byte(checklist(modules, gateModules, !opt.NoSynthesis))
	for path, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, content, mode); err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
	}
	if err := lintReports(ctx, dir, modules, step); err != nil {
		return nil, err
	}
	if err := formalReports(ctx, dir, opt.Config, step); err != nil {
		return nil, err
	}
	return sum, writeManifest(dir, opt, commit, tools, sum)
}

// synthesizeAll runs the gate-level synthesis of every module, gateJobs at a time (each is one
// Yosys and one OpenSTA process), and returns the netlists in the order of modules.
func synthesizeAll(ctx context.Context, opt Options, cache *toolCache, modules []string, blockOf map[string]string,
	stamp func(string) gen.Stamp, work string, step func()) ([]*gateLevel, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gates := make([]*gateLevel, len(modules))
	errs := make([]error, len(modules))
	next := make(chan int)
	var mu sync.Mutex // step and the log
	var wg sync.WaitGroup
	for range min(gateJobs, len(modules)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				m := modules[i]
				mu.Lock()
				logf(opt.Log, "handoff: gate-level netlist of %s (osu018)\n", m)
				mu.Unlock()
				gates[i], errs[i] = synthesizeGates(ctx, cache, blockOf[m], m, opt.Config, stamp(blockOf[m]),
					filepath.Join(work, m), nil)
				if errs[i] != nil {
					cancel()
					continue
				}
				mu.Lock()
				step()
				mu.Unlock()
			}
		}()
	}
	for i := range modules {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	return gates, nil
}

// gateJobs is how many gate-level syntheses run at once.
const gateJobs = 2

// formalLimit bounds each check's search: the frames it reached are reported.
const formalLimit = 2 * time.Minute

// formalTops are the modules with embedded properties (`ifdef FORMAL) that formalReports
// checks, and the file list that holds them.
var formalTops = []struct{ top, list string }{{"sack_rx", "tb/sack_unit.f"}, {"sack_tx", "tb/sack_unit.f"}}

// FormalReport is reports/formal/<top>.json: one bounded model check of a module's embedded
// assertions, on the bundle's RTL.
type FormalReport struct {
	Top       string   `json:"top"`
	Method    string   `json:"method"`
	Depth     int      `json:"depth"`              // cycles from reset asked for
	Frames    int      `json:"frames"`             // cycles searched: Depth, or fewer when the time limit ran out
	TimeLimit int      `json:"time_limit_seconds"` // of the search
	Clear     int      `json:"clear_cycles"`       // the post-reset clear of the SACK table
	Passed    bool     `json:"passed"`
	Commands  []string `json:"commands"` // from the bundle's folder
}

// formalReports runs the bounded model check (formal.BMCWithin: Yosys, yosys-abc bmc3) of every
// module with embedded properties on the bundle's RTL, into reports/formal/. The search aims 16
// cycles past the table's post-reset clear (one cycle per connection and path), within
// formalLimit; the report gives the cycles it reached. A counterexample is an error: the bundle
// is not written.
func formalReports(ctx context.Context, dir string, c config.Config, step func()) error {
	clear := c.Connections * c.PathsPerConnection
	depth := clear + 16
	for _, ft := range formalTops {
		files, err := rtlOfList(dir, ft.list)
		if err != nil {
			return fmt.Errorf("handoff: formal %s: %w", ft.top, err)
		}
		res, err := formal.BMCWithin(ctx, files, ft.top, depth, formalLimit, "")
		if err != nil {
			return fmt.Errorf("handoff: formal %s: %w", ft.top, err)
		}
		if !res.Passed {
			return fmt.Errorf("handoff: formal %s: an assertion fails in cycle %d:\n%s", ft.top, res.Frame, res.Log)
		}
		rel := make([]string, len(files))
		for i, f := range files {
			rel[i], _ = filepath.Rel(dir, f)
		}
		ys, abc := formal.Scripts(rel, ft.top, ft.top+".aig", depth, formalLimit)
		rep := FormalReport{Top: ft.top, Method: "bounded model check of the `ifdef FORMAL assertions from reset",
			Depth: depth, Frames: res.Frames, Clear: clear, Passed: true, TimeLimit: int(formalLimit.Seconds()),
			Commands: []string{"yosys -q -p '" + ys + "'", "yosys-abc -c '" + abc + "'"}}
		text, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
		path := filepath.Join(dir, "reports", "formal", ft.top+".json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
		if err := os.WriteFile(path, append(text, '\n'), 0o644); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
		step()
	}
	return nil
}

// rtlOfList is the RTL of the bundle's file list (dir/list), the testbench left out, as paths
// under dir.
func rtlOfList(dir, list string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, list))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Fields(string(data)) {
		if !strings.HasPrefix(f, "tb/") {
			files = append(files, filepath.Join(dir, f))
		}
	}
	return files, nil
}

// lintReports runs mrgen's lint (Verilator -Wall, the Yosys latch and loop checks, Icarus) on
// nic_top and on every module with vectors, as the bundle ships them, into reports/lint/. A
// failing check is an error: the bundle is not written.
func lintReports(ctx context.Context, dir string, modules []string, step func()) error {
	lists := map[string]string{"nic_top": "filelist.f"}
	for _, m := range modules {
		lists[m] = "tb/" + m + ".f"
	}
	for top, list := range lists {
		files, err := rtlOfList(dir, list)
		if err != nil {
			return fmt.Errorf("handoff: lint %s: %w", top, err)
		}
		rep, err := lint.Run(ctx, files, top, lint.Options{})
		if err != nil {
			return fmt.Errorf("handoff: lint %s: %w", top, err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "lint of %s (%d files, %s): Verilator --lint-only -Wall, Yosys check -assert and "+
			"no latch cells after proc, Icarus -g2012 compile\n", top, len(files), list)
		for _, r := range rep.Results {
			verdict := "pass"
			if !r.Passed {
				verdict = "FAIL"
			}
			fmt.Fprintf(&b, "%-9s %s\n", r.Tool, verdict)
			if r.Output != "" {
				b.WriteString(strings.ReplaceAll(r.Output, dir+"/", "") + "\n")
			}
		}
		if !rep.OK() {
			return fmt.Errorf("handoff: lint of %s failed:\n%s", top, b.String())
		}
		path := filepath.Join(dir, "reports", "lint", top+".txt")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
		step()
	}
	return nil
}

// designFiles renders the NIC and every recorded block for the configuration into files: logic
// modules under rtl/, the memory models under memories/models/ (kept apart, for the team's
// macros), the memory list, the SDC and filelist.f. It returns each module's file, by name, and
// each block's top.
func designFiles(c config.Config, stamp func(block string) gen.Stamp, recs []Recording, files map[string][]byte) (*rtlSet, error) {
	rtl := &rtlSet{path: map[string]string{}, top: map[string]string{}}
	var order []string
	var top *gen.Design
	names := []string{"nic"}
	for _, r := range recs {
		if !slices.Contains(names, r.Block) {
			names = append(names, r.Block)
		}
	}
	for _, block := range names {
		d, err := blocks.Generate(block, c, stamp(block), nil)
		if err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
		if block == "nic" {
			top = d
		}
		rtl.designs = append(rtl.designs, d)
		rtl.top[block] = d.Top
		for _, f := range d.Files {
			name, ok := strings.CutPrefix(f.Path, "rtl/")
			if !ok {
				continue
			}
			path := "rtl/" + name
			if strings.HasPrefix(name, "mrgen_") {
				path = "memories/models/" + name
			}
			if old, ok := files[path]; ok {
				// The first block's file (nic_top's tree first) is kept: its banner names the
				// command that regenerates it.
				if !bytes.Equal(gen.WithoutStamp(old), gen.WithoutStamp(f.Content)) {
					return nil, fmt.Errorf("handoff: %s renders differently in block %s", name, block)
				}
				continue
			}
			files[path] = f.Content
			rtl.path[strings.TrimSuffix(name, ".v")] = path
			order = append(order, path)
		}
	}
	for _, f := range top.Files {
		switch {
		case f.Path == "memories.json" || f.Path == "memories.md":
			files["memories/"+f.Path] = f.Content
		case strings.HasPrefix(f.Path, "constraints/"):
			files[f.Path] = f.Content
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		return strings.HasPrefix(order[i], "memories/") && !strings.HasPrefix(order[j], "memories/")
	})
	files["filelist.f"] = []byte(strings.Join(order, "\n") + "\n")
	return rtl, nil
}

// rtlSet is the rendered designs, where each module's file went in the bundle, and each block's
// top module.
type rtlSet struct {
	designs []*gen.Design
	path    map[string]string
	top     map[string]string
}

// module is the bundle's description of a module (nil when no design renders it).
func (rtl *rtlSet) module(name string) *hdl.Module {
	for _, d := range rtl.designs {
		if m, ok := d.Descriptions[name]; ok {
			return m
		}
	}
	return nil
}

// sameInterface says how a recorded model's ports differ from the bundle's module (nil: they do not).
func sameInterface(got, want *hdl.Module) error {
	if want == nil {
		return fmt.Errorf("the bundle has no module %s", got.Name)
	}
	if len(got.Ports) != len(want.Ports) {
		return fmt.Errorf("%s: %d ports, the bundle's has %d", got.Name, len(got.Ports), len(want.Ports))
	}
	for i, p := range got.Ports {
		q := want.Ports[i]
		if p.Name != q.Name || p.Dir != q.Dir || p.Width != q.Width {
			return fmt.Errorf("%s: port %s[%d], the bundle's is %s[%d]", got.Name, p.Name, p.Width, q.Name, q.Width)
		}
	}
	return nil
}

// moduleFiles lists the files a module needs (itself and every module below it), memory models
// first.
func moduleFiles(rtl *rtlSet, top string) ([]string, error) {
	for _, d := range rtl.designs {
		if _, ok := d.Descriptions[top]; !ok {
			continue
		}
		var mems, logic []string
		for _, m := range d.Subtree(top) {
			p, ok := rtl.path[m]
			if !ok {
				return nil, fmt.Errorf("handoff: no file for module %s under %s", m, top)
			}
			if strings.HasPrefix(p, "memories/") {
				mems = append(mems, p)
			} else {
				logic = append(logic, p)
			}
		}
		sort.Strings(mems)
		return append(mems, logic...), nil
	}
	return nil, fmt.Errorf("handoff: no design renders module %s", top)
}

func writeManifest(dir string, opt Options, commit string, tools map[string]string, sum *Summary) error {
	hashes := map[string]string{}
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		h := sha256.Sum256(b)
		hashes[rel] = hex.EncodeToString(h[:])
		paths = append(paths, rel)
		sum.Files++
		sum.Bytes += int64(len(b))
		return nil
	})
	if err != nil {
		return fmt.Errorf("handoff: manifest: %w", err)
	}
	man := map[string]any{"generator": "mrgen", "version": opt.Version, "commit": commit,
		"config": opt.Config.Name, "config_hash": opt.Config.Hash(), "seed": opt.Seed,
		"packets_per_recording": opt.Packets, "tools": tools, "files": hashes}
	js, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("handoff: manifest: %w", err)
	}
	js = append(js, '\n')
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), js, 0o644); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	h := sha256.Sum256(js)
	hashes["manifest.json"] = hex.EncodeToString(h[:])
	paths = append(paths, "manifest.json")
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "%s  %s\n", hashes[p], p)
	}
	sum.Files += 2
	sum.Bytes += int64(len(js) + b.Len())
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// toolVersions are the version lines of the tools the bundle is built and checked with: the QoR
// flow's (Yosys, OpenSTA; nextpnr-ice40 with the synthesis reports) and the simulators'.
func toolVersions(synthesis bool) (map[string]string, error) {
	targets := []qor.Target{qor.ASIC}
	if synthesis {
		targets = append(targets, synthesisTargets...)
	}
	out, err := qor.ToolVersions(targets...)
	if err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	for name, args := range map[string][]string{"verilator": {"--version"}, "iverilog": {"-V"}} {
		if out[name], err = qor.VersionLine(name, args...); err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
	}
	return out, nil
}
