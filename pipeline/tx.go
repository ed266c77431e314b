package pipeline

// nic_tx is the NIC's transmit data path: one data-packet descriptor per packet in (from the
// send-side scheduler, which decides what goes when), one complete Ethernet/IP/UDP/MetaRoCE
// frame out toward the descriptor's egress port. For each descriptor it reads the payload from
// host memory through a DMA read interface (several reads outstanding, in order), looks up the
// connection's peer (remote connection id, MAC, IP) in a peer table written by the control plane
// exactly as nic_rx's, and hands header and payload to tx_deparser, which builds the frame with
// its ICRC. The frame is, byte for byte, golden/wire.Encode of the packet golden/transport's
// sender (emit) builds for the same descriptor; the send timestamp is `now` at the cycle the
// header enters tx_deparser, as golden stamps it when the port takes the packet.

import (
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	goldensack "github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/acker"
	"github.com/mrgen/mrgen/hdl/deparser"
)

// TxSource is the path of nic_tx's description, named in its banner.
const TxSource = "pipeline/tx.go"

// TxTop is the transmit data path's module name.
const TxTop = "nic_tx"

// The data frames' fixed IP fields: DSCP 0 (best effort; control frames use CtlDSCP), TTL or
// hop limit CtlTTL, IPv4 don't-fragment set, identification and flow label 0 (golden/transport's
// frames, as cosim encodes them).
const DataDSCP = 0

// TxReadLatencyNS is the host read round trip nic_tx is sized to hide: the time from a DMA read
// request to its first data beat (a PCIe read through a root complex, about 1 µs). The number of
// outstanding reads follows from it, the clock and the datapath (TxReadDepth).
const TxReadLatencyNS = 1000

// TxEgressFIFO is the depth of the queue of egress ports of the frames inside tx_deparser (the
// smallest data frame is two beats at 512 bits and the deparser holds seven stages there, four
// and its ICRC's three unshift stages, so at most four frames are ever inside; eight leaves
// room).
const TxEgressFIFO = 8

// Tx is the derived description of nic_tx for one configuration.
type Tx struct {
	Cfg   config.Config
	Reset hdl.ResetStyle
	Dep   *deparser.Unit
	// CW, AW: connection-index and path-id widths (the tables' widths); PW the PSN width; DW the
	// datapath width; B its bytes.
	CW, AW, PW, DW, B int
	// RdDepth is the number of DMA reads outstanding at most (a power of two), TagW its log2:
	// a read's tag is its sequence number modulo RdDepth, unique among those outstanding.
	RdDepth, TagW int
	// DescW is the width of a descriptor-queue entry.
	DescW int
}

// TxReadDepth is the number of outstanding DMA reads that keeps tx_deparser busy while a read
// of TxReadLatencyNS is on its way, when every packet is the smallest one that needs a read (one
// payload byte: the deparser emits its frame in MinFrame/B beats): latency cycles over frame
// beats, rounded up to a power of two, between 4 and 64.
func TxReadDepth(c config.Config) int {
	lat := (TxReadLatencyNS*c.TargetClockMHz + 999) / 1000
	minFrame := wire.EthHeaderLen + wire.IPv4HeaderLen + wire.UDPHeaderLen + wire.BTHLen +
		min(wire.WriteExtLen, wire.SendExtLen) + 1 + wire.ICRCLen
	beats := (minFrame + c.DatapathWidth/8 - 1) / (c.DatapathWidth / 8)
	n := (lat + beats - 1) / beats
	d := 4
	for d < n && d < 64 {
		d *= 2
	}
	return d
}

// NewTx derives the transmit data path from a validated configuration.
func NewTx(c config.Config) (*Tx, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	t := &Tx{Cfg: c, Reset: hdl.ResetFor(c.ResetStyle)}
	var err error
	if t.Dep, err = deparser.New(c); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	sp := goldensack.ParamsFrom(c) // the table widths every block uses
	t.CW, t.AW, t.PW, t.DW, t.B = sp.ConnBits, sp.PathBits, c.PSNWidth, c.DatapathWidth, c.DatapathWidth/8
	t.RdDepth = TxReadDepth(c)
	for 1<<t.TagW < t.RdDepth {
		t.TagW++
	}
	for _, f := range t.QueuedFields() {
		t.DescW += f.Width
	}
	if _, err := t.DepHdr(); err != nil {
		return nil, err
	}
	return t, nil
}

// TxField is one field of the s_txd descriptor: port s_txd_<Name>.
type TxField struct {
	Name  string
	Width int
	Doc   string
	// Queued fields travel in the descriptor queue to the header stage; the others (the host
	// address) are used when the descriptor is taken.
	Queued bool
}

