package window

// State is a path's health. The numeric values are the RTL's encoding.
type State uint8

// Path states.
const (
	Active  State = 0
	Suspect State = 1
	Failed  State = 2
)

func (s State) String() string {
	switch s {
	case Active:
		return "active"
	case Suspect:
		return "suspect"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// PathEntry is one (connection, path) entry. Field widths are in the package doc.
type PathEntry struct {
	State        State
	Cwnd         uint32 // fp
	Inflight     uint32
	Accum        uint32
	SRTT         uint32 // ns
	RTTVar       uint32 // ns
	RTTValid     bool
	RTO          uint32 // ns
	Deadline     uint32 // ns mod 2^32
	ArmedAt      uint32 // ns mod 2^32: when the timer was last started (Deadline's base)
	Armed        bool
	Marked       bool
	Marks        uint32
	LastDecrease uint32
	DecValid     bool
	RateHint     uint16
	Timeouts     uint8
	LFSR         uint16
	Entropy      uint16
	NextPSN      uint32
	Floored      bool // a timer event set Cwnd to min_cwnd and no ACK or NAK came since
}

// CapRTT is the round trip the connection's rate cap is sized for: 1.5 × its base RTT,
// MinRTT + MinRTT>>1 (package doc, "ACK update" step 5).
func (c ConnEntry) CapRTT() uint32 { return c.MinRTT + c.MinRTT>>1 }

// ConnEntry is one connection entry. Field widths are in the package doc.
type ConnEntry struct {
	Cwnd         uint32 // fp
	Inflight     uint32
	Accum        uint32
	LastDecrease uint32
	DecValid     bool
	RateHint     uint16
	RateCap      uint32 // fp
	MinRTT       uint32 // ns, the smallest RTT sample of any of its paths (valid with MinValid)
	MinValid     bool
	LastHeard    uint32 // ns mod 2^32: the last ACK or NAK heard on any of its live paths
	HeardValid   bool
	RR           uint32
}

// PubLag is the number of operations on a connection after which the congestion state an
// operation left becomes visible to the decisions of later operations (package doc,
// "Published state"): the hardware computes it in a pipeline behind the decisions.
const PubLag = 8

// Published is the part of the state the decisions read with a lag of PubLag operations on the
// connection (package doc, "Published state"): the path's window and RTO, the connection's
// window and rate cap.
type Published struct {
	Cwnd, RTO         uint32 // the path's
	ConnCwnd, RateCap uint32 // the connection's
}

// publication is what one operation on a connection publishes, PubLag operations later.
type publication struct {
	valid bool
	index int // the path-table index whose Cwnd and RTO it carries; -1: none
	v     Published
}

// Table holds the path and connection tables of the whole NIC.
type Table struct {
	p     Params
	paths []PathEntry
	conns []ConnEntry
	scan  int

	// Published state (package doc, "Published state").
	pubPath []Published // per path-table index: Cwnd and RTO
	pubConn []Published // per connection: ConnCwnd and RateCap
	pending [][PubLag]publication
	seq     []int    // per connection: the ring slot of its next operation
	cls     []uint8  // per path-table index: the spraying class as last computed
	clsW    []uint32 // ... and the window (fp) it was computed with
}

// New returns a table with every entry reset.
func New(p Params) *Table {
	t := &Table{p: p, paths: make([]PathEntry, p.TableDepth), conns: make([]ConnEntry, p.Conns),
		pubPath: make([]Published, p.TableDepth), pubConn: make([]Published, p.Conns),
		pending: make([][PubLag]publication, p.Conns), seq: make([]int, p.Conns),
		cls: make([]uint8, p.TableDepth), clsW: make([]uint32, p.TableDepth)}
	t.Reset()
	return t
}

// Params returns the table's parameters.
func (t *Table) Params() Params { return t.p }

// Reset returns every entry to its reset state and the scan pointer to 0.
func (t *Table) Reset() {
	for c := range t.conns {
		t.ResetConn(c)
	}
	t.scan = 0
}

// ResetConn returns one connection and its paths to the reset state (connection setup): every
// path Active with Cwnd = init_cwnd, RTO = rto_initial, no RTT sample, timer disarmed, NextPSN 0,
// LFSR at its seed; the connection window at ConnInitCwnd and no rate cap.
func (t *Table) ResetConn(conn int) {
	p := t.p
	t.conns[conn] = ConnEntry{Cwnd: p.ConnInitCwnd, RateCap: p.ConnMaxCwnd}
	t.pubConn[conn] = Published{ConnCwnd: p.ConnInitCwnd, RateCap: p.ConnMaxCwnd}
	t.pending[conn] = [PubLag]publication{}
	t.seq[conn] = 0
	for path := 0; path < p.Paths; path++ {
		i := p.index(conn, path)
		s := LFSRSeed(p.Seed, i)
		t.paths[i] = PathEntry{State: Active, Cwnd: p.InitCwnd, RTO: p.RTOInitial, LFSR: s, Entropy: EntropyOf(s)}
		t.pubPath[i] = Published{Cwnd: p.InitCwnd, RTO: p.RTOInitial}
		t.refreshClass(i)
	}
}

// publish makes the publication in conn's current ring slot, the state the operation PubLag
// operations earlier on the connection left, visible to the decisions of later operations.
func (t *Table) publish(conn int) {
	slot := &t.pending[conn][t.seq[conn]]
	if !slot.valid {
		return
	}
	if slot.index >= 0 {
		t.pubPath[slot.index].Cwnd, t.pubPath[slot.index].RTO = slot.v.Cwnd, slot.v.RTO
	}
	t.pubConn[conn].ConnCwnd, t.pubConn[conn].RateCap = slot.v.ConnCwnd, slot.v.RateCap
	slot.valid = false
}

// end finishes an operation on conn that worked on path-table index (-1: none): after its
// decisions, it publishes the ring slot's publication (the operation PubLag earlier on the
// connection) and puts in its place the state this operation left.
func (t *Table) end(conn, index int) {
	t.publish(conn)
	c := t.conns[conn]
	v := Published{ConnCwnd: c.Cwnd, RateCap: c.RateCap}
	if index >= 0 {
		v.Cwnd, v.RTO = t.paths[index].Cwnd, t.paths[index].RTO
	}
	t.pending[conn][t.seq[conn]] = publication{valid: true, index: index, v: v}
	t.seq[conn] = (t.seq[conn] + 1) % PubLag
}

// refreshClass recomputes the spraying class of path-table index from its entry and its
// published window, or min_cwnd while a timer event's floor is not yet answered (Floored: the
// entry's own window is min_cwnd then), so that a timeout takes effect on spraying at once.
func (t *Table) refreshClass(i int) {
	w := t.pubPath[i].Cwnd
	if t.paths[i].Floored {
		w = t.p.MinCwnd
	}
	t.cls[i], t.clsW[i] = uint8(ClassOf(t.paths[i], w)), w
}

// sentClass recomputes the class of path-table index after a send on it, with the window its
// class was last computed with: a send changes only the path's inflight, and hardware chains
// back-to-back sends from a class computed one packet ahead (docs/window.md).
func (t *Table) sentClass(i int) {
	t.cls[i] = uint8(ClassOf(t.paths[i], t.clsW[i]))
}

// Published returns the state the decisions of the next operation on (conn, path) will read:
// the path's published window and RTO and the connection's published window and rate cap.
func (t *Table) Published(conn, path int) Published {
	v := t.pubPath[t.p.index(conn, path)]
	c := t.pubConn[conn]
	v.ConnCwnd, v.RateCap = c.ConnCwnd, c.RateCap
	return v
}

// Classes returns the spraying class of every path of conn, as the next send decision reads them.
func (t *Table) Classes(conn int) []int {
	out := make([]int, t.p.Paths)
	for path := range out {
		out[path] = int(t.cls[t.p.index(conn, path)])
	}
	return out
}

// Path returns a copy of an entry.
func (t *Table) Path(conn, path int) PathEntry { return t.paths[t.p.index(conn, path)] }

// Conn returns a copy of a connection entry.
func (t *Table) Conn(conn int) ConnEntry { return t.conns[conn] }

// SetNextPSN sets the PSN of a path's next new packet (connection setup).
func (t *Table) SetNextPSN(conn, path int, psn uint32) {
	i := t.p.index(conn, path)
	t.paths[i].NextPSN = t.p.psns().Wrap(psn)
	t.refreshClass(i)
	t.end(conn, i)
}

// Ack is the part of a parsed ACK the window unit uses.
type Ack struct {
	CumAdvance    uint16 // packets newly acknowledged by the cumulative PSN (not SACKed before)
	NewlySacked   uint16 // packets newly SACKed above it
	ECNEcho       uint16 // CE-marked packets the receiver saw since its previous ACK
	TimestampEcho uint32 // ns mod 2^32
	RateHint      uint16 // 100 Mb/s units, 0 = no limit
}

// AckResult reports what an ACK did.
type AckResult struct {
	Ignored       bool   // the path is Failed; nothing changed
	SampleValid   bool   // the RTT sample was used
	Sample        uint32 // ns
	Acked         uint32 // packets removed from flight
	Increased     bool   // path additive increase
	Decreased     bool   // path multiplicative decrease
	ConnIncreased bool
	ConnDecreased bool
	Reactivated   bool // Suspect → Active
}

// AckUpdate applies one ACK of (conn, path) at time now (package doc, "ACK update").
func (t *Table) AckUpdate(conn, path int, a Ack, now uint32) AckResult {
	i := t.p.index(conn, path)
	r := t.ackUpdate(conn, i, a, now)
	t.refreshClass(i)
	t.end(conn, i)
	return r
}

func (t *Table) ackUpdate(conn, i int, a Ack, now uint32) AckResult {
	p := t.p
	e := &t.paths[i]
	c := &t.conns[conn]
	var r AckResult
	if e.State == Failed {
		r.Ignored = true
		return r
	}
	// 1. RTT.
	sample := now - a.TimestampEcho
	if !nanos.Negative(sample) { // an echo "from the future" is discarded
		r.SampleValid, r.Sample = true, sample
		if !c.MinValid || sample < c.MinRTT {
			c.MinRTT, c.MinValid = sample, true
		}
		if !e.RTTValid {
			e.SRTT, e.RTTVar, e.RTTValid = sample, sample>>1, true
		} else {
			d := int64(sample) - int64(e.SRTT)
			ad := d
			if ad < 0 {
				ad = -ad
			}
			e.RTTVar = uint32(int64(e.RTTVar) + (ad-int64(e.RTTVar))>>p.RTTVarShift)
			e.SRTT = uint32(int64(e.SRTT) + d>>p.SRTTShift)
		}
	}
	if e.RTTValid {
		e.RTO = uint32(min(max(uint64(e.SRTT)+uint64(e.RTTVar)<<2, uint64(p.RTOMin)), uint64(p.RTOMax)))
	} else {
		e.RTO = p.RTOInitial
	}
	// 2. In flight.
	acked := min(uint32(a.CumAdvance)+uint32(a.NewlySacked), e.Inflight)
	e.Inflight -= acked
	c.Inflight -= acked
	r.Acked = acked
	// 3, 4. AIMD.
	if a.ECNEcho > 0 {
		e.Marked, e.Accum, c.Accum = true, 0, 0
		if !e.DecValid || now-e.LastDecrease >= e.SRTT {
			e.Cwnd = max(e.Cwnd-e.Cwnd>>p.MDShift, p.MinCwnd)
			e.LastDecrease, e.DecValid, e.Marks = now, true, uint32(a.ECNEcho)
			r.Decreased = true
		} else {
			e.Marks = min(e.Marks+uint32(a.ECNEcho), marksMax)
		}
		if !c.DecValid || now-c.LastDecrease >= e.SRTT {
			c.Cwnd = max(c.Cwnd-c.Cwnd>>p.ConnMDShift, p.MinCwnd)
			c.LastDecrease, c.DecValid = now, true
			r.ConnDecreased = true
		}
	} else {
		e.Marked = false
		e.Cwnd, e.Accum, r.Increased = additive(e.Cwnd, e.Accum, acked, p.AIStep, p.MaxCwnd, accumMax)
		c.Cwnd, c.Accum, r.ConnIncreased = additive(c.Cwnd, c.Accum, acked, p.ConnAIStep, p.ConnMaxCwnd, connAccumMax)
	}
	// 5. Rate hint.
	e.RateHint, c.RateHint = a.RateHint, a.RateHint
	if a.RateHint == 0 {
		c.RateCap = p.ConnMaxCwnd
	} else if e.RTTValid {
		c.RateCap = p.rateCap(a.RateHint, c.CapRTT())
	}
	// 6. Liveness.
	r.Reactivated = t.heard(conn, i, now)
	return r
}

// Heard applies a NAK of (conn, path) at time now (package doc, "NAK"): the path carried a
// packet to the receiver and its answer back, so only the liveness step of an ACK applies.
func (t *Table) Heard(conn, path int, now uint32) AckResult {
	i := t.p.index(conn, path)
	defer t.end(conn, i)
	e := &t.paths[i]
	if e.State == Failed {
		return AckResult{Ignored: true}
	}
	r := AckResult{Reactivated: t.heard(conn, i, now)}
	t.refreshClass(i)
	return r
}

// heard is the liveness step of an ACK or a NAK on path-table index i of conn: the path's
// (PathEntry.heard, with the published RTO) and the connection's LastHeard.
func (t *Table) heard(conn, i int, now uint32) bool {
	t.conns[conn].LastHeard, t.conns[conn].HeardValid = now, true
	return t.paths[i].heard(now, t.pubPath[i].RTO)
}

// heard is the liveness step of an ACK or a NAK: Timeouts clear, a Suspect path becomes Active
// (reported), and the timer restarts at the published RTO rto if packets are in flight, else it
// is disarmed.
func (e *PathEntry) heard(now, rto uint32) bool {
	e.Timeouts, e.Floored = 0, false
	reactivated := e.State == Suspect
	if reactivated {
		e.State = Active
	}
	if e.Inflight > 0 {
		e.arm(now, rto)
	} else {
		e.Armed = false
	}
	return reactivated
}

// arm starts the timer at now with timeout tmo.
func (e *PathEntry) arm(now, tmo uint32) {
	e.Deadline, e.ArmedAt, e.Armed = now+tmo, now, true
}

// heardSince reports whether heard is strictly after armed, mod 2^32: armed − heard negative
// (the RTL's one subtract and its sign bit).
func heardSince(heard, armed uint32) bool {
	return nanos.Negative(armed - heard)
}

// additive is one additive-increase step: one increase of step per window's worth of acked
// packets, at most one per call; the accumulator saturates at accMax.
func additive(cwnd, accum, acked, step, maxCwnd, accMax uint32) (uint32, uint32, bool) {
	s := accum + acked
	inc := false
	if w := cwnd >> FracBits; s >= w {
		cwnd = min(cwnd+step, maxCwnd)
		s -= w
		inc = true
	}
	return cwnd, min(s, accMax), inc
}

// rateCap is the connection window the rate hint allows: hint × rtt in packets, fp, clamped
// (AckUpdate passes 1.5 × the connection's base RTT).
func (p Params) rateCap(hint uint16, srtt uint32) uint32 {
	s := uint64(min(srtt, 1<<RTTCapBits-1))
	v := uint64(hint) * s * p.RateCapMul >> RTTCapBits
	return uint32(min(max(v, uint64(p.MinCwnd)), uint64(p.ConnMaxCwnd)))
}

// Reason says why a send decision is not ok. The numeric values are the RTL's encoding.
type Reason uint8

// Decision reasons.
const (
	ReasonOK         Reason = 0
	ReasonConnWindow Reason = 1 // the connection window is full
	ReasonRateCap    Reason = 2 // the rate-hint cap is full
	ReasonNoPath     Reason = 3 // no path is eligible
)

func (r Reason) String() string {
	switch r {
	case ReasonOK:
		return "ok"
	case ReasonConnWindow:
		return "conn_window"
	case ReasonRateCap:
		return "rate_cap"
	case ReasonNoPath:
		return "no_path"
	}
	return "unknown"
}

// Decision is the answer of SendDecision.
type Decision struct {
	OK      bool
	Reason  Reason
	Path    int
	Entropy uint16
	PSN     uint32
}

// ClassOf is a path's spraying class with the window cwnd (fp): 0 ineligible, 1 suspect or
// marked, 2 less than half the window free, 3 at least half free. The send decision classes a
// path by its published window, not its own (package doc, "Published state").
func ClassOf(e PathEntry, cwnd uint32) int {
	w := cwnd >> FracBits
	switch {
	case e.State == Failed || e.Inflight >= w:
		return 0
	case e.State == Suspect || e.Marked:
		return 1
	case 2*(w-e.Inflight) >= w:
		return 3
	}
	return 2
}

// SendDecision picks the path of the connection's next new packet and counts it in flight
// (package doc, "Send decision and spraying policy").
func (t *Table) SendDecision(conn int, now uint32) Decision {
	p := t.p
	c := &t.conns[conn]
	pc := t.pubConn[conn]
	if limit := (min(pc.ConnCwnd, pc.RateCap) + One - 1) >> FracBits; c.Inflight >= limit {
		t.end(conn, -1)
		if pc.RateCap < pc.ConnCwnd {
			return Decision{Reason: ReasonRateCap}
		}
		return Decision{Reason: ReasonConnWindow}
	}
	base := conn << p.PathBits
	best, pick := uint8(0), 0
	for k := 0; k < p.Paths; k++ {
		path := int(c.RR) + k
		if path >= p.Paths {
			path -= p.Paths
		}
		if cl := t.cls[base|path]; cl > best {
			best, pick = cl, path
		}
	}
	if best == 0 {
		t.end(conn, -1)
		return Decision{Reason: ReasonNoPath}
	}
	i := base | pick
	defer t.end(conn, i)
	e := &t.paths[i]
	d := Decision{OK: true, Path: pick, Entropy: e.Entropy, PSN: e.NextPSN}
	e.NextPSN = p.psns().Add(e.NextPSN, 1)
	e.Inflight++
	c.Inflight++
	if !e.Armed {
		e.arm(now, t.pubPath[i].RTO)
	}
	t.sentClass(i)
	c.RR = uint32(pick + 1)
	if int(c.RR) == p.Paths {
		c.RR = 0
	}
	return d
}

// Event is what a timer check found. The numeric values are the RTL's encoding.
type Event uint8

// Timer events.
const (
	EventNone    Event = 0
	EventTimeout Event = 1 // RTO expired; the path stays in its state
	EventSuspect Event = 2 // RTO expired and the path became Suspect
	EventFailed  Event = 3 // RTO expired and the path failed
	EventProbe   Event = 4 // a failed path's probe interval passed; it is Suspect again
)

func (e Event) String() string {
	switch e {
	case EventNone:
		return "none"
	case EventTimeout:
		return "timeout"
	case EventSuspect:
		return "suspect"
	case EventFailed:
		return "failed"
	case EventProbe:
		return "probe"
	}
	return "unknown"
}

// Expiry is the result of a timer check.
type Expiry struct {
	Event       Event
	Outstanding uint32 // packets in flight on the path at a timeout (they stay counted)
	Moved       uint32 // packets taken out of flight by a failure, to resend on healthy paths
	Timeouts    uint8  // the path's consecutive-timeout count after the event
	Entropy     uint16 // the path's entropy after the event (re-drawn on failure)
}

// Expire checks one entry's timer at time now (package doc, "Timers and path failure").
func (t *Table) Expire(conn, path int, now uint32) Expiry {
	i := t.p.index(conn, path)
	x := t.expire(conn, i, now)
	t.refreshClass(i)
	t.end(conn, i)
	return x
}

func (t *Table) expire(conn, i int, now uint32) Expiry {
	p := t.p
	e := &t.paths[i]
	if !e.Armed || nanos.Negative(now-e.Deadline) {
		return Expiry{Entropy: e.Entropy, Timeouts: e.Timeouts}
	}
	var x Expiry
	e.Floored = true
	c := &t.conns[conn]
	if e.State == Failed {
		e.State, e.Cwnd, e.Timeouts, e.RTO, e.Armed = Suspect, p.MinCwnd, p.FailedTimeouts-1, p.RTOInitial, false
		x.Event = EventProbe
	} else {
		x.Outstanding = e.Inflight
		e.Cwnd, e.Accum = p.MinCwnd, 0
		// Failing, not congested: the connection heard an ACK or a NAK on another path since
		// this path's timer started, and no ECN mark excuses the silence.
		failing := !e.Marked && c.HeardValid && heardSince(c.LastHeard, e.ArmedAt)
		if e.Marked {
			e.Marked = false
		} else if e.Timeouts < timeoutsMax {
			e.Timeouts++
		}
		e.RTO = min(e.RTO<<1, p.RTOMax)
		e.arm(now, min(t.pubPath[i].RTO<<1, p.RTOMax))
		switch {
		case e.Timeouts >= p.FailedTimeouts || failing:
			x.Event, x.Outstanding, x.Moved = EventFailed, 0, e.Inflight
			c.Inflight -= e.Inflight
			e.LFSR = LFSRNext(e.LFSR)
			*e = PathEntry{
				State: Failed, Cwnd: p.MinCwnd, RTO: p.RTOInitial,
				Deadline: now + p.ProbeInterval, ArmedAt: now, Armed: true,
				RateHint: e.RateHint, Timeouts: e.Timeouts,
				LFSR: e.LFSR, Entropy: EntropyOf(e.LFSR), NextPSN: e.NextPSN, Floored: true,
			}
		case e.Timeouts >= p.SuspectTimeouts && e.State == Active:
			e.State = Suspect
			x.Event = EventSuspect
		default:
			x.Event = EventTimeout
		}
	}
	x.Timeouts, x.Entropy = e.Timeouts, e.Entropy
	return x
}

// Tick checks the entry at the scan pointer (one entry per clock in the RTL) and advances the
// pointer over the whole path table, padding entries included. It returns the entry checked;
// for a padding entry (conn or path beyond the configuration) the event is EventNone.
func (t *Table) Tick(now uint32) (conn, path int, x Expiry) {
	i := t.scan
	t.scan++
	if t.scan == t.p.TableDepth {
		t.scan = 0
	}
	conn, path = t.p.Table().Split(i)
	if conn >= t.p.Conns || path >= t.p.Paths {
		return conn, path, Expiry{}
	}
	return conn, path, t.Expire(conn, path, now)
}
