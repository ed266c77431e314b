package transport

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/acker"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/sack"
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
	rec   *txPkt // sender side: the record it was sent from (stamped at Pull)
}

// msgState is a message being sent.
type msgState struct {
	m      *traffic.Message
	msn    uint32
	stream int
	n      uint32 // packets
	next   uint32 // next packet to send for the first time
	acked  uint32
	got    []uint64 // packets acknowledged (a packet may have copies on two paths)
	done   bool
	va     uint64 // WRITE: address of byte 0 at the receiver
	rkey   uint32
}

// txPkt is one data packet the sender keeps until it is acknowledged: its identity and where
// it went (path, PSN).
type txPkt struct {
	conn   int
	ms     *msgState
	idx    uint32
	path   int
	psn    uint32
	sacked bool
	init   bool   // carries FlagPathInit
	retx   bool   // has been retransmitted
	sentAt uint32 // when its latest copy left the NIC (ns mod 2^32)
	queued bool   // waiting in the retransmit queue
	inNIC  bool   // a copy waits in a port queue (not on the wire yet)
	dead   bool   // acknowledged or moved: references to it are stale
	copied bool   // a copy went to other paths after a timeout of this one
	nakked bool   // refused by the receiver (NAK): its acknowledgement is not progress
}

type stream struct {
	pending []*msgState // posted, not yet started
	started []*msgState // started and not fully acknowledged, in MSN order
	cur     *msgState   // the started message still being cut into packets
	nextMSN uint32
}

type conn struct {
	idx, peer int
	streams   []stream
	rrStream  int
	recs      []map[uint32]*txPkt // per path, by PSN
	moved     []*txPkt            // to resend as new packets on healthy paths
	needInit  []bool
	probed    []bool // the path's tail-loss probe went out since its last ACK
	inWork    bool
	blocked   bool        // the last SendDecision said no; cleared by the next ACK or timer event
	nextSend  fabric.Time // pacing: no new or moved packet before this time
	sending   bool        // has ever sent (scanned by the timer)
	heard     bool        // an ACK has come back: the first-RTT gate is open
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
	win     *window.Table
	stx     *sack.Sender
	srx     *sack.Receiver
	pl      *placement.Engine
	mem     *placement.HostMemory
	psns    psn.Space
	conns   []*conn
	ctrlQ   [][]*fabric.Packet
	dataQ   [][]*fabric.Packet
	rtxQ    []*txPkt
	work    []int
	workPos int
	timerOn bool
	ack     *acker.Acker // the receive side's ACK scheduler
	tap     Tap          // closed-loop co-simulation (nil: none)
	setup   []SetupOp    // the placement setup done at construction
	ackWake fabric.Time  // its timer is scheduled for this time (0: none)
	wakeAt  fabric.Time  // a fill is scheduled for this time (0: none)
	linkMb  float64
	cnt     map[string]uint64
}

func newNIC(nw *Network, h int) (*NIC, error) {
	c := nw.cfg.NIC
	planes := nw.net.Planes()
	nic := &NIC{nw: nw, host: h, planes: planes, paths: c.PathsPerConnection,
		win: window.New(nw.winPrm), stx: sack.NewSender(nw.sprm), srx: sack.NewReceiver(nw.sprm),
		pl: placement.New(nw.plPrm), mem: placement.NewHostMemory(), psns: psn.MustSpace(c.PSNWidth),
		ctrlQ: make([][]*fabric.Packet, planes), dataQ: make([][]*fabric.Packet, planes),
		cnt: map[string]uint64{}}
	for k := 0; k < planes; k++ {
		nic.linkMb += nw.net.HostPort(h, k).Gbps() * 1000
	}
	for i := 0; i < c.Connections; i++ {
		cn := &conn{idx: i, peer: peerOf(h, i), streams: make([]stream, c.StreamsPerConnection),
			recs:     make([]map[uint32]*txPkt, nic.paths),
			needInit: make([]bool, nic.paths), probed: make([]bool, nic.paths), reply: make([]*fabric.Packet, nic.paths), rxMsg: map[uint64]uint64{}}
		for k := range cn.recs {
			cn.recs[k] = map[uint32]*txPkt{}
		}
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
	return nic, nil
}

// Host is the host id.
func (nic *NIC) Host() int { return nic.host }

// Memory is the NIC's host memory.
func (nic *NIC) Memory() *placement.HostMemory { return nic.mem }

// ActiveSenders is the number of connections the rate hint currently counts as sending here.
func (nic *NIC) ActiveSenders() int { return nic.ack.Active() }

// Window is the NIC's window table (read it, do not change it).
func (nic *NIC) Window() *window.Table { return nic.win }

// Counters returns the NIC's protocol counters.
func (nic *NIC) Counters() map[string]uint64 {
	out := make(map[string]uint64, len(nic.cnt)+4)
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
	out["ack_accepted"], out["ack_duplicate"], out["ack_stale"], out["ack_invalid"] = nic.stx.Counters.Accepted, nic.stx.Counters.Duplicate, nic.stx.Counters.Stale, nic.stx.Counters.Invalid
	if ac := nic.ack.Counters; ac.Announces > 0 {
		// announces_answered counts every answer, refreshes included.
		out["announces_answered"], out["announces_refreshed"] = ac.Announced+ac.Refreshed, ac.Refreshed
		out["announces_unanswered"] = ac.AnnouncesIgnored
	}
	return out
}

func (nic *NIC) now() fabric.Time    { return nic.nw.net.Sim().Now() }
func (nic *NIC) nowNS() uint32       { return uint32(nic.now().NS()) }
func (nic *NIC) nowNS64() uint64     { return uint64(nic.now().NS()) }
func (nic *NIC) portOf(path int) int { return path % nic.planes }
func (nic *NIC) index(c, path int) int {
	i, _ := nic.nw.sprm.Index(uint32(c), uint32(path))
	return i
}

// Submit queues a message (traffic.Host).
func (nic *NIC) Submit(now fabric.Time, m *traffic.Message) {
	if m.Dst == nic.host || m.Dst < 0 || m.Dst >= len(nic.conns)+1 {
		nic.cnt["submit_rejected"]++
		return
	}
	cn := nic.conns[ConnIndex(nic.host, m.Dst)]
	st := &cn.streams[m.Stream%len(cn.streams)]
	n := uint32(nic.nw.plPrm.Packets(m.Len))
	ms := &msgState{m: m, stream: m.Stream % len(cn.streams), n: n, got: make([]uint64, (n+63)/64)}
	st.pending = append(st.pending, ms)
	nic.addWork(cn)
	nic.fill()
	nic.startTimer()
}

func (nic *NIC) addWork(cn *conn) {
	if !cn.inWork {
		cn.inWork = true
		nic.work = append(nic.work, cn.idx)
	}
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
		if fr.rec != nil {
			fr.rec.inNIC, fr.rec.sentAt = false, ts
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
