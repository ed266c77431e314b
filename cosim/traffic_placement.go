package cosim

import (
	"errors"
	"math/rand/v2"

	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/wire"
	hdlpl "github.com/mrgen/mrgen/hdl/placement"
)

// plDesc is one descriptor offered to the engine: the golden descriptor (its payload is the
// packet's bytes) and the tag the RTL echoes in its verdict and DMA command.
type plDesc struct {
	d   placement.Desc
	tag uint32
}

// plCtl is one control operation offered to the engine.
type plCtl struct {
	op     int // hdlpl.Ctl*
	conn   uint16
	stream uint8
	addr   uint64
	length uint64
	access uint8
	rkey   uint32
	msn    uint32 // set MSN
	// bookkeeping of the traffic source: which of its regions a registration is
	role int
}

// Region roles of the traffic source's registrations.
const (
	roleNone  = iota
	roleWrite // the connection's writable region
	roleRead  // the connection's read-only region
)

// Address plan of the traffic source: connection c owns [c+1]<<36 + ...
const (
	plWriteLen = 4 << 20 // bytes of a connection's writable region
	plReadOff  = 1 << 30 // offset of its read-only region
	plReadLen  = 1 << 20
	plRecvOff  = 2 << 30 // offset of its receive buffers
)

func connBase(c int) uint64 { return uint64(c+1) << 36 }

// plStream is the sender side of one (connection, stream).
type plStream struct {
	conn, stream int
	next         uint32 // next MSN to send
	pendingPosts int    // posts queued but not yet taken by the engine
	posts        int    // receives posted so far (buffer address plan)
	based        bool   // its MSN was set near the 2^32 wrap (a completion of MSN 0 is a wrap)
	resequencing bool   // a set-MSN is queued: start no message until the engine takes it
}

// plRetry is a packet refused with receiver_not_ready, resent at cycle `due` (the RNR delay).
type plRetry struct {
	d   plDesc
	due uint64
}

// plRNRDelay is the RNR delay of the traffic source in cycles (plus up to as many again).
const plRNRDelay = 256

// plConn holds the rkeys of a connection's regions as golden issued them.
type plConn struct {
	write, read uint32
	writeOK     bool // the writable region is registered
	readOK      bool
}

// plTraffic generates the stimulus of a placement scenario and owns the golden engine. Ops are
// generated lazily and applied to the golden engine only when the RTL takes them, so resets and
// backpressure cut both at the same point. The golden verdicts drive the source: a packet
// refused with receiver_not_ready is resent later, and rkeys are learned from the registrations
// golden answers.
type plTraffic struct {
	k                           plKnobs
	p                           placement.Params
	rng                         *rand.Rand
	gold                        *placement.Engine
	streams                     []plStream
	active                      []int
	conns                       []plConn
	pool                        []plDesc // packets in flight, delivered in random order within the reorder window
	rnr                         []plRetry
	now                         uint64 // the driver's cycle
	ctlQ                        []plCtl
	tag                         uint32
	msgs                        int
	walks                       int      // completions released behind another (walker cycles in the RTL)
	gens                        []uint32 // the generation of each region entry as golden holds it
	msnWraps, tagWraps, msnSets int
}

func newPlTraffic(p placement.Params, k plKnobs, seed uint64) *plTraffic {
	t := &plTraffic{k: k, p: p, rng: rand.New(rand.NewPCG(seed, 0x91ace))}
	t.setup()
	return t
}

// setup (re)starts from the engine's reset state: a fresh golden engine, every stream at MSN
// 0, and the registrations of every connection's regions queued.
func (t *plTraffic) setup() {
	t.gold = placement.New(t.p)
	n := t.p.Conns * t.p.Streams
	t.streams = make([]plStream, n)
	t.active = t.active[:0]
	for i := range t.streams {
		t.streams[i] = plStream{conn: i / t.p.Streams, stream: i % t.p.Streams}
		if t.k.Streams == 0 || i < t.k.Streams {
			t.active = append(t.active, i)
		}
	}
	t.conns = make([]plConn, t.p.Conns)
	t.gens = make([]uint32, t.p.Regions)
	t.pool, t.ctlQ, t.rnr = nil, nil, nil
	// Generations restored just below the tag wrap, so that registrations wrap it.
	if t.k.GenWrap > 0 {
		last := uint32(1)<<t.p.TagBits - 1
		for i := range t.p.Regions {
			t.ctlQ = append(t.ctlQ, plCtl{op: hdlpl.CtlRestoreGen, rkey: t.p.RKey(i, last-uint32(t.rng.IntN(t.k.GenWrap)))})
		}
	}
	for c := range t.p.Conns {
		t.ctlQ = append(t.ctlQ, t.registerOp(c, roleWrite))
		if t.p.Regions >= 2*t.p.Conns {
			t.ctlQ = append(t.ctlQ, t.registerOp(c, roleRead))
		}
	}
	// MSNs set just below the 2^32 wrap, so that every active stream crosses it.
	if t.k.MSNWrap > 0 {
		for _, i := range t.active {
			t.ctlQ = append(t.ctlQ, t.setMSNOp(&t.streams[i]))
		}
	}
}

