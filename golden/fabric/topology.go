package fabric

import (
	"errors"
	"fmt"
)

// Topology describes a two-tier leaf-spine network, replicated Planes times: every host has one
// NIC port per plane, each plane is an independent leaf-spine (multiplane). With one leaf per
// plane there are no spines (a single switch).
type Topology struct {
	Hosts        int
	HostsPerLeaf int
	Spines       int // per plane; ignored with one leaf
	Planes       int
	// HostLinkGbps is the rate of every host-leaf link; FabricLinkGbps of every leaf-spine link.
	HostLinkGbps, FabricLinkGbps float64
	// LinkDelay is the propagation delay of every link.
	LinkDelay Time
	// Jitter adds a uniformly random delay in [0, Jitter) to every frame's propagation, kept
	// FIFO per link (a frame never overtakes the previous one on its link). A little jitter
	// breaks the phase lock-outs of perfectly periodic arrivals at a full drop-tail queue.
	Jitter Time
	// SpineDelaySkew adds s × SpineDelaySkew to the delay of spine s's links, so that routes
	// through different spines differ in delay and sprayed packets arrive out of order.
	SpineDelaySkew Time
	// BufferBytes is the drop-tail capacity of every switch egress port's data queue.
	BufferBytes int
	// ControlBufferBytes is the drop-tail capacity of every switch egress port's control queue,
	// served with strict priority over the data queue (Packet.Control); 0: no control class,
	// control packets share the data queue.
	ControlBufferBytes int
	// RED is the ECN marking profile of every switch egress queue.
	RED RED
	// Seed seeds the ECMP salts, random loss and ECN marking draws.
	Seed uint64
}

// DefaultTopology is 16 hosts on 4 leaves and 4 spines, one plane, 100 Gb/s everywhere, 1 µs
// links with up to 20 ns of jitter, 1 MB egress buffers for data and 64 KiB for the
// strict-priority control class, and DCQCN-style marking (Kmin 100 KB, Kmax 400 KB, Pmax 0.2).
func DefaultTopology() Topology {
	return Topology{Hosts: 16, HostsPerLeaf: 4, Spines: 4, Planes: 1, HostLinkGbps: 100,
		FabricLinkGbps: 100, LinkDelay: Microsecond, Jitter: 20 * Nanosecond, BufferBytes: 1 << 20,
		ControlBufferBytes: 64 << 10,
		RED:                RED{KminBytes: 100_000, KmaxBytes: 400_000, Pmax: 0.2}, Seed: 1}
}

// Leaves is the number of leaves per plane.
func (t Topology) Leaves() int { return (t.Hosts + t.HostsPerLeaf - 1) / t.HostsPerLeaf }

// Validate checks a topology.
func (t Topology) Validate() error {
	var errs []error
	if t.Hosts < 2 {
		errs = append(errs, fmt.Errorf("hosts %d: at least 2", t.Hosts))
	}
	if t.HostsPerLeaf < 1 {
		errs = append(errs, fmt.Errorf("hosts per leaf %d: at least 1", t.HostsPerLeaf))
	}
	if t.Planes < 1 || t.Planes > 64 {
		errs = append(errs, fmt.Errorf("planes %d: 1..64", t.Planes))
	}
	if t.HostsPerLeaf >= 1 && t.Leaves() > 1 && t.Spines < 1 {
		errs = append(errs, fmt.Errorf("spines %d: at least 1 with %d leaves", t.Spines, t.Leaves()))
	}
	if t.HostLinkGbps <= 0 || t.FabricLinkGbps <= 0 {
		errs = append(errs, fmt.Errorf("link rates %.1f/%.1f Gb/s: must be positive", t.HostLinkGbps, t.FabricLinkGbps))
	}
	if t.LinkDelay < 0 || t.BufferBytes < 0 || t.ControlBufferBytes < 0 || t.SpineDelaySkew < 0 || t.Jitter < 0 {
		errs = append(errs, errors.New("link delay and buffer must not be negative"))
	}
	if t.RED.KmaxBytes > 0 && (t.RED.KminBytes > t.RED.KmaxBytes || t.RED.Pmax < 0 || t.RED.Pmax > 1) {
		errs = append(errs, fmt.Errorf("RED Kmin %d Kmax %d Pmax %g: need Kmin ≤ Kmax and 0 ≤ Pmax ≤ 1", t.RED.KminBytes, t.RED.KmaxBytes, t.RED.Pmax))
	}
	if len(errs) > 0 {
		return fmt.Errorf("fabric topology: %w", errors.Join(errs...))
	}
	return nil
}

