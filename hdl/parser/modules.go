package parser

import (
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/crc"
	"github.com/mrgen/mrgen/hdl/firstset"
)

// in and out are hdl.In and hdl.Out, short for the port lists.
var in, out = hdl.In, hdl.Out

// Field is one field of the header descriptor: the port m_hdr_<Name>, and the check stage's
// wire d_<Name> that computes it.
type Field struct {
	Name  string
	Width int
	Doc   string
}

// descriptorFields lists the descriptor in golden/parser.Descriptor's order.
func descriptorFields(sackWidth int) []Field {
	return []Field{
		{"opcode", wire.OpcodeBits, "BTH opcode: 0x01 WRITE, 0x02 SEND, 0x10 ACK, 0x11 NAK, 0x12 ANNOUNCE"},
		{"flags", wire.FlagsBits, "BTH flags: FIRST 0x80, LAST 0x40, ACKREQ 0x20, RETX 0x10, INIT 0x08"},
		{"conn_id", wire.ConnIDBits, "destination connection"},
		{"path_id", wire.PathIDBits, "path (data) or acknowledged path (ACK/NAK)"},
		{"psn", wire.PSNBits, "PSN; ACK: the path's cumulative PSN"},
		{"stream_id", wire.StreamIDBits, "stream (0 in an ACK)"},
		{"msn", wire.MSNBits, "message sequence number (0 in an ACK)"},
		{"ipv6", 1, "carried over IPv6 (else IPv4)"},
		{"vlan", 1, "the frame had an 802.1Q tag"},
		{"ecn", wire.IPv4ECNBits, "IP ECN field (3 = congestion experienced)"},
		{"udp_src_port", wire.UDPPortBits, "UDP source port: the path's ECMP entropy"},
		{"timestamp", wire.TimestampBits, "WRITE/SEND/ANNOUNCE: send timestamp, ns"},
		{"msg_len", wire.MsgLenBits, "WRITE/SEND: message length, bytes"},
		{"rkey", wire.RKeyBits, "WRITE: remote key"},
		{"va", wire.VABits, "WRITE: virtual address of this packet's first payload byte"},
		{"offset", wire.MsgOffsetBits, "SEND: byte offset of the payload in the message"},
		{"payload_len", 16, "payload bytes on m_axis (0: no payload packet follows)"},
		{"ts_echo", wire.TimestampEchoBits, "ACK/NAK: timestamp echo"},
		{"ecn_echo", wire.ECNEchoBits, "ACK: CE-marked packets since the previous ACK"},
		{"rate_hint", wire.RateHintBits, "ACK: fair-share rate hint, 100 Mb/s units"},
		{"sack", sackWidth, "ACK: SACK bitmap, bit i = PSN psn+i"},
		{"nak_code", wire.NakCodeBits, "NAK: code 1..5"},
		{"rnr_delay", wire.RNRDelayBits, "NAK: RNR retry delay, us"},
	}
}

// KeepModule counts the leading kept lanes of a beat.
func (u *Unit) KeepModule() *hdl.Module {
	return &hdl.Module{
		Name:   "rx_parser_keep",
		Source: Source,
		Doc: fmt.Sprintf("Leading-ones count of a %d-bit tkeep as an explicit log2 tree (%d levels): "+
			"the number of bytes before the first null lane, %d when every lane is kept. "+
			"Combinational. A null lane ends the frame (docs/parser.md).", u.B, u.BW, u.B),
		Ports: []hdl.Port{
			in("keep", u.B, "tkeep of one beat"),
			out("full", 1, "every lane kept"),
			out("count", u.BW+1, "lanes kept before the first null lane"),
		},
	}
}

// ReasonVecBits is the width of the check vector the reason tree searches (bit r = check r
// failed; bit 0 and the bits above the last reason are zero), and ReasonVecLevels its log2.
const (
	ReasonVecBits   = 64
	ReasonVecLevels = 6
)

// firstSet is the drop-reason priority encoder over the check vector (hdl/firstset): the
// lowest failing check is the drop reason, exactly Decode's check order.
func (u *Unit) firstSet() (gen.Source, error) {
	return firstset.Source("rx_parser_first_set", ReasonVecBits, "Bit r of vec: check r failed; "+
		"the lowest failing check is the drop reason, exactly Decode's check order.")
}

