// The send engine's stimulus: a host that posts work and pulls packets, a NIC whose packets
// leave after a while, and a receiver (golden/sack's Receiver per path) that answers with ACKs
// over a lossy, reordering path.

package cosim

import (
	"math/rand/v2"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/wire"
)

// senderKnobs shape the stimulus of a tx_engine scenario.
type senderKnobs struct {
	Conns, Streams int           // connections and streams used (0: all)
	MaxPkts        int           // a message has 0..MaxPkts·mtu bytes (0: the maximum)
	Post           float64       // weight of a post (and its doorbell)
	Next           float64       // weight of a Next pull
	Left           float64       // weight of a packet leaving the NIC
	DtMax          uint64        // ns between commands: uniform in 0..DtMax
	Loss           float64       // a data packet is lost on the wire
	AckLoss        float64       // an ACK is lost
	Jitter         uint64        // extra wire delay, ns, uniform (reorders packets of a path)
	AckAll         float64       // the receiver ACKs a packet even when its policy does not
	ECN            float64       // an ACK echoes CE marks
	Hint           float64       // an ACK carries a rate hint (pacing)
	HintMax        int           // largest hint, 100 Mb/s units
	PendingMax     int           // most packets in the NIC before the host stops pulling
	Nak            float64       // the receiver refuses a data packet (NAK, not processed)
	RNR            float64       // ... with receiver-not-ready (else a fatal code)
	RNRMax         int           // largest RNR delay, us
	NakDup         float64       // a NAK arrives twice (the second copy finds its packet waiting)
	NoScan         bool          // the host never arms the timer scan
	Dead           float64       // each path is dead (drops everything) with this probability ...
	DeadEvery      uint64        // ... redrawn every DeadEvery ns
	OutReady       float64       // the answer, completion and wake-up outputs are ready in a cycle (0: always)
	Start          uint64        // the first command's time, ns (0: 1 µs)
	NearWrap       bool          // buffers end within 64 KiB of a 4 GiB boundary (address carries)
	Sender         config.Sender // the configuration's FIFO depths for this scenario (zero: the configuration's own)
}

