package deparser

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/crc"
)

// in and out are hdl.In and hdl.Out, short for the port lists.
var in, out = hdl.In, hdl.Out

// Field is one field of the header descriptor: the input port s_hdr_<Name>. The header's
// fields go straight from the ports into the header register when the descriptor is taken
// (HeaderLines); CsumRegs are the few also kept for the IPv4 header checksum.
type Field struct {
	Name  string
	Width int
	Doc   string
}

// descriptorFields lists the descriptor: every field of wire.Packet that Encode does not compute.
func descriptorFields(sackWidth int) []Field {
	return []Field{
		{"dst_mac", wire.MACBits, "Ethernet destination MAC, first byte on the wire in bits 47:40"},
		{"src_mac", wire.MACBits, "Ethernet source MAC"},
		{"vlan", 1, "insert an 802.1Q tag"},
		{"vlan_pcp", wire.VLANPCPBits, "tag priority code point"},
		{"vlan_dei", wire.VLANDEIBits, "tag drop eligible indicator"},
		{"vlan_vid", wire.VLANVIDBits, "tag VLAN identifier"},
		{"ipv6", 1, "IPv6 (else IPv4)"},
		{"ip_src", wire.IPv6AddrBits, "source address, byte 0 in bits 127:120 (IPv4: bits 127:96, as wire's Src[:4])"},
		{"ip_dst", wire.IPv6AddrBits, "destination address, same layout"},
		{"dscp", wire.IPv4DSCPBits, "IP DSCP (IPv6 traffic class bits 7..2)"},
		{"ecn", wire.IPv4ECNBits, "IP ECN field"},
		{"ttl", wire.IPv4TTLBits, "IPv4 TTL or IPv6 hop limit"},
		{"flow_label", wire.IPv6FlowLabelBits, "IPv6 flow label (IPv4: unused)"},
		{"ip_id", wire.IPv4IDBits, "IPv4 identification (IPv6: unused)"},
		{"ip_df", 1, "IPv4 don't-fragment flag (IPv6: unused)"},
		{"udp_src_port", wire.UDPPortBits, "UDP source port: the path's ECMP entropy"},
		{"udp_checksum", wire.UDPChecksumBits, "UDP checksum, carried verbatim (0: none)"},
		{"opcode", wire.OpcodeBits, "BTH opcode (the body classes' opcodes)"},
		{"flags", wire.FlagsBits, "BTH flags"},
		{"conn_id", wire.ConnIDBits, "BTH connection id"},
		{"path_id", wire.PathIDBits, "BTH path id"},
		{"stream_id", wire.StreamIDBits, "BTH stream id"},
		{"psn", wire.PSNBits, "BTH PSN (ACK: cumulative PSN)"},
		{"msn", wire.MSNBits, "BTH message sequence number"},
		{"timestamp", wire.TimestampBits, "WRITE/SEND/ANNOUNCE: send timestamp"},
		{"msg_len", wire.MsgLenBits, "WRITE/SEND: message length"},
		{"rkey", wire.RKeyBits, "WRITE: remote key"},
		{"va", wire.VABits, "WRITE: virtual address of this packet's first payload byte"},
		{"offset", wire.MsgOffsetBits, "SEND: byte offset of the payload in the message"},
		{"ts_echo", wire.TimestampEchoBits, "ACK/NAK: timestamp echo"},
		{"ecn_echo", wire.ECNEchoBits, "ACK: ECN-echo count"},
		{"rate_hint", wire.RateHintBits, "ACK: rate hint"},
		{"sack", sackWidth, "ACK: SACK bitmap, bit i = PSN psn+i (wire bit order)"},
		{"nak_code", wire.NakCodeBits, "NAK: code"},
		{"rnr_delay", wire.RNRDelayBits, "NAK: RNR retry delay"},
		{"payload_len", PayloadLenBits, "WRITE/SEND: payload bytes on s_axis (ACK/NAK: ignored, 0)"},
	}
}

// FrameReg is a frame register of descriptor fields that stage e uses after the descriptor is
// taken: e_<Name>, loaded from From.
type FrameReg struct {
	Name  string
	Width int
	From  string
}

