package gen

import (
	"fmt"
	"regexp"
	"strings"
)

// CompareSlice is the width of the slices CompareSliced splits a compare into: a carry chain of
// 16 bits on an FPGA, where a 64-bit one is a single chain of 64 carries (about 12 ns through an
// iCE40's carry cells and the hops between its logic blocks).
const CompareSlice = 16

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CompareSliced renders the unsigned compare `a op b` of two width-bit signals (op is "<" or
// "<=") as compares of CompareSlice-bit slices, the most significant first: a is below b when
// its top slice is below b's, or equal and the rest is below. The slices' compares and
// equalities are side by side, so the depth is one slice's chain and the combining terms, not
// the whole width's chain. a and b must be plain signal names (they are sliced). Every slice
// starts a line indented by indent spaces, for the line-length rule of generated files.
func CompareSliced(a, op, b string, width, indent int) (string, error) {
	for _, n := range []string{a, b} {
		if !identifier.MatchString(n) {
			return "", fmt.Errorf("cmpSliced: %q is not a signal name (the operands are sliced)", n)
		}
	}
	if op != "<" && op != "<=" {
		return "", fmt.Errorf("cmpSliced: operator %q: want < or <=", op)
	}
	if width < 1 {
		return "", fmt.Errorf("cmpSliced: width %d", width)
	}
	if width <= CompareSlice {
		return fmt.Sprintf("(%s %s %s)", a, op, b), nil
	}
	var b2 strings.Builder
	sep := "\n" + strings.Repeat(" ", indent)
	b2.WriteString("(")
	closing := 1
	for hi := width - 1; hi >= 0; hi -= CompareSlice {
		lo := max(hi-CompareSlice+1, 0)
		x, y := fmt.Sprintf("%s[%d:%d]", a, hi, lo), fmt.Sprintf("%s[%d:%d]", b, hi, lo)
		if lo == 0 {
			fmt.Fprintf(&b2, "%s(%s %s %s)", sep, x, op, y)
			break
		}
		fmt.Fprintf(&b2, "%s(%s < %s) || (%s == %s) && (", sep, x, y, x, y)
		closing++
	}
	b2.WriteString(strings.Repeat(")", closing))
	return b2.String(), nil
}
