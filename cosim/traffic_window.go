package cosim

import (
	"fmt"
	"math/rand/v2"

	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/window"
	hdlwindow "github.com/mrgen/mrgen/hdl/window"
)

// winAckOp is one operation offered on the window unit's ACK port.
type winAckOp struct {
	op         int // hdlwindow.AckOp*
	conn, path int
	ack        window.Ack
	psn        uint32 // set-PSN
}

func (o winAckOp) String() string {
	if o.op == hdlwindow.AckOpSetPSN {
		return fmt.Sprintf("set-psn conn %d path %d psn %d", o.conn, o.path, o.psn)
	}
	if o.op == hdlwindow.AckOpHeard {
		return fmt.Sprintf("nak conn %d path %d (ack fields ignored: %+v)", o.conn, o.path, o.ack)
	}
	return fmt.Sprintf("ack conn %d path %d %+v", o.conn, o.path, o.ack)
}

// winSendOp is one send request.
type winSendOp struct{ conn int }

func (o winSendOp) String() string { return fmt.Sprintf("send conn %d", o.conn) }

// winScan is one timer-scan check (it has no input handshake: the arbitration grants it).
type winScan struct{ now uint32 }

func (o winScan) String() string { return fmt.Sprintf("timer scan at %d ns", o.now) }

// windowTraffic generates the stimulus of a window-unit scenario and owns the golden table.
// ACKs are made from the golden table's state when they are offered (a path with packets in
// flight, a count of them acknowledged, a timestamp echo one path RTT old), so the windows open,
// close and fail the way a real sender's do. Operations reach the golden table only when the RTL
// accepts them.
type windowTraffic struct {
	k      windowKnobs
	p      window.Params
	tb     *window.Table
	rng    *rand.Rand
	psns   psn.Space
	rtt    []uint32 // base RTT per path-table index
	dead   []bool
	until  []uint32 // when the path's dead or alive spell ends (DeadPeriod)
	hot    []bool   // congested: ECN applies
	active []int    // configured table indices
	// together marks the connections whose paths are dead or alive together (DeadConn): path 0
	// flips them all.
	together []bool
	last     int // table index of the last packet sent
}

func newWindowTraffic(p window.Params, k windowKnobs, seed uint64, start uint32) *windowTraffic {
	t := &windowTraffic{k: k, p: p, tb: window.New(p), rng: rand.New(rand.NewPCG(seed, 0x3f1d)),
		psns: psn.MustSpace(p.PSNBits), rtt: make([]uint32, p.TableDepth), dead: make([]bool, p.TableDepth),
		hot: make([]bool, p.TableDepth), until: make([]uint32, p.TableDepth)}
	t.together = make([]bool, p.Conns)
	for c := 0; c < p.Conns; c++ {
		// The first DeadConn of the connections (at least one), dead at the start.
		t.together[c] = k.DeadConn > 0 && c < max(1, int(k.DeadConn*float64(p.Conns)+0.5))
		long, base := t.chance(k.LongBase), uint32(0)
		if long {
			base = 8_000_000 + uint32(t.rng.IntN(8_000_000))
		}
		for q := 0; q < p.Paths; q++ {
			i, _ := p.Index(c, q)
			t.active = append(t.active, i)
			t.rtt[i] = 1_000 + uint32(t.rng.IntN(int(max(k.RTTMax, 2_000)-1_000)))
			if long {
				t.rtt[i] = base + uint32(t.rng.IntN(int(base/8)))
			}
			t.dead[i] = t.chance(k.Dead)
			t.hot[i] = t.chance(k.Congested)
			t.until[i] = start + t.spell()
			if t.together[c] {
				first, _ := p.Index(c, 0)
				t.dead[i], t.until[i] = true, t.until[first]
			}
		}
	}
	return t
}

func (t *windowTraffic) chance(p float64) bool { return p > 0 && t.rng.Float64() < p }

func (t *windowTraffic) split(i int) (int, int) { return t.p.Table().Split(i) }

// reset mirrors an RTL reset: the golden table returns to its reset state.
func (t *windowTraffic) reset() { t.tb.Reset() }

// dt is how far the clock moves in one cycle.
func (t *windowTraffic) dt() uint32 {
	d := uint32(t.rng.IntN(int(t.k.DtMax) + 1))
	if t.chance(t.k.Jump) {
		d += uint32(t.rng.IntN(4_000_000))
	}
	return d
}

// spell is the length of a dead or alive spell, ns.
func (t *windowTraffic) spell() uint32 {
	if t.k.DeadPeriod == 0 {
		return 0
	}
	return uint32(t.rng.IntN(2 * int(t.k.DeadPeriod)))
}

