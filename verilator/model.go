package verilator

/*
#cgo LDFLAGS: -ldl
#cgo noescape mrgen_call_step
#cgo nocallback mrgen_call_step
#cgo noescape mrgen_call_step_n
#cgo nocallback mrgen_call_step_n
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The entry points of one loaded model library (see the package doc for the ABI).
typedef struct {
	void* handle;
	void* abi;
	void* in_words;
	void* out_words;
	void* has_trace;
	void* new_;
	void* free_;
	void* step;
	void* step_n;
	void* trace_open;
	void* trace_close;
} mrgen_lib;

// mrgen_load dlopens path privately (RTLD_LOCAL) and resolves the ABI. It returns NULL on
// success, else a malloc'ed message.
static char* mrgen_load(const char* path, mrgen_lib* l) {
	dlerror();
	l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle) {
		const char* e = dlerror();
		return strdup(e ? e : "dlopen failed");
	}
	const char* names[] = {"mrgen_abi", "mrgen_in_words", "mrgen_out_words", "mrgen_has_trace",
		"mrgen_new", "mrgen_free", "mrgen_step", "mrgen_step_n", "mrgen_trace_open",
		"mrgen_trace_close"};
	void** slots[] = {&l->abi, &l->in_words, &l->out_words, &l->has_trace, &l->new_, &l->free_,
		&l->step, &l->step_n, &l->trace_open, &l->trace_close};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slots[i] = dlsym(l->handle, names[i]);
		if (!*slots[i]) {
			const char* e = dlerror();
			return strdup(e ? e : names[i]);
		}
	}
	return NULL;
}

static uint32_t mrgen_call_u32(void* f) { return ((uint32_t (*)(void))f)(); }
static void* mrgen_call_new(void* f) { return ((void* (*)(void))f)(); }
static void mrgen_call_free(void* f, void* inst) { ((void (*)(void*))f)(inst); }
static void mrgen_call_step(void* f, void* inst, const uint32_t* in, uint32_t* out) {
	((void (*)(void*, const uint32_t*, uint32_t*))f)(inst, in, out);
}
static void mrgen_call_step_n(void* f, void* inst, const uint32_t* in, uint32_t* out, uint64_t n) {
	((void (*)(void*, const uint32_t*, uint32_t*, uint64_t))f)(inst, in, out, n);
}
static int mrgen_call_trace_open(void* f, void* inst, const char* path) {
	return ((int (*)(void*, const char*))f)(inst, path);
}
static void mrgen_call_trace_close(void* f, void* inst) { ((void (*)(void*))f)(inst); }
*/
import "C"

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/mrgen/mrgen/hdl"
)

// Errors of Model methods.
var (
	ErrClosed  = errors.New("verilator: model is closed")
	ErrNoTrace = errors.New("verilator: model was built without Trace")
)

// Library is a built model loaded into the process. It stays loaded until the process ends
// (libraries are never dlclosed: unloading C++ runtimes is fragile). Any number of Models can be
// made from it, and any number of Libraries can be loaded at once.
type Library struct {
	Path    string        // the shared library
	Key     string        // Build.Key
	Dir     string        // the cache entry: library, build.log, harness source, Verilated header
	Cached  bool          // found in the cache, nothing was built
	Trace   bool          // built with --trace
	Elapsed time.Duration // time Compile took

	mod *hdl.Module
	lay *Layout
	fns *C.mrgen_lib
}

var (
	loadMu sync.Mutex
	loaded = map[string]*C.mrgen_lib{} // by library path; C memory, never freed
)