var senderScenarios = map[string]senderKnobs{
	// No loss, no reordering: every packet ACKed on its policy, every message completes.
	"clean": {Post: 1, Next: 3, Left: 3, DtMax: 400, AckAll: 0.3, PendingMax: 8},
	// Every packet ACKed (the receiver's policy and AckAll), no loss: one ACK per packet, the
	// ACK rate the engine must keep up with (cycles_per_ack_x100; docs/sender.md).
	"ack-rate": {Post: 1, Next: 3, Left: 3, DtMax: 400, AckAll: 1, PendingMax: 8},
	// Random loss of data and ACKs: SACK and time losses, retransmissions first.
	"loss": {Post: 1, Next: 3, Left: 3, DtMax: 400, Loss: 0.05, AckLoss: 0.05, AckAll: 0.5, PendingMax: 8},
	// Reordering within paths (jitter beyond the packet spacing): losses by SACK that are not.
	"reorder": {Post: 1, Next: 3, Left: 3, DtMax: 300, Jitter: 3000, AckAll: 0.5, ECN: 0.1, PendingMax: 8},
	// Rate hints and ECN: pacing, wake-ups, blocked connections.
	"paced": {Post: 1, Next: 4, Left: 4, DtMax: 200, AckAll: 1, ECN: 0.2, Hint: 0.7, HintMax: 400, PendingMax: 16},
	// Everything at once, on a few connections and streams so rings fill (queue full).
	"random": {Conns: 2, Streams: 2, MaxPkts: 8, Post: 2, Next: 2, Left: 2, DtMax: 600, Loss: 0.03, AckLoss: 0.03,
		Jitter: 1500, AckAll: 0.4, ECN: 0.1, Hint: 0.3, HintMax: 2000, PendingMax: 12, Nak: 0.02, RNR: 0.8, RNRMax: 20,
		OutReady: 0.4},
	// Path failures by silence: dead paths time out, become suspect, fail (their packets move
	// to the others), are probed and come back (PathInit).
	"failure": {MaxPkts: 4, Post: 1, Next: 3, Left: 3, DtMax: 1500, Loss: 0.01, AckAll: 0.5, PendingMax: 8,
		Dead: 0.3, DeadEvery: 3_000_000, Nak: 0.005, RNR: 1, RNRMax: 5, OutReady: 0.2},
	// Time crosses 2^32 ns 0.2 ms in (about 2,000 commands): the 32-bit time stamps wrap and
	// the engine's sums taken in 32-bit halves (pacing, the RNR due time, the scan's times, a
	// packet's addresses from buffers ending near a 4 GiB boundary) carry into the high half,
	// under pacing, RNR retries, loss and the timer scan.
	"wrap": {Post: 1, Next: 4, Left: 4, DtMax: 200, Loss: 0.02, AckAll: 1, ECN: 0.2, Hint: 0.7, HintMax: 400,
		PendingMax: 16, Nak: 0.03, RNR: 0.9, RNRMax: 50, Start: 1<<32 - 200_000, NearWrap: true},
	// Tiny retransmit, moved and RNR retry FIFOs (2, 2 and 4 entries) and record tables (8 per
	// path) under loss, RNR NAKs and dead paths: every overflow path (a dropped request,
	// counted; loss recovery takes it again) and connections blocked by a full record table.
	"overflow": {MaxPkts: 4, Post: 1, Next: 1, Left: 3, DtMax: 400, Loss: 0.15, AckLoss: 0.05, AckAll: 0.5, PendingMax: 3,
		Nak: 0.2, RNR: 0.9, RNRMax: 150, NakDup: 0.1, Dead: 0.2, DeadEvery: 3_000_000, OutReady: 0.5,
		Sender: config.Sender{RetxDepth: 2, MovedDepth: 2, RNRRetryDepth: 4, RecordsPerPath: 8}},
	// Receiver-not-ready NAKs: RNR retries resending the PSN on its path, duplicated NAKs, fatal
	// NAKs failing messages.
	"rnr": {MaxPkts: 4, Post: 1, Next: 3, Left: 3, DtMax: 400, Loss: 0.01, AckAll: 0.5, PendingMax: 8, Nak: 0.08, RNR: 0.85, RNRMax: 150,
		NakDup: 0.2, OutReady: 0.3},
}

// inFlight is a packet on the wire or an ACK on its way back.
type inFlight struct {
	at  uint64
	pk  sender.Packet
	ts  uint32
	ack *sender.AckIn
	nak *sender.NakIn
}

// senderTraffic is the world around the engine: it proposes the next command.
type senderTraffic struct {
	k       senderKnobs
	p       sender.Params
	rng     *rand.Rand
	now     uint64
	rx      *sack.Receiver
	inNIC   []sender.Packet
	wire    []inFlight // data packets and ACKs, unordered; delivered when due
	wakes   []uint64
	retries []uint64 // RNR retries due
	// The timer scan as the host sees it: armed (scanOn, at scanAt), an Arm to send, the Next
	// pulls left after a scan before its Rearm.
	scanOn    bool
	scanAt    uint64
	arm       bool
	afterScan int
	rearm     bool
	dead      map[int]bool
	deadAt    uint64
	nextID    uint64
	bell      int // a doorbell to ring next (the host rings after every post), or -1
	conns     int
	streams   int
	maxLen    uint32
}

func newSenderTraffic(k senderKnobs, p sender.Params, seed uint64) *senderTraffic {
	t := &senderTraffic{k: k, p: p, rng: rand.New(rand.NewPCG(seed, 0x5e4d)), now: 1_000, rx: sack.NewReceiver(p.Sack),
		bell: -1, conns: p.Window.Conns, streams: p.Placement.Streams, maxLen: p.Placement.MaxMsgLen()}
	if k.Start > 0 {
		t.now = k.Start
	}
	if k.Conns > 0 {
		t.conns = min(t.conns, k.Conns)
	}
	if k.Streams > 0 {
		t.streams = min(t.streams, k.Streams)
	}
	if k.MaxPkts > 0 {
		t.maxLen = min(t.maxLen, uint32(k.MaxPkts*p.Placement.MTU))
	}
	return t
}

