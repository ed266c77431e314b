package sender

import (
	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/window"
)

// movedPkt is an entry of a connection's moved FIFO: a packet to send again as a new packet
// on the path SendDecision picks.
type movedPkt struct {
	msg msgRef
	idx uint32
}

// retry is an entry of the RNR retry FIFO: a refused packet's record, to resend on its path
// with its PSN once due.
type retry struct {
	due uint64
	ref Ref
}

// conn is one connection's send state.
type conn struct {
	idx      int
	streams  []stream
	rrStream int
	recs     []pathRecords // per path (allocated with the first post)
	moved    fifo[movedPkt]
	needInit []bool // per path: the next packet carries FlagPathInit
	probed   []bool // per path: its tail-loss probe went out since its last ACK
	inWork   bool
	blocked  bool   // the last send attempt found no window; cleared by the next ACK or timer event
	nextSend uint64 // pacing: no new or moved packet before this time (ticks)
	sending  bool   // has ever sent (the scan watches it)
	heard    bool   // an ACK has come back: the first-RTT gate is open
	agePeak  uint32 // the most posts since a message a packet or an ACK still referred to (Occupancy)
}

// Sender is one NIC's send side.
type Sender struct {
	p        Params
	recDepth int
	win      *window.Table
	stx      *sack.Sender
	psns     psn.Space
	conns    []conn
	work     []int // the work list: connections with something to send, round robin
	workPos  int
	retx     fifo[Ref]
	retries  fifo[retry]
	// Timers.
	scanOn   bool
	scanAt   uint64
	busy     bool     // the last scan found something to watch
	wakeAt   uint64   // the pacing wake-up asked for (0: none)
	wakes    []uint64 // wake-ups asked for since TakeWakes
	Counters Counters
}

// New returns a Sender with every table reset: paths Active at PSN 0, no work posted.
func New(p Params) (*Sender, error) {
	p = p.WithDefaultDepths()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &Sender{p: p, recDepth: p.RecordDepth(), win: window.New(p.Window), stx: sack.NewSender(p.Sack),
		psns: psn.MustSpace(p.Sack.PSNBits), conns: make([]conn, p.conns()),
		retx: newFIFO[Ref](p.RetxDepth), retries: newFIFO[retry](p.RetryDepth)}
	for c := range s.conns {
		s.conns[c] = conn{idx: c, moved: newFIFO[movedPkt](p.MovedDepth), needInit: make([]bool, p.paths()), probed: make([]bool, p.paths())}
	}
	return s, nil
}

// Params are the resolved parameters (default depths filled in).
func (s *Sender) Params() Params { return s.p }

// Window is the window table (read it, do not change it).
func (s *Sender) Window() *window.Table { return s.win }

// SackCounters are the loss-detection table's ACK verdict counts.
func (s *Sender) SackCounters() sack.TxCounters { return s.stx.Counters }

// conn is connection c's state, its tables allocated on first use.
func (s *Sender) conn(c int) *conn {
	cn := &s.conns[c]
	if cn.recs == nil {
		cn.recs = make([]pathRecords, s.p.paths())
		for k := range cn.recs {
			cn.recs[k] = newPathRecords(s.recDepth)
		}
		cn.streams = make([]stream, s.p.streams())
		for k := range cn.streams {
			cn.streams[k].depth = uint32(s.p.WorkDepth)
		}
	}
	return cn
}

// index is the loss-detection table's index of (conn, path).
func (s *Sender) index(c, path int) int {
	i, _ := s.p.Sack.Index(uint32(c), uint32(path))
	return i
}

// ns is the wire's timestamp of now: nanoseconds mod 2^32.
func (s *Sender) ns(now uint64) uint32 { return uint32(now / s.p.TicksPerNS) }

func (s *Sender) addWork(cn *conn) {
	if !cn.inWork {
		cn.inWork = true
		s.work = append(s.work, cn.idx)
	}
}
