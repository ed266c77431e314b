// Package cosim runs generated RTL under Verilator in lockstep with its golden unit and
// compares every output on every cycle it is valid. The first divergence stops the run and is
// reported with the transaction number, the cycle, a field-by-field cmp.Diff and, on request,
// a VCD of the cycles around it.
//
// Each block has its own driver file (sack.go, ...); this file holds what they share: the
// options, the JSON result, the mismatch report, the model build and the expected-output queue.
package cosim

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/verilator"
)

// Options configure one co-simulation run.
type Options struct {
	Config   config.Config
	Scenario string
	Seed     uint64
	Packets  int // data packets through the receive side
	// Mutate, when set, rewrites the block's sources before rendering (fault-injection tests).
	Mutate func([]gen.Source) error
	// Stamp is written into the generated files' banners.
	Stamp gen.Stamp
	// VCD, when not empty, is where a window of cycles around a mismatch is dumped.
	VCD string
	// CacheDir for Verilated models ("" = default).
	CacheDir string
	// Log receives build output and progress; nil discards.
	Log io.Writer
	// Progress, when set, is called about every 2^16 cycles with packets done.
	Progress func(done, total int)
	// Faults override a closed-loop scenario's faults (loss, marks, failures, backpressure...).
	Faults LoopFaults
	// Pcap, when not empty, is where the closed loop writes the last frames in and out of the
	// device under test when it stops on a mismatch.
	Pcap string
	// Probe, when set, is asked for a probe of each model the run makes: the handoff records a
	// block's transactions this way.
	Probe func(lib *verilator.Library) (Probe, error)
}

// Probe watches a run's model: Observe sees every cycle (verilator.Model.Observe), Finish runs
// once when the run ends, before the model is closed, and may step it further.
type Probe interface {
	Observe(in, out []uint32)
	Finish(m *verilator.Model)
}

// newModel makes a fresh instance of lib's model with opt's probe attached.
func newModel(lib *verilator.Library, opt Options) (*verilator.Model, error) {
	m, err := lib.New()
	if err != nil || opt.Probe == nil {
		return m, err
	}
	p, err := opt.Probe(lib)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.Observe(p.Observe)
	m.BeforeClose(p.Finish)
	return m, nil
}

// Result is the JSON contract of `mrgen cosim` (DESIGN.md).
type Result struct {
	Block      string         `json:"block"`
	Scenario   string         `json:"scenario"`
	Seed       uint64         `json:"seed"`
	ConfigHash string         `json:"config_hash"`
	Packets    int            `json:"packets"`
	Acks       int            `json:"acks"`
	Compared   int            `json:"compared"`
	Mismatches int            `json:"mismatches"`
	Drops      map[string]int `json:"drops"`
	// Counts are block-specific named totals (e.g. malformed packets, DMA bytes); each block's
	// driver documents its keys.
	Counts           map[string]int `json:"counts,omitempty"`
	Resets           int            `json:"resets"`
	RTLCycles        uint64         `json:"rtl_cycles"`
	DeclaredLatency  map[string]int `json:"declared_latency"`
	MinLatency       map[string]int `json:"min_latency"`
	MaxLatency       map[string]int `json:"max_latency"`
	WallSeconds      float64        `json:"wall_seconds"`
	PacketsPerSecond float64        `json:"packets_per_second"`
	ModelCached      bool           `json:"model_cached"`
	Mismatch         *Mismatch      `json:"mismatch,omitempty"`
}

// NoteLatency records one measured latency of a stream in MinLatency and MaxLatency.
func (r *Result) NoteLatency(stream string, l int) {
	if v, ok := r.MinLatency[stream]; !ok || l < v {
		r.MinLatency[stream] = l
	}
	r.MaxLatency[stream] = max(r.MaxLatency[stream], l)
}

// Mismatch is the first divergence between RTL and golden model.
type Mismatch struct {
	Stream      string `json:"stream"`      // rx or tx (or counters)
	Transaction int    `json:"transaction"` // output number on that stream, from 0
	Cycle       uint64 `json:"cycle"`
	Input       string `json:"input"` // the operation that produced the output
	Diff        string `json:"diff"`  // cmp.Diff(golden, rtl)
	VCD         string `json:"vcd,omitempty"`
	Pcap        string `json:"pcap,omitempty"` // closed loop: the traffic before the mismatch
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("cosim mismatch on %s output %d at cycle %d (input %s); -golden +rtl:\n%s", m.Stream, m.Transaction, m.Cycle, m.Input, m.Diff)
}

type expected[T any] struct {
	out   T
	cycle uint64       // cycle the input was accepted
	input fmt.Stringer // the operation, rendered only for a mismatch report
}

// fifo is a simple queue of expected outputs.
type fifo[T any] struct {
	items []T
	head  int
}

func (f *fifo[T]) push(v T) { f.items = append(f.items, v) }
func (f *fifo[T]) len() int { return len(f.items) - f.head }
func (f *fifo[T]) pop() T {
	v := f.items[f.head]
	f.head++
	if f.head > 4096 && f.head*2 > len(f.items) {
		f.items = append(f.items[:0], f.items[f.head:]...)
		f.head = 0
	}
	return v
}
func (f *fifo[T]) clear() { f.items, f.head = f.items[:0], 0 }

