// Package window is the Go description of the sender's window unit (window_unit): the
// per-(connection, path) window table, the per-connection table, the spraying pick and the
// retransmit-timer scan. It derives every width from the shared configuration and golden/window's
// Params, builds the port lists and hands each module with its template to gen/.
//
// The rules are golden/window's; this package only decides how hardware implements them:
//
//   - The path table (one wide entry per {conn, path}) is an inferred RAM read one cycle ahead
//     of the recurrence stage and written back by it; a one-entry forwarding register supplies
//     the entry written in the previous cycle, so back-to-back operations on one path run at II=1.
//   - The connection table is an inferred RAM read and forwarded the same way. A 2-bit
//     spraying class per path (golden/window.Class of the entry, rewritten whenever the entry is
//     written) and each connection's round-robin pointer are registers, so the send decision
//     can read all P classes of a connection in the cycle a send request is accepted. The pick
//     (the highest non-empty class, first path at or after the round-robin pointer) is a
//     priority select followed by a rotating find-first-set (two log2 trees), and its result
//     addresses the path-table read. The operation in the recurrence stage forwards its
//     connection's new pointer and its path's new class to the pick, and the connection gate is
//     applied in the recurrence stage, so sends after any operation on the same connection run
//     at II=1 too.
//   - One operation enters per clock. Arbitration (in priority order): the post-reset table
//     initialisation, a timer scan that has waited ScanStarve cycles, an ACK-port operation, a
//     send request, and otherwise a timer scan (one path-table entry per scan, golden Tick).
package window