// next is the next command: a due wake-up or delivery first, else a random host action.
func (t *senderTraffic) next() sender.Call {
	if c := t.bell; c >= 0 {
		t.bell = -1
		t.arm = !t.k.NoScan
		return sender.Call{Op: sender.OpDoorbell, Now: t.now, Conn: c}
	}
	if t.arm {
		t.arm = false
		if !t.scanOn {
			return sender.Call{Op: sender.OpArm, Now: t.now}
		}
	}
	if t.afterScan > 0 {
		t.afterScan--
		return sender.Call{Op: sender.OpNext, Now: t.now}
	}
	if t.rearm {
		t.rearm = false
		return sender.Call{Op: sender.OpRearm, Now: t.now}
	}
	t.now += uint64(t.rng.IntN(int(t.k.DtMax) + 1))
	for i, w := range t.wakes {
		if w <= t.now {
			t.wakes = append(t.wakes[:i], t.wakes[i+1:]...)
			return sender.Call{Op: sender.OpWoke, Now: t.now, Time: w}
		}
	}
	if t.k.Dead > 0 && t.now >= t.deadAt {
		t.deadAt = t.now + t.k.DeadEvery
		t.dead = map[int]bool{}
		for c := range t.conns {
			for p := range t.p.Window.Paths {
				if t.rng.Float64() < t.k.Dead {
					t.dead[c<<t.p.Sack.PathBits|p] = true
				}
			}
		}
	}
	if t.scanOn && t.scanAt <= t.now {
		t.scanOn = false // until Rearm answers
		t.afterScan, t.rearm = 4, true
		return sender.Call{Op: sender.OpScan, Now: t.now}
	}
	if len(t.retries) > 0 && t.retries[0] <= t.now {
		t.retries = t.retries[1:]
		return sender.Call{Op: sender.OpRetry, Now: t.now}
	}
	for i := 0; i < len(t.wire); i++ {
		f := t.wire[i]
		if f.at > t.now {
			continue
		}
		t.wire = append(t.wire[:i], t.wire[i+1:]...)
		if f.ack != nil {
			t.arm = !t.k.NoScan
			return sender.Call{Op: sender.OpAck, Now: t.now, Ack: *f.ack}
		}
		if f.nak != nil {
			t.arm = !t.k.NoScan
			return sender.Call{Op: sender.OpNak, Now: t.now, Nak: *f.nak}
		}
		t.deliver(f)
		i--
	}
	tot := t.k.Post + t.k.Next + t.k.Left
	x := t.rng.Float64() * tot
	switch {
	case x < t.k.Post:
		return t.post()
	case x < t.k.Post+t.k.Next && len(t.inNIC) < t.k.PendingMax:
		return sender.Call{Op: sender.OpNext, Now: t.now}
	case len(t.inNIC) > 0:
		i := t.rng.IntN(len(t.inNIC))
		if t.rng.IntN(2) == 0 {
			i = 0
		}
		return sender.Call{Op: sender.OpLeft, Now: t.now, Ref: t.inNIC[i].Ref}
	}
	return sender.Call{Op: sender.OpNext, Now: t.now}
}

func (t *senderTraffic) post() sender.Call {
	wr := sender.WorkRequest{Conn: t.rng.IntN(t.conns), Stream: t.rng.IntN(t.streams), Op: wire.OpWrite,
		RemoteVA: t.rng.Uint64() >> 8, RKey: t.rng.Uint32(), Local: t.rng.Uint64() >> 8, ID: t.nextID}
	t.nextID++
	if t.k.NearWrap {
		// A packet's address (base + offset) then carries into bit 32 for some offsets.
		wr.RemoteVA |= 1<<32 - 1<<16
		wr.Local |= 1<<32 - 1<<16
	}
	if t.rng.IntN(2) == 0 {
		wr.Op = wire.OpSend
	}
	switch r := t.rng.IntN(10); {
	case r == 0:
		wr.Len = 0
	case r == 1:
		wr.Len = t.maxLen
	default:
		wr.Len = uint32(t.rng.IntN(int(t.maxLen) + 1))
	}
	t.bell = wr.Conn
	return sender.Call{Op: sender.OpPost, Now: t.now, Work: wr}
}

