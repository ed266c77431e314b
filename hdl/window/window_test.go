package window_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	goldenwindow "github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/hdl/window"
	"github.com/mrgen/mrgen/internal/blocktest"
)

// lintMatrix covers 1, 3, 8 and 64 (and 256) paths, 1 to 5 connections (padding entries when
// not a power of two), both reset styles, narrow and wide PSNs, and window parameters at their
// corners (shifts, AI steps, timeouts).
func lintMatrix(t *testing.T) []config.Config {
	t.Helper()
	var out []config.Config
	for _, path := range []string{"../../configs/default.yaml", "../../configs/matrix/w1024-1path.yaml",
		"../../configs/matrix/w128-small.yaml", "../../configs/matrix/w256-64paths.yaml",
		"../../configs/matrix/w64-4paths-asic.yaml", "../../configs/matrix/w256-3x3-window.yaml"} {
		c, err := config.Load(path)
		require.NoError(t, err, path)
		out = append(out, c)
	}
	type row struct {
		conns, paths, psn int
		reset             string
		mut               func(*config.Config)
	}
	rows := []row{
		{1, 1, 8, config.ResetAsyncLow, nil},
		{3, 3, 12, config.ResetSyncHigh, func(c *config.Config) {
			c.Window.MDShift, c.Window.ConnMDShift, c.Window.SRTTShift, c.Window.RTTVarShift = 8, 8, 8, 8
			c.Window.AIStep, c.Window.SuspectTimeouts, c.Window.FailedTimeouts = 64, 14, 15
			c.MTU = 9000
		}},
		{5, 2, 32, config.ResetAsyncLow, func(c *config.Config) {
			c.Window.MinCwnd, c.Window.InitCwnd, c.Window.MaxCwnd, c.Window.ConnMaxCwnd = 4, 4, 4, 4
			c.Window.RTOMinNS, c.Window.RTOInitialNS, c.Window.RTOMaxNS = 1000, 1000, 1000
		}},
		{1, 256, 32, config.ResetSyncHigh, nil},
	}
	for _, r := range rows {
		c := config.Default()
		c.Name = fmt.Sprintf("c%d-p%d-psn%d-%s", r.conns, r.paths, r.psn, r.reset)
		c.Connections, c.PathsPerConnection, c.PSNWidth, c.ResetStyle = r.conns, r.paths, r.psn, r.reset
		if c.PSNWidth < 10 {
			c.SackWidth = 64
		}
		if r.mut != nil {
			r.mut(&c)
		}
		out = append(out, c)
	}
	return out
}

func TestLintMatrix(t *testing.T) { blocktest.LintMatrix(t, "window", lintMatrix(t)) }

func TestRegenerationIsByteIdentical(t *testing.T) {
	blocktest.Regenerates(t, "window", lintMatrix(t)[:3], []string{"filelist.f", "mrgen.core", "manifest.json", "rtl/window_unit.v",
		"rtl/window_pick.v", "rtl/window_first_set.v"})
}

func TestDescription(t *testing.T) {
	tests := []struct {
		name                      string
		mut                       func(*config.Config)
		cw, aw, depth, slots, psn int
		fastW                     int
		padConns, padPaths        bool
	}{
		{"default", nil, 2, 3, 32, 8, 32, 111, false, false},
		{"one path", func(c *config.Config) { c.Connections, c.PathsPerConnection = 2, 1 }, 1, 1, 4, 2, 32, 111, false, true},
		{"3x3 narrow psn", func(c *config.Config) { c.Connections, c.PathsPerConnection, c.PSNWidth = 3, 3, 12 }, 2, 2, 16, 4, 12, 111, true, true},
		{"64 paths", func(c *config.Config) { c.Connections, c.PathsPerConnection = 2, 64 }, 1, 6, 128, 64, 32, 111, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			if tc.mut != nil {
				tc.mut(&c)
			}
			u, err := window.New(c)
			require.NoError(t, err)
			got := []int{u.CW, u.AW, u.Depth, u.PathSlots, u.PW, u.GroupW("fast"), u.GroupW("psn")}
			require.Equal(t, []int{tc.cw, tc.aw, tc.depth, tc.slots, tc.psn, tc.fastW, tc.psn}, got)
			require.Equal(t, tc.padConns, u.PadConns)
			require.Equal(t, tc.padPaths, u.PadPaths)
			// Fields tile each group's entry with no gap or overlap.
			for _, g := range u.Groups {
				next := 0
				for _, f := range g.Fields {
					require.Equal(t, next, f.Lo, g.Name+"."+f.Name)
					next = f.Hi() + 1
				}
				require.Equal(t, g.Width, next, g.Name)
			}
			srcs, err := u.Sources()
			require.NoError(t, err)
			for _, s := range srcs {
				require.NoError(t, s.Module.Check(), s.Module.Name)
			}
			p, ok := u.UnitModule().Port("m_send_psn")
			require.True(t, ok)
			require.Equal(t, tc.psn, p.Width)
		})
	}
}