import (
	"embed"
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	goldenwindow "github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/hdl"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "hdl/window/window.go"

// Top is the name of the unit's top module.
const Top = "window_unit"

// Opcodes of the ACK port (s_ack_op).
const (
	AckOpAck    = 0 // a parsed ACK: golden AckUpdate
	AckOpSetPSN = 1 // connection setup: the path's next PSN is s_ack_psn (golden SetNextPSN)
	AckOpHeard  = 2 // a NAK: the liveness step of an ACK alone (golden Heard); 3 acts as 2
)

// Latency is the number of cycles from an input handshake (or a scan) to its output.
const Latency = 2

// ScanStarve is the number of consecutive advancing cycles the timer scan may lose the
// arbitration before it takes the slot: the scan gets at least one slot in ScanStarve+1, so every
// entry is checked at least every (ScanStarve+1)·path_table_depth cycles under full load.
const ScanStarve = 15

// Field is one field of a table entry, in packing order from bit 0.
type Field struct {
	Name  string
	Width int
	Lo    int // lowest bit in the entry
	Doc   string
}

// Hi is the field's highest bit.
func (f Field) Hi() int { return f.Lo + f.Width - 1 }

// Unit is the derived description of the window unit for one configuration.
type Unit struct {
	Cfg   config.Config
	P     goldenwindow.Params
	Reset hdl.ResetStyle

	CW, AW, IdxW int // conn id, path id and {conn, path} index widths
	PW           int // PSN width
	Depth        int // path-table depth, 2^IdxW
	ConnDepth    int // connection-table depth, 2^CW
	PathSlots    int // 2^AW: paths per connection including padding
	PadConns     bool
	PadPaths     bool

	PathFields []Field
	ConnFields []Field
	PathEntryW int
	ConnEntryW int

	// Fixed-point constants (golden Params), ready for the template.
	SeedFold uint16

	// Explicit: no free-running timer scan; each entry is checked (golden Expire) only when the
	// s_exp port asks, and every such check answers on m_tmr, EventNone included. The send
	// engine (hdl/sender) uses it so that its scan calls Expire exactly where golden/sender
	// does. The module is then named ExplicitTop.
	Explicit bool
}

// ExplicitTop is the name of the unit built with Explicit set.
const ExplicitTop = "tx_window_unit"

// NewExplicit is New with Explicit set: the variant hdl/sender instantiates.
func NewExplicit(c config.Config) (*Unit, error) {
	u, err := New(c)
	if err != nil {
		return nil, err
	}
	u.Explicit = true
	return u, nil
}

// Name is the unit's module name: Top, or ExplicitTop when Explicit.
func (u *Unit) Name() string {
	if u.Explicit {
		return ExplicitTop
	}
	return Top
}

// Widths of the entry fields (golden/window's package doc).
const (
	CwndW     = 19
	ConnCwndW = 27
	StateW    = 2
	EventW    = 3
	ReasonW   = 2
	TimeW     = 32
	EntropyW  = 16
	RateHintW = 16
	CountInW  = 16 // ACK counts (cum advance, newly SACKed, ECN echo)
	MaxConns  = 1024
)

func packFields(fs []Field) ([]Field, int) {
	lo := 0
	out := make([]Field, len(fs))
	for i, f := range fs {
		f.Lo = lo
		lo += f.Width
		out[i] = f
	}
	return out, lo
}

// New derives the window unit's description from a validated configuration.
func New(c config.Config) (*Unit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("window: %w", err)
	}
	if c.Connections > MaxConns {
		return nil, fmt.Errorf("window: connections %d: the window unit keeps each connection's "+
			"round-robin pointer and path classes in registers and supports at most %d connections",
			c.Connections, MaxConns)
	}
	p := goldenwindow.ParamsFrom(c)
	u := &Unit{Cfg: c, P: p, CW: p.ConnBits, AW: p.PathBits, IdxW: p.IndexBits, PW: p.PSNBits,
		Depth: p.TableDepth, ConnDepth: 1 << p.ConnBits, PathSlots: 1 << p.PathBits}
	u.PadConns = p.Conns < u.ConnDepth
	u.PadPaths = p.Paths < u.PathSlots
	u.Reset = hdl.ResetFor(c.ResetStyle)
	u.PathFields, u.PathEntryW = packFields([]Field{
		{Name: "state", Width: StateW, Doc: "0 active, 1 suspect, 2 failed"},
		{Name: "cwnd", Width: CwndW, Doc: "path window, packets x 256"},
		{Name: "inflight", Width: goldenwindow.InflightBits, Doc: "packets in flight"},
		{Name: "accum", Width: goldenwindow.AccumBits, Doc: "unmarked packets acked since the last increase"},
		{Name: "srtt", Width: TimeW, Doc: "smoothed RTT, ns"},
		{Name: "rttvar", Width: TimeW, Doc: "RTT variation, ns"},
		{Name: "rtt_valid", Width: 1, Doc: "srtt holds a sample"},
		{Name: "rto", Width: TimeW, Doc: "current timeout, ns"},
		{Name: "deadline", Width: TimeW, Doc: "timer deadline, ns mod 2^32"},
		{Name: "armed", Width: 1, Doc: "timer armed"},
		{Name: "marked", Width: 1, Doc: "the last ACK carried an ECN echo"},
		{Name: "marks", Width: goldenwindow.MarksBits, Doc: "ECN echoes in the current decrease epoch"},
		{Name: "last_dec", Width: TimeW, Doc: "time of the last decrease"},
		{Name: "dec_valid", Width: 1, Doc: "a decrease happened"},
		{Name: "rate_hint", Width: RateHintW, Doc: "last rate hint on this path"},
		{Name: "timeouts", Width: goldenwindow.TimeoutBits, Doc: "consecutive counted timeouts"},
		{Name: "lfsr", Width: 16, Doc: "entropy LFSR state (entropy = 0xC000 | lfsr[13:0])"},
		{Name: "next_psn", Width: p.PSNBits, Doc: "PSN of the next new packet"},
		{Name: "floored", Width: 1, Doc: "a timer event set cwnd to min; no ACK or NAK since"},
	})
	u.ConnFields, u.ConnEntryW = packFields([]Field{
		{Name: "cwnd", Width: ConnCwndW, Doc: "connection window, packets x 256"},
		{Name: "inflight", Width: goldenwindow.ConnInflightBits, Doc: "sum of the paths' inflight"},
		{Name: "accum", Width: goldenwindow.ConnAccumBits, Doc: "unmarked packets acked since the last increase"},
		{Name: "last_dec", Width: TimeW, Doc: "time of the last decrease"},
		{Name: "dec_valid", Width: 1, Doc: "a decrease happened"},
		{Name: "rate_hint", Width: RateHintW, Doc: "last rate hint on any path"},
		{Name: "rate_cap", Width: ConnCwndW, Doc: "window the rate hint allows, packets x 256"},
		{Name: "min_rtt", Width: TimeW, Doc: "base RTT: the smallest valid sample of any path, ns"},
		{Name: "min_valid", Width: 1, Doc: "min_rtt holds a sample"},
		{Name: "rr", Width: p.PathBits, Doc: "spraying round-robin pointer"},
	})
	s := c.Seed
	u.SeedFold = uint16(s) ^ uint16(s>>16) ^ uint16(s>>32) ^ uint16(s>>48)
	return u, nil
}

