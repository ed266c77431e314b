// Package window is the behavioural truth of MetaRoCE's sender state: per-path and
// per-connection congestion windows (ECN AIMD), RTT estimation from timestamp echoes, the
// receiver's rate-hint cap, path selection (spraying), retransmit timers and path-failure
// handling. golden/transport uses it for protocol experiments and cosim checks hdl/window's RTL
// against it, so it holds only integers of stated widths (no floats), is deterministic, and
// every operation touches one (connection, path) entry and its connection's entry with a
// bounded amount of work (one operation per clock in the RTL, II=1).
//
// # Tables, units and widths
//
// The path table is indexed by {conn, path} (Params.Index, as in golden/sack); the connection
// table by conn. Time is nanoseconds truncated to 32 bits, the wire's timestamp unit; every
// time difference is taken mod 2^32, and a deadline has passed when (now − deadline) mod 2^32 is
// below 2^31 (serial arithmetic, golden/psn's rule at 32 bits). Windows are fixed point with
// FracBits = 8 fractional bits ("fp" below; 1 packet = 256).
//
// Per (connection, path) entry (PathEntry), width and overflow behaviour:
//
//	State         2 bits   Active=0, Suspect=1, Failed=2
//	Cwnd          19 bits  fp, always in [min_cwnd, max_cwnd]·256 (max_cwnd ≤ sack_width ≤ 1024)
//	Inflight      11 bits  packets sent and not yet acked or moved; ≤ max_cwnd; never below 0
//	                        (an ACK acknowledging more than is in flight acknowledges all of it)
//	Accum         16 bits  unmarked packets acked since the last increase; saturates at 65535
//	SRTT, RTTVar  32 bits  ns; both stay below 2^31 because samples ≥ 2^31 are discarded
//	RTTValid      1 bit    SRTT holds at least one sample
//	RTO           32 bits  ns, current (backed-off) timeout, always in [rto_min, rto_max]
//	Deadline      32 bits  ns mod 2^32; Armed 1 bit
//	Marked        1 bit    the last ACK carried an ECN echo (cleared by an unmarked ACK or by
//	                        the first timeout after it)
//	Marks         16 bits  ECN echoes counted in the current decrease epoch; saturates
//	LastDecrease  32 bits  ns mod 2^32; DecValid 1 bit (a decrease happened since reset)
//	RateHint      16 bits  the last rate hint of an ACK on this path, 100 Mb/s units
//	Timeouts      4 bits   consecutive counted timeouts; saturates at 15; an ACK clears it
//	LFSR, Entropy 16 bits  entropy LFSR state and the path's UDP source port
//	NextPSN       psn_width bits, wraps: the PSN of the path's next new packet
//	Floored       1 bit    a timer event set Cwnd to min_cwnd and no ACK or NAK came since
//
// Per connection entry (ConnEntry):
//
//	Cwnd          27 bits  fp, in [min_cwnd, conn_max_cwnd]·256 (conn_max_cwnd ≤ 262144)
//	Inflight      19 bits  always the sum of its paths' Inflight
//	Accum         20 bits  as a path's; saturates at 2^20−1
//	LastDecrease  32 bits, DecValid 1 bit
//	RateHint      16 bits  the last rate hint received on any path
//	RateCap       27 bits  fp, the window the rate hint allows, in [min_cwnd, conn_max_cwnd]·256
//	MinRTT        32 bits  ns, the smallest valid RTT sample of any of its paths; MinValid 1 bit
//	RR            path_id_width bits, the spraying pointer, in [0, paths_per_connection)
//
// Bytes in flight are not kept: the window unit counts packets; byte-granular pacing would need
// the packet lengths, which the scheduler upstream owns.
//
// # ACK update
//
// AckUpdate(conn, path, ack, now) on a path that is not Failed does, in this order (an ACK on a
// Failed path is a late answer for packets already moved: it is ignored entirely):
//
//  1. RTT. sample = (now − TimestampEcho) mod 2^32. A sample ≥ 2^31 (an echo "from the future")
//     is discarded. The first sample sets SRTT = sample, RTTVar = sample>>1. Later ones, as
//     RFC 6298 (RTTVar first, from the old SRTT), with d = sample − SRTT as a signed 33-bit value
//     and >> an arithmetic (flooring) shift:
//     RTTVar += (|d| − RTTVar) >> rttvar_shift;  SRTT += d >> srtt_shift.
//     RTO = clamp(SRTT + 4·RTTVar, rto_min, rto_max) (computed in 34 bits), or rto_initial while
//     no sample is valid. The ACK therefore also ends any backoff. The connection's MinRTT
//     becomes the sample when it is the first of the connection or below MinRTT: the base RTT
//     the rate cap uses. (Per connection, not per path: a path whose first sample came during a
//     queue would keep an inflated minimum, and the cap would swing with the acking path.)
//  2. In flight. acked = min(CumAdvance + NewlySacked, Inflight); both the path's and the
//     connection's Inflight drop by acked. The caller counts each packet once: CumAdvance are
//     the packets newly covered by the cumulative PSN that were not SACKed before, NewlySacked
//     the packets newly SACKed above it. Loss found by SACK changes no window: MetaRoCE takes
//     ECN, not loss, as the congestion signal, so random loss does not collapse the window.
//  3. AIMD, path. With ECNEcho > 0: Marked = 1, Accum = 0, and if no decrease happened yet or
//     (now − LastDecrease) mod 2^32 ≥ SRTT, then Cwnd = max(Cwnd − (Cwnd >> md_shift), min),
//     LastDecrease = now, Marks = ECNEcho (a new epoch); otherwise Marks += ECNEcho. So the
//     decrease happens at most once per SRTT (SRTT is 0 until the path's first valid sample, so
//     until then every marked ACK decreases). A decrease more than 2^32 ns after the previous one
//     may alias and wait up to one more SRTT, which is benign. Without marks: Marked = 0, and
//     s = Accum + acked; if s ≥ Cwnd>>8 (one window's worth of unmarked packets, i.e. one RTT)
//     then Cwnd = min(Cwnd + ai_step·256, max) and s −= old Cwnd>>8; Accum = min(s, 65535). At
//     most one increase per ACK; leftovers carry to the next ACK.
//  4. AIMD, connection: the same rule on the connection entry, with conn_md_shift, the
//     connection's own LastDecrease (gated by the acking path's SRTT) and an increase of
//     ai_step × paths_per_connection packets per connection window's worth of unmarked ACKs,
//     so that the connection window grows as fast as the sum of its paths' windows.
//  5. Rate hint. The path and the connection store RateHint. If the path's RTT is valid,
//     RateCap = clamp(hint × min(T, 2^24−1) × RateCapMul >> 24, min, conn_max)·fp with
//     T = MinRTT + MinRTT>>1 (the connection's, a 32-bit sum), where
//     RateCapMul = floor(2^28 / (5·mtu)): hint·100 Mb/s × T in packets of mtu bytes, ×256.
//     (The product is at most 58 bits.) Hint 0 means no limit: RateCap = conn_max. The base
//     RTT, not SRTT: a cap of hint × SRTT grows with the queue it causes and so keeps it,
//     while hint × base RTT is the hinted share of one bandwidth-delay product, so the senders
//     of an incast drain the queue once the hints arrive. The half on top is headroom for the
//     ACK clock (delayed ACKs, NIC queues): measured on a 16-host ring, a lone flow reached 75%
//     of line rate with exactly one BDP, 89% with 1.25 and 93% with 1.5; the price is at most
//     half a BDP of queue at a bottleneck shared by hinted senders.
//  6. Liveness. Timeouts = 0, Floored = 0; a Suspect path becomes Active. The timer restarts
//     (Deadline = now + the published RTO, below; ArmedAt = now) if the path still has packets
//     in flight, else it is disarmed. The connection's LastHeard = now (HeardValid set).
//
// # NAK
//
// Heard(conn, path, now) is a receiver's NAK on the path: it says nothing of congestion, progress
// or rate (a NAK carries no ECN echo, count or hint) but proves the path delivers, so only
// step 6 applies (a Failed path ignores it). Without it, a receiver that refuses packets for
// longer than an RTO (receiver-not-ready while its application reposts receives) would make its
// paths time out, go Suspect and fail, and their packets be copied to other paths for nothing.
//
// # Send decision and spraying policy
//
// SendDecision(conn, now) picks the path of the connection's next new packet:
//
//   - The connection may send when Inflight < ⌈min(Cwnd, RateCap) / 256⌉, both published (the rate-hint cap acts
//     as a window: the hinted rate times the base RTT). Rounding up lets a connection whose
//     share is a fraction of a packet more than its integer part keep its share (rounding down
//     lost up to a third of a two-packet share); the excess is at most one packet per
//     connection. Otherwise the answer is not ok, with reason ReasonRateCap when
//     RateCap < Cwnd, else ReasonConnWindow.
//   - Each path has a 2-bit class, a function of its own entry and its published window W
//     (min_cwnd while Floored), recomputed by every operation that works on the path (all but
//     a refused send; a send keeps the W its class was last computed with) and read by the
//     pick as last computed:
//     0 (ineligible) when Failed or Inflight ≥ W>>8;
//     1 when Suspect or Marked (and it has window);
//     2 when it has window but less than half of it free (2·(cwnd−inflight) < cwnd, integers);
//     3 when at least half of its window is free.
//   - The chosen path is the first path of the highest non-empty class at or after RR, in
//     rotating order RR, RR+1, …, P−1, 0, …, RR−1. Then RR = chosen+1 (mod P). None eligible:
//     not ok, ReasonNoPath.
//   - The chosen path's Inflight and the connection's Inflight grow by one, the answer carries
//     the path's Entropy and NextPSN, NextPSN advances (mod 2^psn_width), and an unarmed timer
//     is armed at now + the published RTO.
//
// This favours paths with more free window (class 3 before class 2), gives marked and suspect
// paths only what the unmarked ones cannot take, never picks a failed path or one without
// window, and spreads equal paths round robin (their counts differ by at most one). Lower SRTT
// is favoured by ACK clocking: a window frees up once per RTT, so a path's share is
// Cwnd/SRTT, as in window-based multipath transports (MP-RDMA, UET NSCC). In hardware
// (hdl/window) each path's 2-bit class is a register rewritten whenever its entry is written
// (an ACK, a send or a timer event touches one path), and the decision is a priority pick of the
// highest non-empty class bitmap followed by a rotating find-first-set from RR (two log2(P)-deep
// trees). Here the classes are computed from the entries, which is the same function.
//
// A retransmission of a packet found lost by SACK goes on the path that lost it with its
// original PSN and does not pass through SendDecision: it replaces a packet still counted in
// flight. Packets moved off a failed path do pass through it (they are new packets of another
// path).
//
// # Timers and path failure
//
// The RTL scans: one path-table entry per check (Tick), in index order, in every clock no ACK
// or send takes and at least once every 16 clocks (docs/window.md), so every entry is checked
// within 16·path_table_depth clocks, well inside any RTO; Expire is the check of one entry. An entry has
// expired when it is Armed and (now − Deadline) mod 2^32 < 2^31. On expiry:
//
//   - Active or Suspect path (it has packets in flight): a timeout. Outstanding = Inflight is
//     reported (the transport resends the oldest unacknowledged packet on the path; the packets
//     stay counted in flight). Cwnd = min, Accum = 0, RTO = min(2·RTO, rto_max), Deadline =
//     now + min(2·published RTO, rto_max), ArmedAt = now. If Marked, the timeout is put down to
//     congestion: Marked is cleared and the timeout is not counted. Otherwise Timeouts += 1
//     (saturating). Then the path fails (below) when Timeouts ≥ failed_timeouts, or at once
//     when it is failing rather than congested: it was not Marked and the connection heard an
//     ACK or a NAK on a path after this path's timer started (HeardValid and ArmedAt − LastHeard
//     negative mod 2^32, so strictly after). Its own answers restart its timer, so that answer
//     came from a sibling: the receiver is reachable and only this route is silent. Otherwise,
//     when Timeouts ≥ suspect_timeouts an Active path becomes Suspect (event EventSuspect);
//     else the event is EventTimeout.
//   - Failure (EventFailed): Moved = Inflight is reported for the transport to resend on
//     healthy paths; the path's and the connection's Inflight drop by it; State = Failed; the
//     entropy is re-drawn (one LFSR step, below); the RTT estimator and the ECN state are reset
//     (a new route), RTO = rto_initial, Cwnd = min; and the timer is armed for the probe at
//     now + probe_interval. A path that fails at its first timeout so releases its share of the
//     connection's window and has its packets resent on the other paths one RTO after the route
//     died (rather than after failed_timeouts backed-off RTOs).
//   - Failed path (EventProbe): State = Suspect with Cwnd = min, Timeouts = failed_timeouts − 1,
//     RTO = rto_initial, timer disarmed. The next packet sprayed to it is the probe: an ACK
//     makes it Active; one more timeout fails it again and draws another entropy.
//
// Every timer event (timeout, suspect, failed, probe) sets Floored: the path's window is
// min_cwnd until an ACK or a NAK is heard on it, and its class says so at once (below).
//
// # Published state
//
// The decisions read four fields with a lag, so that hardware can compute the ACK arithmetic in
// a pipeline behind them (docs/window.md): the path's Cwnd and RTO and the connection's Cwnd and
// RateCap. Every operation on a connection (AckUpdate, Heard, SendDecision, Expire, SetNextPSN)
// ends by publishing the values the operation PubLag = 8 operations earlier on the same
// connection left: that operation's path's Cwnd and RTO and the connection's Cwnd and RateCap.
// So the decisions of an operation see the state the operation PubLag + 1 = 9 earlier left.
// Operations on other connections do not count; Tick's padding entries are no operation. The
// published values are read by the send gate (its window and rate cap), by the spraying class
// (the path's window, min_cwnd while Floored) and by every timer restart (Deadline = now +
// published RTO; a timeout's, now + min(2 × published RTO, rto_max)). Everything else reads and
// writes the current state at once: Inflight, NextPSN, RR, State, Timeouts, Marked, Floored,
// Deadline, Armed and the LFSR, and the ACK arithmetic (RTT estimator, AIMD, base RTT, rate cap)
// works on the current values of its fields. So a connection may send up to PubLag packets on a
// window an ACK has already cut, and a path's timer restarts at the RTO of PubLag + 1
// operations ago; a timeout floors the path's class at once.
//
// # Entropy LFSR
//
// Each path entry has a 16-bit Galois LFSR with polynomial x^16 + x^14 + x^13 + x^11 + 1 (toggle
// mask LFSRTaps = 0xB400; maximal length, period 65535). A step is: lsb = s & 1; s >>= 1; if lsb
// then s ^= 0xB400. Entry index i = {conn, path} starts at
// s0 = fold(seed) ^ ((i+1)·0x9E37 mod 2^16), where fold(seed) XORs the four 16-bit halves of the
// 64-bit config seed, and s0 = 0xACE1 if that is 0 (the LFSR never holds 0). The path's entropy
// (UDP source port) is EntropyOf(s) = 0xC000 | (s & 0x3FFF), in the dynamic port range
// 49152..65535; a re-draw steps the LFSR once and takes EntropyOf of the new state. Because 0x9E37
// is odd, the initial entropies of the first 16384 entries are pairwise distinct (except the one
// index whose s0 is replaced); later draws may coincide, which costs ECMP spread only.
package window