// PayloadModule is the payload frame FIFO with its aligner.
func (u *Unit) PayloadModule() *hdl.Module {
	ports := append(u.Reset.Ports(),
		in("wr_valid", 1, "store one raw beat of the current frame's payload"),
		in("wr_open", 1, "the beat is its frame's first: the frame will send a verdict"),
		in("wr_data", u.W, "the beat, as received"),
		out("wr_space", 1, "room for every beat and verdict already on the way, and one more"),
		in("v_valid", 1, "verdict of the oldest frame that wrote beats and has none yet"),
		in("v_keep", 1, "1: the frame was accepted, emit its payload; 0: discard it"),
		in("v_beats", u.FifoAW+1, "raw beats the frame wrote"),
		in("v_shift", u.BW, "byte lane of the payload's first byte in its first raw beat"),
		in("v_tail", u.BW+1, "bytes in the payload's last output beat, 1..B"),
		in("v_flush", 1, "the last output beat needs no raw beat of its own"),
		out("m_axis_tdata", u.W, "payload, first byte in lane 0"),
		out("m_axis_tkeep", u.B, "all ones but on the last beat"),
		out("m_axis_tvalid", 1, "payload beat valid"),
		in("m_axis_tready", 1, "downstream takes the beat"),
		out("m_axis_tlast", 1, "last beat of a payload"),
	)
	return &hdl.Module{
		Name:   "rx_parser_payload",
		Source: Source,
		Doc: fmt.Sprintf("Payload frame FIFO of %d beats: raw beats are written as they arrive, before the "+
			"frame's verdict is known. Verdicts, with each frame's beat count and alignment, arrive "+
			"in frame order (one per frame that wrote beats) into a %d-entry queue; the read side "+
			"streams a kept frame's beats through a byte aligner (payload byte 0 to lane 0, ICRC "+
			"removed) and skips a discarded one. Nothing is read before its verdict.", u.FifoDepth, MetaDepth),
		Clock: "clk", Reset: u.Reset.Port,
		Ports: ports,
		Tables: []hdl.Table{
			// Read only at entries written cycles before (a frame's beats precede its verdict,
			// and the space flag keeps the writer off unread entries); a read not issued is
			// dropped.
			{Name: "fifo_mem", Depth: u.FifoDepth, Width: u.W, CollisionDontCare: true, Doc: "raw payload beats"},
			{Name: "meta_mem", Depth: MetaDepth, Width: u.MetaW(), Kind: hdl.RegFile,
				Doc: "per-frame verdicts {keep, beats, shift, tail, flush}, read as the frame is issued"},
		},
		II: 1,
	}
}

// ParserModule is the top.
func (u *Unit) ParserModule() *hdl.Module {
	ports := append(u.Reset.Ports(),
		in("s_axis_tdata", u.W, "frame bytes, byte 0 in lane 0 (tdata[7:0])"),
		in("s_axis_tkeep", u.B, "kept lanes; the first null lane ends the frame"),
		in("s_axis_tvalid", 1, "beat valid"),
		out("s_axis_tready", 1, fmt.Sprintf("beat accepted when valid and ready; low for %d cycles after reset", u.InitCycles())),
		in("s_axis_tlast", 1, "last beat of the frame"),
		out("m_hdr_valid", 1, "descriptor of an accepted frame"),
		in("m_hdr_ready", 1, "downstream takes the descriptor"),
	)
	for _, f := range u.Fields {
		ports = append(ports, out("m_hdr_"+f.Name, f.Width, f.Doc))
	}
	ports = append(ports,
		out("m_drop_valid", 1, "one-cycle pulse: a frame was dropped"),
		out("m_drop_reason", wire.DropReasonBits, "its reason, docs/wire-format.md section 13"),
		out("m_axis_tdata", u.W, "payload of accepted data packets, first byte in lane 0"),
		out("m_axis_tkeep", u.B, "payload lanes, all ones but on the last beat"),
		out("m_axis_tvalid", 1, "payload beat valid"),
		in("m_axis_tready", 1, "downstream takes the payload beat"),
		out("m_axis_tlast", 1, "last beat of one descriptor's payload"),
		in("cnt_rd_idx", 6, "outcome counter to read: 0 accepted, r dropped as reason r"),
		out("cnt_rd_data", CounterWidth, "frames with that outcome since reset (wraps), one cycle later"),
	)
	return &hdl.Module{
		Name:   Top,
		Source: Source,
		Doc: fmt.Sprintf("MetaRoCE receive header parser, %d-bit AXI-Stream: Ethernet with at most one "+
			"802.1Q tag, IPv4 (no options: a drop) or IPv6, UDP to port %d, the BTH and its "+
			"extension or ACK/NAK body, and the ICRC over the invariant fields. Each frame leaves "+
			"as a header descriptor (m_hdr_*) or a drop with its reason (m_drop_*), in frame "+
			"order, and is counted per outcome; an accepted data packet's payload follows on "+
			"m_axis, aligned to lane 0. One beat per cycle with no bubble between frames. The "+
			"latency is from the handshake of the frame's last beat to m_hdr_valid or "+
			"m_drop_valid.", u.W, u.Cfg.UDPDestPort),
		Clock: "clk", Reset: u.Reset.Port,
		Ports:   ports,
		Tables:  u.parserTables(),
		Latency: u.Latency,
		II:      1,
	}
}