// Design renders the unit: its sources, rewritten by mutate when it is not nil (fault-injection
// tests break a template on purpose), through gen.Build.
func (u *Unit) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := u.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(u.Name(), srcs, st, mutate)
}

// Sources returns every module of the unit, leaves first, ready for gen.Build.
func (u *Unit) Sources() ([]gen.Source, error) {
	fs, err := u.firstSet()
	if err != nil {
		return nil, err
	}
	out := []gen.Source{fs}
	for _, b := range []struct {
		mod  *hdl.Module
		tmpl string
	}{
		{u.PickModule(), "pick.v.tmpl"},
		{u.UnitModule(), "unit.v.tmpl"},
	} {
		text, err := templates.ReadFile(b.tmpl)
		if err != nil {
			return nil, fmt.Errorf("window: template %s: %w", b.tmpl, err)
		}
		out = append(out, gen.Source{Module: b.mod, Template: string(text), Data: u})
	}
	return out, nil
}

// Const is one localparam of the unit's template.
type Const struct {
	Name  string
	Width int
	Value uint64
	Doc   string
}

// Literal renders the constant's value as a sized decimal literal.
func (c Const) Literal() string { return fmt.Sprintf("%d'd%d", c.Width, c.Value) }

// Consts are the configuration's fixed-point and timing constants, as the RTL holds them.
func (u *Unit) Consts() []Const {
	p := u.P
	return []Const{
		{"MIN_CWND", CwndW, uint64(p.MinCwnd), "window.min_cwnd x 256"},
		{"INIT_CWND", CwndW, uint64(p.InitCwnd), "window.init_cwnd x 256"},
		{"MAX_CWND", CwndW, uint64(p.MaxCwnd), "window.max_cwnd (resolved) x 256"},
		{"AI_STEP", CwndW, uint64(p.AIStep), "window.ai_step x 256"},
		{"CONN_MIN_CWND", ConnCwndW, uint64(p.MinCwnd), "the connection window's floor, min_cwnd x 256"},
		{"CONN_INIT_CWND", ConnCwndW, uint64(p.ConnInitCwnd), "init_cwnd x paths (capped) x 256"},
		{"CONN_MAX_CWND", ConnCwndW, uint64(p.ConnMaxCwnd), "window.conn_max_cwnd (resolved) x 256"},
		{"CONN_AI_STEP", ConnCwndW, uint64(p.ConnAIStep), "ai_step x paths x 256"},
		{"RTO_MIN", TimeW, uint64(p.RTOMin), "window.rto_min_ns"},
		{"RTO_INITIAL", TimeW, uint64(p.RTOInitial), "window.rto_initial_ns"},
		{"RTO_MAX", TimeW, uint64(p.RTOMax), "window.rto_max_ns"},
		{"PROBE_INTERVAL", TimeW, uint64(p.ProbeInterval), "window.probe_interval_ns"},
		{"SUSPECT_TIMEOUTS", goldenwindow.TimeoutBits, uint64(p.SuspectTimeouts), "window.suspect_timeouts"},
		{"FAILED_TIMEOUTS", goldenwindow.TimeoutBits, uint64(p.FailedTimeouts), "window.failed_timeouts"},
		{"PROBE_TIMEOUTS", goldenwindow.TimeoutBits, uint64(p.FailedTimeouts - 1), "failed_timeouts - 1"},
		{"SEED_FOLD", 16, uint64(u.SeedFold), "the config seed's four 16-bit halves XORed"},
		{"PATHS", u.AW + 1, uint64(p.Paths), "paths_per_connection"},
	}
}