// FrameRegs are the descriptor fields stage e needs after the descriptor is taken (the rest of
// the header is in the header register by then): the 802.1Q tag's TCI, which the tagged beats
// insert, and the fields the IPv4 header checksum sums, the addresses' IPv4 part only (wire's
// Src[:4], bits 127:96).
func (u *Unit) FrameRegs() []FrameReg {
	top := fmt.Sprintf("[%d:%d]", wire.IPv6AddrBits-1, wire.IPv6AddrBits-wire.IPv4AddrBits)
	return []FrameReg{
		{"tci", 16, "{s_hdr_vlan_pcp, s_hdr_vlan_dei, s_hdr_vlan_vid}"},
		{"dscp", wire.IPv4DSCPBits, "s_hdr_dscp"},
		{"ecn", wire.IPv4ECNBits, "s_hdr_ecn"},
		{"ttl", wire.IPv4TTLBits, "s_hdr_ttl"},
		{"ip_id", wire.IPv4IDBits, "s_hdr_ip_id"},
		{"ip_df", 1, "s_hdr_ip_df"},
		{"ip4_src", wire.IPv4AddrBits, "s_hdr_ip_src" + top},
		{"ip4_dst", wire.IPv4AddrBits, "s_hdr_ip_dst" + top},
	}
}

// DeparserModule is the top.
func (u *Unit) DeparserModule() *hdl.Module {
	ports := append(u.Reset.Ports(),
		in("s_hdr_valid", 1, "descriptor valid: one per frame"),
		out("s_hdr_ready", 1, "descriptor taken when valid and ready"),
	)
	for _, f := range u.Fields {
		ports = append(ports, in("s_hdr_"+f.Name, f.Width, f.Doc))
	}
	ports = append(ports,
		in("s_axis_tdata", u.W, "payload, first byte in lane 0 (tdata[7:0])"),
		in("s_axis_tkeep", u.B, "all ones but on a payload's last beat: its first ((len-1) mod B)+1 lanes"),
		in("s_axis_tvalid", 1, "payload beat valid"),
		out("s_axis_tready", 1, "payload beat taken when valid and ready"),
		in("s_axis_tlast", 1, "last beat of one descriptor's payload"),
		out("m_axis_tdata", u.W, "frame, byte 0 in lane 0"),
		out("m_axis_tkeep", u.B, "all ones but on a frame's last beat"),
		out("m_axis_tvalid", 1, "frame beat valid"),
		in("m_axis_tready", 1, "downstream takes the beat"),
		out("m_axis_tlast", 1, "last beat of a frame"),
		out("m_axis_tuser", 1, "on a last beat: the frame's payload length mismatched (ICRC inverted)"),
		out("err_len_count", CounterWidth, "frames whose payload mismatched the descriptor (wraps)"),
	)
	return &hdl.Module{
		Name:   Top,
		Source: Source,
		Doc: fmt.Sprintf("MetaRoCE transmit header builder, %d-bit AXI-Stream: from a header descriptor "+
			"(s_hdr_*) and the payload (s_axis, WRITE/SEND only) it emits the complete frame on m_axis, "+
			"byte for byte golden/wire.Encode: Ethernet with an optional 802.1Q tag, IPv4 (with its "+
			"length and header checksum) or IPv6, UDP to port %d with the UDP length, the BTH, the "+
			"opcode's extension or ACK/NAK body, the payload realigned behind the header, and the "+
			"ICRC. One beat per cycle whenever the payload keeps up, with no bubble between frames. "+
			"The latency is from a descriptor's handshake (no frame in progress) to its first beat.",
			u.W, u.Cfg.UDPDestPort),
		Clock: "clk", Reset: u.Reset.Port,
		Ports:   ports,
		Latency: Latency(u.W),
		II:      1,
	}
}

