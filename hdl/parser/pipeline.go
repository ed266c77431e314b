package parser

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/crc"
)

// The parser's pipeline (docs/parser.md, "Micro-architecture"). Beats go through stage a (the
// port: header capture, frame length) and three beat stages: r1 (the frame's positions from its
// IP length, one add each), r2 (the ICRC's lane masks, the trailer bytes, payload writes) and r3
// (one CRC-32 step per beat). A frame's header is judged in the frame stages v (from the header
// registers, the cycle after its last beat), w (the checks that need its positions), x (the last
// compares, the check vector) and y (the priority tree); its ICRC leaves r3 two cycles after the
// last beat, runs through the unshift network, and meets the other checks at the join.
const (
	// beatStages are the cycles from a beat's handshake to the end of its CRC step (r1, r2, r3).
	beatStages = 3
	// outcomeDepth is the depth of the outcome queue between the join and the outputs.
	outcomeDepth = 16
)

// opClass numbers the opcodes by what follows the BTH: 0 WRITE, 1 SEND, 2 ACK, 3 anything else
// (NAK, ANNOUNCE and unknown opcodes: an 8-byte body).
type opClass int

const (
	clsWrite opClass = iota
	clsSend
	clsAck
	clsOther
)

func (u *Unit) bodyLen(c opClass) int {
	switch c {
	case clsWrite:
		return wire.WriteExtLen
	case clsSend:
		return wire.SendExtLen
	case clsAck:
		return u.Prm.AckLen()
	}
	return wire.NakLen
}

// UnshiftLatency is the latency of the ICRC's unshift network at this width.
func (u *Unit) UnshiftLatency() int { return crc.UnshiftLatency(u.B) }

// JoinDelay is the number of register stages that carry a frame's header verdict (ready at the
// end of stage y) to the join, where its ICRC verdict arrives from the unshift network.
func (u *Unit) JoinDelay() int { return u.UnshiftLatency() }

// pipelineLatency is the latency of the parser: from the handshake of a frame's last beat to
// its outcome on m_hdr_valid or m_drop_valid. The last beat's CRC step ends beatStages cycles
// after its handshake, the unshift network takes the CRC the cycle after and adds its latency,
// the join writes the outcome queue, and the output register shows the outcome.
func pipelineLatency(b int) int { return beatStages + crc.UnshiftLatency(b) + 3 }

// descSlots is the number of descriptor slots: a frame that may be accepted (at least
// wire.MinValidFrameLen bytes) reserves one when its last beat is taken and frees it when its
// descriptor is taken (or it is dropped), latency cycles later without backpressure; frames
// that long end at most once per hdl.MinFrameBeats cycles, so latency/beats of them hold a slot
// when the next one ends, and this many slots never stop the input at line rate.
func descSlots(w, latency int) int {
	per := hdl.MinFrameBeats(w)
	return latency/per + 1
}

// PosConst is one constant of stage r1's position table, per header variant v and opcode class.
type PosConst struct {
	Name  string
	Width int
	Vals  [4][4]int // [variant][class]
	Doc   string
}

// PosConsts are the constants stage r1 adds to the IP length (or uses as they are), per variant
// and opcode class, modulo 2^PosW: the datagram end is l3 + IP total length (IPv4) or l3 + 40 +
// payload length (IPv6), and every other position is a constant away from it.
func (u *Unit) PosConsts() []PosConst {
	mod := 1 << u.PosW
	var dg, udpSpan, bodyEnd, npay, plenM1 [4][4]int
	for v, s := range wire.Stacks() {
		kdg := s.L3()
		if s.IPv6 {
			kdg += wire.IPv6HeaderLen
		}
		for c := clsWrite; c <= clsOther; c++ {
			be := s.Body() + u.bodyLen(c)
			p0 := s.Body() + u.bodyLen(clsSend)
			if c == clsWrite {
				p0 = s.Body() + u.bodyLen(clsWrite)
			}
			dg[v][c] = kdg
			udpSpan[v][c] = (kdg - s.UDP() + mod) % mod
			bodyEnd[v][c] = be
			npay[v][c] = (kdg - wire.ICRCLen - be + mod) % mod
			plenM1[v][c] = (kdg - wire.ICRCLen - p0 - 1 + mod) % u.B
		}
	}
	sub := func(a [4][4]int, d int) [4][4]int {
		for v := range a {
			for c := range a[v] {
				a[v][c] = (a[v][c] - d + mod) % mod
			}
		}
		return a
	}
	return []PosConst{
		{"k_dg", u.PosW, dg, "datagram end - IP length"},
		{"k_icrc", u.PosW, sub(dg, wire.ICRCLen), "trailer - IP length"},
		{"k_icrc_m1", u.PosW, sub(dg, wire.ICRCLen+1), "last byte before the trailer - IP length"},
		{"k_tr1", u.PosW, sub(dg, wire.ICRCLen-1), "trailer byte 1 - IP length"},
		{"k_tr2", u.PosW, sub(dg, wire.ICRCLen-2), "trailer byte 2 - IP length"},
		{"k_tr3", u.PosW, sub(dg, wire.ICRCLen-3), "trailer byte 3 - IP length"},
		{"k_udp_span", u.PosW, udpSpan, "datagram end - UDP header - IP length"},
		{"k_body_end", u.PosW, bodyEnd, "end of the body (a constant)"},
		{"k_npay", u.PosW, npay, "payload length - IP length: trailer - body end"},
		{"k_npay_m1", u.PosW, sub(npay, 1), "payload length - 1 - IP length"},
		{"k_plen_m1", u.BW, plenM1, "payload length - 1 - IP length, modulo the beat (WRITE, SEND)"},
	}
}