// setMSNOp queues a set-MSN of stream s just below the wrap; s starts no message until the
// engine takes it.
func (t *plTraffic) setMSNOp(s *plStream) plCtl {
	s.resequencing = true
	return plCtl{op: hdlpl.CtlSetMSN, conn: uint16(s.conn), stream: uint8(s.stream),
		msn: -uint32(1 + t.rng.IntN(t.k.MSNWrap))}
}

// idle reports whether stream s has nothing in flight: every message it started released, no
// receive posted or queued, no packet of it waiting for delivery or a resend.
func (t *plTraffic) idle(s *plStream) bool {
	st := t.gold.Stream(s.conn, s.stream)
	if s.resequencing || s.pendingPosts > 0 || st.Posted > 0 || s.next != st.CompMSN {
		return false
	}
	mine := func(d placement.Desc) bool { return int(d.Conn) == s.conn && int(d.Stream) == s.stream }
	for _, d := range t.pool {
		if mine(d.d) {
			return false
		}
	}
	for _, r := range t.rnr {
		if mine(r.d.d) {
			return false
		}
	}
	return true
}

func (t *plTraffic) registerOp(c, role int) plCtl {
	op := plCtl{op: hdlpl.CtlRegister, conn: uint16(c), role: role}
	if role == roleWrite {
		op.addr, op.length, op.access = connBase(c), plWriteLen, uint8(placement.AccessRemoteWrite)
	} else {
		op.addr, op.length, op.access = connBase(c)+plReadOff, plReadLen, uint8(placement.AccessRemoteRead)
	}
	return op
}

func (t *plTraffic) chance(p float64) bool { return p > 0 && t.rng.Float64() < p }

// peekCtl returns the next control operation, deciding on new posts (and region churn) when
// none is queued.
func (t *plTraffic) peekCtl() (plCtl, bool) {
	if len(t.ctlQ) == 0 {
		t.planCtl()
	}
	if len(t.ctlQ) == 0 {
		return plCtl{}, false
	}
	return t.ctlQ[0], true
}

func (t *plTraffic) popCtl() { t.ctlQ = t.ctlQ[1:] }

// planCtl posts a receive on a stream whose queue has room (unless the scenario lags), and
// now and then deregisters a connection's writable region and registers it again, so messages
// in flight meet a stale rkey.
func (t *plTraffic) planCtl() {
	if t.chance(t.k.Resequence) {
		if s := &t.streams[t.active[t.rng.IntN(len(t.active))]]; t.idle(s) {
			t.ctlQ = append(t.ctlQ, t.setMSNOp(s))
			return
		}
	}
	if t.chance(t.k.Churn) {
		c := t.rng.IntN(t.p.Conns)
		if t.conns[c].writeOK {
			t.ctlQ = append(t.ctlQ, plCtl{op: hdlpl.CtlDeregister, rkey: t.conns[c].write, conn: uint16(c)},
				t.registerOp(c, roleWrite))
			t.conns[c].writeOK = false
			return
		}
	}
	if t.chance(t.k.BadCtl) {
		t.ctlQ = append(t.ctlQ, t.badCtl())
		return
	}
	if t.chance(t.k.PostLag) {
		return
	}
	i := t.active[t.rng.IntN(len(t.active))]
	s := &t.streams[i]
	if t.gold.Stream(s.conn, s.stream).Posted+s.pendingPosts >= t.p.Depth {
		return
	}
	mtu := uint64(t.p.MTU)
	length := 2*mtu + uint64(t.rng.IntN(2*t.p.MTU+1))
	addr := connBase(s.conn) + plRecvOff + uint64(s.stream)<<24 + uint64(s.posts%256)*4*mtu
	s.posts++
	s.pendingPosts++
	t.ctlQ = append(t.ctlQ, plCtl{op: hdlpl.CtlPost, conn: uint16(s.conn), stream: uint8(s.stream), addr: addr, length: length})
}