// DescFields is the data-packet descriptor, in port order.
func (t *Tx) DescFields() []TxField {
	return []TxField{
		{"conn", t.CW, "local connection index (peer table)", true},
		{"opcode", wire.OpcodeBits, "BTH opcode: 0x01 WRITE, 0x02 SEND, 0x12 ANNOUNCE (no payload)", true},
		{"flags", wire.FlagsBits, "BTH flags (FIRST, LAST, ACKREQ, RETX, INIT)", true},
		{"path", t.AW, "path id", true},
		{"stream", wire.StreamIDBits, "stream id", true},
		{"psn", t.PW, "the path's PSN of this packet", true},
		{"msn", wire.MSNBits, "message sequence number in the stream", true},
		{"msg_len", wire.MsgLenBits, "message length, bytes", true},
		{"rkey", wire.RKeyBits, "WRITE: remote key", true},
		{"va", wire.VABits, "WRITE: remote virtual address of this packet's first payload byte", true},
		{"offset", wire.MsgOffsetBits, "SEND: offset of this packet's first payload byte in the message", true},
		{"addr", 64, "host address of the payload (not queued: the read is issued as it is taken)", false},
		{"len", deparser.PayloadLenBits, "payload bytes, 0..mtu (0: header only, no read)", true},
		{"udp_src", wire.UDPPortBits, "UDP source port: the path's entropy", true},
		{"port", PortBits, "egress port (plane); the frame leaves with it on m_axis_tdest", true},
	}
}

// QueuedFields are the fields of a descriptor-queue entry, least significant first.
func (t *Tx) QueuedFields() []TxField {
	var out []TxField
	for _, f := range t.DescFields() {
		if f.Queued {
			out = append(out, f)
		}
	}
	return out
}

// QField is a queued field with its bit range in the queue entry.
type QField struct {
	TxField
	Lo, Hi int
}

// QueueLayout places the queued fields in an entry, the first at bit 0.
func (t *Tx) QueueLayout() []QField {
	var out []QField
	lo := 0
	for _, f := range t.QueuedFields() {
		out = append(out, QField{TxField: f, Lo: lo, Hi: lo + f.Width - 1})
		lo += f.Width
	}
	return out
}

// Module is nic_tx's port list.
func (t *Tx) Module() *hdl.Module {
	in, out := hdl.In, hdl.Out
	ports := append(append(t.Reset.Ports(), LocalPorts()...), PeerPorts(t.CW)...)
	ports = append(ports,
		in("data_ecn", wire.IPv4ECNBits, "ECN field of data frames: 2 (ECT(0)) when the transport is ECN-capable, else 0"),
		// Data-packet descriptors from the scheduler.
		in("s_txd_valid", 1, "one data-packet descriptor"),
		out("s_txd_ready", 1, "taken when valid and ready"),
	)
	for _, f := range t.DescFields() {
		ports = append(ports, in("s_txd_"+f.Name, f.Width, f.Doc))
	}
	ports = append(ports,
		// Host DMA reads.
		out("m_rd_valid", 1, "a read request: one per descriptor with a payload, in descriptor order"),
		in("m_rd_ready", 1, "the DMA engine takes the request"),
		out("m_rd_addr", 64, "host address of the first byte"),
		out("m_rd_len", deparser.PayloadLenBits, "bytes, 1..mtu"),
		out("m_rd_tag", t.TagW, "the read's sequence number modulo the outstanding depth"),
		in("s_rd_tdata", t.DW, "read data, the request's first byte in lane 0 of its first beat"),
		in("s_rd_tkeep", t.B, "all ones but on the last beat: its first ((len-1) mod B)+1 lanes"),
		in("s_rd_tvalid", 1, "read data beat valid"),
		out("s_rd_tready", 1, "the beat is taken when valid and ready"),
		in("s_rd_tlast", 1, "last beat of one request's data"),
		in("s_rd_tag", t.TagW, "the request's tag, on every beat (reads return in request order)"),
	)
	// Frames to the MAC.
	ports = append(ports, frameOut(t.DW, "frame bytes, byte 0 in lane 0", "egress port of the frame: the descriptor's",
		"on a last beat: the read returned another length than asked; ICRC inverted")...)
	ports = append(ports,
		out("idle", 1, "no descriptor, read or frame in nic_tx"),
		out("cnt_frames", 32, "frames started (wraps)"),
		out("cnt_reads", 32, "DMA reads requested (wraps)"),
		out("err_len_count", deparser.CounterWidth, "frames whose read data had another length than asked (wraps)"),
		out("err_tag_count", 32, "read data beats whose tag was not the oldest outstanding read's (wraps)"),
	)
	return &hdl.Module{
		Name:   TxTop,
		Source: TxSource,
		Doc: fmt.Sprintf("MetaRoCE transmit data path, %d-bit datapath, %d connections: data-packet descriptors, "+
			"%d DMA reads outstanding, peer table and header builder (docs/pipeline.md).",
			t.DW, t.Cfg.Connections, t.RdDepth),
		Clock: "clk", Reset: t.Reset.Port,
		Ports: ports,
		Tables: []hdl.Table{
			{Name: "desc_fifo", Depth: t.RdDepth, Width: t.DescW, Doc: "descriptors between s_txd and the header stage"},
			{Name: "eg_port", Depth: t.EgDepth(), Width: PortBits, Kind: hdl.RegFile, Doc: "egress port of each frame in tx_deparser"},
		},
		Latency: t.HeaderLatency(),
		II:      1,
	}
}

