package pipeline

import (
	"fmt"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/acker"
)

// PeerTop is the peer table's module name.
const PeerTop = "nic_peer_table"

// PeerW is a peer-table entry's width: {ipv6, ip, mac, remote conn}.
const PeerW = 1 + wire.IPv6AddrBits + wire.MACBits + wire.ConnIDBits

// LocalPorts are the NIC's own time and addresses, inputs of every top that builds frames
// (nic_rx, nic_tx).
func LocalPorts() []hdl.Port {
	return []hdl.Port{
		hdl.In("now", acker.TimeW, "time, ns (the NIC's timestamp counter)"),
		hdl.In("local_mac", wire.MACBits, "this NIC's MAC (source of its frames)"),
		hdl.In("local_ip", wire.IPv6AddrBits, "this NIC's IP address, deparser layout (IPv4 in bits 127:96)"),
	}
}

// PeerPorts are the control plane's write port of a peer table (s_peer_*), the same on every
// top that holds one (nic_rx, nic_tx), so that one control-plane write serves them all.
func PeerPorts(cw int) []hdl.Port {
	in, out := hdl.In, hdl.Out
	return []hdl.Port{
		in("s_peer_valid", 1, "write one peer-table entry"),
		out("s_peer_ready", 1, "taken when valid and ready"),
		in("s_peer_conn", cw, "local connection id"),
		in("s_peer_remote_conn", wire.ConnIDBits, "the peer's connection id for this NIC (BTH of frames to it)"),
		in("s_peer_mac", wire.MACBits, "the peer's MAC"),
		in("s_peer_ip", wire.IPv6AddrBits, "the peer's IP address (same layout as local_ip)"),
		in("s_peer_ipv6", 1, "the peer is reached over IPv6"),
	}
}

// peerModule is nic_peer_table for connection indices of cw bits: per connection, the peer's
// connection id for this NIC, MAC and IP, written by the control plane and read by a header
// builder one cycle after it names the connection.
func peerModule(cw int) *hdl.Module {
	in, out := hdl.In, hdl.Out
	ports := append([]hdl.Port{in("clk", 1, "clock")}, PeerPorts(cw)...)
	ports = append(ports,
		in("rd_en", 1, "read: the entry of rd_conn appears on rd_* at the next edge"),
		in("rd_conn", cw, "local connection id to read"),
		out("rd_remote_conn", wire.ConnIDBits, "the entry read: the peer's connection id"),
		out("rd_mac", wire.MACBits, "the entry read: the peer's MAC"),
		out("rd_ip", wire.IPv6AddrBits, "the entry read: the peer's IP"),
		out("rd_ipv6", 1, "the entry read: IPv6"),
	)
	return &hdl.Module{
		Name:   PeerTop,
		Source: "pipeline/peer.go",
		Doc: fmt.Sprintf("Peer table of %d connections: {ipv6, ip, mac, remote conn} (%d bits) per connection, "+
			"one write port (control plane, always ready) and one registered read port. A block RAM, no reset: "+
			"the control plane writes an entry before its connection sends.", 1<<cw, PeerW),
		Clock: "clk",
		Ports: ports,
		Tables: []hdl.Table{
			{Name: "peer_table", Depth: 1 << cw, Width: PeerW, Doc: "per connection: remote conn, MAC, IP"},
		},
	}
}

// peerSource is nic_peer_table ready for gen.Build.
func peerSource(cw int) (gen.Source, error) {
	text, err := templates.ReadFile("peer.v.tmpl")
	if err != nil {
		return gen.Source{}, fmt.Errorf("pipeline: template: %w", err)
	}
	return gen.Source{Module: peerModule(cw), Template: string(text), Data: struct{ PeerW, Depth int }{PeerW, 1 << cw}}, nil
}