// badCtl is a control operation golden refuses: a region of length 0, one that wraps, one for
// a connection out of range or with unknown access bits, a deregistration of an unknown rkey,
// a post on a stream out of range or of a buffer that wraps.
func (t *plTraffic) badCtl() plCtl {
	switch t.rng.IntN(7) {
	case 0:
		return plCtl{op: hdlpl.CtlRegister, conn: 0, addr: 0x1000, length: 0, access: 1}
	case 1:
		return plCtl{op: hdlpl.CtlRegister, conn: 0, addr: ^uint64(0) - 10, length: 12, access: 1}
	case 2:
		return plCtl{op: hdlpl.CtlRegister, conn: uint16(t.p.Conns), addr: 0x1000, length: 16, access: 1}
	case 3:
		return plCtl{op: hdlpl.CtlRegister, conn: 0, addr: 0x1000, length: 16, access: 4}
	case 4:
		return plCtl{op: hdlpl.CtlDeregister, rkey: t.rng.Uint32()}
	case 5:
		return plCtl{op: hdlpl.CtlPost, conn: uint16(t.rng.IntN(t.p.Conns)), stream: uint8(t.p.Streams), addr: 0x1000, length: 16}
	default:
		return plCtl{op: hdlpl.CtlPost, conn: uint16(t.p.Conns + t.rng.IntN(3)), stream: 0, addr: 0x1000, length: 16}
	}
}

// Control statuses of golden's errors.
func ctlStatus(err error) int {
	switch {
	case err == nil:
		return hdlpl.CtlOK
	case errors.Is(err, placement.ErrRegionTableFull):
		return hdlpl.CtlTableFull
	case errors.Is(err, placement.ErrBadRegion):
		return hdlpl.CtlBadRegion
	case errors.Is(err, placement.ErrNoSuchRegion):
		return hdlpl.CtlNoSuchRegon
	case errors.Is(err, placement.ErrQueueFull):
		return hdlpl.CtlQueueFull
	case errors.Is(err, placement.ErrBadBuffer):
		return hdlpl.CtlBadBuffer
	case errors.Is(err, placement.ErrBadStream):
		return hdlpl.CtlBadStream
	case errors.Is(err, placement.ErrBusy):
		return hdlpl.CtlBusy
	}
	return -1
}

// acceptCtl applies a control operation the RTL took to the golden engine and returns the
// expected response.
func (t *plTraffic) acceptCtl(op plCtl) plCtlOut {
	var out plCtlOut
	switch op.op {
	case hdlpl.CtlRegister:
		rkey, err := t.gold.RegisterRegion(op.conn, op.addr, op.length, placement.Access(op.access))
		out.Status = ctlStatus(err)
		if err == nil {
			out.RKey = rkey
			i, tag := t.p.SplitRKey(rkey)
			if tag < t.gens[i] {
				t.tagWraps++
			}
			t.gens[i] = tag
			switch op.role {
			case roleWrite:
				t.conns[op.conn].write, t.conns[op.conn].writeOK = rkey, true
			case roleRead:
				t.conns[op.conn].read, t.conns[op.conn].readOK = rkey, true
			}
		}
	case hdlpl.CtlDeregister:
		out.Status = ctlStatus(t.gold.DeregisterRegion(op.rkey))
	case hdlpl.CtlRestoreGen:
		err := t.gold.RestoreGeneration(op.rkey)
		out.Status = ctlStatus(err)
		if err == nil {
			i, tag := t.p.SplitRKey(op.rkey)
			t.gens[i] = tag
		}
	case hdlpl.CtlSetMSN:
		err := t.gold.SetStreamMSN(int(op.conn), int(op.stream), op.msn)
		out.Status = ctlStatus(err)
		s := &t.streams[int(op.conn)*t.p.Streams+int(op.stream)]
		s.resequencing = false
		if err == nil {
			s.next, s.based = op.msn, true
			t.msnSets++
		}
	case hdlpl.CtlPost:
		out.Status = ctlStatus(t.gold.PostReceive(int(op.conn), int(op.stream), op.addr, uint32(op.length)))
		if int(op.conn) < t.p.Conns && int(op.stream) < t.p.Streams {
			if s := &t.streams[int(op.conn)*t.p.Streams+int(op.stream)]; s.pendingPosts > 0 {
				s.pendingPosts--
			}
		}
	}
	return out
}

