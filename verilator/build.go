package verilator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/internal/cacheroot"
)

// Build describes a model to build.
type Build struct {
	// Module is the top module: its name, clock and ports. The clock port is driven by the
	// harness; every other input is driven by the caller through the input buffer.
	Module *hdl.Module
	// Files are all the RTL source files of the design (one module per file). Their contents,
	// not their paths, enter the key; `include files are not tracked and not supported.
	Files []string
	// Trace builds with --trace so that Model.TraceStart can dump VCD windows.
	Trace bool
	// Quick compiles the C++ without optimisation (quickMakeVars): the build takes about 40%
	// less time and the model runs several times slower. For models that run briefly and are
	// built once, such as the mutated RTL of a fault-injection test.
	Quick bool
	// CacheDir holds the built models; "" means $MRGEN_CACHE/verilator, else
	// $XDG_CACHE_HOME/mrgen/verilator, else ~/.cache/mrgen/verilator.
	CacheDir string
}

// The exact tool invocations. They are part of the cache key: change one and every model is
// rebuilt.
var (
	// verilatorArgs verilate the design into C++ (then built by make, below). -Wno-fatal: lint
	// warnings are `mrgen lint`'s business; here they are only logged.
	verilatorArgs = []string{"--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert",
		"-Wno-fatal", "-CFLAGS", "-fPIC"}
	// makeVars make the generated C++ compile with real optimisation (Verilator's default is -Os).
	makeVars = []string{"OPT_FAST=-O3", "OPT_SLOW=-O1", "OPT_GLOBAL=-O2"}
	// quickMakeVars replace makeVars in a Quick build.
	quickMakeVars = []string{"OPT_FAST=-O0", "OPT_SLOW=-O0", "OPT_GLOBAL=-O0"}
	// linkArgs link the shared library; the version script exports only the mrgen_* ABI, so two
	// libraries (even of one module name) never bind to each other's Verilator runtime.
	linkArgs = []string{"-shared", "-Wl,--no-undefined", "-Wl,-O1", "-lstdc++", "-lm", "-pthread", "-latomic"}
)

// makeVars are the make variables of the build's C++ compile.
func (b Build) makeVars() []string {
	if b.Quick {
		return quickMakeVars
	}
	return makeVars
}

// runtimeObjects are Verilator's runtime library files compiled per flag set; they do not depend
// on the design and are cached once in CacheDir/runtime-<hash>.
func runtimeObjects(trace bool) []string {
	objs := []string{"verilated.o", "verilated_threads.o"}
	if trace {
		objs = append(objs, "verilated_vcd_c.o")
	}
	return objs
}

const versionScript = "{\n  global: mrgen_*;\n  local: *;\n};\n"

const harnessName = "mrgen_harness"

// toolInfo identifies the installed tools; it is part of every key.
type toolInfo struct {
	verilator string // `verilator --version`
	cxx       string // first line of `g++ --version`
}

var tools = sync.OnceValues(func() (toolInfo, error) {
	var ti toolInfo
	out, err := exec.Command("verilator", "--version").Output()
	if err != nil {
		return ti, fmt.Errorf("verilator: running `verilator --version` (is it installed? `make deps`): %w", err)
	}
	ti.verilator = strings.TrimSpace(string(out))
	out, err = exec.Command("g++", "--version").Output()
	if err != nil {
		return ti, fmt.Errorf("verilator: running `g++ --version`: %w", err)
	}
	ti.cxx, _, _ = strings.Cut(string(out), "\n")
	return ti, nil
})

// source is one RTL file as read for the key; the build compiles exactly these bytes.
type source struct {
	path string // as given, made absolute
	data []byte
}

// prepared is a validated Build with its sources read and its key computed.
type prepared struct {
	b       Build
	mod     *hdl.Module // private copy
	lay     *Layout
	sources []source
	tools   toolInfo
	key     string
}

