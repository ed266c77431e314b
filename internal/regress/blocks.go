package regress

import (
	"context"
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/cosim"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/internal/blocks"
)

// BlockSuitePrefix prefixes the names of the block co-simulation suites.
const BlockSuitePrefix = "block/"

// blockSuite is one block's lockstep co-simulation (`mrgen cosim --block`).
type blockSuite struct {
	blk blocks.Block
	// VCDDir, when set, is where a mismatching job dumps its VCD window.
	vcdDir string
}

// blockSuites lists a suite for every registered block that has a cosim.
func blockSuites() []Suite {
	var out []Suite
	for _, n := range blocks.Names() {
		b, err := blocks.Lookup(n)
		if err != nil || b.Cosim == nil || b.Scenarios == nil {
			continue
		}
		out = append(out, &blockSuite{blk: b})
	}
	return out
}

func (s *blockSuite) Name() string        { return BlockSuitePrefix + s.blk.Name }
func (s *blockSuite) Scenarios() []string { return s.blk.Scenarios() }

// Accepts requires a valid configuration that the block renders for.
func (s *blockSuite) Accepts(c config.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if _, err := s.blk.Design(c, gen.Stamp{ConfigName: c.Name, ConfigHash: c.Hash()}, nil); err != nil {
		return fmt.Errorf("the block does not render: %w", err)
	}
	return nil
}

// versionStamp is the generator version written into the banners of the jobs' RTL; the CLI sets
// it to its Version.
var versionStamp = "regress"

// SetVersion sets the version stamped into the generated RTL of block jobs.
func SetVersion(v string) { versionStamp = v }

func (s *blockSuite) Run(ctx context.Context, j Job, c config.Config) (Outcome, error) {
	opt := cosim.Options{Config: c, Scenario: j.Scenario, Seed: j.Seed, Packets: j.Packets,
		Stamp: blocks.Stamp(versionStamp, j.Config, s.blk.Name, c)}
	if dir, ok := ctx.Value(vcdDirKey{}).(string); ok && dir != "" {
		opt.VCD = vcdPath(dir, j)
	}
	res, err := s.blk.Cosim(ctx, opt)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Packets: res.Packets, Mismatches: res.Mismatches}
	if res.Mismatch != nil {
		o.Failure = firstLine(res.Mismatch.Error())
		if res.Mismatch.VCD != "" {
			o.Failure += " (VCD " + res.Mismatch.VCD + ")"
		}
	}
	return o, nil
}

// vcdDirKey carries RunOptions.VCDDir to the block suites.
type vcdDirKey struct{}

// vcdPath is a file name for a job's VCD: its ID with every character outside [A-Za-z0-9._-]
// replaced.
func vcdPath(dir string, j Job) string {
	id := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, j.ID())
	return dir + "/" + id + ".vcd"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
