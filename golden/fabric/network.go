package fabric

import "math/rand/v2"

// ECN codepoints of the IP header's two ECN bits.
const (
	NotECT uint8 = 0
	ECT1   uint8 = 1
	ECT0   uint8 = 2
	CE     uint8 = 3
)

// WireOverhead is the per-frame cost on the wire beyond Packet.Bytes: preamble and start
// delimiter (8 B) and the minimum inter-frame gap (12 B). Packet.Bytes includes the FCS.
const WireOverhead = 20

// FCSBytes is the Ethernet frame check sequence the MAC appends; Packet.Bytes counts it.
const FCSBytes = 4

// Packet is one frame in flight. The fabric reads the addressing, size and ECN fields; Payload
// is the transport's and is never looked at.
type Packet struct {
	ID       uint64 // assigned by the fabric when the packet enters it
	Src, Dst int    // host ids
	SrcPort  uint16 // UDP source port: the ECMP entropy
	DstPort  uint16
	Proto    uint8 // IP protocol (17 for UDP)
	Bytes    int   // frame length including headers and FCS
	ECN      uint8 // IP ECN field; switches mark CE on ECT packets
	Plane    int   // the source NIC port (= plane) it left on; set by the fabric
	Sent     Time  // when its first bit left the source NIC; set by the fabric
	// Control puts the packet in the switches' strict-priority control class (acknowledgements,
	// NAKs, congestion notifications, announcements: small packets the transport marks, as a
	// deployment maps them to a high-priority traffic class by DSCP). Data is the default class.
	Control bool
	Payload any
	bg      bool // background load: consumed at the destination NIC, never delivered
}

// Endpoint is a host's NIC as the fabric sees it. The fabric pulls a packet whenever a NIC port
// is idle (the endpoint owns its scheduling and queues) and delivers arriving packets.
type Endpoint interface {
	// Receive delivers p, which arrived on NIC port (plane) port.
	Receive(now Time, port int, p *Packet)
	// Pull returns the next packet to send on port, or nil when there is none; the endpoint
	// calls Network.Kick when it has a packet again.
	Pull(now Time, port int) *Packet
}

// RED is a RED-style ECN marking profile on an egress queue: no marks below KminBytes,
// probability rising linearly to Pmax at KmaxBytes, every ECT packet marked above it.
type RED struct {
	KminBytes, KmaxBytes int
	Pmax                 float64
}

// markProb is the marking probability at a queue of q bytes.
func (r RED) markProb(q int) float64 {
	switch {
	case r.KmaxBytes <= 0 || q <= r.KminBytes:
		return 0
	case q >= r.KmaxBytes:
		return 1
	}
	return r.Pmax * float64(q-r.KminBytes) / float64(r.KmaxBytes-r.KminBytes)
}

// PortStats are the counters of one egress port.
type PortStats struct {
	TxPackets, TxBytes uint64
	TailDrops          uint64 // a queue was full (either class)
	ControlTailDrops   uint64 // of which the control queue
	LossDrops          uint64 // random loss on the link
	DownDrops          uint64 // the link was down
	Marks              uint64 // CE marks set here
	MaxQueueBytes      int    // the data queue's peak
	MaxControlBytes    int    // the control queue's peak
}

// Port is the egress side of one direction of a link: a queue, a serializer and the wire to the
// far end.
type Port struct {
	Name     string
	owner    *node
	peer     *node
	peerPort int // the far end's port index (its ingress)
	gbps     float64
	Delay    Time
	Jitter   Time    // extra propagation delay, uniform in [0, Jitter), FIFO per link
	lastArr  Time    // arrival time of the previous frame (FIFO under jitter)
	Loss     float64 // probability a frame is lost on this link
	// Mark is the probability that an ECN-capable data frame queued on this (switch) port is
	// marked CE regardless of the queue, on top of RED: a fault that exercises the ECN paths
	// of the endpoints without the congestion that normally causes marks.
	Mark     float64
	up       bool
	inRoute  bool // still used by routing (false after reconvergence removed it)
	capBytes int  // drop-tail capacity (switch ports); 0 for NIC ports, which hold no queue
	red      RED
	queue    []*Packet // the data class
	qHead    int
	qBytes   int
	// The control class (switch ports with ControlBufferBytes > 0): a second drop-tail queue
	// with its own capacity, always served before the data queue (strict priority, not
	// preemptive: a data frame being serialized finishes first). No ECN marking.
	ctrlCap   int
	ctrl      []*Packet
	ctrlHead  int
	ctrlBytes int
	busy      bool
	pulling   bool
	Stats     PortStats
}

