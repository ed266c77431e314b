package qor

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A small NLDM reader for the known-circuit test: the tables of one timing arc of one pin of one
// cell of the liberty, interpolated (and extrapolated) bilinearly as an STA tool does.
type nldm struct {
	i1, i2 []float64
	v      [][]float64
}

var (
	numsRE  = regexp.MustCompile(`-?[\d.]+(?:e-?\d+)?`)
	tableRE = regexp.MustCompile(`(?s)\(([^)]*)\)\s*\{\s*index_1\s*\("([^"]*)"\);\s*(?:index_2\s*\("([^"]*)"\);\s*)?values\s*\((.*?)\);`)
)

func floats(s string) []float64 {
	var out []float64
	for _, m := range numsRE.FindAllString(s, -1) {
		f, err := strconv.ParseFloat(m, 64)
		if err == nil {
			out = append(out, f)
		}
	}
	return out
}

// block returns the text of the first group `head ... { ... }` after from in s.
func block(s, head string) string {
	i := strings.Index(s, head)
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], '{') + i
	depth := 0
	for k := j; k < len(s); k++ {
		switch s[k] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[i : k+1]
			}
		}
	}
	return ""
}

// arc finds, in a pin's text, the timing group whose attributes contain want, and its table kind.
func arc(t *testing.T, pin, want, kind string) nldm {
	t.Helper()
	rest := pin
	for {
		tg := block(rest, "timing()")
		require.NotEmpty(t, tg, "no timing group with %q", want)
		rest = rest[strings.Index(rest, tg)+len(tg):]
		if !strings.Contains(tg, want) {
			continue
		}
		tb := block(tg, kind+"(")
		require.NotEmpty(t, tb, "%s in %q", kind, want)
		m := tableRE.FindStringSubmatch(tb[len(kind):])
		require.NotNil(t, m, tb)
		n := nldm{i1: floats(m[2]), i2: floats(m[3])}
		vals := floats(m[4])
		w := len(n.i2)
		for r := 0; r < len(n.i1); r++ {
			n.v = append(n.v, vals[r*w:(r+1)*w])
		}
		return n
	}
}

func seg(xs []float64, x float64) int {
	i := 0
	for i < len(xs)-2 && x > xs[i+1] {
		i++
	}
	return i
}

func (n nldm) at(x1, x2 float64) float64 {
	i, j := seg(n.i1, x1), seg(n.i2, x2)
	fx := (x1 - n.i1[i]) / (n.i1[i+1] - n.i1[i])
	fy := (x2 - n.i2[j]) / (n.i2[j+1] - n.i2[j])
	return (1-fx)*(1-fy)*n.v[i][j] + fx*(1-fy)*n.v[i+1][j] + (1-fx)*fy*n.v[i][j+1] + fx*fy*n.v[i+1][j+1]
}

func pinCap(t *testing.T, cell, pin string) float64 {
	t.Helper()
	m := regexp.MustCompile(`capacitance : ([\d.]+);`).FindStringSubmatch(block(cell, "pin("+pin+")"))
	require.NotNil(t, m, pin)
	c, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return c
}

// predictInverterChain is what the liberty predicts for DFFPOSX1 -> n x INVX1 -> DFFPOSX1 with an
// ideal clock (slew 0) and no wires: the worst of the two edges of clock-to-Q, every inverter
// at its load and input slew, and the capture flip-flop's setup. It is period - slack.
func predictInverterChain(t *testing.T, lib string, n int) float64 {
	data, err := os.ReadFile(lib)
	require.NoError(t, err)
	s := string(data)
	dff, inv := block(s, "cell (DFFPOSX1)"), block(s, "cell (INVX1)")
	require.NotEmpty(t, dff)
	require.NotEmpty(t, inv)
	cInv, cD := pinCap(t, inv, "A"), pinCap(t, dff, "D")
	q := block(dff, "pin(Q)")
	y := block(inv, "pin(Y)")
	d := block(dff, "pin(D)")
	worst := 0.0
	for _, rise := range []bool{true, false} { // Q's edge
		edge := map[bool]string{true: "rise", false: "fall"}
		load := cInv
		if n == 0 {
			load = cD
		}
		at := arc(t, q, "rising_edge", "cell_"+edge[rise]).at(load, 0)
		slew := arc(t, q, "rising_edge", edge[rise]+"_transition").at(load, 0)
		r := rise
		for k := 0; k < n; k++ {
			load = cInv
			if k == n-1 {
				load = cD
			}
			r = !r // an inverter
			at += arc(t, y, `related_pin : "A"`, "cell_"+edge[r]).at(load, slew)
			slew = arc(t, y, `related_pin : "A"`, edge[r]+"_transition").at(load, slew)
		}
		setup := arc(t, d, "setup_rising", edge[r]+"_constraint").at(0, slew)
		worst = max(worst, at+setup)
	}
	return worst
}

func TestNLDMInterpolation(t *testing.T) {
	n := nldm{i1: []float64{0, 1}, i2: []float64{0, 2}, v: [][]float64{{0, 2}, {1, 3}}}
	for _, c := range []struct{ x1, x2, want float64 }{{0, 0, 0}, {1, 2, 3}, {0.5, 1, 1.5}, {2, 0, 2}, {-1, 0, -1}} {
		require.InDelta(t, c.want, n.at(c.x1, c.x2), 1e-9, fmt.Sprint(c))
	}
}
