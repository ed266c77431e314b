package pipeline

import (
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/sender"
)

// NICTop is the NIC's top module: the receive pipeline (nic_rx) and the transmit data path
// (nic_tx) behind one egress.
const NICTop = "nic_top"

// EgressTop is the egress merge's module name.
const EgressTop = "nic_egress_merge"

// NIC is the derived description of the NIC top for one configuration: nic_rx, the send engine
// (tx_engine, hdl/sender) that takes nic_rx's ACKs and NAKs (m_ackin) and answers the host's,
// the egress's and the timers' commands, nic_tx, one set of local-address and peer-table ports
// written into nic_rx and nic_tx (each keeps its copy of the peer table: two read ports of one
// table are two block RAMs on the iCE40 anyway), and an egress merge that gives control frames
// (nic_rx's ACKs and NAKs) priority over data frames at frame boundaries.
type NIC struct {
	Cfg   config.Config
	Reset hdl.ResetStyle
	Rx    *Rx
	Tx    *Tx
	Eng   *sender.Unit
	DW, B int
}

// NewNIC derives the NIC top from a validated configuration.
func NewNIC(c config.Config) (*NIC, error) {
	rx, err := NewRx(c)
	if err != nil {
		return nil, err
	}
	tx, err := NewTx(c)
	if err != nil {
		return nil, err
	}
	eng, err := sender.New(c)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return &NIC{Cfg: c, Reset: rx.Reset, Rx: rx, Tx: tx, Eng: eng, DW: c.DatapathWidth, B: c.DatapathWidth / 8}, nil
}

// sharedPorts are the ports nic_rx and nic_tx both have, driven by the top's port of the same
// name (clock, reset, time, addresses, the peer table's write port).
func (n *NIC) sharedPorts() map[string]bool {
	shared := map[string]bool{}
	for _, p := range append(append(n.Reset.Ports(), LocalPorts()...), PeerPorts(n.Rx.CW)...) {
		shared[p.Name] = true
	}
	return shared
}

// txRenamed are nic_tx's status ports that nic_rx has too: the top prefixes them with tx_.
var txRenamed = map[string]bool{"idle": true, "cnt_frames": true, "cnt_reads": true, "err_len_count": true, "err_tag_count": true}

// egressPort reports whether a port is a block's frame output, which goes to the egress merge.
func egressPort(name string) bool { return strings.HasPrefix(name, "m_axis_") }

// ackinPort reports whether a port carries the ACKs and NAKs from nic_rx to the send engine
// (nic_rx's m_ackin_*, tx_engine's s_ackin_*): a wire inside the top.
func ackinPort(prefix, name string) bool {
	return prefix == "rx" && strings.HasPrefix(name, "m_ackin_") || prefix == "eng" && strings.HasPrefix(name, "s_ackin_")
}

// internalPort reports whether a block's port is wired inside the top (not a top port).
func internalPort(prefix, name string) bool { return egressPort(name) || ackinPort(prefix, name) }

// topName is the top's port (or wire) a block's port connects to; prefix is "rx", "tx" or
// "eng".
func (n *NIC) topName(prefix string, p hdl.Port) string {
	switch {
	case ackinPort(prefix, p.Name):
		return "ackin_" + p.Name[len("m_ackin_"):]
	case egressPort(p.Name):
		return prefix + "_" + p.Name
	case prefix == "eng" && (p.Name == "busy" || strings.HasPrefix(p.Name, "cnt_")):
		return "eng_" + p.Name
	case prefix == "eng" && strings.HasPrefix(p.Name, "m_wake_"):
		return "m_pace_" + p.Name[len("m_wake_"):] // pacing wake-ups (nic_rx's m_wake_* is rx_acker's)
	case prefix == "rx" && p.Name == "idle":
		return "rx_idle"
	case prefix == "tx" && txRenamed[p.Name]:
		return "tx_" + p.Name
	}
	return p.Name
}