func load(p *prepared, so string, cached bool, start time.Time) (*Library, error) {
	fns, err := dlopen(so)
	if err != nil {
		return nil, fmt.Errorf("verilator: loading %s: %w", so, err)
	}
	abi := uint32(C.mrgen_call_u32(fns.abi))
	in := int(C.mrgen_call_u32(fns.in_words))
	out := int(C.mrgen_call_u32(fns.out_words))
	tr := C.mrgen_call_u32(fns.has_trace) != 0
	if abi != abiVersion || in != p.lay.InWords() || out != p.lay.OutWords() || tr != p.b.Trace {
		return nil, fmt.Errorf("verilator: %s does not match its description (abi %d/%d, in words %d/%d, out words %d/%d, trace %v/%v); remove %s",
			so, abi, abiVersion, in, p.lay.InWords(), out, p.lay.OutWords(), tr, p.b.Trace, filepath.Dir(so))
	}
	return &Library{
		Path: so, Key: p.key, Dir: filepath.Dir(so), Cached: cached, Trace: p.b.Trace,
		Elapsed: time.Since(start), mod: p.mod, lay: p.lay, fns: fns,
	}, nil
}

func dlopen(so string) (*C.mrgen_lib, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if fns, ok := loaded[so]; ok {
		return fns, nil
	}
	fns := (*C.mrgen_lib)(C.calloc(1, C.size_t(unsafe.Sizeof(C.mrgen_lib{}))))
	if fns == nil {
		return nil, errors.New("out of memory")
	}
	cpath := C.CString(so)
	defer C.free(unsafe.Pointer(cpath))
	if msg := C.mrgen_load(cpath, fns); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		C.free(unsafe.Pointer(fns))
		return nil, errors.New(C.GoString(msg))
	}
	loaded[so] = fns
	return fns, nil
}

// Layout is the packing of the model's ports into Step's buffers.
func (l *Library) Layout() *Layout { return l.lay }

// Module returns a copy of the module description the library was built from.
func (l *Library) Module() *hdl.Module {
	m := *l.mod
	m.Ports = append([]hdl.Port(nil), l.mod.Ports...)
	return &m
}

// New makes a fresh instance of the model, with its own VerilatedContext, at cycle 0 with every
// register at zero (--x-initial fast). Free it with Close (a leaked Model is freed when the
// garbage collector finds it).
func (l *Library) New() (*Model, error) {
	inst := C.mrgen_call_new(l.fns.new_)
	if inst == nil {
		return nil, fmt.Errorf("verilator: creating an instance of %s failed (out of memory?)", l.mod.Name)
	}
	m := &Model{
		lib: l, inst: inst, inWords: l.lay.InWords(), outWords: l.lay.OutWords(),
		step: l.fns.step, stepN: l.fns.step_n,
	}
	m.cleanup = runtime.AddCleanup(m, func(c freeArg) { C.mrgen_call_free(c.fn, c.inst) }, freeArg{l.fns.free_, inst})
	return m, nil
}

type freeArg struct{ fn, inst unsafe.Pointer }

// Model is one simulated instance. A Model must not be used by two goroutines at once;
// distinct Models (of one Library or of several) may run concurrently.
type Model struct {
	lib               *Library
	inst              unsafe.Pointer // C instance; nil once closed
	step, stepN       unsafe.Pointer
	inWords, outWords int
	cycle             uint64
	tracing           bool
	cleanup           runtime.Cleanup
	observe           Observer
	beforeClose       func(*Model)
}

// Observer sees every simulated cycle of a Model: the cycle's inputs and the outputs just before
// its rising edge, as Step takes and returns them. It must not keep the slices.
type Observer func(in, out []uint32)

// Observe makes o see every following cycle (nil stops it). Recording a run's transactions for
// export (the handoff's vectors) uses it; a model without an observer pays nothing for it.
func (m *Model) Observe(o Observer) { m.observe = o }

// BeforeClose makes Close run f first, while the model can still be stepped (a recorder steps
// a drained model a few more cycles so that its counters settle).
func (m *Model) BeforeClose(f func(*Model)) { m.beforeClose = f }

// Library is the library the model was made from.
func (m *Model) Library() *Library { return m.lib }

// Layout is the packing of the model's ports into Step's buffers.
func (m *Model) Layout() *Layout { return m.lib.lay }

// Cycle is the number of cycles stepped so far: the index of the next Step's cycle.
func (m *Model) Cycle() uint64 { return m.cycle }