// PayRange is, per variant, the IP lengths for which a WRITE (class 0) or SEND (class 1) has a
// payload of 1..MTU bytes: ip_len > Lo and ip_len <= Hi (Lo < 0: no lower bound).
type PayRange struct {
	Sel    string // the case label {variant, class}
	Lo, Hi int
	P0Hi   int // beat of the payload's first byte
	Shift  int // its lane
}

// PayRanges lists the WRITE and SEND rows of the payload table.
func (u *Unit) PayRanges() []PayRange {
	var out []PayRange
	for v, s := range wire.Stacks() {
		kicrc := s.L3() - wire.ICRCLen
		if s.IPv6 {
			kicrc += wire.IPv6HeaderLen
		}
		for _, c := range []opClass{clsWrite, clsSend} {
			p0 := s.Body() + u.bodyLen(c)
			out = append(out, PayRange{
				Sel: fmt.Sprintf("4'd%d", 4*v+int(c)),
				Lo:  p0 - kicrc, Hi: u.Cfg.MTU + p0 - kicrc,
				P0Hi: p0 / u.B, Shift: p0 % u.B,
			})
		}
	}
	return out
}

// PosTableLines renders stage r1's constant table as one assign per constant, a choice over
// pos_sel = {variant, class}. Assigns, not a case in an always block, on purpose: synthesis turns
// a case of constants into a ROM and may move the ROM's address register behind it, which puts
// the table in stage a's cycle.
func (u *Unit) PosTableLines() []string {
	var out []string
	for _, k := range u.PosConsts() {
		out = append(out, fmt.Sprintf("// %s: %s", k.Name, k.Doc), fmt.Sprintf("wire [%d:0] %s =", k.Width-1, k.Name))
		var terms []string
		for sel := 0; sel < 15; sel++ {
			terms = append(terms, fmt.Sprintf("pos_sel == 4'd%d ? %d'd%d :", sel, k.Width, k.Vals[sel/4][sel%4]))
		}
		terms = append(terms, fmt.Sprintf("%d'd%d;", k.Width, k.Vals[3][3]))
		for i := 0; i < len(terms); i += 2 {
			out = append(out, "    "+strings.Join(terms[i:min(i+2, len(terms))], " "))
		}
	}
	return out
}

// SlotField is one field of a descriptor slot: what the outputs need of a frame's header,
// captured in stage v and expanded into the m_hdr_* ports at the output.
type SlotField struct {
	Name  string
	Width int
	Expr  string // its value in stage v
}

// SlotFields lists a descriptor slot's fields.
func (u *Unit) SlotFields() []SlotField {
	return []SlotField{
		{"opcode", 8, "op"},
		{"flags", 8, "flags"},
		{"conn_id", 16, "conn_id"},
		{"path_id", 8, "path_id"},
		{"stream_id", 8, "stream_id"},
		{"psn", 32, "psn"},
		{"msn", 32, "msn"},
		{"ipv6", 1, "v_v6"},
		{"vlan", 1, "v_vlan"},
		{"ecn", 2, "v_v6 ? ip_h[13:12] : ip_h[9:8]"},
		{"udp_src_port", 16, BE("udp", 0, 2)},
		{"cls", 5, "{op_write, op_send, op_ack, op_nak, op_announce}"},
		{"body", 8 * u.BodyLen, "body"},
	}
}

