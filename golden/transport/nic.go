package transport

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/acker"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// frame is what a fabric packet carries: the wire packet, plus the ledger's identity of a data
// packet (message and packet index). The identity is the experiment's oracle bookkeeping
// (arrivals, spurious retransmissions, completions); no protocol decision reads it.
type frame struct {
	w     *wire.Packet
	msgID uint64
	idx   uint32
	sent  bool       // a data packet of this NIC's sender: ref names its record (told at Pull)
	ref   sender.Ref // the record it was sent from
}

type conn struct {
	idx, peer int
	// Send side, the host's part: the work requests posted per stream (the next one's MSN)
	// and those waiting for room in the sender's work-request ring (the host's backlog).
	posted  []uint32
	backlog [][]sender.WorkRequest
	// Receive side.
	reply  []*fabric.Packet  // per path: the latest data packet (its ACKs go back its way)
	rxMsg  map[uint64]uint64 // stream<<32|MSN -> message id, for completions
	rkeyAt uint32            // rkey of this connection's WRITE region at this host
}

// NIC is one host's MetaRoCE NIC.
type NIC struct {
	nw      *Network
	host    int
	planes  int
	paths   int
	snd     *sender.Sender // the send side (golden/sender)
	tick    fabric.Time    // the sender's clock period: 1 ps, or 1 ns (SenderClock)
	srx     *sack.Receiver
	pl      *placement.Engine
	mem     *placement.HostMemory
	conns   []*conn
	ctrlQ   [][]*fabric.Packet
	dataQ   [][]*fabric.Packet
	ack     *acker.Acker                   // the receive side's ACK scheduler
	tap     Tap                            // closed-loop co-simulation (nil: none)
	sendObs func(fabric.Time, sender.Call) // observer of the sender's calls (nil: none)
	setup   []SetupOp                      // the placement setup done at construction
	ackWake fabric.Time                    // its timer is scheduled for this time (0: none)
	linkMb  float64
	cnt     map[string]uint64
}

func newNIC(nw *Network, h int) (*NIC, error) {
	c := nw.cfg.NIC
	planes := nw.net.Planes()
	nic := &NIC{nw: nw, host: h, planes: planes, paths: c.PathsPerConnection,
		srx: sack.NewReceiver(nw.sprm), pl: placement.New(nw.plPrm), mem: placement.NewHostMemory(),
		ctrlQ: make([][]*fabric.Packet, planes), dataQ: make([][]*fabric.Packet, planes),
		cnt: map[string]uint64{}, tick: fabric.Picosecond}
	for k := 0; k < planes; k++ {
		nic.linkMb += nw.net.HostPort(h, k).Gbps() * 1000
	}
	for i := 0; i < c.Connections; i++ {
		cn := &conn{idx: i, peer: peerOf(h, i), posted: make([]uint32, c.StreamsPerConnection),
			backlog: make([][]sender.WorkRequest, c.StreamsPerConnection), reply: make([]*fabric.Packet, nic.paths), rxMsg: map[uint64]uint64{}}
		// This host's WRITE region for the connection, and its posted receives.
		rkey, err := nic.pl.RegisterRegion(uint16(i), writeBase+uint64(i)*nw.areaSize(), nw.areaSize(), placement.AccessRemoteWrite)
		if err != nil {
			return nil, err
		}
		cn.rkeyAt = rkey
		nic.setup = append(nic.setup, SetupOp{Register: true, Conn: i, Addr: writeBase + uint64(i)*nw.areaSize(),
			Len: nw.areaSize(), Access: placement.AccessRemoteWrite, RKey: rkey})
		for s := 0; s < c.StreamsPerConnection; s++ {
			for k := 0; k < c.PostedReceivesPerStream; k++ {
				addr := nw.slotAddr(sendBase, i, s, uint32(k))
				if err := nic.pl.PostReceive(i, s, addr, uint32(nw.slot)); err != nil {
					return nil, err
				}
				nic.setup = append(nic.setup, SetupOp{Conn: i, Stream: s, Addr: addr, Len: nw.slot})
			}
		}
		nic.conns = append(nic.conns, cn)
	}
	a, err := acker.New(nic.ackerParams())
	if err != nil {
		return nil, fmt.Errorf("transport: host %d: %w", h, err)
	}
	nic.ack = a
	snd, err := sender.New(nic.senderParams())
	if err != nil {
		return nil, fmt.Errorf("transport: host %d: %w", h, err)
	}
	nic.snd = snd
	return nic, nil
}

// Host is the host id.
func (nic *NIC) Host() int { return nic.host }

// Memory is the NIC's host memory.
func (nic *NIC) Memory() *placement.HostMemory { return nic.mem }

// ActiveSenders is the number of connections the rate hint currently counts as sending here.
func (nic *NIC) ActiveSenders() int { return nic.ack.Active() }

// Window is the NIC's window table (read it, do not change it).
func (nic *NIC) Window() *window.Table { return nic.snd.Window() }

// Occupancy is the most each of the send side's bounded tables has held.
func (nic *NIC) Occupancy() sender.Occupancy { return nic.snd.Occupancy() }

// PeakOccupancy is the most each send-side table held on any of hosts that are MetaRoCE NICs
// (golden/sender Occupancy), and whether any is.
func PeakOccupancy(hosts []traffic.Host) (sender.Occupancy, bool) {
	var peak sender.Occupancy
	found := false
	for _, h := range hosts {
		if nic, ok := h.(*NIC); ok {
			peak, found = peak.Max(nic.Occupancy()), true
		}
	}
	return peak, found
}

