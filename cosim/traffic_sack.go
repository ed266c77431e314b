package cosim

import (
	"math/rand/v2"

	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/sack"
	hdlsack "github.com/mrgen/mrgen/hdl/sack"
)

// rxOp is one operation offered to the receive side.
type rxOp struct {
	init       bool
	idx        int
	conn, path uint32
	psn        uint32
	ackReq     bool
	pathInit   bool // the data packet carries the path-init flag
	peek       bool // classify only (s_pkt_peek): the receive pipeline looks before it commits
}

// txOp is one operation offered to the send side.
type txOp struct {
	op         int // hdlsack.TxOp*
	idx        int
	conn, path uint32
	psn        uint32
	bitmap     sack.Bitmap
}

// pathSender is the traffic source of one (connection, path).
type pathSender struct {
	next  uint32   // next new PSN
	retx  []uint32 // PSNs the send side reported lost, to resend on this path
	burst int      // packets still to lose in a burst
	// initPSN is the PSN at which the path last restarted its sequence; while initLive, every
	// (re)transmission of it carries the path-init flag, as golden/transport's sender does.
	initPSN  uint32
	initLive bool
}

// sackTraffic generates the stimulus of a SACK-unit scenario and owns the golden units. Ops are
// generated lazily and applied to the golden units only when the RTL accepts them, so a reset in
// the middle of traffic cuts both at the same point. The send side sees the ACKs the golden
// receiver produces (after loss, delay and duplication), and the losses it reports are resent,
// which closes the loop the way a real path does.
type sackTraffic struct {
	k       sackKnobs
	p       sack.Params
	sp      psn.Space
	rng     *rand.Rand
	rx      *sack.Receiver
	tx      *sack.Sender
	active  []int
	senders []pathSender
	rxQ     []rxOp
	txQ     []txOp
	held    []rxOp // reorder buffer
	delayed []txOp // delayed ACKs
	last    int
	turn    int         // LineRate: the port whose entry comes next
	empty   sack.Bitmap // shared all-zero bitmap of init and sent ops (never modified)
}

func newSackTraffic(p sack.Params, k sackKnobs, connections, paths int, seed uint64) *sackTraffic {
	t := &sackTraffic{k: k, p: p, sp: psn.MustSpace(p.PSNBits), rng: rand.New(rand.NewPCG(seed, 0x5ac4)),
		rx: sack.NewReceiver(p), tx: sack.NewSender(p), senders: make([]pathSender, p.TableDepth), empty: sack.NewBitmap(p.Width)}
	switch {
	case k.OneEntry:
		t.active = []int{0}
	case k.LineRate:
		// One entry per port: path q of connection 0 leaves on port q mod ports.
		for q := 0; q < k.ports && q < paths; q++ {
			idx, _ := p.Index(0, uint32(q))
			t.active = append(t.active, idx)
		}
	default:
		for c := 0; c < connections; c++ {
			for q := 0; q < paths; q++ {
				idx, _ := p.Index(uint32(c), uint32(q))
				t.active = append(t.active, idx)
			}
		}
	}
	t.setup()
	return t
}

func (t *sackTraffic) split(idx int) (uint32, uint32) {
	conn, path := t.p.Table.Split(idx)
	return uint32(conn), uint32(path)
}

// setup (re)initialises every active path: a first PSN (near the wrap point when asked), and
// init operations for both sides.
func (t *sackTraffic) setup() {
	for _, idx := range t.active {
		first := t.rng.Uint32()
		if t.k.NearWrap {
			first = t.sp.Wrap(t.sp.Mask() - uint32(t.rng.IntN(600)))
		}
		first = t.sp.Wrap(first)
		t.senders[idx] = pathSender{next: first}
		conn, path := t.split(idx)
		t.rxQ = append(t.rxQ, rxOp{init: true, idx: idx, conn: conn, path: path, psn: first})
		t.txQ = append(t.txQ, txOp{op: hdlsack.TxOpInit, idx: idx, conn: conn, path: path, psn: first, bitmap: sack.NewBitmap(t.p.Width)})
	}
}