func words(s []uint32) *C.uint32_t { return (*C.uint32_t)(unsafe.Pointer(unsafe.SliceData(s))) }

// Step simulates one clock cycle (see the package doc for the exact timing): in holds this
// cycle's inputs (Layout.InWords words, clock excluded), and out receives the outputs as they
// are just before the rising edge (Layout.OutWords words). Longer buffers are fine; the extra
// words are neither read nor written.
func (m *Model) Step(in, out []uint32) error {
	if m.inst == nil {
		return ErrClosed
	}
	if len(in) < m.inWords || len(out) < m.outWords {
		return fmt.Errorf("verilator: Step: buffers of %d and %d words, the layout needs %d and %d", len(in), len(out), m.inWords, m.outWords)
	}
	C.mrgen_call_step(m.step, m.inst, words(in), words(out))
	m.cycle++
	runtime.KeepAlive(m)
	if m.observe != nil {
		m.observe(in[:m.inWords], out[:m.outWords])
	}
	return nil
}

// StepN simulates n cycles in one call: in holds n input records of InWords words back to back
// and out receives n output records of OutWords words. It is Step n times, without the per-call
// cost of crossing into C.
func (m *Model) StepN(in, out []uint32, n int) error {
	if m.inst == nil {
		return ErrClosed
	}
	if n < 0 {
		return fmt.Errorf("verilator: StepN: negative cycle count %d", n)
	}
	if !holds(in, m.inWords, n) || !holds(out, m.outWords, n) {
		return fmt.Errorf("verilator: StepN(%d): buffers of %d and %d words, the layout needs %d×%d and %d×%d", n, len(in), len(out), n, m.inWords, n, m.outWords)
	}
	if n == 0 {
		return nil
	}
	C.mrgen_call_step_n(m.stepN, m.inst, words(in), words(out), C.uint64_t(n))
	m.cycle += uint64(n)
	runtime.KeepAlive(m)
	if m.observe != nil {
		for i := range n {
			m.observe(in[i*m.inWords:(i+1)*m.inWords], out[i*m.outWords:(i+1)*m.outWords])
		}
	}
	return nil
}

// TraceStart opens a VCD file and dumps every following cycle into it (two timestamps per
// cycle: 10·c with the inputs applied and the clock low, 10·c+5 just after the rising edge)
// until TraceStop. The model must have been built with Trace. Windows can be opened one after
// another on one Model.
func (m *Model) TraceStart(path string) error {
	if m.inst == nil {
		return ErrClosed
	}
	if !m.lib.Trace {
		return ErrNoTrace
	}
	if m.tracing {
		return errors.New("verilator: TraceStart: a trace is already open; call TraceStop first")
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	rc := C.mrgen_call_trace_open(m.lib.fns.trace_open, m.inst, cpath)
	runtime.KeepAlive(m)
	switch rc {
	case 0:
		m.tracing = true
		return nil
	case -3:
		return fmt.Errorf("verilator: TraceStart: cannot open %s for writing", path)
	default:
		return fmt.Errorf("verilator: TraceStart %s: harness error %d", path, int(rc))
	}
}

// TraceStop closes the open VCD file, if any.
func (m *Model) TraceStop() {
	if m.inst == nil || !m.tracing {
		return
	}
	C.mrgen_call_trace_close(m.lib.fns.trace_close, m.inst)
	m.tracing = false
	runtime.KeepAlive(m)
}

// Close closes any open trace, runs the model's final blocks and frees the instance. Closing
// twice is harmless; every other method of a closed Model returns ErrClosed or does nothing.
func (m *Model) Close() error {
	if m.inst == nil {
		return nil
	}
	if f := m.beforeClose; f != nil {
		m.beforeClose = nil
		f(m)
	}
	m.cleanup.Stop()
	C.mrgen_call_free(m.lib.fns.free_, m.inst)
	m.inst = nil
	m.tracing = false
	return nil
}

// holds reports whether buf has room for n records of per words (without overflowing).
func holds(buf []uint32, per, n int) bool { return per == 0 || len(buf)/per >= n }
