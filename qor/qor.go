package qor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/hdl"
)

// Target is one QoR target.
type Target string

// The targets.
const (
	ASIC  Target = "asic"  // osu018 standard cells, OpenSTA
	XCUP  Target = "xcup"  // AMD UltraScale+: LUT6 depth and resources (Yosys)
	ICE40 Target = "ice40" // Lattice iCE40 HX8K: nextpnr place and route
	// ECP5 is Lattice ECP5: synth_ecp5's resources, whole, and the smallest device of the family
	// the unit fits in (synthesis only). Named on its own: "all" does not include it.
	ECP5 Target = "ecp5"
)

// Targets lists the targets "all" measures, in report order.
func Targets() []Target { return []Target{ASIC, XCUP, ICE40} }

// AllTargets lists every target, "all"'s and those measured only when named.
func AllTargets() []Target { return []Target{ASIC, XCUP, ICE40, ECP5} }

// ParseTargets reads --target: "all", or targets separated by commas (asic,xcup).
func ParseTargets(s string) ([]Target, error) {
	if s == "all" || s == "" {
		return Targets(), nil
	}
	var out []Target
next:
	for _, name := range strings.Split(s, ",") {
		for _, t := range AllTargets() {
			if string(t) == strings.TrimSpace(name) {
				out = append(out, t)
				continue next
			}
		}
		return nil, fmt.Errorf("unknown target %q; targets: asic, xcup, ice40, ecp5, all (asic, xcup and ice40; or a comma list)", name)
	}
	return out, nil
}

// Unit is one module of a generated design to measure.
type Unit struct {
	Module *hdl.Module
	// Files are the design's Verilog files, dependency order (gen.Design.RTLFiles).
	Files []string
	// Tables are the design's memories (one per shape is enough): which are macros, and
	// their shapes.
	Tables []hdl.Table
	// MemoryBits are the bits of the unit's own memories (its instances' of the design).
	MemoryBits int
	// Digest identifies its hardware: the Verilog of its subtree without banners.
	Digest string
	Config config.Config
	// Parts are the units below it measured on their own, whose results it is composed of
	// (compose.go); none: it is measured whole.
	Parts []SubUnit
}

// Name is the unit's module name.
func (u Unit) Name() string { return u.Module.Name }

// MacroTables are the unit's design's memories that are macros, one per shape.
func (u Unit) MacroTables() []hdl.Table {
	var out []hdl.Table
	seen := map[string]bool{}
	for _, t := range u.Tables {
		if t.Macro() && !seen[t.MemModule()] {
			seen[t.MemModule()] = true
			out = append(out, t)
		}
	}
	return out
}

// logicFiles are the design's files without the behavioural models of its macros.
func (u Unit) logicFiles() []string {
	macro := map[string]bool{}
	for _, t := range u.MacroTables() {
		macro[t.MemModule()+".v"] = true
	}
	var out []string
	for _, f := range u.Files {
		if !macro[filepath.Base(f)] {
			out = append(out, f)
		}
	}
	return out
}

// runTool runs a program in dir, its output copied to logFile (and log); a failure quotes the
// output's last lines.
func runTool(ctx context.Context, log io.Writer, dir, logFile, prog string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	fmt.Fprintf(log, "qor: %s %s\n", filepath.Base(prog), strings.Join(args, " "))
	err := cmd.Run()
	if logFile != "" {
		if werr := os.WriteFile(logFile, out.Bytes(), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("qor: %s: %w", filepath.Base(prog), ctx.Err())
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), fmt.Errorf("qor: %s failed (%w): %s", filepath.Base(prog), err, lastLines(out.String(), 8))
		}
		return out.String(), fmt.Errorf("qor: running %s: %w", filepath.Base(prog), err)
	}
	return out.String(), nil
}

// lastLines picks the error lines of a tool's output, or its last n lines.
func lastLines(s string, n int) string {
	var errs []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ERROR") || strings.Contains(l, "Error") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) > 0 {
		if len(errs) > n {
			errs = errs[:n]
		}
		return strings.Join(errs, "; ")
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func yosysRead(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = `"` + f + `"`
	}
	return "read_verilog -sv " + strings.Join(q, " ")
}