// BodyClass is one shape of what follows the BTH: an opcode and its extension or body. The
// layouts are the four Ethernet/IP variants v = {vlan, ipv6} times the classes; layout
// v*len(Classes) + o is bit of the one-hot layout l_vo. The last class is also the
// shape of any opcode not listed (the descriptor must not carry one).
type BodyClass struct {
	Op    wire.Opcode
	Len   int
	Data  bool     // WRITE/SEND: payload_len bytes of payload follow
	Bytes []string // the body, byte by byte, as Verilog expressions over the descriptor's ports
}

// Classes lists the body classes in their index order (WRITE, SEND, ACK, NAK).
func (u *Unit) Classes() []BodyClass {
	var ack []string
	ack = append(ack, beBytes("s_hdr_ts_echo", 32)...)
	ack = append(ack, beBytes("s_hdr_ecn_echo", 16)...)
	ack = append(ack, beBytes("s_hdr_rate_hint", 16)...)
	// The bitmap is a bit array: byte k holds bits 8k..8k+7, bit 8k in its LSB.
	for k := 0; k < u.S/8; k++ {
		ack = append(ack, fmt.Sprintf("s_hdr_sack[%d:%d]", 8*k+7, 8*k))
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	return []BodyClass{
		{wire.OpWrite, wire.WriteExtLen, true, cat(beBytes("s_hdr_timestamp", 32), beBytes("s_hdr_msg_len", 32),
			beBytes("s_hdr_rkey", 32), beBytes("s_hdr_va", 64))},
		{wire.OpSend, wire.SendExtLen, true, cat(beBytes("s_hdr_timestamp", 32), beBytes("s_hdr_msg_len", 32),
			beBytes("s_hdr_offset", 32))},
		{wire.OpAck, u.Prm.AckLen(), false, ack},
		{wire.OpAnnounce, wire.AnnounceLen, false, cat(beBytes("s_hdr_timestamp", 32), []string{"8'h00", "8'h00", "8'h00", "8'h00"})},
		{wire.OpNak, wire.NakLen, false, cat([]string{"s_hdr_nak_code", "8'h00"}, beBytes("s_hdr_rnr_delay", 16),
			beBytes("s_hdr_ts_echo", 32))},
	}
}

// NClasses is the number of body classes; Layouts the number of layouts (4 variants each).
func (u *Unit) NClasses() int { return len(u.Classes()) }

// Layouts is the number of header layouts: four Ethernet/IP variants per body class.
func (u *Unit) Layouts() int { return 4 * u.NClasses() }

// ClassW is the width of a class index; LayoutW the width of a layout index.
func (u *Unit) ClassW() int { return max(1, bits.Len(uint(u.NClasses()-1))) }

// LayoutW is the width of a layout index.
func (u *Unit) LayoutW() int { return bits.Len(uint(u.Layouts() - 1)) }

// OpHex renders a class's opcode for the template.
func (c BodyClass) OpHex() string { return hex8(int(c.Op)) }

// hex8 renders a byte constant.
func hex8(v int) string { return fmt.Sprintf("8'h%02x", v&0xff) }

// beBytes are the byte slices of an n-bit register, most significant first (network order).
func beBytes(reg string, n int) []string { return beBytesFrom(reg, n-1, n) }

// beBytesFrom are the byte slices of the n bits of reg whose top bit is hi, most significant
// first.
func beBytesFrom(reg string, hi, n int) []string {
	out := make([]string, n/8)
	for i := range out {
		top := hi - 8*i
		out[i] = fmt.Sprintf("%s[%d:%d]", reg, top, top-7)
	}
	return out
}

// layoutBytes is the header of one layout, byte by byte, as Verilog expressions over the
// descriptor's ports and the frame registers of its lengths (e_*, lateByte): exactly the bytes
// golden/wire.Encode writes before the payload.
func (u *Unit) layoutBytes(vlan, v6 bool, cls BodyClass) ([]string, error) {
	var b []string
	add := func(x ...string) { b = append(b, x...) }
	at := func(what string, want int) error {
		if len(b) != want {
			return fmt.Errorf("deparser: layout (vlan %v, ipv6 %v, %s): %s at byte %d, want %d", vlan, v6, cls.Op, what, len(b), want)
		}
		return nil
	}
	add(beBytes("s_hdr_dst_mac", wire.MACBits)...)
	add(beBytes("s_hdr_src_mac", wire.MACBits)...)
	if err := at("EtherType", wire.EthTypeOff); err != nil {
		return nil, err
	}
	st := wire.Stack{VLAN: vlan, IPv6: v6}
	l3 := st.L3()
	if vlan {
		add(hex8(wire.EtherTypeVLAN>>8), hex8(wire.EtherTypeVLAN),
			"{s_hdr_vlan_pcp, s_hdr_vlan_dei, s_hdr_vlan_vid[11:8]}", "s_hdr_vlan_vid[7:0]")
	}
	et := wire.EtherTypeIPv4
	if v6 {
		et = wire.EtherTypeIPv6
	}
	add(hex8(et>>8), hex8(et))
	if err := at("IP header", l3); err != nil {
		return nil, err
	}
	if !v6 {
		add(hex8(4<<wire.IPv4IHLBits|wire.IPv4IHL), "{s_hdr_dscp, s_hdr_ecn}", "e_ip4_len[15:8]", "e_ip4_len[7:0]",
			"s_hdr_ip_id[15:8]", "s_hdr_ip_id[7:0]", "{1'b0, s_hdr_ip_df, 6'd0}", "8'h00", "s_hdr_ttl", hex8(wire.IPProtocolUDP),
			"8'h00", "8'h00") // the checksum: written at the output (CsumLanes)
		// The IPv4 address is the first four bytes of the 16-byte field (wire's Src[:4]).
		add(beBytesFrom("s_hdr_ip_src", wire.IPv6AddrBits-1, wire.IPv4AddrBits)...)
		add(beBytesFrom("s_hdr_ip_dst", wire.IPv6AddrBits-1, wire.IPv4AddrBits)...)
	} else {
		add("{4'h6, s_hdr_dscp[5:2]}", "{s_hdr_dscp[1:0], s_hdr_ecn, s_hdr_flow_label[19:16]}", "s_hdr_flow_label[15:8]",
			"s_hdr_flow_label[7:0]", "e_udp_len[15:8]", "e_udp_len[7:0]", hex8(wire.IPProtocolUDP), "s_hdr_ttl")
		add(beBytes("s_hdr_ip_src", 128)...)
		add(beBytes("s_hdr_ip_dst", 128)...)
	}
	udp := st.UDP()
	if err := at("UDP header", udp); err != nil {
		return nil, err
	}
	add(beBytes("s_hdr_udp_src_port", 16)...)
	add(hex8(int(u.Prm.UDPDestPort)>>8), hex8(int(u.Prm.UDPDestPort)))
	add("e_udp_len[15:8]", "e_udp_len[7:0]")
	add(beBytes("s_hdr_udp_checksum", 16)...)
	add("s_hdr_opcode", "s_hdr_flags")
	add(beBytes("s_hdr_conn_id", 16)...)
	add("s_hdr_path_id", "s_hdr_stream_id", hex8(wire.BTHVersion), "8'h00")
	add(beBytes("s_hdr_psn", 32)...)
	add(beBytes("s_hdr_msn", 32)...)
	bodyAt := udp + wire.UDPHeaderLen + wire.BTHLen
	if err := at("body", bodyAt); err != nil {
		return nil, err
	}
	add(cls.Bytes...)
	if err := at("payload", bodyAt+cls.Len); err != nil {
		return nil, err
	}
	return b, nil
}

// HdrLen is the header length of layout vo = v*NClasses + o, for the template's table.
func (u *Unit) HdrLen(vo int) int {
	cls := u.Classes()
	return wire.Stacks()[vo/len(cls)].Body() + cls[vo%len(cls)].Len
}

// HdrChoice is one source of a header byte: the layouts (mask over l_vo) that take it.
type HdrChoice struct {
	Mask uint64
	Expr string
}

// HdrByte is one byte of the header vector: its position and its sources. A layout in none of
// the masks ends its header before the byte (the payload or the ICRC takes its lane): the byte
// is zero there.
type HdrByte struct {
	Pos     int
	Hi, Lo  int
	Choices []HdrChoice
}

// HeaderBytes builds the header vector's multiplexers: for every byte position, the distinct
// expressions the layouts put there. The vector holds every layout untagged: a tagged layout
// takes its untagged twin's bytes (the template inserts the tag at byte EthTypeOff as the beats
// go out; TestTaggedLayoutIsTheUntaggedWithTheTag), so its mask bit joins the twin's.
func (u *Unit) HeaderBytes() ([]HdrByte, error) {
	cls := u.Classes()
	n := len(cls)
	layouts := make([][]string, 4*n)
	for vo := range layouts {
		vlan := vo/n&2 != 0
		b, err := u.layoutBytes(false, vo/n&1 != 0, cls[vo%n])
		if err != nil {
			return nil, err
		}
		want := u.HdrLen(vo)
		if vlan {
			want -= wire.VLANTagLen
		}
		if len(b) != want {
			return nil, fmt.Errorf("deparser: layout %d: %d bytes untagged, want %d", vo, len(b), want)
		}
		layouts[vo] = b
	}
	var out []HdrByte
	for p := 0; p < u.HdrBeats*u.B; p++ {
		hb := HdrByte{Pos: p, Hi: 8*p + 7, Lo: 8 * p}
		for vo := range layouts {
			if p >= len(layouts[vo]) {
				continue
			}
			e := layouts[vo][p]
			found := false
			for i := range hb.Choices {
				if hb.Choices[i].Expr == e {
					hb.Choices[i].Mask |= 1 << vo
					found = true
				}
			}
			if !found {
				hb.Choices = append(hb.Choices, HdrChoice{Mask: 1 << vo, Expr: e})
			}
		}
		out = append(out, hb)
	}
	return out, nil
}

// lateByte says a header byte's expression is a frame register (the lengths, e_*): it is
// computed from the descriptor with an adder, so it joins the header vector after the register,
// in the late vector, instead of in front of it.
func lateByte(expr string) bool { return strings.HasPrefix(expr, "e_") }

// HeaderLines renders the next header vector's assignments, from the descriptor's ports: each
// byte the OR of its sources, each ANDed with its layouts' select, a register of stage p
// (p_sel[i] is set when the descriptor's layout is in SelMasks(false)[i]; the layout is one-hot,
// so at most one term is live; a zero constant and a late byte are no term). A byte with one
// source that every layout reaching it takes is that source alone (the layouts that do not
// reach it don't care).
func (u *Unit) HeaderLines() ([]string, error) {
	return u.selectedLines("  assign hb_n", false, "p_sel")
}

// LateLines renders the late vector's nonzero bytes (the frame's lengths, from their frame
// registers, selected by the frame's registered selects e_lsel, SelMasks(true)), as statements
// of an always block.
func (u *Unit) LateLines() ([]string, error) {
	return u.selectedLines("    hl", true, "e_lsel")
}

// selectedLines renders headerLines with the select of mask m the bit of reg at m's index in
// SelMasks(late).
func (u *Unit) selectedLines(lhsPrefix string, late bool, reg string) ([]string, error) {
	masks, err := u.SelMasks(late)
	if err != nil {
		return nil, err
	}
	index := make(map[uint64]int, len(masks))
	for i, m := range masks {
		index[m] = i
	}
	return u.headerLines(lhsPrefix, late, func(m uint64) string { return fmt.Sprintf("%s[%d]", reg, index[m]) })
}

// SelMasks lists, once each, the layout sets (masks over the one-hot layout) that select a
// source of a header byte: of the header vector in front of it (late false; stage p registers
// one select per set, p_sel) or of the late vector (late true; stage p decodes them into p_lsel,
// kept with the frame in e_lsel).
func (u *Unit) SelMasks(late bool) ([]uint64, error) {
	bytes, err := u.HeaderBytes()
	if err != nil {
		return nil, err
	}
	var masks []uint64
	seen := map[uint64]bool{}
	for _, hb := range bytes {
		for _, c := range hb.Choices {
			if len(hb.Choices) == 1 || c.Expr == "8'h00" || lateByte(c.Expr) != late || seen[c.Mask] {
				continue
			}
			seen[c.Mask] = true
			masks = append(masks, c.Mask)
		}
	}
	if len(masks) == 0 {
		return nil, fmt.Errorf("deparser: no header byte has two sources (late %v)", late)
	}
	return masks, nil
}

// SelLines renders stage p's select registers (reg, over SelMasks(late)) from the decoded
// layout l_vo, as statements of an always block.
func (u *Unit) SelLines(late bool, reg string) ([]string, error) {
	masks, err := u.SelMasks(late)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(masks))
	for i, m := range masks {
		out[i] = fmt.Sprintf("    %s[%d] <= %s;", reg, i, u.maskOf("l_vo", m))
	}
	return out, nil
}

