// Package window is the Go description of the sender's window unit (window_unit): the
// per-(connection, path) window table, the per-connection table, the spraying pick and the
// retransmit-timer scan. It derives every width from the shared configuration and golden/window's
// Params, builds the port lists and hands each module with its template to gen/.
//
// The rules are golden/window's; this package only decides how hardware implements them
// (docs/window.md):
//
//   - A pipeline A, X, F, S1..S6. F makes the decisions (inflight, PSNs, the round-robin
//     pointer, path health, timers, the send gate, the spraying classes) at II = 1; the ACK
//     arithmetic runs behind it in S1..S6 (SRTT, RTTVAR and the AIMD windows, the RTO, the
//     rate-cap product), which golden's published state allows: the decisions read the windows,
//     RTO and rate cap as they were 9 operations on the connection earlier.
//   - Each table (Groups) is owned by the stage that writes it and read one or two stages
//     ahead, with a forwarding register per write its read misses. What the send decision's
//     loop reads in its cycle is in registers: each path's class and its class one packet
//     fuller, each connection's inflight and published gate.
//   - One operation enters F per clock. A send waits one cycle behind an operation on its
//     connection that is not a send; ACK-port operations and timer checks pass through X,
//     where their entry is resolved and registered (and a check's expiry compared).
package window