// Counters returns the NIC's protocol counters.
func (nic *NIC) Counters() map[string]uint64 {
	out := nic.snd.Counters.Named()
	for k, v := range nic.cnt {
		out[k] = v
	}
	pc := nic.pl.Counters()
	for r := placement.DropReason(1); r < placement.NumDropReasons; r++ {
		if pc.Drops[r] > 0 {
			out["placement_"+r.String()] = pc.Drops[r]
		}
	}
	out["rx_new"], out["rx_duplicate"], out["rx_old"], out["rx_beyond"] = nic.srx.Counters.New, nic.srx.Counters.Duplicate, nic.srx.Counters.Old, nic.srx.Counters.Beyond
	sc := nic.snd.SackCounters()
	out["ack_accepted"], out["ack_duplicate"], out["ack_stale"], out["ack_invalid"] = sc.Accepted, sc.Duplicate, sc.Stale, sc.Invalid
	if ac := nic.ack.Counters; ac.Announces > 0 {
		// announces_answered counts every answer, refreshes included.
		out["announces_answered"], out["announces_refreshed"] = ac.Announced+ac.Refreshed, ac.Refreshed
		out["announces_unanswered"] = ac.AnnouncesIgnored
	}
	return out
}

func (nic *NIC) now() fabric.Time    { return nic.nw.net.Sim().Now() }
func (nic *NIC) nowNS64() uint64     { return uint64(nic.now().NS()) }
func (nic *NIC) portOf(path int) int { return PortOf(path, nic.planes) }

// PortOf is the NIC port (plane) a path's data packets leave on, of ports: path mod ports.
func PortOf(path, ports int) int { return path % ports }

// ticks is now on the sender's clock: golden/fabric's picoseconds, or nanoseconds (SenderClock).
func (nic *NIC) ticks() uint64 { return nic.ticksAt(nic.now()) }

// ticksAt is time t on the sender's clock (rounded down to a tick).
func (nic *NIC) ticksAt(t fabric.Time) uint64 { return uint64(t / nic.tick) }

// timeOf is the fabric time of sender tick t.
func (nic *NIC) timeOf(t uint64) fabric.Time { return fabric.Time(t) * nic.tick }
func (nic *NIC) index(c, path int) int {
	i, _ := nic.nw.sprm.Index(uint32(c), uint32(path))
	return i
}

// Submit posts a message (traffic.Host): its work request goes into the sender's ring for its
// (connection, stream), or waits in the host's backlog while the ring is full, and the
// connection's doorbell rings.
func (nic *NIC) Submit(now fabric.Time, m *traffic.Message) {
	if m.Dst == nic.host || m.Dst < 0 || m.Dst >= len(nic.conns)+1 {
		nic.cnt["submit_rejected"]++
		return
	}
	cn := nic.conns[ConnIndex(nic.host, m.Dst)]
	if err := nic.post(cn, nic.workRequest(cn, m.Stream%len(cn.posted), m)); err != nil {
		nic.cnt["submit_rejected"]++
		return
	}
	if _, err := nic.send(sender.Call{Op: sender.OpDoorbell, Conn: cn.idx}); err != nil {
		panic(err) // cn.idx is a connection of this NIC
	}
	nic.fill()
	nic.startTimer()
}

// Pull hands the fabric the next packet of a port: control first, then data (fabric.Endpoint).
func (nic *NIC) Pull(now fabric.Time, port int) *fabric.Packet {
	var p *fabric.Packet
	switch {
	case len(nic.ctrlQ[port]) > 0:
		p = nic.ctrlQ[port][0]
		nic.ctrlQ[port] = nic.ctrlQ[port][1:]
		if a := p.Payload.(*frame).w.Announce; a != nil {
			a.Timestamp = uint32(now.NS())
		}
	case len(nic.dataQ[port]) > 0:
		p = nic.dataQ[port][0]
		nic.dataQ[port] = nic.dataQ[port][1:]
		fr := p.Payload.(*frame)
		ts := uint32(now.NS())
		if fr.w.Write != nil {
			fr.w.Write.Timestamp = ts
		} else {
			fr.w.Send.Timestamp = ts
		}
		if fr.sent {
			nic.send(sender.Call{Op: sender.OpLeft, Ref: fr.ref})
		}
		nic.fill()
	}
	return p
}

// Receive handles a packet from the fabric (fabric.Endpoint).
func (nic *NIC) Receive(now fabric.Time, port int, p *fabric.Packet) {
	fr, ok := p.Payload.(*frame)
	if !ok || fr.w == nil {
		nic.cnt["rx_foreign"]++
		return
	}
	w := fr.w
	if int(w.BTH.ConnID) >= len(nic.conns) || int(w.BTH.PathID) >= nic.paths {
		nic.cnt["rx_bad_id"]++
		return
	}
	switch w.BTH.Opcode {
	case wire.OpWrite, wire.OpSend:
		nic.onData(p, fr)
	case wire.OpAck:
		nic.onAck(w)
	case wire.OpNak:
		nic.onNak(w)
	case wire.OpAnnounce:
		nic.onAnnounce(p, w)
	}
	nic.fill()
	nic.startTimer()
}