// Shifts are the configuration's shift amounts (plain integer localparams).
func (u *Unit) Shifts() []Const {
	p := u.P
	return []Const{
		{"MD_SHIFT", 0, uint64(p.MDShift), "window.md_shift"},
		{"CONN_MD_SHIFT", 0, uint64(p.ConnMDShift), "window.conn_md_shift"},
		{"SRTT_SHIFT", 0, uint64(p.SRTTShift), "window.srtt_shift"},
		{"RTTVAR_SHIFT", 0, uint64(p.RTTVarShift), "window.rttvar_shift"},
	}
}

// PubLagW is log2(golden/window.PubLag): the width of a connection's publication-ring slot.
const PubLagW = 3

// Widths of the published state (golden/window, "Published state"). A path's window is
// published in whole packets (cwnd >> 8): the class is all that reads it.
const (
	PubPathW      = TimeW + goldenwindow.InflightBits // {rto, cwnd >> 8}
	PubConnW      = 2 * ConnCwndW                     // {rate_cap, cwnd}
	pubRingFixedW = 1 + PubPathW + PubConnW           // {has_path, path, ...} but the path id
)

// PubRingW is the width of one publication in the ring: has_path, the path id, the path's
// window and RTO, the connection's window and rate cap.
func (u *Unit) PubRingW() int { return pubRingFixedW + u.AW }

// PubRingDepth is the publication ring's depth: PubLag slots per connection-table entry.
func (u *Unit) PubRingDepth() int { return u.ConnDepth << PubLagW }

// Unpack renders one wire per field of an entry held in src: "wire [w-1:0] prefix_name = src[hi:lo];".
func Unpack(fs []Field, prefix, src string) string {
	var b []byte
	for _, f := range fs {
		rng := hdl.Range(f.Width)
		if rng != "" {
			rng += " "
		}
		b = fmt.Appendf(b, "  wire %s%s_%s = %s[%d:%d];\n", rng, prefix, f.Name, src, f.Hi(), f.Lo)
	}
	return string(b)
}

// Pack renders the concatenation of an entry's fields named prefix_name, highest field first,
// wrapped at 96 columns with the given indent.
func Pack(fs []Field, prefix, indent string) string {
	var lines []string
	cur := "{"
	for i := len(fs) - 1; i >= 0; i-- {
		item := prefix + "_" + fs[i].Name
		if i > 0 {
			item += ", "
		} else {
			item += "}"
		}
		if len(indent)+len(cur)+len(item) > 96 {
			lines = append(lines, cur)
			cur = " "
		}
		cur += item
	}
	lines = append(lines, cur)
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n" + indent
		}
		out += strings.TrimRight(l, " ")
	}
	return out
}

// ScanStarve is the package constant, for templates.
func (u *Unit) ScanStarve() int { return ScanStarve }

func (u *Unit) fields(which string) []Field {
	if which == "conn" {
		return u.ConnFields
	}
	return u.PathFields
}

// UnpackEntry is Unpack of the path ("path") or connection ("conn") entry, for templates.
func (u *Unit) UnpackEntry(which, prefix, src string) string {
	return Unpack(u.fields(which), prefix, src)
}

