package crc

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/wire"
)

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

// EarlyLanes applies the ICRC's input rule (golden/wire: the bytes before the IP header are not
// covered, so they enter as zeros behind a start value that zero bytes carry to 0xFFFFFFFF; the
// variant fields are set to ones by wire.ICRCMask) to the beats of b bytes that hold the
// Ethernet, IP and UDP headers of the longest stack: for each such beat, the lanes that differ
// from the frame's byte in some variant. raw names the beat's data vector in the template that
// uses them. The parser and the header builder share it, so that both follow the one rule.
func EarlyLanes(b int, raw string) [][]Lane {
	end := wire.EthHeaderLen + wire.VLANTagLen + wire.IPv6HeaderLen + wire.UDPHeaderLen
	var beats [][]Lane
	for k := 0; k*b < end; k++ {
		var lanes []Lane
		for j := 0; j < b && k*b+j < end; j++ {
			p := k*b + j
			l := Lane{Lane: j, Pos: p, Hi: 8*j + 7, Lo: 8 * j}
			in := fmt.Sprintf("%s[%d:%d]", raw, l.Hi, l.Lo)
			allZero, allRaw := true, true
			for vi, s := range wire.Stacks() {
				op := in
				rel := p - s.L3()
				switch m := wire.ICRCMask(s.IPv6, s.IPHeaderLen(), rel); {
				case rel < 0:
					op = "8'h00"
				case m == 0xFF:
					op = "8'hff"
				case m != 0:
					op = fmt.Sprintf("%s | 8'h%02x", in, m)
				}
				l.Ops[vi] = op
				allZero = allZero && op == "8'h00"
				allRaw = allRaw && op == in
			}
			l.Zero = allZero
			if !allRaw {
				lanes = append(lanes, l)
			}
		}
		beats = append(beats, lanes)
	}
	return beats
}