// maskOf is the Verilog test that the one-hot layout sel is in the set mask.
func (u *Unit) maskOf(sel string, mask uint64) string {
	return fmt.Sprintf("|(%s & %d'h%0*x)", sel, u.Layouts(), (u.Layouts()+3)/4, mask)
}

// headerLines renders one AND-OR per header byte over the sources that are late (or not), each
// source ANDed with sel of its layouts' mask. The late vector leaves its zero bytes out.
func (u *Unit) headerLines(lhsPrefix string, late bool, sel func(uint64) string) ([]string, error) {
	bytes, err := u.HeaderBytes()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, hb := range bytes {
		lhs := fmt.Sprintf("%s[%d:%d] =", lhsPrefix, hb.Hi, hb.Lo)
		var terms []string
		for _, c := range hb.Choices {
			if c.Expr == "8'h00" || lateByte(c.Expr) != late {
				continue
			}
			if len(hb.Choices) == 1 {
				terms = append(terms, c.Expr)
				break
			}
			terms = append(terms, fmt.Sprintf("({8{%s}} & %s)", sel(c.Mask), c.Expr))
		}
		switch {
		case len(terms) == 0 && late:
		case len(terms) == 0:
			out = append(out, fmt.Sprintf("%s 8'h00;  // byte %d", lhs, hb.Pos))
		case len(terms) == 1:
			out = append(out, fmt.Sprintf("%s %s;  // byte %d", lhs, terms[0], hb.Pos))
		default:
			out = append(out, fmt.Sprintf("%s  // byte %d\n      %s;", lhs, hb.Pos, strings.Join(terms, " |\n      ")))
		}
	}
	return out, nil
}