// nextAck makes the ACK-port operation offered at time now. Dead paths never answer.
func (t *windowTraffic) nextAck(now uint32) (winAckOp, bool) {
	if t.k.DeadPeriod > 0 {
		for _, i := range t.active {
			c, q := t.split(i)
			if int32(now-t.until[i]) < 0 || (t.together[c] && q > 0) {
				continue
			}
			t.dead[i] = !t.dead[i]
			t.until[i] = now + t.spell()
			if t.together[c] {
				for r := 1; r < t.p.Paths; r++ {
					j, _ := t.p.Index(c, r)
					t.dead[j], t.until[j] = t.dead[i], t.until[i]
				}
			}
		}
	}
	cands := t.active
	if t.k.OneConn {
		cands = t.active[:t.p.Paths]
	}
	// Mostly an alive path with packets in flight, as real ACKs are; else any alive path. Dead
	// paths never answer: with every path dead there is no ACK. In OneConn, half the ACKs go to
	// the path of the last packet sent (back-to-back operations on one entry).
	idx := -1
	if t.k.OneConn && !t.dead[t.last] && t.chance(0.5) {
		idx = t.last
	} else {
		n := len(cands)
		start := t.rng.IntN(n)
		wantInflight := !t.chance(0.05)
		for k := 0; k < n; k++ {
			j := cands[(start+k)%n]
			if t.dead[j] {
				continue
			}
			if idx < 0 {
				idx = j
			}
			c, q := t.split(j)
			if !wantInflight || t.tb.Path(c, q).Inflight > 0 {
				idx = j
				break
			}
		}
	}
	if idx < 0 {
		return winAckOp{}, false
	}
	conn, path := t.split(idx)
	op := winAckOp{op: hdlwindow.AckOpAck, conn: conn, path: path}
	if t.chance(t.k.SetPSN) {
		op.op = hdlwindow.AckOpSetPSN
		op.psn = t.psns.Wrap(t.psns.Mask() - uint32(t.rng.IntN(40)))
		return op, true
	}
	e := t.tb.Path(conn, path)
	n := int(e.Inflight)
	k := t.rng.IntN(n + 1)
	if n > 0 && t.chance(0.5) {
		k = 1 + t.rng.IntN(min(n, 4)) // ACKs usually cover a few packets
	}
	sacked := t.rng.IntN(k + 1)
	op.ack.CumAdvance, op.ack.NewlySacked = uint16(k-sacked), uint16(sacked)
	if t.chance(t.k.BigCounts) {
		op.ack.CumAdvance, op.ack.NewlySacked = uint16(t.rng.Uint32()), uint16(t.rng.Uint32())
		if t.rng.IntN(2) == 0 {
			// A count that aliases k modulo 2^11 (the width of inflight): it still empties the path.
			op.ack.CumAdvance, op.ack.NewlySacked = uint16(k+(1<<11)*(1+t.rng.IntN(31))), 0
		}
	}
	rtt := t.rtt[idx] + uint32(t.rng.IntN(int(t.rtt[idx]/4)+1))
	switch {
	case t.chance(t.k.Bogus):
		if t.rng.IntN(2) == 0 {
			rtt = -uint32(1 + t.rng.IntN(1000)) // from the future
		} else {
			rtt = 1<<31 + uint32(t.rng.IntN(1000)) // 2^31 or more old: discarded
		}
	case t.chance(t.k.LongRTT):
		rtt = 1<<24 + uint32(t.rng.IntN(1<<26))
	}
	op.ack.TimestampEcho = now - rtt
	if t.chance(t.k.Heard) {
		op.op = hdlwindow.AckOpHeard // the ACK fields stay: the unit must ignore them
	}
	if t.hot[idx] && t.chance(t.k.ECN) {
		op.ack.ECNEcho = uint16(1 + t.rng.IntN(4))
		if t.chance(t.k.BigECN) {
			op.ack.ECNEcho = uint16(65535 - t.rng.IntN(16))
		}
	}
	if t.chance(t.k.RateHint) {
		switch t.rng.IntN(4) {
		case 0:
			op.ack.RateHint = uint16(t.rng.Uint32())
		default:
			op.ack.RateHint = uint16(1 + t.rng.IntN(400)) // up to 40 Gb/s: a cap that bites
		}
	}
	return op, true
}

// sent records the path of a packet the golden table placed.
func (t *windowTraffic) sent(conn int, d window.Decision) {
	if d.OK {
		t.last, _ = t.p.Index(conn, d.Path)
	}
}

// nextSend makes the send request offered now.
func (t *windowTraffic) nextSend() winSendOp {
	if t.k.OneConn {
		return winSendOp{}
	}
	return winSendOp{conn: t.rng.IntN(t.p.Conns)}
}