// reset mirrors an RTL reset: the golden tables return to their reset state, everything in
// flight is forgotten, and the paths are set up again.
func (t *sackTraffic) reset() {
	t.rx.Reset()
	t.tx.Reset()
	t.rxQ, t.txQ, t.held, t.delayed = nil, nil, nil, nil
	t.setup()
}

func (t *sackTraffic) chance(p float64) bool { return p > 0 && t.rng.Float64() < p }

// txBacklog is the send-side queue length above which the traffic source pauses: the ACKs and
// sent reports it generates can exceed one per cycle (reordering makes nearly every packet owe
// an ACK), and a source that kept sending would only time out on stale windows.
const txBacklog = 64

// rxPaused reports whether the source is waiting for the send side to catch up.
func (t *sackTraffic) rxPaused() bool { return len(t.rxQ) == 0 && len(t.txQ) > txBacklog }

// peekRx returns the next receive-side op, generating traffic as needed.
func (t *sackTraffic) peekRx() rxOp {
	for len(t.rxQ) == 0 {
		t.produce()
	}
	return t.rxQ[0]
}

func (t *sackTraffic) popRx() { t.rxQ = t.rxQ[1:] }

// peekTx returns the next send-side op, if any.
func (t *sackTraffic) peekTx() (txOp, bool) {
	if len(t.txQ) == 0 && len(t.delayed) > 0 && t.chance(0.05) {
		t.releaseDelayed()
	}
	if len(t.txQ) == 0 {
		return txOp{}, false
	}
	return t.txQ[0], true
}

func (t *sackTraffic) popTx() { t.txQ = t.txQ[1:] }

// produce generates at least one receive-side op.
func (t *sackTraffic) produce() {
	idx := t.last
	switch {
	case t.k.LineRate:
		// The ports in turn: the next port once this one has sent a packet (a lost one is sent
		// again by the same port).
		idx = t.active[t.turn]
		before := len(t.rxQ)
		defer func() {
			if len(t.rxQ) > before {
				t.turn = (t.turn + 1) % len(t.active)
			}
		}()
	case !(t.chance(t.k.Hot) || len(t.active) == 1):
		idx = t.active[t.rng.IntN(len(t.active))]
	}
	t.last = idx
	conn, path := t.split(idx)
	W := uint32(t.p.Width)
	cum := t.rx.Cum(idx)
	op := rxOp{idx: idx, conn: conn, path: path, ackReq: t.chance(t.k.AckReq)}

	switch {
	case t.chance(t.k.Beyond):
		op.psn = t.sp.Add(cum, W+uint32(t.rng.IntN(1<<(t.p.PSNBits-2))))
		t.deliver(op)
		return
	case t.chance(t.k.Old):
		op.psn = t.sp.Add(cum, t.sp.Mask()-uint32(t.rng.IntN(3*t.p.Width))) // cum-1-n
		t.deliver(op)
		return
	case t.chance(t.k.StaleInit):
		// A stale INIT copy: a late duplicate or retransmission of a packet that restarted the
		// path, now behind cum (sometimes twice in a row, back to back on the entry).
		op.pathInit = true
		op.psn = t.sp.Add(cum, t.sp.Mask()-uint32(t.rng.IntN(3*t.p.Width))) // cum-1-n
		t.deliver(op)
		if t.chance(0.3) {
			t.deliver(op)
		}
		return
	case t.chance(t.k.PathInit):
		t.restart(idx, op)
		return
	}

	s := &t.senders[idx]
	if t.chance(t.k.Edge) {
		// The sender fills its window and everything but the last packet is lost, so the
		// receiver sees a PSN exactly at the last slot of its window; then a packet one past
		// the window (which no sender may send) is injected.
		edge := t.sp.Add(cum, W-1)
		if t.sp.Dist(t.tx.Una(idx), edge) < W && !t.sp.Negative(t.sp.Dist(s.next, edge)) {
			t.sent(idx, edge)
			s.next = t.sp.Add(edge, 1)
			op.psn = edge
			t.deliver(op)
			op.psn = t.sp.Add(cum, W)
			t.deliver(op)
			return
		}
	}
	switch {
	case len(s.retx) > 0:
		op.psn = s.retx[0]
		s.retx = s.retx[1:]
	case t.sp.Dist(t.tx.Una(idx), s.next) < W:
		op.psn = s.next
		s.next = t.sp.Add(s.next, 1)
		if s.burst == 0 && t.chance(t.k.BurstLoss) {
			s.burst = 2 + t.rng.IntN(15)
		}
	case t.chance(0.02):
		// The window is full and the path times out: resend the oldest unacknowledged packet.
		op.psn = t.tx.Una(idx)
	default:
		return // the window is full: nothing to send on this path now
	}
	if s.initLive {
		// The packet that restarted the path keeps its flag when it is resent. Once the
		// sequence is 2W past it no copy can be outstanding, and the flag is dropped before the
		// PSN space could bring the same number round again.
		op.pathInit = op.psn == s.initPSN
		if t.sp.Dist(s.initPSN, s.next) >= 2*W {
			s.initLive = false
		}
	}
	t.sent(idx, op.psn)
	if s.burst > 0 {
		s.burst--
		return // lost in a burst
	}
	if t.chance(t.k.Loss) {
		return
	}
	t.deliver(op)
	if t.chance(t.k.Dup) {
		t.deliver(op)
	}
}