// applied is told what golden answered to call c: a packet Next returned waits in the NIC, one
// that left goes on the wire, the scan's timer and the RNR retries follow Arm, Rearm and Nak.
func (t *senderTraffic) applied(c sender.Call) {
	switch c.Op {
	case sender.OpNext:
		if c.OK {
			t.inNIC = append(t.inNIC, c.Packet)
		} else {
			t.afterScan = 0
		}
	case sender.OpLeft:
		t.left(c.Ref)
	case sender.OpArm, sender.OpRearm:
		if c.OK {
			t.scanOn, t.scanAt = true, c.At
		} else if c.Op == sender.OpRearm {
			t.scanOn = false
		}
	case sender.OpNak:
		if c.OK && c.Err == "" {
			t.retries = append(t.retries, c.At)
		}
	}
}

// left is told that a packet left the NIC: it goes on the wire (or is lost).
func (t *senderTraffic) left(ref sender.Ref) {
	for i, pk := range t.inNIC {
		if pk.Ref != ref {
			continue
		}
		t.inNIC = append(t.inNIC[:i], t.inNIC[i+1:]...)
		if t.rng.Float64() < t.k.Loss || t.dead[pk.Conn<<t.p.Sack.PathBits|pk.Path] {
			return
		}
		at := t.now + 1_500
		if t.k.Jitter > 0 {
			at += uint64(t.rng.IntN(int(t.k.Jitter)))
		}
		t.wire = append(t.wire, inFlight{at: at, pk: pk, ts: uint32(t.now)})
		return
	}
}

// deliver runs a data packet through the receiver; an ACK goes back when due.
func (t *senderTraffic) deliver(f inFlight) {
	if t.rng.Float64() < t.k.Nak {
		n := &sender.NakIn{Conn: f.pk.Conn, Path: f.pk.Path, PSN: f.pk.PSN, Code: wire.NakBoundsViolation}
		if t.rng.Float64() < t.k.RNR {
			n.Code, n.RNRDelay = wire.NakReceiverNotReady, uint16(1+t.rng.IntN(t.k.RNRMax))
		}
		t.wire = append(t.wire, inFlight{at: t.now + 1_500, nak: n})
		if t.k.NakDup > 0 && t.rng.Float64() < t.k.NakDup {
			dup := *n
			t.wire = append(t.wire, inFlight{at: t.now + 1_500 + uint64(t.rng.IntN(5_000)), nak: &dup})
		}
		return
	}
	idx, _ := t.p.Sack.Index(uint32(f.pk.Conn), uint32(f.pk.Path))
	ackReq := f.pk.Flags&wire.FlagAckReq != 0
	res := t.rx.PacketInit(idx, f.pk.PSN, ackReq, f.pk.Flags&wire.FlagPathInit != 0)
	if !res.AckDue && t.rng.Float64() >= t.k.AckAll || t.dead[idx] {
		return
	}
	if t.rng.Float64() < t.k.AckLoss {
		return
	}
	a := &sender.AckIn{Conn: f.pk.Conn, Path: f.pk.Path, Cum: res.Cum, Bitmap: res.Bitmap.Clone(), TSEcho: f.ts}
	if t.rng.Float64() < t.k.ECN {
		a.ECN = uint16(1 + t.rng.IntN(3))
	}
	if t.rng.Float64() < t.k.Hint {
		a.Hint = uint16(1 + t.rng.IntN(t.k.HintMax))
	}
	t.wire = append(t.wire, inFlight{at: t.now + 1_500 + uint64(t.rng.IntN(200)), ack: a})
}