// TPID is the 802.1Q tag's first half, as a 16-bit Verilog constant.
func (u *Unit) TPID() string { return fmt.Sprintf("16'h%04x", wire.EtherTypeVLAN) }

// TagAt is the first byte of the 802.1Q tag in a tagged frame.
func (u *Unit) TagAt() int { return wire.EthTypeOff }

// TagEnd is the first byte after the tag.
func (u *Unit) TagEnd() int { return wire.EthTypeOff + wire.VLANTagLen }

// CrcMaskLines renders the ICRC's input rule (hdl/crc.EarlyRules, the rule of
// docs/wire-format.md section 11, shared with the parser) as statements of an always block that
// set the beat's CRC controls from the one-hot beat e_kh and the variant e_var: e_ck, the bits
// that enter as the frame's (zero where a byte enters as zero or a variant bit as one), and
// e_c1, the bits set to one. Stage a registers them, so the CRC's input is one gate per bit:
// (a_data & a_ck) | a_c1.
func (u *Unit) CrcMaskLines() []string {
	var out []string
	for k, rules := range crc.EarlyRules(u.B) {
		if len(rules) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("    if (e_kh[%d]) begin", k), "      case (e_var)")
		for v := range 4 {
			var set []string
			for _, r := range rules {
				hi, lo := 8*r.Lane+7, 8*r.Lane
				switch {
				case r.Zero[v]:
					set = append(set, fmt.Sprintf("          e_ck[%d:%d] = 8'h00;  // byte %d: before the IP header", hi, lo, r.Pos))
				case r.Ones[v] != 0:
					set = append(set, fmt.Sprintf("          e_ck[%d:%d] = %s;  // byte %d: variant bits", hi, lo, hex8(int(^r.Ones[v])), r.Pos),
						fmt.Sprintf("          e_c1[%d:%d] = %s;", hi, lo, hex8(int(r.Ones[v]))))
				}
			}
			if len(set) == 0 {
				continue
			}
			out = append(out, fmt.Sprintf("        2'd%d: begin", v))
			out = append(out, set...)
			out = append(out, "        end")
		}
		out = append(out, "        default: ;", "      endcase", "    end")
	}
	return out
}