func (b Build) prepare() (*prepared, error) {
	if b.Module == nil {
		return nil, errors.New("verilator: Build.Module is nil")
	}
	mod := *b.Module
	mod.Ports = append([]hdl.Port(nil), b.Module.Ports...)
	if err := mod.Check(); err != nil {
		return nil, fmt.Errorf("verilator: %w", err)
	}
	lay, err := NewLayout(&mod)
	if err != nil {
		return nil, err
	}
	if len(b.Files) == 0 {
		return nil, fmt.Errorf("verilator: build of %s: no RTL files", mod.Name)
	}
	p := &prepared{b: b, mod: &mod, lay: lay}
	for _, f := range b.Files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("verilator: build of %s: %w", mod.Name, err)
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, fmt.Errorf("verilator: build of %s: reading RTL: %w", mod.Name, err)
		}
		p.sources = append(p.sources, source{path: abs, data: data})
	}
	if p.tools, err = tools(); err != nil {
		return nil, err
	}
	h := sha256.New()
	put := func(tag string, vals ...string) {
		for _, v := range vals {
			fmt.Fprintf(h, "%s %d\n%s\n", tag, len(v), v)
		}
	}
	put("abi", strconv.Itoa(abiVersion))
	put("module", mod.Name, mod.Clock)
	for _, port := range mod.Ports {
		put("port", port.Name, port.Dir.String(), strconv.Itoa(port.Width))
	}
	for _, s := range p.sources {
		// The banner's stamp (version, command) does not change the model.
		put("file", filepath.Base(s.path), string(gen.WithoutStamp(s.data)))
	}
	put("verilator-args", verilatorArgs...)
	put("make-vars", b.makeVars()...)
	put("link-args", linkArgs...)
	put("version-script", versionScript)
	put("trace", strconv.FormatBool(b.Trace))
	put("tools", p.tools.verilator, p.tools.cxx, runtime.GOOS+"/"+runtime.GOARCH)
	put("harness", harnessTemplate)
	p.key = hex.EncodeToString(h.Sum(nil))
	return p, nil
}

// Key is the cache key of the build: a sha256 over the RTL file contents without their banner's
// stamp (gen.WithoutStamp; with their base
// names), the module's name, clock and port list, the tool flags, Trace, Quick, `verilator --version`,
// `g++ --version`, the platform and the harness template. It is "" when the build cannot be described (no
// module, an invalid module, an unreadable file, no verilator); Compile returns the reason.
func (b Build) Key() string {
	p, err := b.prepare()
	if err != nil {
		return ""
	}
	return p.key
}

func (b Build) cacheDir() (string, error) {
	d := b.CacheDir
	if d == "" {
		var err error
		if d, err = cacheroot.Dir("verilator"); err != nil {
			return "", fmt.Errorf("verilator: %w", err)
		}
	}
	d, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("verilator: cache directory: %w", err)
	}
	if strings.ContainsAny(d, " \t\n\"'$\\") {
		return "", fmt.Errorf("verilator: cache directory %q contains whitespace, quotes, $ or \\, where GNU make cannot build; set MRGEN_CACHE or Build.CacheDir", d)
	}
	return d, nil
}

func soName(module, key string) string { return "libmrgen_" + module + "_" + key[:16] + ".so" }