import (
	"fmt"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/psn"
)

// FracBits is the number of fractional bits of every window (Cwnd, RateCap, AI steps).
const FracBits = 8

// One is one packet in window fixed point.
const One = 1 << FracBits

// Field widths of the table entries (see the package doc).
const (
	InflightBits     = 11
	ConnInflightBits = 19
	AccumBits        = 16
	ConnAccumBits    = 20
	MarksBits        = 16
	TimeoutBits      = 4
	RTTCapBits       = 24 // the rate-cap product clamps its RTT (1.5 × MinRTT) to this many bits
	LFSRTaps         = 0xB400
	lfsrZeroSeed     = 0xACE1
	seedMul          = 0x9E37
)

const (
	accumMax     = 1<<AccumBits - 1
	connAccumMax = 1<<ConnAccumBits - 1
	marksMax     = 1<<MarksBits - 1
	timeoutsMax  = 1<<TimeoutBits - 1
)

// Params are the parameters the window rules depend on, derived from the shared configuration.
// Windows are in fixed point (FracBits), times in ns.
type Params struct {
	Conns      int // connections
	Paths      int // paths per connection, P
	ConnBits   int
	PathBits   int
	IndexBits  int
	TableDepth int
	PSNBits    int

	MinCwnd, InitCwnd, MaxCwnd uint32 // path windows, fp
	ConnInitCwnd, ConnMaxCwnd  uint32 // connection windows, fp (the floor is MinCwnd)
	AIStep, ConnAIStep         uint32 // additive increase per window's worth of ACKs, fp
	MDShift, ConnMDShift       uint
	SRTTShift, RTTVarShift     uint

	RTOMin, RTOInitial, RTOMax uint32 // ns
	ProbeInterval              uint32 // ns

	SuspectTimeouts, FailedTimeouts uint8

	RateCapMul uint64 // floor(2^28 / (5·mtu)), see the package doc
	Seed       uint64
}