// Hex32 renders a 32-bit constant for the template.
func (u *Unit) Hex32(v uint32) string { return fmt.Sprintf("32'h%08x", v) }

// VerIHL and ProtoUDP are byte constants of the wire format, for the template.
func (u *Unit) VerIHL() string   { return hex8(4<<wire.IPv4IHLBits | wire.IPv4IHL) }
func (u *Unit) ProtoUDP() string { return hex8(wire.IPProtocolUDP) }

// FixedUDPLen is the part of the UDP length that does not depend on the body or the payload:
// the UDP header, the BTH and the ICRC.
func (u *Unit) FixedUDPLen() int { return wire.UDPHeaderLen + wire.BTHLen + wire.ICRCLen }

// IPv4HeaderLen is the IPv4 header length, for the template.
func (u *Unit) IPv4HeaderLen() int { return wire.IPv4HeaderLen }

// AcceptDelayT is AcceptDelay, for the template.
func (u *Unit) AcceptDelayT() int { return AcceptDelay }

// PayloadLatencyT is PayloadLatency, for the template.
func (u *Unit) PayloadLatencyT() int { return PayloadLatency(u.W) }

// UnshiftLatency is the number of stages of the ICRC's unshift network, and of the beat stages
// d1..dN beside it.
func (u *Unit) UnshiftLatency() int { return crc.UnshiftLatency(u.B) }