import (
	"embed"
	"fmt"
	"math/bits"
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

// Latencies, in cycles from an input handshake to its output: a send decision comes out of
// F, a timer check out of F after its X cycle, an ACK's result out of the last slow stage
// (docs/window.md, "Pipeline").
const (
	LatencySend = 2
	LatencyTmr  = 3
	LatencyAck  = 9
)

// SendIIFor is the send II on one connection at a datapath width and port count: 2 when the
// connection's ports together bring at most one send every 2 cycles at line rate (one per port
// per minimum frame, hdl.MinFrameBeats), else 1.
func SendIIFor(datapathBits, ports int) int {
	if ports < 1 {
		ports = 1
	}
	if hdl.MinFrameBeats(datapathBits) >= 2*ports {
		return 2
	}
	return 1
}

// PickStageMinSlots is the number of path slots from which the spraying pick is staged
// (PickStage): a one-cycle pick over 64 slots measured 10 LUT6 levels from the request into the
// tables' read address, over 8 slots within the 8-level budget.
const PickStageMinSlots = 32

// PickStageFor says whether the pick is staged at a number of path slots and a send II: only at
// send II 2, where the P cycle fits between two sends on one connection (at send II 1 the next
// pick needs the previous send's path in the same cycle).
func PickStageFor(pathSlots, sendII int) bool {
	return sendII == 2 && pathSlots >= PickStageMinSlots
}

// ScanStarve is the number of consecutive advancing cycles the timer scan may lose the
// arbitration before it takes the slot: urgent, it blocks the ACK port and enters as soon as X is
// empty (one cycle later at most), so it gets a slot in at most ScanStarve+2 and every entry is
// checked at least every (ScanStarve+2)·path_table_depth cycles under full load.
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

	// Groups are the unit's per-path and per-connection tables, one per pipeline stage that
	// owns its fields (docs/window.md, "Pipeline").
	Groups []Group

	// Fixed-point constants (golden Params), ready for the template.
	SeedFold uint16

	// SendII is the initiation interval of two sends on one connection: 2 where line rate
	// allows it (a minimum frame of at least 2 × ports cycles: every configuration but two
	// 256-bit ports), so that a send waits one cycle behind any operation on its connection and
	// the spraying pick reads the classes F has just written; else 1, where both picks (F's send
	// taken or refused) run in A and F's gate chooses (docs/window.md, "II").
	SendII int

	// PickStage: the spraying pick takes two cycles, where its search over the path slots does
	// not fit one (PickStageFor). In P, the cycle before a send is accepted, the requested
	// connection's classes become six registered bitmaps (each class, and each class at or after
	// the round-robin pointer), with F's taken send on the connection forwarded; in A one
	// find-first-set over them gives the path. A send request then needs its connection on
	// s_send_conn one cycle before it can be accepted (docs/window.md, "II").
	PickStage bool

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

// Group is one table of the unit: the fields one pipeline stage owns, for every path
// ({conn, path}) or every connection.
type Group struct {
	Name   string
	Conn   bool   // indexed by connection, else by {conn, path}
	Read   string // the stage that addresses its read
	Write  string // the stage that writes it
	Fields []Field
	Width  int
}

func newGroup(name string, conn bool, read, write string, fs []Field) Group {
	g := Group{Name: name, Conn: conn, Read: read, Write: write}
	g.Fields, g.Width = packFields(fs)
	return g
}

// Group returns the group of that name (a zero Group if there is none, which the rendered
// Verilog then rejects).
func (u *Unit) Group(name string) Group {
	for _, g := range u.Groups {
		if g.Name == name {
			return g
		}
	}
	return Group{}
}

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
	if 1<<PubLagW != goldenwindow.PubLag {
		return nil, fmt.Errorf("window: golden/window.PubLag %d: the publication ring needs a power of two", goldenwindow.PubLag)
	}
	p := goldenwindow.ParamsFrom(c)
	u := &Unit{Cfg: c, P: p, CW: p.ConnBits, AW: p.PathBits, IdxW: p.IndexBits, PW: p.PSNBits,
		Depth: p.TableDepth, ConnDepth: 1 << p.ConnBits, PathSlots: 1 << p.PathBits}
	u.PadConns = p.Conns < u.ConnDepth
	u.PadPaths = p.Paths < u.PathSlots
	u.Reset = hdl.ResetFor(c.ResetStyle)
	u.SendII = SendIIFor(c.DatapathWidth, c.Ports)
	u.PickStage = PickStageFor(u.PathSlots, u.SendII)
	u.Groups = []Group{
		newGroup("fast", false, "A", "F", []Field{
			{Name: "state", Width: StateW, Doc: "0 active, 1 suspect, 2 failed"},
			{Name: "inflight", Width: goldenwindow.InflightBits, Doc: "packets in flight"},
			{Name: "armed", Width: 1, Doc: "timer armed"},
			{Name: "t_arm", Width: TimeW, Doc: "when the timer was set, ns mod 2^32"},
			{Name: "tmo", Width: TimeW, Doc: "its timeout: the deadline is t_arm + tmo (mod 2^32)"},
			{Name: "marked", Width: 1, Doc: "the last ACK carried an ECN echo"},
			{Name: "timeouts", Width: goldenwindow.TimeoutBits, Doc: "consecutive counted timeouts"},
			{Name: "lfsr", Width: 16, Doc: "entropy LFSR state (entropy = 0xC000 | lfsr[13:0])"},
			{Name: "floored", Width: 1, Doc: "a timer event set cwnd to min; no ACK or NAK since"},
			{Name: "w_cls", Width: goldenwindow.InflightBits, Doc: "the window (packets) its class was last computed with"},
		}),
		newGroup("psn", false, "A", "W", []Field{
			{Name: "next_psn", Width: p.PSNBits, Doc: "PSN of the next new packet"},
		}),
		newGroup("rtt", false, "X", "S1", []Field{
			{Name: "srtt", Width: TimeW, Doc: "smoothed RTT, ns"},
			{Name: "rtt_valid", Width: 1, Doc: "srtt holds a sample"},
		}),
		newGroup("aimd", false, "F", "S2", []Field{
			{Name: "rttvar", Width: TimeW, Doc: "RTT variation, ns"},
			{Name: "cwnd", Width: CwndW, Doc: "path window, packets x 256"},
			{Name: "accum", Width: goldenwindow.AccumBits, Doc: "unmarked packets acked since the last increase"},
			{Name: "marks", Width: goldenwindow.MarksBits, Doc: "ECN echoes in the current decrease epoch"},
			{Name: "last_dec", Width: TimeW, Doc: "time of the last decrease"},
			{Name: "dec_valid", Width: 1, Doc: "a decrease happened"},
		}),
		newGroup("rto", false, "S3", "S4", []Field{
			{Name: "rto", Width: TimeW, Doc: "current timeout, ns"},
		}),

		newGroup("cbase", true, "X", "S1", []Field{
			{Name: "min_rtt", Width: TimeW, Doc: "base RTT: the smallest valid sample of any path, ns"},
			{Name: "min_valid", Width: 1, Doc: "min_rtt holds a sample"},
		}),
		newGroup("caimd", true, "F", "S2", []Field{
			{Name: "cwnd", Width: ConnCwndW, Doc: "connection window, packets x 256"},
			{Name: "accum", Width: goldenwindow.ConnAccumBits, Doc: "unmarked packets acked since the last increase"},
			{Name: "last_dec", Width: TimeW, Doc: "time of the last decrease"},
			{Name: "dec_valid", Width: 1, Doc: "a decrease happened"},
		}),
		newGroup("ccap", true, "S5", "S6", []Field{
			{Name: "rate_cap", Width: ConnCwndW, Doc: "window the rate hint allows, packets x 256"},
		}),
	}
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
	type tmpl struct {
		mod  *hdl.Module
		tmpl string
	}
	out := []gen.Source{fs}
	mods := []tmpl{{u.PickModule(), "pick.v.tmpl"}, {u.UnitModule(), "unit.v.tmpl"}}
	if u.PickStage {
		// The staged pick's one search over the six bitmaps replaces window_pick.
		ps, err := u.pickSearch()
		if err != nil {
			return nil, err
		}
		out = append(out, ps)
		mods = mods[1:]
	}
	for _, b := range mods {
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
		{"CWND_MD_T", CwndW, mdThreshold(uint64(p.MinCwnd), p.MDShift), "below it, cwnd - cwnd >> md_shift < min"},
		{"CONN_MD_T", ConnCwndW, mdThreshold(uint64(p.MinCwnd), p.ConnMDShift), "the same for the connection"},
		{"AI_LIM", CwndW, uint64(p.MaxCwnd - min(p.AIStep, p.MaxCwnd)), "above it, cwnd + ai_step > max"},
		{"CONN_AI_LIM", ConnCwndW, uint64(p.ConnMaxCwnd - min(p.ConnAIStep, p.ConnMaxCwnd)), "the same for the connection"},
		{"RTO_BACKOFF_LIM", TimeW, uint64(p.RTOMax >> 1), "above it, 2 x rto > rto_max"},
	}
}