// Compile builds the model described by b, or finds it in the cache, and loads it. A second
// call with the same key is a cache hit (Library.Cached) and runs no tool. Concurrent calls,
// in one process or many, are safe: a build holds a lock file per key, works in a temporary
// directory and renames it into place when complete. Tool output goes to log (if not nil) and
// to build.log beside the library; on failure its tail is in the error.
func Compile(ctx context.Context, b Build, log io.Writer) (*Library, error) {
	start := time.Now()
	p, err := b.prepare()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	cache, err := b.cacheDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("verilator: cache directory: %w", err)
	}
	dir := filepath.Join(cache, p.key)
	so := filepath.Join(dir, soName(p.mod.Name, p.key))
	if fileExists(so) {
		fmt.Fprintf(log, "verilator: %s: cached model %s\n", p.mod.Name, so)
		return load(p, so, true, start)
	}

	unlock, err := lockFile(ctx, dir+".lock")
	if err != nil {
		return nil, fmt.Errorf("verilator: build of %s: %w", p.mod.Name, err)
	}
	defer unlock()
	if fileExists(so) { // built by someone else while we waited
		fmt.Fprintf(log, "verilator: %s: cached model %s\n", p.mod.Name, so)
		return load(p, so, true, start)
	}
	if _, err := os.Stat(dir); err == nil { // an incomplete or damaged entry
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("verilator: removing damaged cache entry: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(cache, "tmp-"+p.key[:12]+"-")
	if err != nil {
		return nil, fmt.Errorf("verilator: build of %s: %w", p.mod.Name, err)
	}
	defer os.RemoveAll(tmp)

	var out bytes.Buffer
	var pairs []string // tool output names the user's files, not our private copies
	for i, s := range p.sources {
		pairs = append(pairs, srcCopy(tmp, i, s.path), s.path)
	}
	w := &lineRewriter{w: io.MultiWriter(&out, log), r: strings.NewReplacer(pairs...)}
	fmt.Fprintf(w, "verilator: building %s (key %s) in %s from private copies of its RTL, shown under their own paths\n", p.mod.Name, p.key[:16], tmp)
	berr := p.build(ctx, cache, tmp, w)
	w.Flush()
	text := out.String()
	if berr != nil {
		return nil, fmt.Errorf("verilator build of %s: %w\n%s", p.mod.Name, berr, tail(text, 40, 6000))
	}
	if err := os.WriteFile(filepath.Join(tmp, "build.log"), []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("verilator build of %s: %w", p.mod.Name, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it private
		return nil, fmt.Errorf("verilator build of %s: %w", p.mod.Name, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("verilator build of %s: publishing into the cache: %w", p.mod.Name, err)
	}
	fmt.Fprintf(log, "verilator: %s: built %s in %.1fs\n", p.mod.Name, so, time.Since(start).Seconds())
	return load(p, so, false, start)
}

func srcCopy(tmp string, i int, path string) string {
	return filepath.Join(tmp, "src", strconv.Itoa(i), filepath.Base(path))
}

// build runs the tools in tmp, leaving the shared library, the harness source, the Verilated
// header and (written by the caller) build.log there.
func (p *prepared) build(ctx context.Context, cache, tmp string, w io.Writer) error {
	name := p.mod.Name
	prefix := "V" + name
	obj := filepath.Join(tmp, "obj")
	if err := os.MkdirAll(obj, 0o755); err != nil {
		return err
	}
	var files []string
	for i, s := range p.sources {
		c := srcCopy(tmp, i, s.path)
		if err := os.MkdirAll(filepath.Dir(c), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(c, s.data, 0o644); err != nil {
			return err
		}
		files = append(files, c)
	}

	// 1. Verilate.
	args := append([]string(nil), verilatorArgs...)
	if p.b.Trace {
		args = append(args, "--trace")
	}
	args = append(args, "--top-module", name, "--prefix", prefix, "--Mdir", obj)
	args = append(args, files...)
	if err := run(ctx, tmp, w, "verilator", args...); err != nil {
		return err
	}

	// 2. Check the real ports against the description; generate the harness.
	header, err := os.ReadFile(filepath.Join(obj, prefix+".h"))
	if err != nil {
		return fmt.Errorf("reading the Verilated header: %w", err)
	}
	cnames, err := checkHeader(p.mod, header)
	if err != nil {
		return err
	}
	harness, err := renderHarness(p.mod, p.lay, prefix, cnames)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(obj, harnessName+".cpp"), harness, 0o644); err != nil {
		return err
	}

	// 3. Compile the model, the harness and (unless cached) the runtime with the model's own
	// makefile, so all share one set of flags.
	rtDir := filepath.Join(cache, "runtime-"+p.runtimeKey())
	rtObjs := runtimeObjects(p.b.Trace)
	rtCached := true
	for _, o := range rtObjs {
		rtCached = rtCached && fileExists(filepath.Join(rtDir, o))
	}
	targets := []string{prefix + "__ALL.a", harnessName + ".o"}
	if !rtCached {
		targets = append(targets, rtObjs...)
	}
	margs := append([]string{"-j", strconv.Itoa(runtime.NumCPU()), "-f", prefix + ".mk"}, targets...)
	margs = append(margs, p.b.makeVars()...)
	margs = append(margs, objCache(cache)...)
	if err := run(ctx, obj, w, "make", margs...); err != nil {
		return err
	}
	rtPaths := make([]string, len(rtObjs))
	for i, o := range rtObjs {
		rtPaths[i] = filepath.Join(obj, o)
	}
	if !rtCached {
		publishRuntime(cache, rtDir, obj, rtObjs, w)
	}

	// 4. Link the shared library.
	script := filepath.Join(obj, "mrgen.map")
	if err := os.WriteFile(script, []byte(versionScript), 0o644); err != nil {
		return err
	}
	so := filepath.Join(tmp, soName(name, p.key))
	largs := []string{"-o", so, filepath.Join(obj, harnessName+".o"), filepath.Join(obj, prefix+"__ALL.a")}
	if rtCached {
		for i, o := range rtObjs {
			rtPaths[i] = filepath.Join(rtDir, o)
		}
	}
	largs = append(largs, rtPaths...)
	largs = append(largs, "-Wl,--version-script="+script)
	largs = append(largs, linkArgs...)
	if err := run(ctx, obj, w, "g++", largs...); err != nil {
		return err
	}

	// Keep what explains the library; drop the bulky intermediates.
	for _, f := range []string{harnessName + ".cpp", prefix + ".h"} {
		if err := os.Rename(filepath.Join(obj, f), filepath.Join(tmp, f)); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(obj); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(tmp, "src"))
}

// runtimeKey identifies the Verilator runtime objects: they depend on the tools and flags only.
func (p *prepared) runtimeKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "%q\n%q\n%q\n%q\n%v\n", p.tools.verilator, p.tools.cxx, verilatorArgs, p.b.makeVars(), p.b.Trace)
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// publishRuntime copies freshly compiled runtime objects into the cache. It is best effort: a
// failure only costs the next build the compile, and a concurrent publisher simply wins.
func publishRuntime(cache, rtDir, obj string, objs []string, w io.Writer) {
	tmp, err := os.MkdirTemp(cache, "tmp-runtime-")
	if err != nil {
		fmt.Fprintf(w, "verilator: not caching the runtime: %v\n", err)
		return
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		fmt.Fprintf(w, "verilator: not caching the runtime: %v\n", err)
		return
	}
	for _, o := range objs {
		data, err := os.ReadFile(filepath.Join(obj, o))
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, o), data, 0o644)
		}
		if err != nil {
			fmt.Fprintf(w, "verilator: not caching the runtime: %v\n", err)
			return
		}
	}
	if err := os.Rename(tmp, rtDir); err != nil && !fileExists(rtDir) {
		fmt.Fprintf(w, "verilator: not caching the runtime: %v\n", err)
	}
}