// Build creates the network of a topology on sim.
func Build(sim *Sim, t Topology) (*Network, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	n := newNetwork(sim, t.Seed, t.Planes)
	leaves := t.Leaves()
	spines := t.Spines
	if leaves == 1 {
		spines = 0
	}
	for h := 0; h < t.Hosts; h++ {
		n.hosts = append(n.hosts, &node{id: h, kind: hostNode, name: fmt.Sprintf("host%d", h), up: true})
	}
	leafOf := make([][]*node, t.Planes)
	spineOf := make([][]*node, t.Planes)
	salt := t.Seed*0x9E3779B97F4A7C15 + 1
	newSwitch := func(name string, plane int) *node {
		salt = salt*6364136223846793005 + 1442695040888963407
		sw := &node{id: len(n.switches), kind: switchNode, name: name, plane: plane, up: true, salt: salt}
		n.switches = append(n.switches, sw)
		return sw
	}
	for k := 0; k < t.Planes; k++ {
		for l := 0; l < leaves; l++ {
			leafOf[k] = append(leafOf[k], newSwitch(fmt.Sprintf("p%d.leaf%d", k, l), k))
		}
		for s := 0; s < spines; s++ {
			spineOf[k] = append(spineOf[k], newSwitch(fmt.Sprintf("p%d.spine%d", k, s), k))
		}
	}
	// Hosts: port k of every host is its link to plane k.
	for k := 0; k < t.Planes; k++ {
		for h, hn := range n.hosts {
			n.link(hn, leafOf[k][h/t.HostsPerLeaf], t.HostLinkGbps, t)
		}
		for _, lf := range leafOf[k] {
			for s, sp := range spineOf[k] {
				n.link(lf, sp, t.FabricLinkGbps, t)
				lf.ports[len(lf.ports)-1].Delay += Time(s) * t.SpineDelaySkew
				sp.ports[len(sp.ports)-1].Delay += Time(s) * t.SpineDelaySkew
			}
		}
	}
	for k := range leafOf {
		for _, lf := range leafOf[k] {
			lf.leaf = true
		}
	}
	n.route()
	return n, nil
}

// link connects a and b with a full-duplex link (one egress Port at each end).
func (n *Network) link(a, b *node, gbps float64, t Topology) {
	mk := func(from, to *node) *Port {
		p := &Port{Name: from.name + "->" + to.name, owner: from, peer: to, gbps: gbps,
			Delay: t.LinkDelay, Jitter: t.Jitter, up: true, inRoute: true}
		if from.kind == switchNode {
			p.capBytes, p.red, p.ctrlCap = t.BufferBytes, t.RED, t.ControlBufferBytes
		}
		return p
	}
	pa, pb := mk(a, b), mk(b, a)
	pa.peerPort, pb.peerPort = len(b.ports), len(a.ports)
	a.ports = append(a.ports, pa)
	b.ports = append(b.ports, pb)
}

// route computes every switch's ECMP groups from the ports still in routing: a leaf reaches its
// own hosts directly and other hosts through every spine that still has a routed port down to
// their leaf; a spine reaches a host through the host's leaf.
func (n *Network) route() {
	for _, sw := range n.switches {
		sw.routes = make([][]int, len(n.hosts))
		for dst, h := range n.hosts {
			dstLeaf := h.ports[sw.plane].peer
			var g []int
			for i, p := range sw.ports {
				switch {
				case !p.inRoute:
				case p.peer == h: // directly attached
					g = append(g, i)
				case sw == dstLeaf: // the destination's own leaf uses only the host port
				case p.peer == dstLeaf: // spine down to the destination's leaf
					g = append(g, i)
				case sw.leaf && p.peer.kind == switchNode && reaches(p.peer, dstLeaf):
					g = append(g, i)
				}
			}
			sw.routes[dst] = g
		}
	}
}

// reaches reports whether spine sp still has a routed port down to leaf.
func reaches(sp, leaf *node) bool {
	for _, p := range sp.ports {
		if p.peer == leaf && p.inRoute {
			return true
		}
	}
	return false
}