// restart revives the path with a new PSN sequence, the way a sender restarts a failed path:
// everything outstanding on it is abandoned, the send side is re-initialised at the new first
// PSN, and the first packet carries the path-init flag. The new first PSN is mostly the next one
// in sequence (golden/transport's choice), sometimes a little or far (beyond the receive window)
// ahead, sometimes the receiver's cumulative PSN as last seen (at cum, or behind PSNs already
// sent). Its copies follow at times right behind it, stale by then.
func (t *sackTraffic) restart(idx int, op rxOp) {
	s := &t.senders[idx]
	W := uint32(t.p.Width)
	first := s.next
	switch r := t.rng.IntN(20); {
	case r >= 18:
		first = t.rx.Cum(idx)
	case r >= 16:
		first = t.sp.Add(first, W+uint32(t.rng.IntN(1<<(t.p.PSNBits-2))))
	case r >= 12:
		first = t.sp.Add(first, 1+uint32(t.rng.IntN(t.p.Width)))
	}
	*s = pathSender{next: t.sp.Add(first, 1), initPSN: first, initLive: true}
	t.txQ = append(t.txQ, txOp{op: hdlsack.TxOpInit, idx: idx, conn: op.conn, path: op.path, psn: first, bitmap: t.empty})
	t.sent(idx, first)
	op.psn, op.pathInit = first, true
	if t.chance(t.k.Loss) {
		return
	}
	t.deliver(op)
	if t.chance(0.3) {
		t.deliver(op)
	}
}

// sent tells the send side that PSN q went out. Like a transmit scheduler reporting its
// progress, consecutive reports for one path coalesce while the send side has not taken them
// (only the highest PSN sent matters to it), so the send side's single input port keeps up with
// one data packet per cycle.
func (t *sackTraffic) sent(idx int, q uint32) {
	if n := len(t.txQ); n > 0 {
		last := &t.txQ[n-1]
		if last.op == hdlsack.TxOpSent && last.idx == idx && !t.sp.Negative(t.sp.Dist(last.psn, q)) {
			last.psn = q
			return
		}
	}
	conn, path := t.split(idx)
	t.txQ = append(t.txQ, txOp{op: hdlsack.TxOpSent, idx: idx, conn: conn, path: path, psn: q, bitmap: t.empty})
}

// deliver passes a packet through the reorder buffer to the receive queue.
func (t *sackTraffic) deliver(op rxOp) {
	if t.k.Reorder == 0 {
		t.enqueue(op)
		return
	}
	t.held = append(t.held, op)
	if len(t.held) > t.k.Reorder {
		i := t.rng.IntN(len(t.held))
		t.enqueue(t.held[i])
		t.held = append(t.held[:i], t.held[i+1:]...)
	}
}

