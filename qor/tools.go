// Package qor measures the quality of results of the generated RTL on three targets, with one
// command (mrgen qor): ASIC timing in a real standard-cell flow (Yosys to the OSU 0.18 um cells,
// ABC with a delay target, fanout buffering with qflow's blifFanout, memories as black-box
// macros with a timing model, OpenSTA with the generated SDC), FPGA logic depth and resources
// for UltraScale+ (Yosys), and iCE40 place and route (fpga/). Committed budgets hold the
// figures (budgets.json, checked by make test).
package qor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrToolMissing is wrapped by every error about a missing program or data file.
var ErrToolMissing = errors.New("tool missing")

// tool is a program or file the flows need and the Debian package that installs it.
type tool struct {
	name, pkg string
	paths     []string // candidate locations when it is not on PATH ("" = PATH only)
	file      bool     // a data file, not a program
}

var (
	toolYosys   = tool{name: "yosys", pkg: "yosys"}
	toolSTA     = tool{name: "sta", pkg: "opensta"}
	toolFanout  = tool{name: "blifFanout", pkg: "qflow", paths: []string{"/usr/lib/qflow/bin/blifFanout"}}
	toolLiberty = tool{name: "osu018_stdcells.lib", pkg: "qflow-tech-osu018", file: true,
		paths: []string{"/usr/share/qflow/tech/osu018/osu018_stdcells.lib"}}
	toolNextpnr = tool{name: "nextpnr-ice40", pkg: "nextpnr-ice40"}
)

// find returns the tool's path or an error naming the Debian package.
func (t tool) find() (string, error) {
	// MRGEN_<NAME> (MRGEN_BLIFFANOUT, MRGEN_OSU018_STDCELLS_LIB, ...) names the tool's path.
	if env := os.Getenv("MRGEN_" + envName(t.name)); env != "" {
		if _, err := os.Stat(env); err != nil {
			return "", fmt.Errorf("qor: %w: %s not found at MRGEN_%s=%s (Debian package %s); run `make deps`",
				ErrToolMissing, t.name, envName(t.name), env, t.pkg)
		}
		return env, nil
	}
	if !t.file {
		if p, err := exec.LookPath(t.name); err == nil {
			return p, nil
		}
	}
	for _, p := range t.paths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("qor: %w: %s not found (Debian package %s); run `make deps`", ErrToolMissing, t.name, t.pkg)
}

func envName(s string) string {
	out := []rune{}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			out = append(out, r-'a'+'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			out = append(out, r)
		default:
			out = append(out, '_')
		}
	}
	return string(out)
}

// toolsOf are the programs and files target tg needs.
func toolsOf(tg Target) []tool {
	switch tg {
	case ASIC:
		return []tool{toolYosys, toolSTA, toolFanout, toolLiberty}
	case XCUP, ECP5:
		return []tool{toolYosys}
	case ICE40:
		return []tool{toolYosys, toolNextpnr}
	}
	return nil
}

// Check reports the first tool a target needs that is missing, naming its Debian package.
func Check(targets ...Target) error {
	for _, tg := range targets {
		for _, t := range toolsOf(tg) {
			if _, err := t.find(); err != nil {
				return err
			}
		}
	}
	return nil
}

// absAll returns absolute paths.
func absAll(files []string) ([]string, error) {
	out := make([]string, len(files))
	for i, f := range files {
		a, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("qor: %s: %w", f, err)
		}
		out[i] = a
	}
	return out, nil
}

// findAll finds every tool, or reports the first missing.
func findAll(tools ...tool) ([]string, error) {
	out := make([]string, len(tools))
	for i, t := range tools {
		p, err := t.find()
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// workDir makes dir (absolute, created) ready for a flow's files; Yosys and OpenSTA scripts
// name its files unquoted, so it may not hold spaces or quotes.
func workDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("qor: work directory: %w", err)
	}
	if strings.ContainsAny(abs, " \t\n\"") {
		return "", fmt.Errorf("qor: work directory %q: spaces and quotes are not supported", abs)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("qor: work directory: %w", err)
	}
	return abs, nil
}

// yosysRun is what every Yosys measurement starts with: the yosys binary, its work directory
// (created) and a log writer (io.Discard for nil).
func yosysRun(dir string, log io.Writer) (yosys, workdir string, w io.Writer, err error) {
	if yosys, err = toolYosys.find(); err != nil {
		return "", "", nil, err
	}
	if log == nil {
		log = io.Discard
	}
	if workdir, err = workDir(dir); err != nil {
		return "", "", nil, err
	}
	return yosys, workdir, log, nil
}

// versionArgs are the arguments that make each program print its version (the programs with
// none, blifFanout, are left out of ToolVersions).
var versionArgs = map[string][]string{"yosys": {"-V"}, "sta": {"-version"}, "nextpnr-ice40": {"--version"}}

// ToolVersions returns the version line of every program the targets run that prints one
// (Yosys, OpenSTA, nextpnr-ice40), by name.
func ToolVersions(targets ...Target) (map[string]string, error) {
	out := map[string]string{}
	for _, tg := range targets {
		for _, t := range toolsOf(tg) {
			args, ok := versionArgs[t.name]
			if _, done := out[t.name]; done || !ok {
				continue
			}
			p, err := t.find()
			if err != nil {
				return nil, err
			}
			if out[t.name], err = VersionLine(p, args...); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// VersionLine runs prog with args and returns the first line it prints. A program that prints
// its version and exits non-zero (iverilog -V with no source) still gives its line.
func VersionLine(prog string, args ...string) (string, error) {
	b, err := exec.Command(prog, args...).CombinedOutput()
	line := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	if line == "" {
		if err == nil {
			err = errors.New("no output")
		}
		return "", fmt.Errorf("%s %s: %w", filepath.Base(prog), strings.Join(args, " "), err)
	}
	return line, nil
}
