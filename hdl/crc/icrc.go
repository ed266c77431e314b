package crc

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/wire"
)

// LaneRule is the ICRC's input rule for one byte lane of a beat, per header variant (wire.Stacks
// order): Zero[v], the byte enters as zero (it is before the IP header); else Ones[v], the bits
// set to one (the variant fields: wire.ICRCMask); the other bits enter as the frame's.
type LaneRule struct {
	Lane int
	Pos  int // byte of the frame
	Zero [4]bool
	Ones [4]byte
}

// Raw says the byte enters the CRC as it is in variant v.
func (r LaneRule) Raw(v int) bool { return !r.Zero[v] && r.Ones[v] == 0 }

// EarlyRules applies the ICRC's input rule (golden/wire: the bytes before the IP header are not
// covered, so they enter as zeros behind a start value that zero bytes carry to 0xFFFFFFFF; the
// variant fields are set to ones by wire.ICRCMask) to the beats of b bytes that hold the
// Ethernet, IP and UDP headers of the longest stack: for each such beat, the lanes that differ
// from the frame's byte in some variant. The parser and the header builder both take their
// ICRC input from it, so that both follow the one rule.
func EarlyRules(b int) [][]LaneRule {
	end := wire.EthHeaderLen + wire.VLANTagLen + wire.IPv6HeaderLen + wire.UDPHeaderLen
	var beats [][]LaneRule
	for k := 0; k*b < end; k++ {
		var lanes []LaneRule
		for j := 0; j < b && k*b+j < end; j++ {
			r := LaneRule{Lane: j, Pos: k*b + j}
			raw := true
			for vi, s := range wire.Stacks() {
				rel := r.Pos - s.L3()
				if rel < 0 {
					r.Zero[vi] = true
				} else {
					r.Ones[vi] = wire.ICRCMask(s.IPv6, s.IPHeaderLen(), rel)
				}
				raw = raw && r.Raw(vi)
			}
			if !raw {
				lanes = append(lanes, r)
			}
		}
		beats = append(beats, lanes)
	}
	return beats
}

// Lane is one byte lane of a beat whose ICRC input differs from the frame's byte in some
// header variant: its position and, per variant (wire.Stacks order), the Verilog value that
// enters the CRC.
type Lane struct {
	Lane   int
	Pos    int // byte of the frame
	Hi, Lo int // its bits in the beat
	Zero   bool
	Ops    [4]string
}

// EarlyLanes renders EarlyRules as Verilog values over the lanes of the beat vector raw (the
// beat's data vector in the template that uses them).
func EarlyLanes(b int, raw string) [][]Lane {
	var beats [][]Lane
	for _, rules := range EarlyRules(b) {
		var lanes []Lane
		for _, r := range rules {
			l := Lane{Lane: r.Lane, Pos: r.Pos, Hi: 8*r.Lane + 7, Lo: 8 * r.Lane, Zero: true}
			in := fmt.Sprintf("%s[%d:%d]", raw, l.Hi, l.Lo)
			for vi := range l.Ops {
				switch m := r.Ones[vi]; {
				case r.Zero[vi]:
					l.Ops[vi] = "8'h00"
				case m == 0xFF:
					l.Ops[vi] = "8'hff"
				case m != 0:
					l.Ops[vi] = fmt.Sprintf("%s | 8'h%02x", in, m)
				default:
					l.Ops[vi] = in
				}
				l.Zero = l.Zero && r.Zero[vi]
			}
			lanes = append(lanes, l)
		}
		beats = append(beats, lanes)
	}
	return beats
}