// enqueue puts an arriving data packet on the receive queue the way nic_rx offers it: with
// probability Peek a peek of it goes first (nic_rx looks before it commits), and with
// probability Refuse after a peek the commit never comes (placement refused the packet as
// receiver-not-ready: to the path it is lost, and the send side will report it).
func (t *sackTraffic) enqueue(op rxOp) {
	if t.chance(t.k.Peek) {
		look := op
		look.peek = true
		t.rxQ = append(t.rxQ, look)
		if t.chance(t.k.Refuse) {
			return
		}
	}
	t.rxQ = append(t.rxQ, op)
}

// acceptRx applies an op the RTL accepted to the golden receiver and returns the result (nil
// for an init). ACKs due go toward the send side.
func (t *sackTraffic) acceptRx(op rxOp) *sack.RxResult {
	if op.init {
		t.rx.Init(op.idx, op.psn)
		return nil
	}
	if op.peek {
		res := t.rx.PeekInit(op.idx, op.psn, op.ackReq, op.pathInit)
		return &res
	}
	res := t.rx.PacketInit(op.idx, op.psn, op.ackReq, op.pathInit)
	if res.AckDue && !t.chance(t.k.AckLoss) {
		ack := txOp{op: hdlsack.TxOpAck, idx: op.idx, conn: op.conn, path: op.path, psn: res.Cum, bitmap: res.Bitmap.Clone()}
		switch {
		case t.chance(t.k.AckDelay):
			t.delayed = append(t.delayed, ack)
		default:
			t.txQ = append(t.txQ, ack)
			if t.chance(t.k.AckDup) {
				t.txQ = append(t.txQ, ack)
			}
		}
		if len(t.delayed) > 0 && t.chance(0.2) {
			t.releaseDelayed()
		}
	}
	if t.chance(t.k.AckInvalid) {
		t.txQ = append(t.txQ, t.invalidAck(op))
	}
	return &res
}

// releaseDelayed sends one delayed ACK, now stale or a duplicate; sometimes twice in a row, so
// that a rejected ACK is followed on its entry by one that its verdict decides.
func (t *sackTraffic) releaseDelayed() {
	i := t.rng.IntN(len(t.delayed))
	t.txQ = append(t.txQ, t.delayed[i])
	if t.chance(t.k.AckDup) {
		t.txQ = append(t.txQ, t.delayed[i])
	}
	t.delayed = append(t.delayed[:i], t.delayed[i+1:]...)
}

// invalidAck builds an ACK the send side must reject as invalid.
func (t *sackTraffic) invalidAck(op rxOp) txOp {
	ack := txOp{op: hdlsack.TxOpAck, idx: op.idx, conn: op.conn, path: op.path, bitmap: sack.NewBitmap(t.p.Width)}
	una, nxt := t.tx.Una(op.idx), t.tx.Nxt(op.idx)
	switch t.rng.IntN(3) {
	case 0: // acknowledges beyond what was sent
		ack.psn = t.sp.Add(nxt, 1+uint32(t.rng.IntN(100)))
	case 1: // claims the cumulative PSN itself
		ack.psn = una
		ack.bitmap.Set(0)
	default: // SACKs a PSN not yet sent
		ack.psn = una
		if d := t.sp.Dist(una, nxt); d < uint32(t.p.Width) {
			ack.bitmap.Set(int(d))
		} else {
			ack.bitmap.Set(0)
		}
	}
	return ack
}

// acceptTx applies an op the RTL accepted to the golden sender and returns the verdict (nil for
// init and sent). Reported losses are queued for retransmission on the same path.
func (t *sackTraffic) acceptTx(op txOp) *sack.AckResult {
	switch op.op {
	case hdlsack.TxOpInit:
		t.tx.Init(op.idx, op.psn)
		// Losses reported before a restart reached the send side belong to the abandoned
		// sequence.
		t.senders[op.idx].retx = nil
		return nil
	case hdlsack.TxOpSent:
		t.tx.Sent(op.idx, op.psn)
		return nil
	case hdlsack.TxOpAck:
		res := t.tx.Ack(op.idx, op.psn, op.bitmap)
		s := &t.senders[op.idx]
		for i := 0; i < t.p.Width; i++ {
			if res.Lost.Get(i) {
				s.retx = append(s.retx, t.sp.Add(res.Base, uint32(i)))
			}
		}
		return &res
	}
	return nil
}