// PackEntry is Pack of the path ("path") or connection ("conn") entry, for templates.
func (u *Unit) PackEntry(which, prefix, indent string) string {
	return Pack(u.fields(which), prefix, indent)
}

// ConnField returns the lowest ("Lo") or highest ("Hi") bit of a connection-entry field, for
// templates (-1 for an unknown field, which the rendered Verilog then rejects).
func (u *Unit) ConnField(name, end string) int {
	for _, f := range u.ConnFields {
		if f.Name == name {
			if end == "Hi" {
				return f.Hi()
			}
			return f.Lo
		}
	}
	return -1
}

// SumTree renders the sum of terms (Verilog expressions of width bits) as an explicit binary
// adder tree, one wire per node named name_lL_J, and returns the Verilog lines and the name of the
// root. Synthesis maps each level to parallel carry chains, so the depth is log2(len(terms))
// adders instead of the len(terms)-1 of an array multiplier's row-by-row sum.
func SumTree(name string, width int, terms []string) (string, string) {
	var b strings.Builder
	level := make([]string, len(terms))
	for i, t := range terms {
		level[i] = fmt.Sprintf("%s_l0_%d", name, i)
		fmt.Fprintf(&b, "  wire [%d:0] %s = %s;\n", width-1, level[i], t)
	}
	for l := 1; len(level) > 1; l++ {
		var next []string
		for j := 0; j < len(level); j += 2 {
			n := fmt.Sprintf("%s_l%d_%d", name, l, j/2)
			if j+1 < len(level) {
				fmt.Fprintf(&b, "  wire [%d:0] %s = %s + %s;\n", width-1, n, level[j], level[j+1])
			} else {
				fmt.Fprintf(&b, "  wire [%d:0] %s = %s;\n", width-1, n, level[j])
			}
			next = append(next, n)
		}
		level = next
	}
	return b.String(), level[0]
}

// RateCapProduct renders hint_rtt = b_rate_hint * rtt_cap (16 x 24 bits) and
// rate_prod = hint_rtt * RATE_CAP_MUL as two adder trees: 16 partial products, then one shifted
// copy of hint_rtt per set bit of the constant.
func (u *Unit) RateCapProduct() string {
	var pp []string
	for i := 0; i < RateHintW; i++ {
		pp = append(pp, fmt.Sprintf("b_rate_hint[%d] ? %s : 40'd0", i, shifted("rtt_cap", 24, i, 40)))
	}
	t1, r1 := SumTree("hint_rtt", 40, pp)
	var cm []string
	for k := 0; k < 40; k++ {
		if u.P.RateCapMul>>k&1 == 1 {
			cm = append(cm, shifted("hint_rtt", 40, k, 58))
		}
	}
	t2, r2 := SumTree("rate_mul", 58, cm)
	return t1 + fmt.Sprintf("  wire [39:0] hint_rtt = %s;\n", r1) +
		fmt.Sprintf("  // x RATE_CAP_MUL = %d = floor(2^28 / (5 x mtu)): one term per set bit.\n", u.P.RateCapMul) + t2 +
		fmt.Sprintf("  wire [57:0] rate_prod = %s;\n", r2)
}

// shifted renders {zeros, x, zeros}: x (w bits) shifted left by k in a total of bits.
func shifted(x string, w, k, total int) string {
	var parts []string
	if hi := total - w - k; hi > 0 {
		parts = append(parts, fmt.Sprintf("%d'd0", hi))
	}
	parts = append(parts, x)
	if k > 0 {
		parts = append(parts, fmt.Sprintf("%d'd0", k))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// PubLagW is the package constant PubLagW, for templates.
func (u *Unit) PubLagW() int { return PubLagW }

// PubPathW is the package constant PubPathW, for templates.
func (u *Unit) PubPathW() int { return PubPathW }

// PubConnW is the package constant PubConnW, for templates.
func (u *Unit) PubConnW() int { return PubConnW }
