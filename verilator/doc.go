// Package verilator turns a module's RTL and its port list (an hdl.Module) into a fast
// simulation model that Go calls directly: Verilator compiles the RTL to C++, a generated C++
// harness gives it a small C ABI, the whole is linked into a shared library, and the library is
// loaded with dlopen and called through cgo. One call simulates one clock cycle (Step) or a
// batch of cycles (StepN).
//
// # Use
//
//	lib, err := verilator.Compile(ctx, verilator.Build{Module: m, Files: files}, os.Stderr)
//	lay := lib.Layout()
//	a, _ := lay.In("a")          // look ports up once ...
//	sum, _ := lay.Out("sum")
//	mod, _ := lib.New()
//	defer mod.Close()
//	in, out := make([]uint32, lay.InWords()), make([]uint32, lay.OutWords())
//	for ... {
//		a.Set(in, x)                 // ... and pack without map lookups in the loop
//		if err := mod.Step(in, out); err != nil { ... }
//		got := sum.Get(out)
//	}
//
// Step and StepN fail only on misuse (short buffers, a closed Model). A Model is not safe for
// concurrent use, but distinct Models, of one Library or of several, run in parallel: each has
// its own VerilatedContext.
//
// # Step timing
//
// The harness owns the clock (the port named by Module.Clock); the caller drives every other
// input, reset included: a reset is an ordinary input, synchronous active-high rst or
// asynchronous active-low rst_n alike. Cycle c (counting from 0, see Model.Cycle) of Step is:
//
//  1. at time 10·c: apply the inputs from in, with the clock low, and evaluate. Combinational
//     logic settles; an asynchronous reset asserted in in takes effect now.
//  2. copy every output into out. These are the values present just before the rising edge:
//     registered outputs show the state left by the edges of cycles 0..c-1, and combinational
//     outputs reflect this cycle's inputs (a ready computed from an input in the same cycle is
//     seen in the same Step).
//  3. at time 10·c+5: raise the clock and evaluate: the rising edge samples the inputs of step 1.
//  4. lower the clock. The falling edge is evaluated together with the next cycle's inputs.
//
// So the effect of inputs given in cycle c on a registered output is first visible in out of
// cycle c+1. A fresh Model starts at cycle 0 with every register zero (--x-initial fast), so
// drive reset for the first cycles as the hardware would need. A VCD window (TraceStart,
// TraceStop; models built with Build.Trace) has a timestamp at 10·c and one at 10·c+5 for each
// cycle c it covers, in the VCD's time unit (Verilator's default precision, 1 ps: read a 10 ps
// period as one cycle).
//
// # Buffers
//
// Inputs and outputs travel as []uint32 records laid out by Layout: every input except the
// clock in port order, each port padded to whole 32-bit words with its bits in little-endian
// word order (word 0 of a port holds bits 31:0); the outputs likewise in their own record. For
// StepN, n records lie back to back. The harness masks the padding bits of inputs before they
// reach the model, and of outputs before they reach Go, so padding is never observed. Field
// handles (Layout.In, Layout.Out) give the offset and width of a port for map-free access.
//
// # C ABI
//
// The library exports only these symbols (a linker version script hides everything else,
// including its private copy of the Verilator runtime, so several libraries, even of the same
// module name, live side by side; each is dlopened RTLD_LOCAL from a path unique to its key):
//
//	uint32_t mrgen_abi(void);        // ABI version, 1
//	uint32_t mrgen_in_words(void);   // Layout.InWords
//	uint32_t mrgen_out_words(void);  // Layout.OutWords
//	uint32_t mrgen_has_trace(void);  // built with --trace
//	void*    mrgen_new(void);        // new instance with its own VerilatedContext; NULL on failure
//	void     mrgen_free(void* inst); // close any trace, run final blocks, free
//	void     mrgen_step(void* inst, const uint32_t* in, uint32_t* out);
//	void     mrgen_step_n(void* inst, const uint32_t* in, uint32_t* out, uint64_t n);
//	int      mrgen_trace_open(void* inst, const char* path); // 0 ok; -1 no trace, -2 open, -3 file
//	void     mrgen_trace_close(void* inst);
//
// In the harness each port is copied as Verilator stores it: CData (1..8 bits), SData (9..16),
// IData (17..32), QData (33..64, two words), VlWide<N> (more than 64, N words). Ports whose C++
// names Verilator escapes (C++ keywords such as goto become __SYM__goto, a__b becomes
// a___05Fb) are reached under the escaped name.
//
// # Building and the cache
//
// Compile verilates the design (--cc -O3 --x-assign fast --x-initial fast --noassert
// -Wno-fatal -CFLAGS -fPIC, plus --trace), checks the ports Verilator generated against the
// description (name, direction and width, in both directions: a description that disagrees
// with its RTL fails the build), generates the harness, compiles model, harness and Verilator
// runtime with the model's own makefile and OPT_FAST=-O3 OPT_SLOW=-O1 OPT_GLOBAL=-O2 (all -O0
// for a Build.Quick, which builds faster and runs slower: cosim uses it for mutated RTL), and
// links with g++ -shared. The result lives in CacheDir/<Build.Key>/, next to build.log, the harness
// source and the Verilated header. The Verilator runtime objects, which depend only on tools and
// flags, are cached once in CacheDir/runtime-<hash>/ and shared by every model. The tools run
// with a scrubbed environment (PATH, HOME, TMPDIR, locale, VERILATOR_ROOT), so a parent make's
// MAKEFLAGS or a stray CXXFLAGS cannot change a build behind the key's back. Where ccache is
// installed the C++ compiles through it (OBJCACHE), its store in CacheDir/ccache: the models of
// one module (a fault test's mutants above all) share most of the files Verilator splits them
// into, and those compile once.
//
// Go's test cache does not see these libraries: a test that passed against a model is reported
// "(cached) ok" even after its RTL changed and the model was rebuilt. Run tests that build or
// load models with go test -count=1.
package verilator
