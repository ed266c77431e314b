package handoff_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/handoff"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// buildBundle writes the nic-tiny bundle with few packets per scenario, and checks its progress
// reports. Without nic_top's netlist: its synthesis (about 5 minutes, twice) and its gate-level
// compile and replay (about 10 minutes) would take the test past its time; `make handoff-tiny`
// builds and checks the bundle with it.
// Each build has a tool cache of its own (cache), so that the second one synthesizes again and
// the byte-for-byte comparison covers the netlists. Without reports/synthesis/
// (TestSynthesisReports measures two modules): every unit would add about 20 minutes of CPU.
func buildBundle(t *testing.T, out, cache string, force bool) *handoff.Summary {
	t.Helper()
	c, err := config.Load("../configs/synth/nic-tiny.yaml")
	require.NoError(t, err)
	var steps []int
	sum, err := handoff.Build(context.Background(), handoff.Options{Config: c, ConfigPath: "configs/synth/nic-tiny.yaml",
		Version: "test", Out: out, Force: force, Packets: 300, Seed: 1, NoTopGates: true, NoSynthesis: true,
		ToolCache: cache,
		Progress:  func(done, total int) { steps = append(steps, done, total) }})
	require.NoError(t, err)
	// Progress heard of every step, in order, the last one the total.
	require.NotEmpty(t, steps)
	total := steps[len(steps)-1]
	require.Len(t, steps, 2*(total+1))
	for i := 0; i <= total; i++ {
		require.Equal(t, []int{i, total}, steps[2*i:2*i+2], "the total first, then each step")
	}
	return sum
}

// copyTree copies the bundle to a fresh folder, as a team receiving it would.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.CopyFS(to, os.DirFS(from)))
	require.NoError(t, os.Chmod(filepath.Join(to, "verify.sh"), 0o755))
}

// noGoEnv is the environment with every PATH entry that holds a go binary removed and GOROOT
// unset: verify.sh must not need Go.
func noGoEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	env := []string{"PATH=" + strings.Join(keep, string(filepath.ListSeparator)), "HOME=" + os.Getenv("HOME")}
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "TMPDIR=") || strings.HasPrefix(e, "CXX=") || strings.HasPrefix(e, "CC=") {
			env = append(env, e)
		}
	}
	return append(env, extra...)
}

func verify(t *testing.T, dir string, env []string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join(dir, "verify.sh"))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestHandoffBundle builds the nic-tiny bundle and checks it as a team receiving it would, then
// that verify.sh catches a changed file and a changed design, and that a second build is the
// same byte for byte. (One test: a build takes minutes.)
func TestHandoffBundle(t *testing.T) {
	t.Parallel() // beside TestSynthesisReports
	tooltest.Require(t, "verilator", "g++", "make", "iverilog", "vvp", "sha256sum", "yosys", "sta")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "bundle")
	sum := buildBundle(t, out, filepath.Join(tmp, "tool-cache"), false)
	for _, m := range []string{"sack_unit", "rx_parser", "tx_deparser", "placement_engine", "rx_acker",
		"window_unit", "tx_engine", "nic_tx", "nic_top"} {
		require.GreaterOrEqual(t, sum.Transactions[m], 10_000, "%s: the issue asks 10^4 transactions per block", m)
	}

	// The SACK unit's properties hold on the bundle's RTL, 16 cycles past the table's clear
	// (nic-tiny: one connection of two paths).
	for _, top := range []string{"sack_rx", "sack_tx"} {
		data, err := os.ReadFile(filepath.Join(out, "reports", "formal", top+".json"))
		require.NoError(t, err)
		var rep handoff.FormalReport
		require.NoError(t, json.Unmarshal(data, &rep))
		require.Equal(t, handoff.FormalReport{Top: top, Method: rep.Method, Depth: 18, Frames: 18, TimeLimit: 120,
			Clear: 2, Passed: true, Commands: rep.Commands}, rep)
		require.Len(t, rep.Commands, 2)
		require.Contains(t, rep.Commands[1], "bmc3 -F 18")
	}

	checklist, err := os.ReadFile(filepath.Join(out, "CHECKLIST.md"))
	require.NoError(t, err)
	require.Contains(t, string(checklist), "| D3 | Area and FPGA fit | — (built with `--no-synthesis`) | not done |")

	t.Run("refuses and leaves nothing", func(t *testing.T) {
		// A non-empty folder is refused without --force; a failed build leaves nothing behind.
		c, err := config.Load("../configs/synth/nic-tiny.yaml")
		require.NoError(t, err)
		_, err = handoff.Build(context.Background(), handoff.Options{Config: c, Version: "test", Out: out, Packets: 10})
		require.ErrorIs(t, err, handoff.ErrExists)
		file := filepath.Join(tmp, "a-file")
		require.NoError(t, os.WriteFile(file, []byte("keep"), 0o644))
		_, err = handoff.Build(context.Background(), handoff.Options{Config: c, Version: "test", Out: file, Force: true, Packets: 10})
		require.ErrorContains(t, err, "is not a folder")
		kept, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, "keep", string(kept))
		require.NoError(t, os.Remove(file))
		entries, err := os.ReadDir(tmp)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		require.ElementsMatch(t, []string{"bundle", "tool-cache"}, names, "a refused or failed build leaves nothing behind")
	})

	// The checks of the bundle and the second build share nothing but out: they run side by
	// side (the machine's second core would otherwise idle through verify.sh's simulations).
	t.Run("checks", func(t *testing.T) {
		checks(t, tmp, out)
	})
}