// BuildModel writes a rendered design to a temporary directory and builds (or reuses from the
// cache) the Verilated model of its top module. A mutated design (opt.Mutate, a fault-injection
// test) is built Quick: it is built once and runs until its first mismatch.
func BuildModel(ctx context.Context, opt Options, d *gen.Design, top *hdl.Module, trace bool) (*verilator.Library, error) {
	dir, err := os.MkdirTemp("", "mrgen-cosim-")
	if err != nil {
		return nil, fmt.Errorf("cosim: temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := d.Write(dir); err != nil {
		return nil, err
	}
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	lib, err := verilator.Compile(ctx, verilator.Build{Module: top, Files: d.RTLFiles(dir), Trace: trace,
		Quick: opt.Mutate != nil, CacheDir: opt.CacheDir}, log)
	if err != nil {
		return nil, fmt.Errorf("cosim: build %s model: %w", top.Name, err)
	}
	return lib, nil
}

// Timing fills a result's wall time and packet rate from a start time.
func (r *Result) Timing(wallSeconds float64) {
	r.WallSeconds = wallSeconds
	if wallSeconds > 0 {
		r.PacketsPerSecond = float64(r.Packets) / wallSeconds
	}
}

// runLockstep is the frame every block's Run shares: it checks the packet count, builds the
// model, runs the block's lockstep loop and times it, and on a mismatch reruns the identical
// stimulus on a trace build to dump a VCD window around the mismatch cycle.
func runLockstep(opt Options, build func(trace bool) (*verilator.Library, error),
	loop func(lib *verilator.Library, traceAt int64) (*Result, *Mismatch, error)) (*Result, error) {
	if opt.Packets <= 0 {
		return nil, fmt.Errorf("cosim: packets must be positive, got %d", opt.Packets)
	}
	lib, err := build(false)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, mm, err := loop(lib, -1)
	if err != nil {
		return nil, err
	}
	res.ModelCached = lib.Cached
	res.Timing(time.Since(start).Seconds())
	if mm == nil {
		return res, nil
	}
	res.Mismatches = 1
	res.Mismatch = mm
	if opt.VCD != "" {
		tlib, err := build(true)
		if err != nil {
			return res, fmt.Errorf("cosim: trace build after mismatch: %w", err)
		}
		if _, _, err := loop(tlib, int64(mm.Cycle)); err != nil {
			return res, fmt.Errorf("cosim: trace rerun: %w", err)
		}
		mm.VCD = opt.VCD
	}
	return res, nil
}

// unitDesign is what every block's Go description gives the cosim: its rendered design.
type unitDesign interface {
	Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error)
}

// buildUnit describes a block for opt.Config, renders it (mutated by opt.Mutate) and builds or
// reuses the Verilated model of its top module.
func buildUnit[U unitDesign](ctx context.Context, opt Options, describe func(config.Config) (U, error),
	top func(U) *hdl.Module, trace bool) (*verilator.Library, U, error) {
	var zero U
	u, err := describe(opt.Config)
	if err != nil {
		return nil, zero, err
	}
	d, err := u.Design(opt.Stamp, opt.Mutate)
	if err != nil {
		return nil, zero, err
	}
	lib, err := BuildModel(ctx, opt, d, top(u), trace)
	if err != nil {
		return nil, zero, err
	}
	return lib, u, nil
}

// runUnit is runLockstep for a block whose model build also returns its description, which
// the lockstep loop needs.
func runUnit[U any](opt Options, build func(trace bool) (*verilator.Library, U, error),
	loop func(lib *verilator.Library, u U, traceAt int64) (*Result, *Mismatch, error)) (*Result, error) {
	var u U
	return runLockstep(opt, func(trace bool) (*verilator.Library, error) {
		lib, unit, err := build(trace)
		u = unit
		return lib, err
	}, func(lib *verilator.Library, traceAt int64) (*Result, *Mismatch, error) {
		return loop(lib, u, traceAt)
	})
}

// cycleWatch is what every lockstep loop does at the top of each cycle: on a trace rerun, open
// the VCD window vcdBefore cycles ahead of the mismatch and end the run vcdAfter cycles past it;
// every 2^16 cycles, stop on cancellation and report progress.
type cycleWatch struct {
	ctx     context.Context
	m       *verilator.Model
	opt     Options
	traceAt int64 // < 0: not a trace rerun
	tracing bool
}

// at runs the checks for cycle; over reports that the trace window has been dumped.
func (w *cycleWatch) at(cycle uint64, packets int) (over bool, err error) {
	if w.traceAt >= 0 {
		if !w.tracing && int64(cycle) >= w.traceAt-vcdBefore {
			if err := makeParent(w.opt.VCD); err != nil {
				return false, err
			}
			if err := w.m.TraceStart(w.opt.VCD); err != nil {
				return false, err
			}
			w.tracing = true
		}
		if w.tracing && int64(cycle) > w.traceAt+vcdAfter {
			w.m.TraceStop()
			return true, nil
		}
	}
	if cycle&0xffff == 0 {
		if err := w.ctx.Err(); err != nil {
			return false, fmt.Errorf("cosim: %w", err)
		}
		if w.opt.Progress != nil {
			w.opt.Progress(packets, w.opt.Packets)
		}
	}
	return false, nil
}

// portBinder looks up a model's ports by name and keeps the first unknown one as its error, so
// a driver binds all its ports and checks once.
type portBinder struct {
	lay *verilator.Layout
	err error
}

func (b *portBinder) in(name string) verilator.Field {
	f, err := b.lay.In(name)
	if err != nil && b.err == nil {
		b.err = err
	}
	return f
}

func (b *portBinder) out(name string) verilator.Field {
	f, err := b.lay.Out(name)
	if err != nil && b.err == nil {
		b.err = err
	}
	return f
}

// makeParent creates the directory a mismatch artifact (VCD, pcap) is written into: the
// defaults live under out/, which a fresh checkout does not have.
func makeParent(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cosim: directory for %s: %w", path, err)
	}
	return nil
}