// Module is the NIC top's port list: the shared ports, nic_rx's, nic_tx's (status ports
// prefixed tx_), and the merged egress.
func (n *NIC) Module() *hdl.Module {
	out := hdl.Out
	shared := n.sharedPorts()
	ports := append(append(n.Reset.Ports(), LocalPorts()...), PeerPorts(n.Rx.CW)...)
	add := func(prefix string, bp []hdl.Port) {
		for _, p := range bp {
			if shared[p.Name] || internalPort(prefix, p.Name) {
				continue
			}
			q := p
			q.Name = n.topName(prefix, p)
			if q.Name == "rx_idle" {
				q.Doc = "nic_rx: " + p.Doc
			}
			ports = append(ports, q)
		}
	}
	add("rx", n.Rx.Module().Ports)
	add("eng", n.Eng.Module().Ports)
	add("tx", n.Tx.Module().Ports)
	ports = append(ports, frameOut(n.DW, "frame bytes to the MAC, byte 0 in lane 0: control and data frames",
		"egress port (plane) of the frame", "on a data frame's last beat: its read returned another length than asked (ICRC inverted)")...)
	ports = append(ports, out("idle", 1, "nothing in nic_rx, nic_tx or the egress merge, and the send engine idle"))
	return &hdl.Module{
		Name:   NICTop,
		Source: "pipeline/nic.go",
		Doc: "MetaRoCE NIC: the receive pipeline (nic_rx), the send engine (tx_engine) fed with nic_rx's ACKs " +
			"and NAKs, and the transmit data path (nic_tx), with one control plane and one egress, control frames " +
			"first at frame boundaries.",
		Clock: "clk", Reset: n.Reset.Port,
		Ports: ports,
	}
}

// TopName is the name in nic_top of port name of block prefix ("rx", "tx" or "eng"): its own
// name, a renamed status port, or (clock, reset, time, addresses, peer table) the shared port.
func (n *NIC) TopName(prefix, name string) string { return n.topName(prefix, hdl.Port{Name: name}) }

// Instance connections of nic_rx and nic_tx, for the template.
func (n *NIC) RxConns() []Conn  { return n.conns("rx", n.Rx.Module().Ports) }
func (n *NIC) TxConns() []Conn  { return n.conns("tx", n.Tx.Module().Ports) }
func (n *NIC) EngConns() []Conn { return n.conns("eng", n.Eng.Module().Ports) }

// AckinWires are the wires from nic_rx's m_ackin to tx_engine's s_ackin: {name, width}.
func (n *NIC) AckinWires() []hdl.Port {
	var out []hdl.Port
	for _, p := range n.Rx.Module().Ports {
		if ackinPort("rx", p.Name) {
			out = append(out, hdl.Port{Name: n.topName("rx", p), Width: p.Width})
		}
	}
	return out
}

func (n *NIC) conns(prefix string, ports []hdl.Port) []Conn {
	out := make([]Conn, 0, len(ports))
	for _, p := range ports {
		out = append(out, Conn{Port: p.Name, Expr: n.topName(prefix, p)})
	}
	return out
}

// EgressTop is the egress merge's module name, for the template.
func (n *NIC) EgressTop() string { return EgressTop }

// EgressWires are the blocks' frame ports, which the top declares as wires: {name, width}.
func (n *NIC) EgressWires() []hdl.Port {
	var out []hdl.Port
	for _, pre := range []struct {
		name  string
		ports []hdl.Port
	}{{"rx", n.Rx.Module().Ports}, {"tx", n.Tx.Module().Ports}} {
		for _, p := range pre.ports {
			if egressPort(p.Name) {
				out = append(out, hdl.Port{Name: pre.name + "_" + p.Name, Width: p.Width})
			}
		}
	}
	return out
}