// DelayField is one field of a beat in stages c and d1..dN.
type DelayField struct {
	Name  string
	Width int
}

// DelayFields are the beat's fields that wait beside the unshift network.
func (u *Unit) DelayFields() []DelayField {
	return []DelayField{
		{"data", u.W}, {"keep", u.B}, {"last", 1}, {"icrc_lo", 1}, {"icrc_hi", 1}, {"de", u.BW}, {"bad", 1},
		{"cs", 1}, {"csv", 1},
	}
}

// DataCond is the Verilog condition "the descriptor's opcode is a data opcode" (its payload
// follows on s_axis).
func (u *Unit) DataCond() string {
	var terms []string
	for _, c := range u.Classes() {
		if c.Data {
			terms = append(terms, "s_hdr_opcode == "+c.OpHex())
		}
	}
	if len(terms) == 0 {
		return "1'b0"
	}
	return strings.Join(terms, " || ")
}

// CsumBeatTag is the beat holding the IPv4 header checksum behind a VLAN tag.
func (u *Unit) CsumBeatTag() int {
	return (wire.Stack{VLAN: true}.L3() + wire.IPv4ChecksumOff) / u.B
}

// CsumLanes renders the checksum d<k>_csum placed, big-endian, in its two lanes of a beat: behind
// a tag when vlan is 1.
func (u *Unit) CsumLanes(stage string, k, vlan int) string {
	at := (wire.Stack{VLAN: vlan == 1}.L3() + wire.IPv4ChecksumOff) % u.B
	reg := fmt.Sprintf("%s%d_csum", stage, k)
	var parts []string
	if hi := u.W - 8*(at+2); hi > 0 {
		parts = append(parts, fmt.Sprintf("%d'd0", hi))
	}
	parts = append(parts, reg+"[7:0]", reg+"[15:8]")
	if at > 0 {
		parts = append(parts, fmt.Sprintf("%d'd0", 8*at))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// LayoutSel renders layout vo's case label over {vlan, ipv6, body class}.
func (u *Unit) LayoutSel(vo int) string {
	n := u.NClasses()
	w := 2 + u.ClassW()
	return fmt.Sprintf("%d'd%d", w, (vo/n)<<u.ClassW()|vo%n)
}