// objCache compiles through ccache when it is installed, its store beside the models (so a cold
// model cache is a cold compiler cache too). A model differs from another of its module (a
// fault test's mutant, another configuration) in a few of the C++ files Verilator splits it
// into; the others compile once. The object code is the compiler's either way, so ccache is
// not part of the model's key.
func objCache(cache string) []string {
	path, err := exec.LookPath("ccache")
	if err != nil {
		return nil
	}
	return []string{"OBJCACHE=env CCACHE_DIR=" + filepath.Join(cache, "ccache") + " " + path}
}

// toolEnv is the environment of every tool run: only what the tools need, so that a caller's
// MAKEFLAGS (a parent make's jobserver), CXXFLAGS, OPT_FAST or CXX cannot change a build behind
// the key's back.
func toolEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "HOME", k == "TMPDIR", k == "LANG", k == "USER", k == "LOGNAME",
			k == "VERILATOR_ROOT", strings.HasPrefix(k, "LC_"):
			env = append(env, kv)
		}
	}
	return env
}

// run runs one tool, its output (both streams) to w, killing its whole process group when ctx
// ends.
func run(ctx context.Context, dir string, w io.Writer, name string, args ...string) error {
	fmt.Fprintf(w, "$ (cd %s && %s %s)\n", dir, name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = toolEnv()
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w (%v)", name, ctx.Err(), err)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// lockFile takes an exclusive flock on path, polling so that ctx can end the wait.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for lock %s: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// tail returns the last lines of s, at most max bytes.
func tail(s string, lines, max int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > max {
		s = s[len(s)-max:]
	}
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

// lineRewriter applies r to whole lines of output before passing them on.
type lineRewriter struct {
	w   io.Writer
	r   *strings.Replacer
	buf []byte
}

func (lw *lineRewriter) Write(b []byte) (int, error) {
	lw.buf = append(lw.buf, b...)
	if i := bytes.LastIndexByte(lw.buf, '\n'); i >= 0 {
		if _, err := io.WriteString(lw.w, lw.r.Replace(string(lw.buf[:i+1]))); err != nil {
			return 0, err
		}
		lw.buf = append(lw.buf[:0], lw.buf[i+1:]...)
	}
	return len(b), nil
}

// Flush passes on a last unterminated line.
func (lw *lineRewriter) Flush() {
	if len(lw.buf) > 0 {
		_, _ = io.WriteString(lw.w, lw.r.Replace(string(lw.buf)))
		lw.buf = lw.buf[:0]
	}
}