// SlotWidth is the width of a descriptor slot.
func (u *Unit) SlotWidth() int {
	n := 0
	for _, f := range u.SlotFields() {
		n += f.Width
	}
	return n
}

// SlotPack is the Verilog concatenation of a slot's fields in stage v, first field highest.
func (u *Unit) SlotPack() string {
	var parts []string
	for _, f := range u.SlotFields() {
		parts = append(parts, f.Expr)
	}
	return "{" + strings.Join(parts, ",\n      ") + "}"
}

// SlotSlices are the output-side wires of a slot: name, width and bit range in the slot word.
func (u *Unit) SlotSlices() []SlotSlice {
	hi := u.SlotWidth() - 1
	var out []SlotSlice
	for _, f := range u.SlotFields() {
		out = append(out, SlotSlice{Name: f.Name, Width: f.Width, Hi: hi, Lo: hi - f.Width + 1})
		hi -= f.Width
	}
	return out
}

// HdrPort is one m_hdr_* output of the descriptor but payload_len (which comes with the
// outcome); the template computes each as h_<Port> from the slot's fields, zero where the
// frame's opcode does not carry it (golden/parser.Descriptor).
type HdrPort struct {
	Port  string // the output is m_hdr_<Port>
	Width int
}

// HdrPorts lists the descriptor's outputs, as the template's h_* wires compute them.
func (u *Unit) HdrPorts() []HdrPort {
	return []HdrPort{
		{"opcode", 8}, {"flags", 8}, {"conn_id", 16}, {"path_id", 8}, {"psn", 32},
		{"stream_id", 8}, {"msn", 32}, {"ipv6", 1}, {"vlan", 1}, {"ecn", 2},
		{"udp_src_port", 16}, {"timestamp", 32}, {"msg_len", 32}, {"rkey", 32}, {"va", 64},
		{"offset", 32}, {"ts_echo", 32}, {"ecn_echo", 16}, {"rate_hint", 16}, {"sack", u.S},
		{"nak_code", 8}, {"rnr_delay", 16},
	}
}

// SlotSlice locates one slot field in the slot word.
type SlotSlice struct {
	Name   string
	Width  int
	Hi, Lo int
}

// BadICRC is the drop code the join decides.
func (u *Unit) BadICRC() int { return int(wire.DropBadICRC) }

// payloadSlack is the payload FIFO's room beyond the longest payload and the verdict latency:
// the beats in stages r1 and r2, the one the input takes, and one for the registered space flag.
const payloadSlack = 5

// parserTables are the top's memories: the outcome counters, the outcome queue and, with more
// than one slot, the descriptor slots.
func (u *Unit) parserTables() []hdl.Table {
	t := []hdl.Table{
		{Name: "cnt_upd_mem", Depth: CounterSlots, Width: CounterWidth, Doc: "outcome counters, read for their update"},
		{Name: "cnt_rd_mem", Depth: CounterSlots, Width: CounterWidth, Doc: "the same counters, read by cnt_rd_idx"},
		{Name: "outcome_mem", Depth: outcomeDepth, Width: 23, Kind: hdl.RegFile,
			Doc: "outcome queue: {claimed a descriptor slot, reason, payload length}, in frame order"},
	}
	if u.DescSlots > 1 {
		t = append(t, hdl.Table{Name: "desc_mem", Depth: u.DescSlots, Width: u.SlotWidth(), Kind: hdl.RegFile,
			Doc: "descriptor slots, written in stage v, read at the output"})
	}
	return t
}

// DescPtrW is the width of a descriptor slot pointer.
func (u *Unit) DescPtrW() int { return max(1, bits.Len(uint(u.DescSlots-1))) }

// DescCountW is the width of the count of reserved descriptor slots (0..DescSlots).
func (u *Unit) DescCountW() int { return bits.Len(uint(u.DescSlots)) }

// DescNext renders the next value of a slot pointer (wrapping at DescSlots).
func (u *Unit) DescNext(ptr string) string {
	w := u.DescPtrW()
	if u.DescSlots == 1<<w {
		return fmt.Sprintf("%s + %d'd1", ptr, w)
	}
	return fmt.Sprintf("%s == %d'd%d ? %d'd0 : %s + %d'd1", ptr, w, u.DescSlots-1, w, ptr, w)
}

