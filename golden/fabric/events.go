package fabric

import "fmt"

// Failures take effect at a set time: the links stop carrying frames at once (frames on them
// and frames hashed onto them are lost), and routing stops using them RerouteDelay later, as a
// routing protocol reconverges (never, with a negative RerouteDelay). A NIC does not see a
// failure of its own link: it keeps sending into it, as a NIC behind a breakout or a
// retimer would. Transports must find out from their own timers.

// FailSwitch takes switch name (e.g. "p0.spine1") down at time at.
func (n *Network) FailSwitch(name string, at Time) error {
	sw := n.switchNamed(name)
	if sw == nil {
		return fmt.Errorf("fabric: no switch %q", name)
	}
	n.sim.At(at, func() { n.failNodes([]*node{sw}) })
	return nil
}

// FailPlane takes every switch of plane k down at time at.
func (n *Network) FailPlane(k int, at Time) error {
	if k < 0 || k >= n.planes {
		return fmt.Errorf("fabric: plane %d out of range 0..%d", k, n.planes-1)
	}
	var sws []*node
	for _, sw := range n.switches {
		if sw.plane == k {
			sws = append(sws, sw)
		}
	}
	n.sim.At(at, func() { n.failNodes(sws) })
	return nil
}

// FailLink takes the link between nodes a and b (names like "host3", "p0.leaf0", "p0.spine2")
// down in both directions at time at.
func (n *Network) FailLink(a, b string, at Time) error {
	var ports []*Port
	for _, nd := range n.allNodes() {
		for _, p := range nd.ports {
			if nd.name == a && p.peer.name == b || nd.name == b && p.peer.name == a {
				ports = append(ports, p)
			}
		}
	}
	if len(ports) == 0 {
		return fmt.Errorf("fabric: no link between %q and %q", a, b)
	}
	n.sim.At(at, func() { n.failPorts(ports) })
	return nil
}

func (n *Network) switchNamed(name string) *node {
	for _, sw := range n.switches {
		if sw.name == name {
			return sw
		}
	}
	return nil
}

func (n *Network) allNodes() []*node {
	return append(append([]*node(nil), n.hosts...), n.switches...)
}

func (n *Network) failNodes(sws []*node) {
	var ports []*Port
	for _, sw := range sws {
		sw.up = false
		for _, p := range sw.ports {
			ports = append(ports, p, p.peer.ports[p.peerPort])
		}
	}
	n.failPorts(ports)
}

func (n *Network) failPorts(ports []*Port) {
	for _, p := range ports {
		p.up = false
		// Frames queued behind a dead port are lost.
		for i := p.qHead; i < len(p.queue); i++ {
			p.Stats.DownDrops++
			p.queue[i] = nil
		}
		p.queue, p.qHead, p.qBytes = p.queue[:0], 0, 0
		for i := p.ctrlHead; i < len(p.ctrl); i++ {
			p.Stats.DownDrops++
			p.ctrl[i] = nil
		}
		p.ctrl, p.ctrlHead, p.ctrlBytes = p.ctrl[:0], 0, 0
	}
	n.Failures++
	if n.RerouteDelay >= 0 {
		n.sim.After(n.RerouteDelay, func() {
			for _, p := range ports {
				p.inRoute = false
			}
			n.route()
			n.Reroutes++
		})
	}
}

// Background is constant-rate load that enters the fabric at a host's leaf (as from a host
// outside the experiment), crosses it to a destination host's NIC and is consumed there. Each
// frame takes a fresh random UDP source port, so it spreads like many flows. It competes for
// every queue on its way, but never reaches the destination's transport.
type Background struct {
	Src, Dst int // hosts
	Plane    int
	Gbps     float64
	Bytes    int // frame size
	Start    Time
	Stop     Time
}

// AddBackground schedules a background source.
func (n *Network) AddBackground(b Background) error {
	switch {
	case b.Src < 0 || b.Src >= len(n.hosts) || b.Dst < 0 || b.Dst >= len(n.hosts):
		return fmt.Errorf("fabric: background hosts %d->%d out of range 0..%d", b.Src, b.Dst, len(n.hosts)-1)
	case b.Plane < 0 || b.Plane >= n.planes:
		return fmt.Errorf("fabric: background plane %d out of range 0..%d", b.Plane, n.planes-1)
	case b.Gbps <= 0 || b.Bytes < 64 || b.Stop <= b.Start:
		return fmt.Errorf("fabric: background needs a positive rate, frames of at least 64 B and Stop after Start")
	}
	leaf := n.hosts[b.Src].ports[b.Plane].peer
	gap := FrameTime(b.Bytes, b.Gbps)
	var emit func()
	emit = func() {
		if n.sim.now >= b.Stop {
			return
		}
		n.stats.BackgroundSent++
		pkt := &Packet{Src: b.Src, Dst: b.Dst, SrcPort: uint16(n.rng.Uint32()), DstPort: 9,
			Proto: 17, Bytes: b.Bytes, Plane: b.Plane, Sent: n.sim.now, bg: true}
		if leaf.up {
			n.forward(leaf, pkt)
		}
		n.sim.After(gap, emit)
	}
	n.sim.At(b.Start, emit)
	return nil
}