// mdThreshold is the smallest window c with c - c >> shift >= floor: below it a decrease lands
// under the floor (c - c >> shift is non-decreasing in c), so the RTL compares c with a
// constant instead of the difference with the floor.
func mdThreshold(floor uint64, shift uint) uint64 {
	lo, hi := uint64(0), floor<<1+1 // hi - hi >> shift >= floor for any shift >= 1
	for lo < hi {
		mid := (lo + hi) / 2
		if mid-mid>>shift >= floor {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// CSA renders a carry-save reduction of terms (Verilog expressions of width bits): at most
// levels levels of 3:2 compressors (full adders, one LUT level each), or until two terms are
// left. It returns the Verilog lines and the names of the terms left.
func CSA(name string, width int, terms []string, levels int) (string, []string) {
	var b strings.Builder
	cur := make([]string, len(terms))
	for i, t := range terms {
		cur[i] = fmt.Sprintf("%s_in%d", name, i)
		fmt.Fprintf(&b, "  wire [%d:0] %s = %s;\n", width-1, cur[i], t)
	}
	hi := width - 2
	for l := 0; l < levels && len(cur) > 2; l++ {
		var next []string
		i := 0
		for ; i+3 <= len(cur); i += 3 {
			x, y, z := cur[i], cur[i+1], cur[i+2]
			s := fmt.Sprintf("%s_l%d_s%d", name, l, i/3)
			c := fmt.Sprintf("%s_l%d_c%d", name, l, i/3)
			fmt.Fprintf(&b, "  wire [%d:0] %s = %s ^ %s ^ %s;\n", width-1, s, x, y, z)
			fmt.Fprintf(&b, "  wire [%d:0] %s = {(%s[%d:0] & %s[%d:0])\n", width-1, c, x, hi, y, hi)
			fmt.Fprintf(&b, "      | (%s[%d:0] & %s[%d:0])\n", x, hi, z, hi)
			fmt.Fprintf(&b, "      | (%s[%d:0] & %s[%d:0]), 1'b0};\n", y, hi, z, hi)
			next = append(next, s, c)
		}
		next = append(next, cur[i:]...)
		cur = next
	}
	return b.String(), cur
}

// RateMul is the rate cap's product, hint x RATE_CAP_MUL x T, as a pipeline (docs/window.md,
// "Pipeline"): in F the copies of the hint, one per set bit of the constant, reduce to two
// (f_hm_*); in S1 they add (s2_hm); in S3 T's radix-4 Booth partial products (15 terms for
// 24 bits, boothTerms) reduce by up to four levels (s4_pp_*); in S4 to two (s5_pp_*); S5 adds
// them (s6_prod). It holds the wires of each stage and the registers between them, to be placed
// by the template.
type RateMul struct {
	F, S3, S4   string // combinational lines of each stage
	Regs        string // declarations of the stage registers
	Load        string // their loads, inside the pipeline's always block
	FTerms, S4T []string
}

// RateMulStages builds RateMul for the configuration's constant.
func (u *Unit) RateMulStages() RateMul {
	var r RateMul
	var hm []string
	for k := 0; k < 18; k++ {
		if u.P.RateCapMul>>k&1 == 1 {
			hm = append(hm, shifted("f_hint", RateHintW, k, 34))
		}
	}
	var f string
	f, r.FTerms = CSA("hm", 34, hm, 8)
	r.F = f
	var regs, load strings.Builder
	for i, t := range r.FTerms {
		fmt.Fprintf(&regs, "  reg [33:0] s1_hm_%d;\n", i)
		fmt.Fprintf(&load, "      s1_hm_%d <= %s;\n", i, t)
	}
	booth, pp := boothTerms("s3_hm", "s3_t", RTTCapW)
	s3, left := CSA("pp3", 58, pp, 4)
	r.S3 = booth + s3
	var s4in []string
	for i, t := range left {
		fmt.Fprintf(&regs, "  reg [57:0] s4_pp_%d;\n", i)
		fmt.Fprintf(&load, "      s4_pp_%d <= %s;\n", i, t)
		s4in = append(s4in, fmt.Sprintf("s4_pp_%d", i))
	}
	s4, left4 := CSA("pp4", 58, s4in, 8)
	r.S4 = s4
	r.S4T = left4
	for i, t := range left4 {
		fmt.Fprintf(&regs, "  reg [57:0] s5_pp_%d;\n", i)
		fmt.Fprintf(&load, "      s5_pp_%d <= %s;\n", i, t)
	}
	r.Regs, r.Load = regs.String(), load.String()
	return r
}

// BoothDigits is the number of radix-4 Booth digits of an unsigned multiplier of w bits: its
// digits run over w + 1 bits (a zero sign bit above it), two bits a digit.
func BoothDigits(w int) int { return w/2 + 1 }

// BoothConst is the constant term of the Booth partial products of a w-bit unsigned multiplier
// and a 34-bit multiplicand in 58 bits: each digit's 36-bit two's-complement partial product,
// shifted by 2j, is written as the unsigned value with its sign bit inverted less 2^(35+2j);
// this is the sum of those corrections, mod 2^58.
func BoothConst(w int) uint64 {
	var k uint64
	for j := 0; j < BoothDigits(w); j++ {
		if 35+2*j < 58 {
			k -= 1 << (35 + 2*j)
		}
	}
	return k & (1<<58 - 1)
}

// boothTerms renders the radix-4 Booth recoding of the product m (34 bits) x t (w bits,
// unsigned) in 58 bits: per digit j (bits t[2j+1], t[2j], t[2j-1]; t[-1] = 0) a selection of 0,
// m or 2m, complemented when the digit is negative, its sign bit inverted and shifted by 2j;
// one term of the digits' negation bits (the +1 of each complement); and BoothConst. Their sum
// mod 2^58 is m x t. It returns the Verilog lines and the terms: w/2 + 3 instead of w.
func boothTerms(m, t string, w int) (string, []string) {
	var b strings.Builder
	bit := func(k int) string {
		if k < 0 || k >= w {
			return "1'b0"
		}
		return fmt.Sprintf("%s[%d]", t, k)
	}
	var terms []string
	negs := make([]string, 58)
	for i := range negs {
		negs[i] = "1'b0"
	}
	for j := 0; j < BoothDigits(w); j++ {
		hi, mid, lo := bit(2*j+1), bit(2*j), bit(2*j-1)
		n := fmt.Sprintf("bo%d", j)
		fmt.Fprintf(&b, "  wire %s_one = %s ^ %s;\n", n, mid, lo)
		fmt.Fprintf(&b, "  wire %s_two = (%s & ~%s & ~%s) | (~%s & %s & %s);\n", n, hi, mid, lo, hi, mid, lo)
		fmt.Fprintf(&b, "  wire %s_neg = %s;\n", n, hi)
		fmt.Fprintf(&b, "  wire [35:0] %s_v = {1'b0, (%s_one ? {1'b0, %s} : %s_two ? {%s, 1'b0} : 35'd0)}\n", n, n, m, n, m)
		fmt.Fprintf(&b, "      ^ {36{%s_neg}};\n", n)
		v := fmt.Sprintf("{~%s_v[35], %s_v[34:0]}", n, n)
		switch sh := 2 * j; {
		case 36+sh <= 58:
			terms = append(terms, shifted(v, 36, sh, 58))
		default: // the top bits, the inverted sign bit among them, fall beyond 2^58
			fmt.Fprintf(&b, "  wire unused_%s = ^%s_v[35:%d];\n", n, n, 58-sh)
			terms = append(terms, fmt.Sprintf("{%s_v[%d:0], %d'd0}", n, 57-sh, sh))
		}
		negs[57-2*j] = n + "_neg"
	}
	var nl strings.Builder
	for i := 0; i < len(negs); i += 8 {
		sep := ","
		if i+8 >= len(negs) {
			sep = "};"
		}
		fmt.Fprintf(&nl, "\n      %s%s", strings.Join(negs[i:min(i+8, len(negs))], ", "), sep)
	}
	fmt.Fprintf(&b, "  wire [57:0] bo_negs = {%s\n", nl.String())
	terms = append(terms, "bo_negs")
	terms = append(terms, fmt.Sprintf("58'd%d", BoothConst(w)))
	return b.String(), terms
}

// HMSum is the sum of the hint copies left after F's reduction (s1_hm_*), for S1.
func (r RateMul) HMSum() string { return sumOf("s1_hm", len(r.FTerms)) }

// PPSum is the sum of the partial products left after S4 (s5_pp_*), for S5.
func (r RateMul) PPSum() string { return sumOf("s5_pp", len(r.S4T)) }

func sumOf(prefix string, n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf("%s_%d", prefix, i))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " + ")
}

// RTTCapW is the width of the rate cap's RTT term (golden/window.RTTCapBits).
const RTTCapW = goldenwindow.RTTCapBits

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

// PubLagW is log2(golden/window.PubLag): the width of a connection's publication-ring slot
// (New refuses a lag that is not a power of two).
var PubLagW = bits.Len(uint(goldenwindow.PubLag - 1))

// Widths of the published state (golden/window, "Published state"). A path's window is
// published in whole packets (cwnd >> 8): the class is all that reads it; its RTO with one bit
// more, 2 x rto > rto_max, for a timeout's restart; a connection's window and rate cap as the
// send gate reads them, min(cwnd, rate_cap) and rate_cap < cwnd.
const (
	PubPathW      = TimeW + 1 + goldenwindow.InflightBits               // {rto, over, cwnd >> 8}
	PubConnW      = ConnCwndW + 1                                       // {min(cwnd, rate_cap), rate_cap < cwnd}
	pubRingFixedW = 1 + TimeW + goldenwindow.InflightBits + 2*ConnCwndW // {has_path, path, rto, cwnd >> 8, rate_cap, cwnd} but the path id
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

// UnpackEntry is Unpack of group which's entry, for templates.
func (u *Unit) UnpackEntry(which, prefix, src string) string {
	return Unpack(u.Group(which).Fields, prefix, src)
}

// FieldOf renders the part-select of group which's field name in the entry src, for templates
// that need one field of an entry without unpacking the rest.
func (u *Unit) FieldOf(which, name, src string) (string, error) {
	for _, f := range u.Group(which).Fields {
		if f.Name == name {
			return fmt.Sprintf("%s[%d:%d]", src, f.Lo+f.Width-1, f.Lo), nil
		}
	}
	return "", fmt.Errorf("window: group %q has no field %q", which, name)
}

// PackEntry is Pack of group which's entry, for templates.
func (u *Unit) PackEntry(which, prefix, indent string) string {
	return Pack(u.Group(which).Fields, prefix, indent)
}

// GroupW is the width of group which's entry, for templates.
func (u *Unit) GroupW(which string) int { return u.Group(which).Width }

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