// Bases returns the byte offset of a header ("l3", "udp", "bth", "body") in each variant, in
// variant order (wire.Stacks: untagged IPv4, untagged IPv6, tagged IPv4, tagged IPv6).
func (u *Unit) Bases(hdr string) ([]int, error) {
	var out []int
	for _, s := range wire.Stacks() {
		switch hdr {
		case "l3":
			out = append(out, s.L3())
		case "udp":
			out = append(out, s.UDP())
		case "bth":
			out = append(out, s.BTH())
		case "body":
			out = append(out, s.Body())
		default:
			return nil, fmt.Errorf("parser: unknown header %q", hdr)
		}
	}
	return out, nil
}

// Stacks are the four header variants, for the template.
func (u *Unit) Stacks() []wire.Stack { return wire.Stacks() }

// BE renders the big-endian n-byte field at byte offset off of vec (byte i in bits 8i+7:8i).
func BE(vec string, off, n int) string {
	parts := make([]string, n)
	for i := 0; i < n; i++ {
		parts[i] = fmt.Sprintf("%s[%d:%d]", vec, 8*(off+i)+7, 8*(off+i))
	}
	if n == 1 {
		return parts[0]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// CrcEarly returns, for each beat that holds bytes before the end of the longest
// Ethernet+IP+UDP stack, the lanes of stage r2's beat whose ICRC input differs from the received
// byte (hdl/crc.EarlyLanes, the rule of docs/wire-format.md section 11).
func (u *Unit) CrcEarly() [][]crc.Lane { return crc.EarlyLanes(u.B, "r2_data") }

// BE is the template's form of the package function BE (sprig arithmetic gives int64).
func (u *Unit) BE(vec string, off, n any) (string, error) {
	o, err := toInt(off)
	if err != nil {
		return "", err
	}
	k, err := toInt(n)
	if err != nil {
		return "", err
	}
	return BE(vec, o, k), nil
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	}
	return 0, fmt.Errorf("parser: template: not an integer: %T", v)
}

// ReasonVecBitsT is the template's view of ReasonVecBits.
func (u *Unit) ReasonVecBitsT() int { return ReasonVecBits }

// ReservedDataFlags is the 8-bit Verilog constant of the flag bits a data packet may not set
// (the complement of golden/wire's DataFlagsMask), so that the RTL follows the wire format.
func (u *Unit) ReservedDataFlags() string {
	return fmt.Sprintf("8'h%02x", uint8(^wire.DataFlagsMask))
}

// MetaDepth is the depth of the payload FIFO's per-frame verdict queue.
const MetaDepth = 16

// MetaW is the width of one verdict entry: keep, beats, shift, tail, flush.
func (u *Unit) MetaW() int { return 1 + (u.FifoAW + 1) + u.BW + (u.BW + 1) + 1 }

// MetaDepth is the template's view of the constant.
func (u *Unit) MetaDepth() int { return MetaDepth }

// Section is one header register of stage a: the bytes of one header, captured from whichever
// beat and lane carry them in the frame's variant, so that stage v reads every field at a fixed
// position with no multiplexer (and each register bit packs with its capture multiplexer).
type CapSection struct {
	Reg   string // register name
	Hdr   string // "eth" (bytes 12-13 and 16-17), "l3", "udp", "bth", "body"
	Bytes int
}

// CapSections lists the header registers.
func (u *Unit) CapSections() []CapSection {
	return []CapSection{
		{"a_eth", "eth", 4}, // the EtherType (bytes 12-13) and, behind a tag, the inner one (16-17)
		{"a_ip", "l3", wire.IPv4HeaderLen},
		{"a_udp", "udp", wire.UDPHeaderLen - 2},
		{"a_bth", "bth", wire.BTHLen},
		{"a_body", "body", u.BodyLen},
	}
}

// capSource is where byte c of a section comes from under a variant condition.
type capSource struct {
	cond       string
	beat, lane int
}

func (u *Unit) capSources(s CapSection, c int) ([]capSource, error) {
	if s.Hdr == "eth" {
		p := wire.EthTypeOff + c
		if c >= 2 {
			p += wire.VLANTagLen - 2
		}
		return []capSource{{"", p / u.B, p % u.B}}, nil
	}
	bases, err := u.Bases(s.Hdr)
	if err != nil {
		return nil, err
	}
	var out []capSource
	for v, b := range bases {
		p := b + c
		// A beat after the last EtherType byte reads the variant from the registers, which
		// hold it by then: the capture does not wait for the compare on this beat's bytes.
		now := "now_"
		if p/u.B > lastVariantByte/u.B {
			now = "reg_"
		}
		cond := fmt.Sprintf("%svar == 2'd%d", now, v)
		if s.Hdr == "l3" { // the IP header's offset depends on the tag only
			if v%2 == 1 {
				continue
			}
			cond = map[int]string{0: "!" + now + "vlan", 2: now + "vlan"}[v]
		}
		out = append(out, capSource{cond, p / u.B, p % u.B})
	}
	return out, nil
}

// RegVLANUsed reports whether a capture reads the registered tag bit (reg_vlan): an IP header
// byte on a beat after the variant is known. Not when every variant's IP header is in the
// variant's own beat (a 64-byte beat).
func (u *Unit) RegVLANUsed() (bool, error) {
	for _, s := range u.CapSections() {
		for c := 0; c < s.Bytes; c++ {
			srcs, err := u.capSources(s, c)
			if err != nil {
				return false, err
			}
			for _, src := range srcs {
				if strings.Contains(src.cond, "reg_vlan") {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// lastVariantByte is the last byte that decides the header variant: the inner EtherType behind
// a tag.
const lastVariantByte = wire.EthTypeOff + wire.VLANTagLen + 1

func (u *Unit) beatCond(src capSource) string {
	c := fmt.Sprintf("a_at[%d]", src.beat)
	if src.cond != "" {
		c += " && " + src.cond
	}
	return c
}

// CapBeats is one more than the last beat index any header byte is captured from: the width of
// stage a's one-hot beat register a_at (a_at[k] is a_beat == k).
func (u *Unit) CapBeats() (int, error) {
	n := 1
	for _, s := range u.CapSections() {
		for c := 0; c < s.Bytes; c++ {
			srcs, err := u.capSources(s, c)
			if err != nil {
				return 0, err
			}
			for _, src := range srcs {
				n = max(n, src.beat+1)
			}
		}
	}
	return n, nil
}

// CaptureLines are the stage-a register writes of every header byte (inside `if (fire)`).
func (u *Unit) CaptureLines() ([]string, error) {
	var out []string
	for _, s := range u.CapSections() {
		out = append(out, fmt.Sprintf("// %s: %d bytes (%s)", s.Reg, s.Bytes, s.Hdr))
		for c := 0; c < s.Bytes; c++ {
			srcs, err := u.capSources(s, c)
			if err != nil {
				return nil, err
			}
			for _, src := range srcs {
				out = append(out, fmt.Sprintf("if (%s) %s[%d:%d] <= s_axis_tdata[%d:%d];", u.beatCond(src),
					s.Reg, 8*c+7, 8*c, 8*src.lane+7, 8*src.lane))
			}
		}
	}
	return out, nil
}

// NowByte is byte c of a header register as it stands with this beat's write: the value stage
// a needs in the same cycle.
func (u *Unit) NowByte(reg string, c int) (string, error) {
	for _, s := range u.CapSections() {
		if s.Reg != reg {
			continue
		}
		srcs, err := u.capSources(s, c)
		if err != nil {
			return "", err
		}
		e := ""
		for _, src := range srcs {
			e += fmt.Sprintf("%s ? s_axis_tdata[%d:%d] :\n      ", u.beatCond(src), 8*src.lane+7, 8*src.lane)
		}
		return "(" + e + fmt.Sprintf("%s[%d:%d])", reg, 8*c+7, 8*c), nil
	}
	return "", fmt.Errorf("parser: no header register %q", reg)
}

// NowByteOf is byte c of a header register as it stands with this beat's write, in variant v:
// the lane that carries it in v when this beat does, else the register (stage a's per-variant
// decodes, which the variant's compare then chooses among).
func (u *Unit) NowByteOf(reg string, c, v int) (string, error) {
	for _, s := range u.CapSections() {
		if s.Reg != reg {
			continue
		}
		if s.Hdr == "eth" || s.Hdr == "l3" {
			return "", fmt.Errorf("parser: NowByteOf: %s is not captured per variant", reg)
		}
		srcs, err := u.capSources(s, c)
		if err != nil {
			return "", err
		}
		src := srcs[v] // one source per variant, in variant order
		return fmt.Sprintf("(a_at[%d] ? s_axis_tdata[%d:%d] : %s[%d:%d])", src.beat,
			8*src.lane+7, 8*src.lane, reg, 8*c+7, 8*c), nil
	}
	return "", fmt.Errorf("parser: no header register %q", reg)
}
