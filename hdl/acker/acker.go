// Package acker is the Go description of the receive side's ACK scheduler, rx_acker: which ACKs
// the NIC sends for the data packets it receives, when, and with what ECN echo, rate hint and
// timestamp echo. The rules are golden/acker's, exactly; this package only decides how the
// hardware keeps its state:
//
//   - Per (connection, path), one held-ACK slot in three RAMs indexed by {conn, path}: its
//     control entry (valid, kind, ECN count), the only part a packet's decisions read, its data
//     (cumulative PSN, bitmap, timestamp, echo base = timestamp - arrival time), and its
//     delayed-ACK deadline, written only when a packet delays its ACK.
//   - Per connection, the active bit and the time of the last data packet, in a second RAM,
//     and the announce record (held, told, path, cumulative PSN, timestamp, arrival time, last
//     told hint) in a third.
//   - The delayed-ACK deadlines in a RAM FIFO of conns×paths entries (golden's bound) whose head
//     is also kept in a register, the gathered entries (a path's held ACK, or a connection's
//     held announce answer) in a RAM list of conns entries, and the rate-hint table
//     (golden/acker.HintTable) as a case ROM indexed by the active count.
//
// The scheduler is a small state machine: one operation at a time (a packet or an ANNOUNCE, a
// delayed-ACK deadline, the close of the gather window with its refresh walk over the
// connections, or the activity scan), timers first, so that every ACK leaves in golden's order.
// Its time is the input now (ns); m_wake_at says when the next timer falls due, so that a
// testbench, or the NIC's timer wheel, can wake it.
//
// Timing (docs/acker.md): a packet is read in one cycle (at the input's address, with the sums
// of now it needs) and decided and written back in the next (PKT), while the next packet is
// read: II 1 on any entry. A table read in the cycle its entry is written takes the written
// value from a registered bypass (the tables read first), and the rate hint follows the count
// a packet just raised. A packet is taken during PKT only when no timer falls due before it,
// the previous packet's changes included. Timers read in a cycle of their own; counters count
// an event one cycle after it.
package acker

import (
	"embed"
	"fmt"
	"math"
	"math/bits"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	goldenacker "github.com/mrgen/mrgen/golden/acker"
	goldensack "github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "hdl/acker/acker.go"

// Top is the top module's name.
const Top = "rx_acker"

// Widths of the scheduler's fields.
const (
	TimeW = 64 // now and deadlines, ns
	TSW   = 32 // wire timestamps, ns mod 2^32
	ECNW  = 16 // ECN echo, saturating
	HintW = 16 // rate hint, wire.RateHintUnitMbps units
	KindW = 2  // golden/acker.Kind
	// Cycles is the initiation interval of packets and ANNOUNCEs: the cycles from one
	// acceptance to the next when no timer is due and the ACK output is free, on any entry
	// (docs/acker.md), as long as packets are less than MinTimer ns apart.
	Cycles = 1
	// Latency is the cycles from a packet's handshake to its immediate ACK on m_ack.
	Latency = 2
	// CtlW is the width of a slot's control entry {ECN count, kind, valid}.
	CtlW = ECNW + 2
)

// Unit is the derived description of rx_acker for one configuration.
type Unit struct {
	Cfg   config.Config
	P     goldenacker.Params
	Reset hdl.ResetStyle
	// CW, AW, IW: connection, path and {conn, path} index widths; PW the PSN width; W the
	// bitmap width.
	CW, AW, IW, PW, W int
	Depth, ConnDepth  int // slot-table and connection-table depths (powers of two)
	DQ, DQW, DQPW     int // delayed-deadline FIFO depth (conns×paths), count and pointer widths
	GQ, GQW, GQPW     int // gathered-path list depth (conns), count and index widths
	CountW            int // width of the active count 0..conns
	DataW             int // slot data entry width {echo base, ts, bitmap, cum}
	AnnW              int // announce record width
}

func clog2(n int) int {
	if n <= 1 {
		return 1
	}
	return bits.Len(uint(n - 1))
}

// New derives the description from a validated configuration.
func New(c config.Config) (*Unit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("acker: %w", err)
	}
	p := goldenacker.ParamsFrom(c)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("acker: %w", err)
	}
	sp := goldensack.ParamsFrom(c)
	u := &Unit{Cfg: c, P: p, Reset: hdl.ResetFor(c.ResetStyle), CW: sp.ConnBits, AW: sp.PathBits,
		PW: c.PSNWidth, W: c.SackWidth}
	u.IW = u.CW + u.AW
	u.Depth, u.ConnDepth = 1<<u.IW, 1<<u.CW
	u.DQ = p.Conns * p.Paths
	u.DQW, u.DQPW = clog2(u.DQ+1), clog2(u.DQ)
	u.GQ = p.Conns
	u.GQW, u.GQPW = clog2(u.GQ+1), clog2(u.GQ)
	u.CountW = clog2(p.Conns + 1)
	u.DataW = u.PW + u.W + TSW + TSW
	u.AnnW = 2 + u.AW + u.PW + TSW + TimeW + HintW
	return u, nil
}