// peekDesc returns the next descriptor, generating messages as needed; false when every
// stream is waiting (for receives or for its window).
func (t *plTraffic) peekDesc() (plDesc, bool) {
	for len(t.rnr) > 0 && t.rnr[0].due <= t.now {
		t.insertLater(t.rnr[0].d)
		t.rnr = t.rnr[1:]
	}
	for len(t.pool) <= t.k.Reorder {
		if !t.produce() {
			break
		}
	}
	if len(t.pool) == 0 {
		return plDesc{}, false
	}
	// Deliver a random packet of the reorder window (the head when in order).
	w := min(len(t.pool), t.k.Reorder+1)
	i := t.rng.IntN(w)
	if i != 0 {
		t.pool[0], t.pool[i] = t.pool[i], t.pool[0]
	}
	if t.pool[0].tag == 0 {
		t.tag++
		if t.tag == 0 {
			t.tag++
		}
		t.pool[0].tag = t.tag
	}
	return t.pool[0], true
}

// popDesc removes the offered descriptor.
func (t *plTraffic) popDesc() { t.pool = t.pool[1:] }

// insertLater queues a packet behind those in flight (the pool is delivered in order but for
// the random choice inside the reorder window, so every packet is delivered within a bounded
// time).
func (t *plTraffic) insertLater(d plDesc) {
	d.tag = 0
	t.pool = append(t.pool, d)
}

// acceptDesc applies a descriptor the RTL took to the golden engine. A packet refused with
// receiver_not_ready is resent later, as the NAK asks.
func (t *plTraffic) acceptDesc(d plDesc) placement.Result {
	r := t.gold.Place(d.d)
	switch {
	case r.Drop == placement.DropReceiverNotReady:
		t.rnr = append(t.rnr, plRetry{d: d, due: t.now + plRNRDelay + uint64(t.rng.IntN(plRNRDelay))})
	case t.chance(t.k.Dup):
		// The packet reached the receiver, and the sender retransmits it anyway (a spurious
		// retransmission, or a copy made by the fabric).
		t.insertLater(d)
	}
	if n := len(r.Completions); n > 1 {
		t.walks += n - 1
	}
	for _, c := range r.Completions {
		if c.MSN == 0 && t.streams[int(c.Conn)*t.p.Streams+int(c.Stream)].based {
			t.msnWraps++
		}
	}
	return r
}

// Violations a message may carry.
const (
	vNone = iota
	vBadIndex
	vBadTag
	vWrongConn
	vNoWrite
	vOutOfBounds
	vTooLong
	vTooSmall
	vSegmentation
	vInconsistent
	numViolations
)

// produce starts a new message on a stream whose sender may run ahead, or injects a descriptor
// the parser should have refused. It returns false when no stream may send.
func (t *plTraffic) produce() bool {
	if t.chance(t.k.Invalid) {
		t.pool = append(t.pool, plDesc{d: t.invalidDesc()})
		return true
	}
	start := t.rng.IntN(len(t.active))
	for j := range t.active {
		s := &t.streams[t.active[(start+j)%len(t.active)]]
		st := t.gold.Stream(s.conn, s.stream)
		if s.resequencing || s.next-st.CompMSN >= uint32(t.p.Depth+t.k.Ahead) {
			continue
		}
		t.message(s)
		return true
	}
	return false
}

