// Package pipeline composes the block descriptions (hdl/parser, hdl/sack, hdl/placement,
// hdl/acker, hdl/deparser) into the NIC's pipelines and generates their tops.
//
// nic_rx is the receive pipeline of one NIC port set: every frame from the MAC goes through
// the header parser; a data packet (WRITE or SEND) is classified by the SACK receive table,
// placed by the placement engine when it is new (its payload leaves on a tagged stream for the
// host DMA engine, with one verdict per payload), and handed to the ACK scheduler; the ACKs it
// schedules and the NAKs placement calls for are built into frames (peer and reply tables,
// tx_deparser) and leave on the control-frame stream toward the egress port the acknowledged
// packet came in on. ACK and NAK packets received leave on m_ackin for the send side.
//
// Ordering is golden/transport's, so that the closed-loop co-simulation can compare every
// frame: one data packet at a time goes through classification, placement and the scheduler
// (the RX controller, docs/pipeline.md), and a packet's NAK is queued only when the scheduler
// has finished everything before it, so control frames leave in the order golden sends them.
package pipeline

import (
	"embed"
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	goldenpl "github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/acker"
	"github.com/mrgen/mrgen/hdl/deparser"
	"github.com/mrgen/mrgen/hdl/parser"
	"github.com/mrgen/mrgen/hdl/placement"
	"github.com/mrgen/mrgen/hdl/sack"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "pipeline/rx.go"

// RxTop is the receive pipeline's module name.
const RxTop = "nic_rx"

// The control frames' fixed IP fields (golden/transport's frames carry the same: cosim encodes
// golden's ACKs and NAKs with them).
const (
	PortBits = 3  // NIC ports (planes): up to 8
	CtlDSCP  = 48 // CS6, network control
	CtlTTL   = 64
	CtlFIFO  = 16 // control frames queued ahead of the header builder
)

// Rx is the derived description of nic_rx for one configuration.
type Rx struct {
	Cfg   config.Config
	Reset hdl.ResetStyle
	Par   *parser.Unit
	Sack  *sack.Unit
	Place *placement.Unit
	Ack   *acker.Unit
	Dep   *deparser.Unit
	// CW, AW, IW: connection, path and {conn, path} widths of the tables; PW the PSN width;
	// W the SACK width; DW the datapath width.
	CW, AW, IW, PW, W, DW int
	// CtlW is the width of a control-FIFO entry.
	CtlW int
}

// NewRx derives the receive pipeline from a validated configuration.
func NewRx(c config.Config) (*Rx, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	r := &Rx{Cfg: c, Reset: hdl.ResetFor(c.ResetStyle)}
	var err error
	if r.Par, err = parser.New(c); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if r.Sack, err = sack.New(c); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if r.Place, err = placement.New(c); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if r.Ack, err = acker.New(c); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if r.Dep, err = deparser.New(c); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	r.CW, r.AW, r.PW, r.W, r.DW = r.Ack.CW, r.Ack.AW, c.PSNWidth, c.SackWidth, c.DatapathWidth
	r.IW = r.CW + r.AW
	if _, err := r.DepHdr(); err != nil {
		return nil, err
	}
	r.CtlW = 1 + r.IW + r.PW + wire.StreamIDBits + wire.MSNBits + r.W + wire.ECNEchoBits + wire.RateHintBits +
		wire.TimestampEchoBits + wire.NakCodeBits + wire.RNRDelayBits + wire.UDPPortBits + PortBits
	return r, nil
}

// Module is nic_rx's port list.
func (r *Rx) Module() *hdl.Module {
	in, out := hdl.In, hdl.Out
	B := r.DW / 8
	ports := append(r.Reset.Ports(), LocalPorts()...)
	ports = append(ports,
		// Frames from the MAC.
		in("s_axis_tdata", r.DW, "frame bytes, byte 0 in lane 0"),
		in("s_axis_tkeep", B, "kept lanes"),
		in("s_axis_tvalid", 1, "beat valid"),
		out("s_axis_tready", 1, "beat accepted when valid and ready"),
		in("s_axis_tlast", 1, "last beat of the frame"),
		in("s_axis_tuser", PortBits, "ingress port (plane) of the frame, on its first beat"),
	)
	// Peer table (control plane).
	ports = append(ports, PeerPorts(r.CW)...)
	// Placement's control, DMA and completion ports pass through unchanged.
	ports = append(ports, r.PlacementHostPorts()...)
	ports = append(ports,
		// Payload of accepted data packets, for the host DMA engine.
		out("m_pay_tdata", r.DW, "payload beats, first byte in lane 0"),
		out("m_pay_tkeep", B, "payload lanes"),
		out("m_pay_tvalid", 1, "payload beat valid"),
		in("m_pay_tready", 1, "the DMA engine takes the beat"),
		out("m_pay_tlast", 1, "last beat of one packet's payload"),
		out("m_pay_tuser", placement.TagBits, "the payload's tag (DMA commands name it)"),
		out("m_pvd_valid", 1, "verdict on one payload: written by DMA commands or discarded"),
		in("m_pvd_ready", 1, "the DMA engine takes the verdict"),
		out("m_pvd_tag", placement.TagBits, "the payload's tag"),
		out("m_pvd_placed", 1, "1: DMA commands carry it to host memory; 0: discard it"),
		// Control frames (ACK, NAK) to the MAC.
		out("m_axis_tdata", r.DW, "control frame bytes"),
		out("m_axis_tkeep", B, "kept lanes"),
		out("m_axis_tvalid", 1, "beat valid"),
		in("m_axis_tready", 1, "the MAC takes the beat"),
		out("m_axis_tlast", 1, "last beat of the frame"),
		out("m_axis_tdest", PortBits, "egress port: the one the acknowledged packet came in on"),
		// ACK and NAK packets received, for the send side.
		out("m_ackin_valid", 1, "an ACK or NAK arrived"),
		in("m_ackin_ready", 1, "the send side takes it"),
		out("m_ackin_opcode", wire.OpcodeBits, "0x10 ACK, 0x11 NAK"),
		out("m_ackin_conn", wire.ConnIDBits, "connection id"),
		out("m_ackin_path", wire.PathIDBits, "acknowledged path"),
		out("m_ackin_psn", wire.PSNBits, "ACK: cumulative PSN; NAK: the refused PSN"),
		out("m_ackin_stream", wire.StreamIDBits, "NAK: stream"),
		out("m_ackin_msn", wire.MSNBits, "NAK: message"),
		out("m_ackin_ts_echo", wire.TimestampEchoBits, "timestamp echo"),
		out("m_ackin_ecn_echo", wire.ECNEchoBits, "ACK: ECN echo"),
		out("m_ackin_rate_hint", wire.RateHintBits, "ACK: rate hint"),
		out("m_ackin_sack", r.W, "ACK: SACK bitmap"),
		out("m_ackin_nak_code", wire.NakCodeBits, "NAK: code"),
		out("m_ackin_rnr_delay", wire.RNRDelayBits, "NAK: RNR delay"),
		out("m_drop_valid", 1, "one-cycle pulse: the parser dropped a frame"),
		out("m_drop_reason", wire.DropReasonBits, "its reason (docs/wire-format.md section 13)"),
		out("busy", 1, "a post-reset table clear is running"),
		out("idle", 1, "no packet in the pipeline and no ACK due at now"),
		out("m_wake_valid", 1, "an ACK timer is pending"),
		out("m_wake_at", acker.TimeW, "when the earliest ACK timer falls due, ns"),
		out("cnt_data", 32, "data packets through the controller (wraps)"),
		out("cnt_acks", 32, "ACK frames started (wraps)"),
		out("cnt_naks", 32, "NAK frames started (wraps)"),
	)
	return &hdl.Module{
		Name:   RxTop,
		Source: Source,
		Doc: fmt.Sprintf("MetaRoCE receive pipeline, %d-bit datapath, %d connections x %d paths: header parser, "+
			"SACK receive table, placement engine, ACK scheduler and control-frame builder (docs/pipeline.md).",
			r.DW, r.Cfg.Connections, r.Cfg.PathsPerConnection),
		Clock: "clk", Reset: r.Reset.Port,
		Ports: ports,
		Tables: []hdl.Table{
			{Name: "reply_table", Depth: 1 << r.IW, Width: wire.UDPPortBits + PortBits, Doc: "per path: latest data packet's entropy, port"},
			{Name: "ctl_fifo", Depth: CtlFIFO, Width: r.CtlW, Doc: "ACKs and NAKs ahead of the header builder"},
			{Name: "cum_table", Depth: 1 << r.IW, Width: r.Cfg.PSNWidth, Doc: "per path: cumulative PSN as sack_rx last reported it"},
			{Name: "pf_port", Depth: 32, Width: PortBits, Kind: hdl.RegFile, Doc: "ingress port of each frame in the parser"},
			{Name: "eg_port", Depth: 4, Width: PortBits, Kind: hdl.RegFile, Doc: "egress port of each frame in tx_deparser"},
		},
	}
}

// PlacementHostPorts are placement_engine's host-side ports (control, DMA, completions), which
// nic_rx passes through under the same names; the template connects exactly these.
func (r *Rx) PlacementHostPorts() []hdl.Port {
	var out []hdl.Port
	for _, p := range r.Place.Module().Ports {
		for _, pre := range []string{"s_ctl_", "m_ctl_", "m_dma_", "m_cpl_"} {
			if strings.HasPrefix(p.Name, pre) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Design renders nic_rx with every block it instantiates.
func (r *Rx) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := r.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(RxTop, srcs, st, mutate)
}

// Sources are the blocks' modules (each once; their own standalone wrappers left out) and the
// top.
func (r *Rx) Sources() ([]gen.Source, error) {
	var set sourceSet
	for _, step := range []func() error{
		func() error { s, err := r.Par.Sources(); return set.add(s, err) },
		func() error {
			s, err := r.Sack.Sources()
			return set.add(s, err, "sack_tx", "sack_unit", "sack_popcount")
		},
		func() error { s, err := r.Place.Sources(); return set.add(s, err) },
		func() error { s, err := r.Ack.Sources(); return set.add(s, err) },
		func() error { s, err := r.Dep.Sources(); return set.add(s, err) },
		func() error { s, err := peerSource(r.CW); return set.add([]gen.Source{s}, err) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	out := set.out
	text, err := templates.ReadFile("rx.v.tmpl")
	if err != nil {
		return nil, fmt.Errorf("pipeline: template: %w", err)
	}
	return append(out, gen.Source{Module: r.Module(), Template: string(text), Data: r}), nil
}

// HdrFields are the parser descriptor's fields (m_hdr_*), for the top's wiring.
func (r *Rx) HdrFields() []parser.Field { return r.Par.Fields }

// Conn is one port connection of an instance: the port and the expression driving it.
type Conn struct {
	Port, Expr string
}

// DepHdr connects tx_deparser's descriptor to the header builder's registers (h_*) and
// constants: an ACK or NAK to the peer of its connection, from this NIC's address, with the
// acknowledged packet's entropy.
func (r *Rx) DepHdr() ([]Conn, error) {
	expr := map[string]string{
		"dst_mac": "peer_rd_mac", "src_mac": "local_mac", "vlan": "1'b0", "vlan_pcp": "3'd0", "vlan_dei": "1'b0",
		"vlan_vid": "12'd0", "ipv6": "peer_rd_ipv6", "ip_src": "local_ip", "ip_dst": "peer_rd_ip",
		"dscp": fmt.Sprintf("6'd%d", CtlDSCP), "ecn": "2'd0", "ttl": fmt.Sprintf("8'd%d", CtlTTL), "flow_label": "20'd0",
		"ip_id": "16'd0", "ip_df": "1'b1", "udp_src_port": "h_udp_src", "udp_checksum": "16'd0",
		"opcode": "h_nak ? 8'h11 : 8'h10", "flags": "8'd0", "conn_id": "peer_rd_remote",
		"path_id": fmt.Sprintf("{%d'd0, h_path}", wire.PathIDBits-r.AW), "stream_id": "h_stream",
		"psn": r.pad("h_psn", r.PW, wire.PSNBits), "msn": "h_msn",
		"timestamp": "32'd0", "msg_len": "32'd0", "rkey": "32'd0", "va": "64'd0", "offset": "32'd0",
		"ts_echo": "h_ts", "ecn_echo": "h_ecn", "rate_hint": "h_hint", "sack": "h_bitmap",
		"nak_code": "h_nak_code", "rnr_delay": "h_rnr", "payload_len": "16'd0",
	}
	var out []Conn
	for _, f := range r.Dep.Fields {
		e, ok := expr[f.Name]
		if !ok {
			return nil, fmt.Errorf("pipeline: tx_deparser descriptor field %s has no source in nic_rx", f.Name)
		}
		out = append(out, Conn{Port: "s_hdr_" + f.Name, Expr: e})
	}
	return out, nil
}

// pad widens x of w bits to n bits.
func (r *Rx) pad(x string, w, n int) string {
	if w == n {
		return x
	}
	return fmt.Sprintf("{%d'd0, %s}", n-w, x)
}

// Widths and depths the template needs from the blocks.
func (r *Rx) ParCounterW() int   { return parser.CounterWidth }
func (r *Rx) DepCounterW() int   { return deparser.CounterWidth }
func (r *Rx) PlaceDropW() int    { return goldenpl.DropReasonBits }
func (r *Rx) PlaceCntDropW() int { return int(goldenpl.NumDropReasons) * 32 }
func (r *Rx) CtlFIFODepth() int  { return CtlFIFO }

// NakRNR is the receiver-not-ready NAK code: the one refusal nic_rx does not commit to sack_rx.
func (r *Rx) NakRNR() int { return int(wire.NakReceiverNotReady) }

// DepHdrConns is DepHdr for the template (NewRx has checked it).
func (r *Rx) DepHdrConns() []Conn {
	c, _ := r.DepHdr()
	return c
}
