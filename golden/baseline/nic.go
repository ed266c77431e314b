package baseline

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/wire"
)

// cluster is what every NIC of a run shares: the fabric, the ledger and the configuration.
// QPs are created at both ends at once (out of band), so a NIC reaches its peers through it.
type cluster struct {
	net    *fabric.Network
	sim    *fabric.Sim
	ledger *traffic.Ledger
	cfg    Config
	space  psn.Space
	nics   []*NIC
}

// NIC is one host's RoCEv2 NIC: a reliable-connection QP per peer host, one port per plane.
type NIC struct {
	c     *cluster
	host  int
	ports []*nicPort
	qps   []*qp // by peer host; nil until the first message either way
	mem   *placement.HostMemory
	cnt   Counters
}

// nicPort is one NIC port: control packets (ACK, NAK, CNP) go first, then the port's QPs
// that have data, round robin among those whose rate limiter allows a packet now.
type nicPort struct {
	idx         int
	line        float64 // Gb/s
	ctrl        []*fabric.Packet
	ctrlHead    int
	link        float64 // Gb/s
	active      []*qp
	rr          int
	wakePending bool
	wakeAt      fabric.Time
}

// New creates one RoCEv2 NIC per host of net, attaches each to its host, and reports every
// data packet, arrival and completion to ledger.
func New(net *fabric.Network, ledger *traffic.Ledger, cfg Config) ([]*NIC, error) {
	if net == nil || ledger == nil {
		return nil, fmt.Errorf("baseline: a network and a ledger are required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	space, err := psn.NewSpace(PSNBits)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	c := &cluster{net: net, sim: net.Sim(), ledger: ledger, cfg: cfg, space: space}
	for h := 0; h < net.Hosts(); h++ {
		n := &NIC{c: c, host: h, qps: make([]*qp, net.Hosts()), mem: placement.NewHostMemory()}
		for k := 0; k < net.Planes(); k++ {
			line := cfg.LineGbps
			if line == 0 {
				line = net.HostPort(h, k).Gbps()
			}
			n.ports = append(n.ports, &nicPort{idx: k, line: line, link: net.HostPort(h, k).Gbps()})
		}
		c.nics = append(c.nics, n)
		net.Attach(h, n)
	}
	return c.nics, nil
}

// NewHosts is New for the experiment harness: the NICs as traffic.Hosts.
func NewHosts(net *fabric.Network, ledger *traffic.Ledger, cfg Config) ([]traffic.Host, error) {
	nics, err := New(net, ledger, cfg)
	if err != nil {
		return nil, err
	}
	hosts := make([]traffic.Host, len(nics))
	for i, n := range nics {
		hosts[i] = n
	}
	return hosts, nil
}

// Host is the NIC's host id.
func (n *NIC) Host() int { return n.host }

// Rate is the DCQCN current rate (Gb/s) of the QP toward peer, and whether that QP exists.
func (n *NIC) Rate(peer int) (float64, bool) {
	if peer < 0 || peer >= len(n.qps) || n.qps[peer] == nil {
		return 0, false
	}
	return n.qps[peer].rate.rc, true
}

// QPFailed reports whether the QP toward peer went to the error state (retry count exceeded).
func (n *NIC) QPFailed(peer int) bool {
	return peer >= 0 && peer < len(n.qps) && n.qps[peer] != nil && n.qps[peer].failed
}

// Submit posts message m (a Write or a Send from this host) on the QP to m.Dst. A message that
// cannot be sent (wrong source, bad destination, unknown opcode, or the QP is in error) is
// counted as rejected or flushed and never reaches the ledger's completions.
func (n *NIC) Submit(now fabric.Time, m *traffic.Message) {
	if m == nil || m.Src != n.host || m.Dst < 0 || m.Dst >= len(n.qps) || m.Dst == n.host ||
		(m.Op != wire.OpWrite && m.Op != wire.OpSend) || m.Len > MaxMessageBytes {
		n.cnt.Rejected++
		return
	}
	q := n.qp(m.Dst)
	if q.failed {
		n.cnt.MessagesFlushed++
		return
	}
	mtu := uint64(n.c.cfg.MTU)
	w := &wqe{msg: m, first: q.end, n: max(1, (uint64(m.Len)+mtu-1)/mtu), write: m.Op == wire.OpWrite}
	if w.write {
		w.va = q.nextVA
		regionAdvance(&q.nextVA, regionBase(n.host), uint64(m.Len))
	}
	q.end += w.n
	q.sq = append(q.sq, w)
	q.activate()
}

// qp returns the QP toward peer, creating it at both ends on first use.
func (n *NIC) qp(peer int) *qp {
	if q := n.qps[peer]; q != nil {
		return q
	}
	c := n.c
	lo, hi := min(n.host, peer), max(n.host, peer)
	plane := int(mix(c.cfg.Seed, uint64(lo), uint64(hi), 0xb1a2e) % uint64(c.net.Planes()))
	for _, end := range [2]struct{ a, b int }{{n.host, peer}, {peer, n.host}} {
		nic := c.nics[end.a]
		q := &qp{nic: nic, peer: end.b, port: nic.ports[plane], epsn: c.cfg.StartPSN,
			nextVA: regionBase(end.a), nextRecv: regionBase(end.b) | sendRegion}
		q.rate = newRateState(&c.cfg.DCQCN, q.port.line, q.port.link)
		for i := 0; i < c.cfg.SprayPaths; i++ {
			q.sports = append(q.sports, uint16(49152+mix(c.cfg.Seed, uint64(end.a), uint64(end.b), uint64(i))%16384))
		}
		nic.qps[end.b] = q
	}
	return n.qps[peer]
}

// Memory layout of a responder: each peer has a 2^44-byte region, its lower half for the
// Writes it targets (the requester picks the VA there), its upper half for its Sends (placed
// into posted receive buffers in order). Every message starts on a page, and its pages are
// freed once it has been verified, so memory stays bounded in long runs.
const sendRegion = 1 << 43

// regionBase is the base of requester src's region at any responder.
func regionBase(src int) uint64 { return (uint64(src) + 1) << 44 }

// regionAdvance moves the cursor *next of the half region starting at base past a message of
// n bytes placed at it, back to base when a longest message might no longer fit (after about
// 8 TiB, long since freed).
func regionAdvance(next *uint64, base, n uint64) {
	*next += pageRound(n)
	if *next-base > sendRegion-MaxMessageBytes {
		*next = base
	}
}

func pageRound(n uint64) uint64 {
	return (n + placement.PageSize - 1) / placement.PageSize * placement.PageSize
}

// mix is a splitmix64-style hash of its inputs (source ports and planes of QPs).
func mix(vs ...uint64) uint64 {
	x := uint64(0x9E3779B97F4A7C15)
	for _, v := range vs {
		x ^= v
		x += 0x9E3779B97F4A7C15
		x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
		x = (x ^ (x >> 27)) * 0x94D049BB133111EB
		x ^= x >> 31
	}
	return x
}

// Pull is the fabric asking NIC port port for its next frame.
func (n *NIC) Pull(now fabric.Time, port int) *fabric.Packet {
	if port < 0 || port >= len(n.ports) {
		return nil
	}
	p := n.ports[port]
	if p.ctrlHead < len(p.ctrl) {
		pkt := p.ctrl[p.ctrlHead]
		p.ctrl[p.ctrlHead] = nil
		p.ctrlHead++
		if p.ctrlHead == len(p.ctrl) {
			p.ctrl, p.ctrlHead = p.ctrl[:0], 0
		}
		return pkt
	}
	// Drop the QPs with nothing left to send, keeping the round-robin position.
	kept := p.active[:0]
	rr := 0
	for i, q := range p.active {
		if q.sendable() {
			if i < p.rr {
				rr++
			}
			kept = append(kept, q)
		} else {
			q.active = false
		}
	}
	for i := len(kept); i < len(p.active); i++ {
		p.active[i] = nil
	}
	p.active, p.rr = kept, rr
	const never = fabric.Time(1<<63 - 1)
	earliest := never
	for i := range p.active {
		j := (p.rr + i) % len(p.active)
		q := p.active[j]
		if t := q.eligibleAt(); t > now {
			earliest = min(earliest, t)
			continue
		}
		p.rr = j + 1
		return q.emit(now)
	}
	if earliest != never && (!p.wakePending || earliest < p.wakeAt) {
		p.wakePending, p.wakeAt = true, earliest
		n.c.sim.At(earliest, func() {
			if p.wakeAt == earliest {
				p.wakePending = false
			}
			n.c.net.Kick(n.host, p.idx)
		})
	}
	return nil
}

// sendCtrl queues a control packet to peer on port p.
func (n *NIC) sendCtrl(p *nicPort, pkt *fabric.Packet) {
	pkt.Control = true // ACKs, NAKs and CNPs ride the fabric's strict-priority class, as MetaRoCE's do
	p.ctrl = append(p.ctrl, pkt)
	n.c.net.Kick(n.host, p.idx)
}

// Receive is a frame arriving on NIC port port.
func (n *NIC) Receive(now fabric.Time, port int, pkt *fabric.Packet) {
	if pkt.Src < 0 || pkt.Src >= len(n.qps) || n.qps[pkt.Src] == nil {
		n.cnt.UnknownPackets++
		return
	}
	q := n.qps[pkt.Src]
	switch pl := pkt.Payload.(type) {
	case *DataPacket:
		q.receiveData(now, pkt, pl)
	case *AckPacket:
		q.receiveAck(now, pl)
	case *CNPPacket:
		q.receiveCNP(now)
	default:
		n.cnt.UnknownPackets++
	}
}
