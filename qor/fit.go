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

	"github.com/mrgen/mrgen/fpga"
)

var wireBitsRE = regexp.MustCompile(`(?m)^\s+Number of wire bits:\s+(\d+)\s*$`)

// CoarseBits is a cheap measure of a unit's size: the wire bits of its flattened word-level
// netlist (Yosys proc, flatten, opt -fast, wreduce), a few seconds where synth_ice40 takes a
// minute or more. It orders the iCE40 fit search's candidates; it is not a resource count.
func CoarseBits(ctx context.Context, u Unit, dir string, log io.Writer) (int, error) {
	yosys, dir, log, err := yosysRun(dir, log)
	if err != nil {
		return 0, err
	}
	files, err := absAll(u.Files)
	if err != nil {
		return 0, err
	}
	top := u.Name()
	stat := filepath.Join(dir, "coarse-stat.txt")
	script := strings.Join([]string{yosysRead(files), "hierarchy -check -top " + top,
		"proc", "flatten", "opt -fast", "wreduce", "opt_clean", "tee -q -o " + stat + " stat " + top}, "\n") + "\n"
	ys := filepath.Join(dir, "coarse.ys")
	if err := os.WriteFile(ys, []byte(script), 0o644); err != nil {
		return 0, fmt.Errorf("qor: %w", err)
	}
	if _, err := runTool(ctx, log, dir, filepath.Join(dir, "coarse.log"), yosys, "-q", "-s", ys); err != nil {
		return 0, err
	}
	text, err := os.ReadFile(stat)
	if err != nil {
		return 0, fmt.Errorf("qor: %s: reading the coarse statistics: %w", top, err)
	}
	return parseWireBits(string(text), top)
}

// parseWireBits reads module top's "Number of wire bits" from a Yosys stat report.
func parseWireBits(stat, top string) (int, error) {
	i := strings.Index(stat, "=== "+top+" ===")
	if i < 0 {
		return 0, fmt.Errorf("qor: the coarse statistics have no module %s", top)
	}
	m := wireBitsRE.FindStringSubmatch(stat[i:])
	if m == nil {
		return 0, fmt.Errorf("qor: the coarse statistics of %s have no wire-bit count", top)
	}
	return strconv.Atoi(m[1])
}

// synthFunc synthesizes a unit for the board in work subdirectory sub; packOnly stops after
// nextpnr's packing.
type synthFunc func(v Unit, sub string, packOnly bool) (*fpga.Result, error)