// HeaderLatency is the cycles from a descriptor's handshake on s_txd, with nic_tx idle, to the
// first beat of its frame when it has no payload: the queue write, the queue's read register,
// the header stage (peer entry), tx_deparser's accept delay (its decode of the offered
// descriptor) and its latency.
func (t *Tx) HeaderLatency() int { return 3 + deparser.AcceptDelay + deparser.Latency(t.DW) }

// Design renders nic_tx with tx_deparser.
func (t *Tx) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := t.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(TxTop, srcs, st, mutate)
}

// Sources are tx_deparser's modules and the top.
func (t *Tx) Sources() ([]gen.Source, error) {
	out, err := t.Dep.Sources()
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	peer, err := peerSource(t.CW)
	if err != nil {
		return nil, err
	}
	out = append(out, peer)
	text, err := templates.ReadFile("tx.v.tmpl")
	if err != nil {
		return nil, fmt.Errorf("pipeline: template: %w", err)
	}
	return append(out, gen.Source{Module: t.Module(), Template: string(text), Data: t}), nil
}

// DepHdr connects tx_deparser's descriptor to the header stage (q_* fields of the queue entry
// and the peer entry) and constants: a WRITE or SEND to the connection's peer, from this NIC.
func (t *Tx) DepHdr() ([]Conn, error) {
	pad := func(x string, w, n int) string {
		if w == n {
			return x
		}
		return fmt.Sprintf("{%d'd0, %s}", n-w, x)
	}
	expr := map[string]string{
		"dst_mac": "peer_rd_mac", "src_mac": "local_mac", "vlan": "1'b0", "vlan_pcp": "3'd0", "vlan_dei": "1'b0",
		"vlan_vid": "12'd0", "ipv6": "peer_rd_ipv6", "ip_src": "local_ip", "ip_dst": "peer_rd_ip",
		// An ANNOUNCE (the send side's control packet ahead of a connection's first data packet)
		// travels in the control class, not ECN-capable, like the receive side's ACKs.
		"dscp": fmt.Sprintf("(q_opcode == 8'h%02x) ? 6'd%d : 6'd%d", uint8(wire.OpAnnounce), CtlDSCP, DataDSCP),
		"ecn":  fmt.Sprintf("(q_opcode == 8'h%02x) ? 2'd0 : data_ecn", uint8(wire.OpAnnounce)), "ttl": fmt.Sprintf("8'd%d", CtlTTL),
		"flow_label": "20'd0", "ip_id": "16'd0", "ip_df": "1'b1", "udp_src_port": "q_udp_src",
		"udp_checksum": "16'd0", "opcode": "q_opcode", "flags": "q_flags", "conn_id": "peer_rd_remote",
		"path_id": pad("q_path", t.AW, wire.PathIDBits), "stream_id": "q_stream",
		"psn": pad("q_psn", t.PW, wire.PSNBits), "msn": "q_msn",
		"timestamp": "now[31:0]", "msg_len": "q_msg_len", "rkey": "q_rkey", "va": "q_va", "offset": "q_offset",
		"ts_echo": "32'd0", "ecn_echo": "16'd0", "rate_hint": "16'd0", "sack": fmt.Sprintf("%d'd0", t.Dep.S),
		"nak_code": "8'd0", "rnr_delay": "16'd0", "payload_len": "q_len",
	}
	var out []Conn
	for _, f := range t.Dep.Fields {
		e, ok := expr[f.Name]
		if !ok {
			return nil, fmt.Errorf("pipeline: tx_deparser descriptor field %s has no source in nic_tx", f.Name)
		}
		out = append(out, Conn{Port: "s_hdr_" + f.Name, Expr: e})
	}
	return out, nil
}

// DepHdrConns is DepHdr for the template (NewTx has checked it).
func (t *Tx) DepHdrConns() []Conn {
	c, _ := t.DepHdr()
	return c
}

// Widths and depths the template needs.
func (t *Tx) EgDepth() int { return TxEgressFIFO }
func (t *Tx) DepthW() int  { return t.TagW + 1 } // counts 0..RdDepth
func (t *Tx) LenW() int    { return deparser.PayloadLenBits }
func (t *Tx) NowW() int    { return acker.TimeW }

// TxdEntry is the queue entry built from the s_txd ports: a concatenation, last queued field
// first, so that the first lands in the low bits (QueueLayout); wrapped to the line limit.
func (t *Tx) TxdEntry() string {
	q := t.QueuedFields()
	var b strings.Builder
	b.WriteString("{")
	col := len("  wire [DESC_WIDTH-1:0] txd_entry = {")
	for i := len(q) - 1; i >= 0; i-- {
		s := "s_txd_" + q[i].Name
		if i > 0 {
			s += ", "
		} else {
			s += "};"
		}
		if col+len(s) > 98 {
			b.WriteString("\n                                      ")
			col = 38
		}
		b.WriteString(s)
		col += len(s)
	}
	return strings.TrimSuffix(b.String(), ";")
}