func checks(t *testing.T, tmp, out string) {
	t.Run("verifies without Go", func(t *testing.T) {
		t.Parallel()
		fresh := filepath.Join(tmp, "fresh")
		copyTree(t, out, fresh)
		// The gate level replays one recording of each netlist (every recording, it takes about
		// 10 minutes of CPU on an idle machine, twice that beside the cosim package; `make
		// handoff-tiny` runs them all), and of the cycle-by-cycle (Timed) testbenches the first
		// gateCycles cycles.
		lists, err := filepath.Glob(filepath.Join(fresh, "gls", "*.f"))
		require.NoError(t, err)
		var gates []string
		for _, l := range lists {
			gates = append(gates, strings.TrimSuffix(filepath.Base(l), ".f"))
		}
		gateVectors := map[string]string{"nic_tx": "random", "placement_engine": "violations",
			"rx_acker": "announce", "rx_parser": "malformed", "sack_unit": "reorder",
			"tx_deparser": "length-error", "tx_engine": "failure", "window_unit": "random"}
		require.ElementsMatch(t, slices.Collect(maps.Keys(gateVectors)), gates, "one recording of every netlist")
		var vectors []string
		for _, m := range gates {
			vectors = append(vectors, m+"/"+gateVectors[m])
		}
		const gateCycles = 2000
		log, err := verify(t, fresh, noGoEnv(t, "GLS_SUBSET="+strings.Join(gates, " "),
			fmt.Sprintf("GLS_CYCLES=%d", gateCycles), "GLS_VECTORS="+strings.Join(vectors, " ")))
		require.NoError(t, err, log)
		require.Contains(t, log, "hashes: ok")
		// Icarus and Verilator replay every recording, the gate level one per netlist, from a
		// random power-up (nic_top has no netlist in this bundle).
		require.Contains(t, log, fmt.Sprintf("== verify: %d replays, 0 failed", 2*len(handoff.Recordings())+len(gates)), log)
		require.Contains(t, log, fmt.Sprintf("== tx_engine gate level (osu018 netlist, Icarus, power-up random, the first %d cycles)", gateCycles))
		require.Contains(t, log, "verify: rx_parser replays per stream, whole recordings")
		for _, v := range vectors {
			require.Contains(t, log, "pass  gate  vectors/"+v+" ")
		}
		require.NotContains(t, log, "pass  gate  vectors/tx_engine/clean")
		require.NotContains(t, log, "== nic_top gate level")
		require.Contains(t, log, "pass  verilator  vectors/nic_top/chaos")
		require.Contains(t, log, "pass  verilator  vectors/tx_engine/failure")

		// A recording that does not exist is refused before anything runs.
		log, err = verify(t, fresh, noGoEnv(t, "GLS_VECTORS=tx_engine/nosuch"))
		require.Error(t, err, log)
		require.Contains(t, log, "GLS_VECTORS names tx_engine/nosuch, which is not a recording under vectors/")
		require.NotContains(t, log, "== ")
	})

	t.Run("catches changes", func(t *testing.T) {
		t.Parallel()
		changed := filepath.Join(tmp, "changed")
		copyTree(t, out, changed)
		mutateAndCheck(t, changed)
	})

	t.Run("same bundle twice", func(t *testing.T) {
		t.Parallel()
		again := filepath.Join(tmp, "again")
		buildBundle(t, again, filepath.Join(tmp, "tool-cache-again"), false)
		a, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(again, "SHA256SUMS"))
		require.NoError(t, err)
		require.Equal(t, string(a), string(b))
	})
}