// fitSearch finds the largest candidate that fits in FitFraction of the device and places it.
// The candidates are ordered by CoarseBits; a bisection over that order synthesizes and packs
// about log2(n)+1 of them instead of all, its first probe the candidate the asked-for
// configuration's packed share predicts (share scaled by coarse size). A candidate not smaller
// than the asked-for configuration, which does not fit, is not synthesized. The order is a
// proxy, so the result is the largest that fits by that order; every candidate's note says
// what it was judged by.
func (r *ICE40Result) fitSearch(ctx context.Context, u Unit, candidates []Candidate, dir string, capacity fpga.Resources,
	tooBig func(Unit) string, synth synthFunc, log io.Writer) error {
	type entry struct {
		c    Candidate
		bits int
		cf   int // index in r.Candidates
	}
	var order []entry
	tried := map[string]string{}
	if u.Digest != "" {
		tried[u.Digest] = "the configuration asked for"
	}
	for _, c := range candidates {
		cf := CandidateFit{Config: c.Config}
		if same, ok := tried[c.Unit.Digest]; ok && c.Unit.Digest != "" {
			cf.Note = "not synthesized: the same hardware as " + same
			r.Candidates = append(r.Candidates, cf)
			continue
		}
		if c.Unit.Digest != "" {
			tried[c.Unit.Digest] = c.Config
		}
		if cf.Note = tooBig(c.Unit); cf.Note != "" {
			r.Candidates = append(r.Candidates, cf)
			continue
		}
		bits, err := CoarseBits(ctx, c.Unit, filepath.Join(dir, "coarse-"+c.Config), log)
		if err != nil {
			return fmt.Errorf("qor: %s at %s: %w", u.Name(), c.Config, err)
		}
		cf.CoarseBits = bits
		r.Candidates = append(r.Candidates, cf)
		order = append(order, entry{c, bits, len(r.Candidates) - 1})
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].bits != order[j].bits {
			return order[i].bits < order[j].bits
		}
		return order[i].c.Config < order[j].c.Config
	})
	hi := len(order) - 1
	first := -1
	if r.Result != nil && len(order) > 0 {
		self, err := CoarseBits(ctx, u, filepath.Join(dir, "coarse-default"), log)
		if err != nil {
			return err
		}
		r.CoarseBits = self
		for hi >= 0 && order[hi].bits >= self {
			r.Candidates[order[hi].cf].Note = fmt.Sprintf(
				"not synthesized: not smaller (%d coarse bits) than the configuration asked for (%d), which does not fit",
				order[hi].bits, self)
			hi--
		}
		if share := selfShare(r.Result, capacity); share > 0 {
			for i := 0; i <= hi; i++ {
				if share*float64(order[i].bits)/float64(self) <= FitFraction {
					first = i
				}
			}
		}
	}
	probed := map[int]bool{}
	probe := func(i int) (bool, error) {
		cf := &r.Candidates[order[i].cf]
		if probed[i] {
			return cf.Fits, nil
		}
		probed[i] = true
		res, err := synth(order[i].c.Unit, "fit-"+order[i].c.Config, true)
		if err != nil {
			return false, fmt.Errorf("qor: %s at %s: %w", u.Name(), order[i].c.Config, err)
		}
		whole := res.Whole()
		cf.LUTs, cf.FFs, cf.RAMs = whole.LUTs, whole.FFs, whole.RAMs
		cf.Note = ""
		if res.OverCapacity == "" {
			cf.Share, cf.Fits = packedFit(res)
		} else {
			cf.Note = res.DoesNotFit()
		}
		return cf.Fits, nil
	}
	for lo := 0; lo <= hi; {
		best := -1
		for lo <= hi {
			mid := (lo + hi) / 2
			if first >= lo && first <= hi {
				mid, first = first, -1
			}
			fits, err := probe(mid)
			if err != nil {
				return err
			}
			if fits {
				best, lo = mid, mid+1
			} else {
				hi = mid - 1
			}
		}
		if best < 0 {
			break
		}
		e := order[best]
		res, err := synth(e.c.Unit, "fit-"+e.c.Config, false)
		if err != nil {
			return err
		}
		if res.OverCapacity == "" {
			r.FitConfig, r.Fit = e.c.Config, res
			break
		}
		// It packed but did not place: search below it again (the probes are kept).
		cf := &r.Candidates[e.cf]
		cf.Fits, cf.Note = false, res.DoesNotFit()
		lo, hi = 0, best-1
	}
	// What the candidates left out were judged by.
	for i, e := range order {
		cf := &r.Candidates[e.cf]
		if probed[i] || cf.Note != "" {
			continue
		}
		for j := len(order) - 1; j > i; j-- {
			if probed[j] && r.Candidates[order[j].cf].Fits {
				cf.Note = fmt.Sprintf("not synthesized: smaller (%d coarse bits) than %s, which fits", e.bits, order[j].c.Config)
				break
			}
		}
		for j := 0; j < i && cf.Note == ""; j++ {
			if probed[j] && !r.Candidates[order[j].cf].Fits {
				cf.Note = fmt.Sprintf("not synthesized: larger (%d coarse bits) than %s, which does not fit", e.bits, order[j].c.Config)
			}
		}
	}
	sort.SliceStable(r.Candidates, func(i, j int) bool { return r.Candidates[i].Config < r.Candidates[j].Config })
	return nil
}

// selfShare is how full of the device the asked-for configuration is: its packed share, or,
// when it was over the device before packing, its fullest resource (0 when unknown).
func selfShare(res *fpga.Result, capacity fpga.Resources) float64 {
	if res == nil {
		return 0
	}
	if s := fpga.Share(res.Utilization, packedKinds...); s > 0 {
		return s
	}
	return res.Whole().Share(capacity)
}