// Module is rx_acker's port list and documentation.
func (u *Unit) Module() *hdl.Module {
	in, out := hdl.In, hdl.Out
	ports := append(u.Reset.Ports(),
		in("now", TimeW, "time, ns (the NIC's timestamp counter)"),
		in("s_pkt_valid", 1, "a classified data packet (sack_rx's result, the packet's side fields) or an ANNOUNCE"),
		in("s_pkt_announce", 1, "an ANNOUNCE: conn, path, ts and cum (the path's current cum) only"),
		out("s_pkt_ready", 1, "taken when valid and ready: only when idle and no timer is due at now"),
		in("s_pkt_conn", u.CW, "connection id"),
		in("s_pkt_path", u.AW, "path id"),
		in("s_pkt_ce", 1, "the packet arrived CE-marked"),
		in("s_pkt_ts", TSW, "the packet's timestamp"),
		in("s_pkt_class", 2, "sack_rx class: 0 new, 1 duplicate, 2 old, 3 beyond the window"),
		in("s_pkt_cum", u.PW, "sack_rx: cumulative PSN after the packet"),
		in("s_pkt_bitmap", u.W, "sack_rx: bitmap aligned to the cumulative PSN"),
		in("s_pkt_ack_due", 1, "sack_rx: the ACK policy makes an ACK due"),
		out("m_ack_valid", 1, "an ACK to send"),
		in("m_ack_ready", 1, "the ACK builder takes it"),
		out("m_ack_kind", KindW, "0 immediate, 1 delayed, 2 gathered, 3 announce answer/refresh"),
		out("m_ack_conn", u.CW, "connection id"),
		out("m_ack_path", u.AW, "path id"),
		out("m_ack_cum", u.PW, "cumulative PSN"),
		out("m_ack_bitmap", u.W, "SACK bitmap aligned to it"),
		out("m_ack_ecn", ECNW, "CE-marked packets on the path since its previous ACK"),
		out("m_ack_hint", HintW, "rate hint for the active count at the time the ACK is sent"),
		out("m_ack_ts", TSW, "timestamp echo (a gathered ACK's is advanced by the time it was held)"),
		out("m_wake_valid", 1, "a timer is pending"),
		out("m_wake_at", TimeW, "when the earliest timer falls due, ns"),
		out("idle", 1, "nothing in progress and no timer due at now"),
		out("busy", 1, "the post-reset table clear is running"),
		out("active", u.CountW, "connections counted by the rate hint"),
		out("cnt_immediate", 32, "immediate ACKs (wraps)"),
		out("cnt_delayed", 32, "delayed ACKs (wraps)"),
		out("cnt_gathered", 32, "gathered ACKs (wraps)"),
		out("cnt_newcomers", 32, "connections that became active (wraps)"),
		out("cnt_expired", 32, "connections that stopped counting (wraps)"),
		out("cnt_overflows", 32, "delayed ACKs sent at once because the deadline queue was full (wraps)"),
		out("cnt_announces", 32, "ANNOUNCEs taken (wraps)"),
		out("cnt_announces_ignored", 32, "ANNOUNCEs ignored: hints off or connection counted (wraps)"),
		out("cnt_announce_answers", 32, "first answers to ANNOUNCEs (wraps)"),
		out("cnt_refreshes", 32, "announce answers sent again: the share moved by over a tenth (wraps)"),
	)
	return &hdl.Module{
		Name:   Top,
		Source: Source,
		Doc: fmt.Sprintf("Receive-side ACK scheduler of MetaRoCE for %d connections x %d paths "+
			"(golden/acker): immediate ACKs when the policy makes one due, delayed ACKs at most "+
			"%d ns after the packet that held them, newcomers' first ACKs gathered until no newcomer "+
			"for %d ns (at most %d ns), the ECN echo per path and the receiver's fair share of "+
			"%d Gb/s among the connections active in the last %d ns as the rate hint; an ANNOUNCE "+
			"counts its connection at once and is answered at the gather close, and answered again "+
			"when a later close moves its share by more than a tenth.",
			u.P.Conns, u.P.Paths, u.P.AckDelay, u.P.Gather, u.P.MaxGather, u.Cfg.RateHint.LinkGbps, u.P.HintWindow),
		Clock: "clk", Reset: u.Reset.Port,
		Ports: ports,
		Tables: []hdl.Table{
			{Name: "slot_ctl", Depth: u.Depth, Width: CtlW, Doc: "per {conn, path}: ECN count, held ACK's kind and valid bit"},
			{Name: "slot_data", Depth: u.Depth, Width: u.DataW, Doc: "per {conn, path}: held ACK's echo base, timestamp, bitmap and cum"},
			{Name: "slot_dl", Depth: u.Depth, Width: TimeW, Doc: "per {conn, path}: the deadline of the delayed ACK it holds or held"},
			{Name: "conn_table", Depth: u.ConnDepth, Width: 1 + TimeW, Doc: "active bit and last data time per connection"},
			{Name: "dq_ram", Depth: u.DQ, Width: u.IW + TimeW, Doc: "delayed-ACK deadlines, FIFO"},
			{Name: "ann_table", Depth: u.ConnDepth, Width: u.AnnW, Doc: "announce record per connection"},
			{Name: "gq_ram", Depth: u.GQ, Width: u.IW + 1, Doc: "gathered entries {announce, index}, in arrival order"},
		},
		Latency: Latency,
		II:      Cycles,
	}
}