// message generates every packet of one message of stream s (mtu segmentation), with a
// violation now and then.
func (t *plTraffic) message(s *plStream) {
	p := t.p
	mtu := uint32(p.MTU)
	msn := s.next
	s.next++
	t.msgs++
	op := wire.OpSend
	if t.rng.IntN(2) == 0 {
		op = wire.OpWrite
	}
	viol := vNone
	if t.chance(t.k.Violation) {
		viol = 1 + t.rng.IntN(numViolations-1)
	}
	maxPk := min(max(1, t.k.MaxPackets), p.MaxMsgPackets)
	var l uint32
	switch {
	case op == wire.OpSend && viol == vTooSmall:
		l = 4*mtu + 1 + uint32(t.rng.IntN(2*p.MTU)) // above every buffer posted (≤ 4 mtu)
	case viol == vTooLong:
		l = uint32(p.MaxMsgPackets)*mtu + 1 + uint32(t.rng.IntN(p.MTU))
	case t.rng.IntN(16) == 0:
		l = 0
	case op == wire.OpSend:
		l = uint32(t.rng.IntN(min(maxPk, 2)*p.MTU + 1)) // fits every buffer (≥ 2 mtu)
	default:
		l = uint32(t.rng.IntN(maxPk*p.MTU + 1))
	}
	data := make([]byte, l)
	for i := 0; i < len(data); i += 8 {
		v := t.rng.Uint64()
		for j := i; j < min(i+8, len(data)); j++ {
			data[j] = byte(v)
			v >>= 8
		}
	}
	c := &t.conns[s.conn]
	var rkey uint32
	var va uint64
	if op == wire.OpWrite {
		rkey = c.write
		va = connBase(s.conn) + uint64(t.rng.IntN(plWriteLen-int(l)-1))
		switch viol {
		case vBadIndex:
			// the last entry (the source registers from the lowest up, so it is usually
			// empty) or an index beyond the table
			idx := p.Regions - 1
			if beyond := 1<<p.IndexBits - p.Regions; beyond > 0 && t.rng.IntN(2) == 0 {
				idx = p.Regions + t.rng.IntN(beyond)
			}
			rkey = p.RKey(idx, 1+t.rng.Uint32N(7))
		case vBadTag:
			idx, tag := p.SplitRKey(c.write)
			rkey = p.RKey(idx, (tag+1+t.rng.Uint32N(5))&(1<<p.TagBits-1))
		case vWrongConn:
			rkey = t.conns[(s.conn+1)%p.Conns].write
		case vNoWrite:
			if c.readOK {
				rkey = c.read
				va = connBase(s.conn) + plReadOff + uint64(t.rng.IntN(plReadLen-int(l)-1))
			}
		case vOutOfBounds:
			if t.rng.IntN(2) == 0 {
				va = connBase(s.conn) + plWriteLen - uint64(t.rng.IntN(int(l)+1)) // runs past the end
			} else {
				va = connBase(s.conn) - 1 - uint64(t.rng.IntN(64)) // starts below the base
			}
		}
	}
	npk := int(p.Packets(l))
	if viol == vTooLong {
		npk = 1 + t.rng.IntN(3) // the first packets suffice: the message fails at once
	}
	var pkts []plDesc
	for i := range npk {
		off, n := p.Segment(l, uint32(i))
		d := placement.Desc{Op: op, Conn: uint16(s.conn), Stream: uint8(s.stream), MSN: msn, MsgLen: l,
			Payload: data[off : off+n]}
		if op == wire.OpWrite {
			d.RKey, d.VA = rkey, va+uint64(off)
		} else {
			d.Offset = off
		}
		pkts = append(pkts, plDesc{d: d})
	}
	// (An empty message has no byte to move, and one more byte would make its only packet a
	// descriptor the parser refuses, so the message would never complete: no violation.)
	if (viol == vSegmentation || viol == vInconsistent) && l > 0 {
		pd := &pkts[t.rng.IntN(len(pkts))].d
		switch {
		case viol == vInconsistent:
			pd.MsgLen++
			if op == wire.OpWrite && t.rng.IntN(2) == 0 {
				pd.MsgLen--
				pd.RKey ^= 1 << p.IndexBits
			}
		case len(pd.Payload) >= 2 && op == wire.OpSend:
			pd.Offset++
			pd.Payload = pd.Payload[1:]
		case len(pd.Payload) >= 2:
			pd.VA++
			pd.Payload = pd.Payload[1:]
		}
	}
	t.pool = append(t.pool, pkts...)
}

// invalidDesc is a descriptor the parser should have refused.
func (t *plTraffic) invalidDesc() placement.Desc {
	p := t.p
	d := placement.Desc{Op: wire.OpSend, Conn: uint16(t.rng.IntN(p.Conns)), Stream: uint8(t.rng.IntN(p.Streams)),
		MSN: t.rng.Uint32(), MsgLen: 100, Payload: make([]byte, 10)}
	switch t.rng.IntN(5) {
	case 0:
		d.Op = wire.OpAck
	case 1:
		d.Conn = uint16(p.Conns + t.rng.IntN(4))
	case 2:
		d.Payload = make([]byte, p.MTU+1)
		d.MsgLen = uint32(2 * p.MTU)
	case 3:
		d.Offset = 95 // offset + payload beyond the message
	default:
		d.Op, d.VA = wire.OpWrite, ^uint64(0)-4 // VA + payload wraps 2^64
	}
	return d
}