// mutateAndCheck changes one byte of an RTL file (the hash check fails and names it), then
// mutates the RTL of a per-stream block and of a Timed one, rehashed: their testbenches fail.
func mutateAndCheck(t *testing.T, out string) {
	t.Helper()
	rtl := filepath.Join(out, "rtl", "sack_rx.v")
	orig, err := os.ReadFile(rtl)
	require.NoError(t, err)

	// One byte changed: the hash check fails and names the file.
	changed := append([]byte(nil), orig...)
	changed[len(changed)/2] ^= 0x01
	require.NoError(t, os.WriteFile(rtl, changed, 0o644))
	log, err := verify(t, out, noGoEnv(t, "SIMS=icarus", "GLS=0"))
	require.Error(t, err, log)
	require.Contains(t, log, "rtl/sack_rx.v: FAILED")

	// A mutated RTL line (two output bits swapped), rehashed: the testbench fails.
	const from = "m_rx_ack_due, m_rx_gap_valid} = rot_side;"
	require.Contains(t, string(orig), from)
	mutate(t, out, "rtl/sack_rx.v", string(orig), from, "m_rx_gap_valid, m_rx_ack_due} = rot_side;")
	// A Timed block: the ACK scheduler's wake-up time one nanosecond late.
	acker, err := os.ReadFile(filepath.Join(out, "rtl", "rx_acker.v"))
	require.NoError(t, err)
	const wake = "assign m_wake_at = "
	require.Contains(t, string(acker), wake)
	mutate(t, out, "rtl/rx_acker.v", string(acker), wake, wake+"64'd1 + ")
	log, err = verify(t, out, noGoEnv(t, "SIMS=icarus", "GLS=0", "MODULES=sack_unit rx_acker rx_parser"))
	require.Error(t, err, log)
	require.Contains(t, log, "hashes: ok")
	require.Contains(t, log, "FAIL m_rx #")
	require.Contains(t, log, "FAIL m_wake #")
	nSack, nAcker := 0, 0
	for _, r := range handoff.Recordings() {
		switch r.Block {
		case "sack":
			nSack++
		case "acker":
			nAcker++
		}
	}
	require.Contains(t, log, fmt.Sprintf("%d failed", nSack+nAcker), "every SACK and ACK scheduler recording fails, the parser's pass")
	require.Contains(t, log, "pass  icarus  vectors/rx_parser/malformed")
}

// mutate replaces from with to in the bundle's file rel (whose text is orig) and rehashes it in
// SHA256SUMS, as a careless edit that kept the hashes would.
func mutate(t *testing.T, out, rel, orig, from, to string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(out, rel), []byte(strings.Replace(orig, from, to, 1)), 0o644))
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	require.NoError(t, err)
	rehash := exec.Command("sha256sum", rel)
	rehash.Dir = out
	line, err := rehash.Output()
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		if strings.HasSuffix(l, "  "+rel) {
			l = strings.TrimSpace(string(line))
		}
		lines = append(lines, l)
	}
	require.NoError(t, os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// TestCancelledBuildLeavesNothing cancels a build (as Ctrl-C or a TERM does through the CLI): it
// fails with the context's error and leaves neither the bundle nor its temporary folder.
func TestCancelledBuildLeavesNothing(t *testing.T) {
	t.Parallel()
	c, err := config.Load("../configs/synth/nic-tiny.yaml")
	require.NoError(t, err)
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = handoff.Build(ctx, handoff.Options{Config: c, Version: "test", Out: filepath.Join(parent, "bundle"),
		Packets: 10, NoSynthesis: true, ToolCache: filepath.Join(t.TempDir(), "cache")})
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Empty(t, entries, "a cancelled build leaves nothing behind")
}