// ParamsFrom derives Params from a validated configuration.
func ParamsFrom(c config.Config) Params {
	d := c.Derived()
	w := c.Window
	connInit := min(w.InitCwnd*c.PathsPerConnection, c.WindowConnMaxCwnd())
	return Params{
		Conns:           c.Connections,
		Paths:           c.PathsPerConnection,
		ConnBits:        d.ConnIDWidth,
		PathBits:        d.PathIDWidth,
		IndexBits:       d.PathTableAddrWidth,
		TableDepth:      d.PathTableDepth,
		PSNBits:         c.PSNWidth,
		MinCwnd:         uint32(w.MinCwnd) << FracBits,
		InitCwnd:        uint32(w.InitCwnd) << FracBits,
		MaxCwnd:         uint32(c.WindowMaxCwnd()) << FracBits,
		ConnInitCwnd:    uint32(connInit) << FracBits,
		ConnMaxCwnd:     uint32(c.WindowConnMaxCwnd()) << FracBits,
		AIStep:          uint32(w.AIStep) << FracBits,
		ConnAIStep:      uint32(w.AIStep*c.PathsPerConnection) << FracBits,
		MDShift:         uint(w.MDShift),
		ConnMDShift:     uint(w.ConnMDShift),
		SRTTShift:       uint(w.SRTTShift),
		RTTVarShift:     uint(w.RTTVarShift),
		RTOMin:          uint32(w.RTOMinNS),
		RTOInitial:      uint32(w.RTOInitialNS),
		RTOMax:          uint32(w.RTOMaxNS),
		ProbeInterval:   uint32(w.ProbeIntervalNS),
		SuspectTimeouts: uint8(w.SuspectTimeouts),
		FailedTimeouts:  uint8(w.FailedTimeouts),
		RateCapMul:      (1 << 28) / (5 * uint64(c.MTU)),
		Seed:            c.Seed,
	}
}