// Up reports whether the link is up.
func (p *Port) Up() bool { return p.up }

// Gbps is the link's rate.
func (p *Port) Gbps() float64 { return p.gbps }

// QueueBytes is the current occupancy of the data queue.
func (p *Port) QueueBytes() int { return p.qBytes }

// ControlQueueBytes is the current occupancy of the control queue.
func (p *Port) ControlQueueBytes() int { return p.ctrlBytes }

func (p *Port) serialize(bytes int) Time { return FrameTime(bytes, p.gbps) }

// FrameTime is how long a frame of bytes (Packet.Bytes) occupies a link of gbps Gb/s,
// WireOverhead included, to the nearest picosecond: serialization, and the spacing of frames
// sent at that rate.
func FrameTime(bytes int, gbps float64) Time {
	return Time(float64((bytes+WireOverhead)*8)*1000/gbps + 0.5)
}

type nodeKind uint8

const (
	hostNode nodeKind = iota
	switchNode
)

type node struct {
	id    int // host id or switch id
	kind  nodeKind
	name  string
	ports []*Port
	plane int
	up    bool
	leaf  bool // a switch with host ports
	// routes[dst host] lists the egress ports of the ECMP group toward that host (switches).
	routes [][]int
	salt   uint64
	ep     Endpoint // hosts
}

// Stats are fabric-wide totals.
type Stats struct {
	Injected, Delivered        uint64
	TailDrops, LossDrops       uint64
	ControlTailDrops           uint64 // the part of TailDrops in control queues
	DownDrops, NoRouteDrops    uint64
	Marks                      uint64
	BackgroundSent, Background uint64 // background packets injected / consumed
	MaxQueueBytes              int    // the largest data queue of any switch port
	MaxControlBytes            int    // the largest control queue of any switch port
}

// Network holds the nodes and links and moves packets between them.
type Network struct {
	sim      *Sim
	rng      *rand.Rand
	hosts    []*node
	switches []*node
	planes   int
	nextID   uint64
	stats    Stats
	// RerouteDelay is how long after a failure routing stops hashing onto the dead links;
	// negative: never within the run (a black hole until repaired).
	RerouteDelay Time
	// Failures and Reroutes count failure events and routing reconvergences.
	Failures, Reroutes int
	// OnDeliver, when set, sees every packet handed to a host (tests, pcap writers).
	OnDeliver func(now Time, host, port int, p *Packet)
}

func newNetwork(sim *Sim, seed uint64, planes int) *Network {
	n := &Network{sim: sim, rng: rand.New(rand.NewPCG(seed, 0xfab41c)), planes: planes, RerouteDelay: -1}
	sim.net = n
	return n
}

// Sim is the event loop the network runs on.
func (n *Network) Sim() *Sim { return n.sim }

// Hosts is the number of hosts.
func (n *Network) Hosts() int { return len(n.hosts) }

// Planes is the number of NIC ports per host (independent planes).
func (n *Network) Planes() int { return n.planes }

// Stats returns the fabric-wide totals.
func (n *Network) Stats() Stats {
	s := n.stats
	for _, sw := range n.switches {
		for _, p := range sw.ports {
			s.TailDrops += p.Stats.TailDrops
			s.ControlTailDrops += p.Stats.ControlTailDrops
			s.Marks += p.Stats.Marks
			s.MaxQueueBytes = max(s.MaxQueueBytes, p.Stats.MaxQueueBytes)
			s.MaxControlBytes = max(s.MaxControlBytes, p.Stats.MaxControlBytes)
		}
	}
	for _, nd := range append(append([]*node(nil), n.hosts...), n.switches...) {
		for _, p := range nd.ports {
			s.LossDrops += p.Stats.LossDrops
			s.DownDrops += p.Stats.DownDrops
		}
	}
	return s
}