// Design renders the unit (its sources rewritten by mutate when not nil).
func (u *Unit) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := u.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(Top, srcs, st, mutate)
}

// Sources returns the unit's modules for gen.Build.
func (u *Unit) Sources() ([]gen.Source, error) {
	text, err := templates.ReadFile("acker.v.tmpl")
	if err != nil {
		return nil, fmt.Errorf("acker: template: %w", err)
	}
	return []gen.Source{{Module: u.Module(), Template: string(text), Data: u}}, nil
}

// Hint is one entry of the rate-hint ROM: the hint H at an active count and the refresh's
// bounds, so that a told hint h has moved (goldenacker.HintMoved(h, H)) exactly when h >= Hi or, for
// H > 0, h <= Lo.
type Hint struct {
	Count  int
	Value  uint16
	Hi, Lo int
}

// Hints are the ROM's entries for active counts 1..conns (0 yields H = 0, Hi = 1, no Lo).
func (u *Unit) Hints() []Hint {
	out := make([]Hint, 0, u.P.Conns)
	for k := 1; k <= u.P.Conns; k++ {
		hi, lo := MovedBounds(u.P.Hints[k])
		out = append(out, Hint{Count: k, Value: u.P.Hints[k], Hi: hi, Lo: lo})
	}
	return out
}

// MovedBounds are golden's refresh rule (goldenacker.HintMoved) at the current hint H as two
// compares: the least told hint above H that has moved and the greatest below it (0 when H is
// 0 and none is, the RTL then skips the lower compare). The rule grows monotonically away from
// H, so the two bounds say all of it; TestMovedBoundsAreGoldensRule checks every h.
func MovedBounds(now uint16) (hi, lo int) {
	hi = int(now) + 1
	for hi <= math.MaxUint16 && !goldenacker.HintMoved(uint16(hi), now) {
		hi++
	}
	lo = int(now) - 1
	for lo >= 0 && !goldenacker.HintMoved(uint16(lo), now) {
		lo--
	}
	return hi, max(lo, 0)
}

// ClearDepth is the number of entries the post-reset clear walks (both tables at once).
func (u *Unit) ClearDepth() int { return max(u.Depth, u.ConnDepth) }

// ClearLast is the clear index's last value.
func (u *Unit) ClearLast() int { return u.ClearDepth() - 1 }

// ClearW is the width of the clear index.
func (u *Unit) ClearW() int { return clog2(u.ClearDepth()) }

// RateHintUnit is the hint's unit, for the header comment.
func (u *Unit) RateHintUnit() int { return wire.RateHintUnitMbps }

// MinTimer is the shortest time a packet sets a timer ahead of its arrival (ns): the least of
// the ACK delay, the gather window and the scan period. A packet less than that after the one
// being decided cannot find a timer that one set falling due before it.
func (u *Unit) MinTimer() uint64 {
	return min(u.P.AckDelay, u.P.Gather, u.P.Scan)
}

// CtlWidth is CtlW, for the template.
func (u *Unit) CtlWidth() int { return CtlW }