// Index is the path-table index of (conn, path): {conn, path}.
func (p Params) Index(conn, path int) (int, error) {
	i, err := p.Table().Index(conn, path)
	if err != nil {
		return 0, fmt.Errorf("window: %w", err)
	}
	return i, nil
}

// Table is the path table's {conn, path} layout (config.PathTable, shared with golden/sack).
func (p Params) Table() config.PathTable {
	return config.PathTable{Connections: p.Conns, Paths: p.Paths, PathBits: p.PathBits}
}

func (p Params) index(conn, path int) int {
	i, err := p.Index(conn, path)
	if err != nil {
		panic(err)
	}
	return i
}

// psns is the PSN space (golden/psn's serial arithmetic) of the configured width.
func (p Params) psns() psn.Space { return psn.MustSpace(p.PSNBits) }

// nanos is the 32-bit nanosecond clock's serial arithmetic (golden/psn's rule at 32 bits): a
// time difference is "in the past" unless it is negative there.
var nanos = psn.MustSpace(32)

// LFSRNext is one step of the 16-bit Galois entropy LFSR (polynomial x^16+x^14+x^13+x^11+1).
func LFSRNext(s uint16) uint16 {
	lsb := s & 1
	s >>= 1
	if lsb != 0 {
		s ^= LFSRTaps
	}
	return s
}

// LFSRSeed is the initial LFSR state of path-table entry index under the config seed.
func LFSRSeed(seed uint64, index int) uint16 {
	f := uint16(seed) ^ uint16(seed>>16) ^ uint16(seed>>32) ^ uint16(seed>>48)
	s := f ^ uint16(uint32(index+1)*seedMul)
	if s == 0 {
		s = lfsrZeroSeed
	}
	return s
}

// EntropyOf maps an LFSR state to a UDP source port in 49152..65535.
func EntropyOf(s uint16) uint16 { return 0xC000 | s&0x3FFF }