// HostPort is host h's NIC port toward plane k.
func (n *Network) HostPort(h, k int) *Port { return n.hosts[h].ports[k] }

// DownlinkTo is the switch port that feeds host h on plane k (its queue is the incast queue).
func (n *Network) DownlinkTo(h, k int) *Port {
	hp := n.hosts[h].ports[k]
	return hp.peer.ports[hp.peerPort]
}

// Attach installs host h's endpoint.
func (n *Network) Attach(h int, ep Endpoint) { n.hosts[h].ep = ep }

// SetLinkLoss sets the random loss probability of every link that delivers to a host (the last
// hop), so that every packet, data or control, crosses exactly one lossy link.
func (n *Network) SetLinkLoss(p float64) {
	for h := range n.hosts {
		for k := 0; k < n.planes; k++ {
			n.DownlinkTo(h, k).Loss = p
		}
	}
}

// SetLinkMark sets the random CE marking probability (Port.Mark) of every link that delivers
// to a host (the last hop), so that a data frame is marked on its way to any host with
// probability p, besides the marks of RED.
func (n *Network) SetLinkMark(p float64) {
	for h := range n.hosts {
		for k := 0; k < n.planes; k++ {
			n.DownlinkTo(h, k).Mark = p
		}
	}
}

// SetAllLinkLoss sets the loss probability of every link in both directions.
func (n *Network) SetAllLinkLoss(p float64) {
	for _, nd := range append(append([]*node(nil), n.hosts...), n.switches...) {
		for _, pt := range nd.ports {
			pt.Loss = p
		}
	}
}

// Kick tells the fabric host h has something to send on port k: an idle port pulls at once.
func (n *Network) Kick(h, k int) {
	p := n.hosts[h].ports[k]
	if p.busy {
		return
	}
	if p.pulling {
		// Kick from inside Pull: pull again after it returns, at the same time.
		n.sim.push(event{at: n.sim.now, kind: evPullPort, port: p})
		return
	}
	n.pull(p)
}

func (n *Network) pull(p *Port) {
	if p.busy || p.owner.ep == nil {
		return
	}
	p.pulling = true
	pkt := p.owner.ep.Pull(n.sim.now, n.portIndex(p))
	p.pulling = false
	if pkt == nil {
		return
	}
	n.nextID++
	pkt.ID, pkt.Src, pkt.Plane, pkt.Sent = n.nextID, p.owner.id, n.portIndex(p), n.sim.now
	n.stats.Injected++
	n.transmit(p, pkt)
}

func (n *Network) portIndex(p *Port) int {
	for i, q := range p.owner.ports {
		if q == p {
			return i
		}
	}
	panic("fabric: port not owned by its node")
}

func (n *Network) transmit(p *Port, pkt *Packet) {
	p.busy = true
	n.sim.push(event{at: n.sim.now + p.serialize(pkt.Bytes), kind: evTxDone, port: p, pkt: pkt})
}

func (n *Network) handle(e event) {
	switch e.kind {
	case evTxDone:
		n.txDone(e.port, e.pkt)
	case evArrive:
		n.arrive(e.port.peer, e.port.peerPort, e.pkt)
	case evPullPort:
		n.pull(e.port)
	}
}

