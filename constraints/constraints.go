// Package constraints holds mrgen's per-board constraint sources: the pin file of the board-top
// wrapper for each board with place-and-route (PCF for iCE40), embedded so the binary needs no
// data files, and the SDC clock constraint rendered from a target frequency.
//
// A pin file names roles, not final ports: clk, rst (renamed to the block's reset port by fpga),
// sin (the serial input chain) and dout[0..7] (the XOR-folded outputs).
package constraints

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.pcf
var pinFiles embed.FS

// Roles in a pin file.
const (
	RoleClock    = "clk"
	RoleReset    = "rst"
	RoleSerialIn = "sin"
	RoleOut      = "dout" // bits dout[0] .. dout[OutPins-1]
)

// OutPins is the number of folded output pins every pin file provides.
const OutPins = 8

// PinMap is a board's pin for each wrapper role.
type PinMap struct {
	Clock    string
	Reset    string
	SerialIn string
	Out      [OutPins]string
}

// ErrNoPinFile is wrapped by PinFile and Pins for a board with no pin file.
var ErrNoPinFile = errors.New("no pin file")

// PinBoards lists the boards that have a pin file, sorted.
func PinBoards() []string {
	ents, err := fs.Glob(pinFiles, "*.pcf")
	if err != nil { // only on a malformed pattern, which "*.pcf" is not
		return nil
	}
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = strings.TrimSuffix(e, ".pcf")
	}
	sort.Strings(out)
	return out
}

// PinFile returns the embedded pin file of board (constraints/BOARD.pcf).
func PinFile(board string) ([]byte, error) {
	b, err := pinFiles.ReadFile(board + ".pcf")
	if err != nil {
		return nil, fmt.Errorf("constraints: board %q: %w (boards with pins: %s)",
			board, ErrNoPinFile, strings.Join(PinBoards(), ", "))
	}
	return b, nil
}

// Pins parses board's pin file into a PinMap.
func Pins(board string) (PinMap, error) {
	b, err := PinFile(board)
	if err != nil {
		return PinMap{}, err
	}
	pm, err := ParsePCF(b)
	if err != nil {
		return PinMap{}, fmt.Errorf("constraints: %s.pcf: %w", board, err)
	}
	return pm, nil
}

var outRE = regexp.MustCompile(`^` + RoleOut + `\[(\d+)\]$`)

// ParsePCF reads `set_io NAME PIN` lines (comments after '#', options such as -nowarn or
// -pullup yes are skipped) and checks that every role has exactly one pin and no pin is used
// twice.
func ParsePCF(pcf []byte) (PinMap, error) {
	var pm PinMap
	seenRole := map[string]bool{}
	seenPin := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(pcf))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] != "set_io" {
			return PinMap{}, fmt.Errorf("line %d: unsupported command %q (want set_io)", n, f[0])
		}
		var args []string
		for i := 1; i < len(f); i++ {
			switch {
			case f[i] == "-pullup" || f[i] == "-pullup_resistor":
				i++ // skip the option's value
			case strings.HasPrefix(f[i], "-"):
			default:
				args = append(args, f[i])
			}
		}
		if len(args) != 2 {
			return PinMap{}, fmt.Errorf("line %d: want `set_io NAME PIN`, got %q", n, strings.TrimSpace(line))
		}
		role, pin := args[0], args[1]
		if seenRole[role] {
			return PinMap{}, fmt.Errorf("line %d: role %s assigned twice", n, role)
		}
		if other, ok := seenPin[pin]; ok {
			return PinMap{}, fmt.Errorf("line %d: pin %s used by both %s and %s", n, pin, other, role)
		}
		seenRole[role], seenPin[pin] = true, role
		switch role {
		case RoleClock:
			pm.Clock = pin
		case RoleReset:
			pm.Reset = pin
		case RoleSerialIn:
			pm.SerialIn = pin
		default:
			m := outRE.FindStringSubmatch(role)
			if m == nil {
				return PinMap{}, fmt.Errorf("line %d: unknown role %q (want %s, %s, %s or %s[0..%d])",
					n, role, RoleClock, RoleReset, RoleSerialIn, RoleOut, OutPins-1)
			}
			i, err := strconv.Atoi(m[1])
			if err != nil || i >= OutPins {
				return PinMap{}, fmt.Errorf("line %d: %s: index out of range 0..%d", n, role, OutPins-1)
			}
			pm.Out[i] = pin
		}
	}
	if err := sc.Err(); err != nil {
		return PinMap{}, fmt.Errorf("reading pin file: %w", err)
	}
	var missing []string
	for _, r := range []struct{ name, pin string }{
		{RoleClock, pm.Clock}, {RoleReset, pm.Reset}, {RoleSerialIn, pm.SerialIn},
	} {
		if r.pin == "" {
			missing = append(missing, r.name)
		}
	}
	for i, p := range pm.Out {
		if p == "" {
			missing = append(missing, fmt.Sprintf("%s[%d]", RoleOut, i))
		}
	}
	if len(missing) > 0 {
		return PinMap{}, fmt.Errorf("roles without a pin: %s", strings.Join(missing, ", "))
	}
	return pm, nil
}

// SDC renders the timing constraint of one clock port at targetMHz:
// `create_clock -name PORT -period NS [get_ports PORT]`, the period in ns to three decimals.
func SDC(clockPort string, targetMHz int, comment string) (string, error) {
	if targetMHz <= 0 {
		return "", fmt.Errorf("constraints: target clock %d MHz: must be > 0", targetMHz)
	}
	if clockPort == "" || strings.ContainsAny(clockPort, " \t\n[]{}") {
		return "", fmt.Errorf("constraints: clock port %q is not a plain port name", clockPort)
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(comment, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(&b, "# %s\n", l)
		}
	}
	fmt.Fprintf(&b, "create_clock -name %s -period %.3f [get_ports %s]\n",
		clockPort, 1000.0/float64(targetMHz), clockPort)
	return b.String(), nil
}