func TestPubLagWidth(t *testing.T) {
	require.Equal(t, goldenwindow.PubLag, 1<<window.PubLagW, "the ring slot width is log2 of golden's lag")
	require.Equal(t, 3, window.PubLagW)
}

func TestNewRejects(t *testing.T) {
	c := config.Default()
	c.Connections = window.MaxConns + 1
	_, err := window.New(c)
	require.ErrorContains(t, err, "at most 1024 connections")
	c = config.Default()
	c.Window.MDShift = 0
	_, err = window.New(c)
	require.ErrorContains(t, err, "window.md_shift")
}

func TestPackUnpack(t *testing.T) {
	fs := []window.Field{{Name: "a", Width: 1, Lo: 0}, {Name: "b", Width: 4, Lo: 1}}
	require.Equal(t, "  wire x_a = e[0:0];\n  wire [3:0] x_b = e[4:1];\n", window.Unpack(fs, "x", "e"))
	require.Equal(t, "{n_b, n_a}", window.Pack(fs, "n", "  "))
	c := config.Default()
	u, err := window.New(c)
	require.NoError(t, err)
	for _, g := range u.Groups {
		packed := u.PackEntry(g.Name, "n", "    ")
		for _, line := range strings.Split(packed, "\n") {
			require.LessOrEqual(t, len(line)+4, 100, "packed entry line too long: %q", line)
		}
	}
	require.Zero(t, u.GroupW("nope"), "an unknown group has no width (the Verilog then fails)")
}

// TestMDThreshold checks the constant the decrease's floor compares with against the rule
// itself for every window below 2^16 and every shift.
func TestMDThreshold(t *testing.T) {
	for _, floor := range []uint64{256, 512, 1024 + 37} {
		for shift := uint(1); shift <= 8; shift++ {
			th := window.MDThresholdForTest(floor, shift)
			for c := uint64(0); c < 1<<16; c++ {
				require.Equal(t, c-c>>shift < floor, c < th, "floor %d shift %d cwnd %d", floor, shift, c)
			}
		}
	}
}

// TestCSA checks the carry-save reduction's shape: how many terms each level count leaves (the
// rate cap's stages rely on 24 partial products leaving 4 after five levels) and the first
// compressor's wiring. Its arithmetic is checked by the window cosim's rate caps.
// TestBoothRecoding checks the arithmetic boothTerms renders, on numbers: per digit the
// selection of 0, m or 2m, complemented when negative, its 36-bit sign bit inverted and shifted,
// plus the negation bits and BoothConst, sum to m x t mod 2^58 (the RTL's form is checked bit
// for bit against golden by the window cosim's rate-cap scenario).
func TestBoothRecoding(t *testing.T) {
	const w, mask58, mask36 = window.RTTCapW, uint64(1)<<58 - 1, uint64(1)<<36 - 1
	rng := rand.New(rand.NewPCG(1, 2))
	cases := [][2]uint64{{0, 0}, {1<<34 - 1, 1<<w - 1}, {1, 1<<w - 1}, {1<<34 - 1, 0xAAAAAA}, {12345, 0x555555}}
	for range 20000 {
		cases = append(cases, [2]uint64{rng.Uint64() >> 30, rng.Uint64() >> 40})
	}
	for _, c := range cases {
		m, tt := c[0], c[1]
		bit := func(k int) uint64 {
			if k < 0 || k >= w {
				return 0
			}
			return tt >> k & 1
		}
		sum := window.BoothConst(w)
		for j := 0; j < window.BoothDigits(w); j++ {
			hi, mid, lo := bit(2*j+1), bit(2*j), bit(2*j-1)
			var sel uint64
			switch {
			case mid^lo == 1:
				sel = m
			case hi != mid && mid == lo:
				sel = m << 1
			}
			v := sel
			if hi == 1 {
				v = ^sel & mask36
				sum += 1 << (2 * j)
			}
			sum += (v ^ 1<<35) << (2 * j)
		}
		require.Equal(t, m*tt&mask58, sum&mask58, "m %#x t %#x", m, tt)
	}
}

func TestCSA(t *testing.T) {
	code, left := window.CSA("t", 16, []string{"a", "b", "c", "d", "e"}, 8)
	require.Len(t, left, 2)
	require.Contains(t, code, "wire [15:0] t_in0 = a;")
	require.Contains(t, code, "wire [15:0] t_l0_s0 = t_in0 ^ t_in1 ^ t_in2;")
	pp := make([]string, 24)
	for i := range pp {
		pp[i] = fmt.Sprintf("p%d", i)
	}
	for levels, want := range map[int]int{0: 24, 1: 16, 5: 4, 7: 2, 8: 2} {
		_, left := window.CSA("pp", 58, pp, levels)
		require.Len(t, left, want, "%d levels", levels)
	}
}