// egressModule is nic_egress_merge: two frame streams (a: control, b: data) onto one, a first
// at every frame boundary, the chosen stream held until its last beat.
func (n *NIC) egressModule() *hdl.Module {
	out := hdl.Out
	ports := n.Reset.Ports()
	for _, s := range []struct{ p, doc string }{{"a", "control frames (priority)"}, {"b", "data frames"}} {
		ports = append(ports, frameIn(frameOut(n.DW, s.doc, "egress port", "frame status on the last beat"), "s_"+s.p+"_")...)
	}
	ports = append(ports, frameOut(n.DW, "merged frames", "egress port", "frame status on the last beat")...)
	ports = append(ports, out("idle", 1, "no frame in progress"))
	return &hdl.Module{
		Name:   EgressTop,
		Source: "pipeline/nic.go",
		Doc:    "Egress merge: frames of stream a (control) before stream b (data) at every frame boundary; a frame is never interleaved.",
		Clock:  "clk", Reset: n.Reset.Port,
		Ports: ports,
	}
}

// Design is the NIC top's generated design.
func (n *NIC) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := n.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(NICTop, srcs, st, mutate)
}

// Sources are every module of nic_rx and nic_tx (each once), the egress merge and the top.
func (n *NIC) Sources() ([]gen.Source, error) {
	var set sourceSet
	rx, err := n.Rx.Sources()
	if err := set.add(rx, err); err != nil {
		return nil, err
	}
	eng, err := n.Eng.Sources()
	if err := set.add(eng, err); err != nil {
		return nil, err
	}
	tx, err := n.Tx.Sources()
	if err := set.add(tx, err); err != nil {
		return nil, err
	}
	eg, err := templates.ReadFile("egress.v.tmpl")
	if err != nil {
		return nil, fmt.Errorf("pipeline: template: %w", err)
	}
	top, err := templates.ReadFile("nic.v.tmpl")
	if err != nil {
		return nil, fmt.Errorf("pipeline: template: %w", err)
	}
	return append(set.out,
		gen.Source{Module: n.egressModule(), Template: string(eg), Data: n},
		gen.Source{Module: n.Module(), Template: string(top), Data: n}), nil
}

// sourceSet collects the modules of several blocks, each once: a module two blocks share must
// come from the same template.
type sourceSet struct {
	out  []gen.Source
	seen map[string]string
}

// add adds srcs (err: the error of the call that produced them), but the modules named in skip.
func (s *sourceSet) add(srcs []gen.Source, err error, skip ...string) error {
	if err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if s.seen == nil {
		s.seen = map[string]string{}
	}
next:
	for _, src := range srcs {
		for _, k := range skip {
			if src.Module.Name == k {
				continue next
			}
		}
		if t, dup := s.seen[src.Module.Name]; dup {
			if t != src.Template {
				return fmt.Errorf("pipeline: two blocks define module %s differently", src.Module.Name)
			}
			continue
		}
		s.seen[src.Module.Name] = src.Template
		s.out = append(s.out, src)
	}
	return nil
}

// frameOut is a frame output m_axis_* of a datapath of dw bits, with tdest (the egress port)
// and a one-bit tuser: the documentation of tdata, tdest and tuser given.
func frameOut(dw int, data, dest, user string) []hdl.Port {
	in, out := hdl.In, hdl.Out
	return []hdl.Port{
		out("m_axis_tdata", dw, data),
		out("m_axis_tkeep", dw/8, "kept lanes"),
		out("m_axis_tvalid", 1, "beat valid"),
		in("m_axis_tready", 1, "the beat is taken when valid and ready"),
		out("m_axis_tlast", 1, "last beat of the frame"),
		out("m_axis_tdest", PortBits, dest),
		out("m_axis_tuser", 1, user),
	}
}

// frameIn is the frame input matching the output ports out: the same ports with prefix instead
// of m_axis_, their directions flipped.
func frameIn(out []hdl.Port, prefix string) []hdl.Port {
	in := make([]hdl.Port, len(out))
	for i, p := range out {
		p.Name = prefix + strings.TrimPrefix(p.Name, "m_axis_")
		if p.Dir == hdl.Input {
			p.Dir = hdl.Output
		} else {
			p.Dir = hdl.Input
		}
		in[i] = p
	}
	return in
}