func (n *Network) txDone(p *Port, pkt *Packet) {
	p.busy = false
	p.Stats.TxPackets++
	p.Stats.TxBytes += uint64(pkt.Bytes)
	switch {
	case !p.up:
		p.Stats.DownDrops++
	case p.Loss > 0 && n.rng.Float64() < p.Loss:
		p.Stats.LossDrops++
	default:
		at := n.sim.now + p.Delay
		if p.Jitter > 0 {
			at = max(at+Time(n.rng.Int64N(int64(p.Jitter))), p.lastArr)
			p.lastArr = at
		}
		n.sim.push(event{at: at, kind: evArrive, port: p, pkt: pkt})
	}
	// Next frame: switch ports drain their queues, control first; NIC ports pull from the
	// endpoint.
	if p.owner.kind == switchNode {
		if p.ctrlHead < len(p.ctrl) {
			next := p.ctrl[p.ctrlHead]
			p.ctrl[p.ctrlHead] = nil
			p.ctrlHead++
			if p.ctrlHead == len(p.ctrl) {
				p.ctrl, p.ctrlHead = p.ctrl[:0], 0
			}
			p.ctrlBytes -= next.Bytes
			n.transmit(p, next)
			return
		}
		if p.qHead < len(p.queue) {
			next := p.queue[p.qHead]
			p.queue[p.qHead] = nil
			p.qHead++
			if p.qHead == len(p.queue) {
				p.queue, p.qHead = p.queue[:0], 0
			}
			p.qBytes -= next.Bytes
			n.transmit(p, next)
		}
		return
	}
	n.pull(p)
}

func (n *Network) arrive(nd *node, inPort int, pkt *Packet) {
	if !nd.up {
		n.stats.DownDrops++
		return
	}
	if nd.kind == hostNode {
		if pkt.bg {
			n.stats.Background++
			return
		}
		n.stats.Delivered++
		if n.OnDeliver != nil {
			n.OnDeliver(n.sim.now, nd.id, inPort, pkt)
		}
		if nd.ep != nil {
			nd.ep.Receive(n.sim.now, inPort, pkt)
		}
		return
	}
	n.forward(nd, pkt)
}

// hash5 is the ECMP hash of a packet's 5-tuple with a per-switch salt (FNV-1a, 64 bit).
func hash5(salt uint64, pkt *Packet) uint64 {
	h := uint64(14695981039346656037) ^ salt
	for _, v := range [...]uint64{uint64(pkt.Src), uint64(pkt.Dst), uint64(pkt.SrcPort), uint64(pkt.DstPort), uint64(pkt.Proto)} {
		for i := 0; i < 4; i++ {
			h ^= v & 0xff
			h *= 1099511628211
			v >>= 8
		}
	}
	return h
}

func (n *Network) forward(sw *node, pkt *Packet) {
	group := sw.routes[pkt.Dst]
	if len(group) == 0 {
		n.stats.NoRouteDrops++
		return
	}
	p := sw.ports[group[hash5(sw.salt, pkt)%uint64(len(group))]]
	n.enqueue(p, pkt)
}

func (n *Network) enqueue(p *Port, pkt *Packet) {
	if pkt.Control && p.ctrlCap > 0 {
		n.enqueueControl(p, pkt)
		return
	}
	q := p.qBytes
	if p.capBytes > 0 && q+pkt.Bytes > p.capBytes {
		p.Stats.TailDrops++
		return
	}
	if pkt.ECN == ECT0 || pkt.ECN == ECT1 {
		red := false
		if p.red.KmaxBytes > 0 {
			pr := p.red.markProb(q)
			red = pr >= 1 || (pr > 0 && n.rng.Float64() < pr)
		}
		// The random mark draws only on ports that have one, so runs without it are unchanged.
		if red || (p.Mark > 0 && n.rng.Float64() < p.Mark) {
			pkt.ECN = CE
			p.Stats.Marks++
		}
	}
	if !p.busy {
		n.transmit(p, pkt)
		return
	}
	p.queue = append(p.queue, pkt)
	p.qBytes += pkt.Bytes
	p.Stats.MaxQueueBytes = max(p.Stats.MaxQueueBytes, p.qBytes)
}

// String names a port for reports.
func (p *Port) String() string { return p.Name }

// enqueueControl queues a control packet in the port's control class: drop-tail at its own
// capacity, never marked, sent before any queued data.
func (n *Network) enqueueControl(p *Port, pkt *Packet) {
	if p.ctrlBytes+pkt.Bytes > p.ctrlCap {
		p.Stats.TailDrops++
		p.Stats.ControlTailDrops++
		return
	}
	if !p.busy {
		n.transmit(p, pkt)
		return
	}
	p.ctrl = append(p.ctrl, pkt)
	p.ctrlBytes += pkt.Bytes
	p.Stats.MaxControlBytes = max(p.Stats.MaxControlBytes, p.ctrlBytes)
}