// DescNext2 renders a slot pointer two slots on (wrapping at DescSlots).
func (u *Unit) DescNext2(ptr string) string {
	w := u.DescPtrW()
	switch {
	case u.DescSlots == 2:
		return ptr // two slots on is the same slot
	case u.DescSlots == 1<<w:
		return fmt.Sprintf("%s + %d'd2", ptr, w)
	}
	return fmt.Sprintf("%s >= %d'd%d ? %s - %d'd%d : %s + %d'd2", ptr, w, u.DescSlots-2, ptr, w, u.DescSlots-2, ptr, w)
}

// MinValidT is the length of the shortest valid frame, for the template.
func (u *Unit) MinValidT() int { return wire.MinValidFrameLen }

// MinBeatsT is the beats of the shortest valid frame at this width.
func (u *Unit) MinBeatsT() int { return hdl.MinFrameBeats(u.W) }

// OutDepthT is the outcome queue's depth.
func (u *Unit) OutDepthT() int { return outcomeDepth }

// checkStage says in which stage each drop check is decided: "v" (header fields), "w" (the
// frame's length and positions), "x" (compares on w's sums) or "join" (the ICRC).
func checkStage(r wire.DropReason) string {
	switch r {
	case wire.DropFrameTooLong, wire.DropRunt,
		wire.DropIPLengthExceedsFrame, wire.DropFrameTrailingBytes, wire.DropTruncatedUDP,
		wire.DropUDPLengthMismatch, wire.DropTruncatedBTH, wire.DropTruncatedExtension,
		wire.DropTruncatedAck, wire.DropPayloadTooLong, wire.DropPayloadLengthInvalid:
		return "w"
	case wire.DropIPv4BadChecksum, wire.DropMessageBounds, wire.DropPositionFlagsMismatch:
		return "x"
	case wire.DropBadICRC:
		return "join"
	}
	return "v"
}

// CheckAssigns renders the assigns of a stage's check vector vec: bit r is chk_<reason r> when
// that check is decided in the stage, zero otherwise.
func (u *Unit) CheckAssigns(stage, vec string) []string {
	var out []string
	zeroFrom := -1
	flush := func(to int) {
		if zeroFrom >= 0 {
			if to == zeroFrom {
				out = append(out, fmt.Sprintf("assign %s[%d] = 1'b0;", vec, to))
			} else {
				out = append(out, fmt.Sprintf("assign %s[%d:%d] = %d'd0;", vec, to, zeroFrom, to-zeroFrom+1))
			}
			zeroFrom = -1
		}
	}
	for r := 0; r < ReasonVecBits; r++ {
		if r >= 1 && r < u.Outcomes && checkStage(wire.DropReason(r)) == stage {
			flush(r - 1)
			out = append(out, fmt.Sprintf("assign %s[%d] = chk_%s;", vec, r, wire.DropReason(r)))
			continue
		}
		if zeroFrom < 0 {
			zeroFrom = r
		}
	}
	flush(ReasonVecBits - 1)
	return out
}

// TokenField is one field a frame carries from stage y to the join.
type TokenField struct {
	Name  string
	Width int
}

// HoldFrameFields says the frame fields (the trailer, the payload length and the payload
// verdict's beats, shift and tail) stay in their stage-x registers until the join instead of
// travelling with the token. Only a frame whose last beat holds byte 58 or later (index
// TailBeat or more) loads them: a shorter one is a runt, whose outcome comes before bad_icrc
// and which writes no payload. Such frames are at least TailBeat+1 beats apart, and the join
// reads the fields JoinDelay+1 cycles after they load, so they hold long enough when
// TailBeat >= JoinDelay: at 64 and 128 bits.
func (u *Unit) HoldFrameFields() bool { return u.TailBeat >= u.JoinDelay() }

// TokenFields are the stage-y registers of the token (the rest of it is computed in stage y):
// with HoldFrameFields, whether the frame loaded the held fields (long) instead of them.
func (u *Unit) TokenFields() []TokenField {
	if u.HoldFrameFields() {
		return []TokenField{{"claim", 1}, {"long", 1}}
	}
	return []TokenField{
		{"claim", 1}, {"tr", 32}, {"pay_len", 16},
		{"pbeats", u.FifoAW + 1}, {"pshift", u.BW}, {"ptail", u.BW + 1},
	}
}

// JoinFields are the token's fields in stages j1..jN: the header verdict and TokenFields.
func (u *Unit) JoinFields() []TokenField {
	return append([]TokenField{{"any", 1}, {"early", 1}, {"first", 6}, {"pflush", 1}}, u.TokenFields()...)
}
