// Package sender is the Go description of the send engine, tx_engine: the RTL of golden/sender
// (work-request rings, packet records, the retransmit and moved FIFOs, the work list, stream
// round robin, pacing, the first-RTT gate, ACK processing). The rules are golden/sender's,
// exactly; this package only decides how the hardware keeps its state (docs/sender.md):
//
//   - It instantiates the window unit (hdl/window, built with Explicit set: tx_window_unit, whose
//     timers are checked only when asked) for SendDecision, AckUpdate and Expire, and the SACK
//     send side (hdl/sack's sack_tx) for una/nxt and the loss report of an ACK.
//   - Packet records, work-request rings, the retransmit FIFO and the moved FIFOs are inferred
//     RAMs read one cycle after their address; per-connection and per-stream state, the work
//     list's links and each path's last entropy are register arrays.
//   - The engine is a state machine that runs one command at a time (golden/sender's methods,
//     1:1) and answers each on m_rsp; walks over PSN ranges take one cycle per PSN.
package sender

import (
	"embed"
	"fmt"
	"math/bits"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/placement"
	goldensack "github.com/mrgen/mrgen/golden/sack"
	goldensender "github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/transport"
	goldenwindow "github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/deparser"
	"github.com/mrgen/mrgen/hdl/sack"
	"github.com/mrgen/mrgen/hdl/window"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "hdl/sender/sender.go"

// Top is the engine's module name.
const Top = "tx_engine"

// Command opcodes (s_cmd_op).
const (
	CmdPost     = 0 // PostWork
	CmdDoorbell = 1 // Doorbell
	CmdNext     = 2 // Next
	CmdLeft     = 3 // Left
	CmdWoke     = 4 // Woke(s_cmd_time)
	CmdRetry    = 5 // Retry
	CmdArm      = 6 // Arm: answered with the first scan's time
	CmdScan     = 7 // Scan
	CmdRearm    = 8 // Rearm: answered with the next scan's time, or none (the scan stops)
)

// Response status (m_rsp_status).
const (
	StatusOK     = 0 // done; Next: a packet (the descriptor fields are valid)
	StatusNone   = 1 // Next: no packet; PostWork: the ring is full (ErrQueueFull)
	StatusError  = 2 // golden returned an error (ids out of range, a bad work request)
	StatusIgnore = 3 // an ACK-port input the engine does not take (neither ACK nor NAK)
)

// RspAckPort is m_rsp_op of the answer to an ACK-port input (an ACK or NAK from nic_rx).
const RspAckPort = 15

// PortW is the width of the egress port (nic_tx's PortBits).
const PortW = 3

// AckRateCycles is the most cycles an ACK may take on average, from its offer to its answer,
// when every packet is ACKed with a few in flight per path (cosim's "ack-rate" scenario): the
// ACK rate of 100 Gb/s of 1 KiB-payload packets at 250 MHz, about one every 22 cycles.
const AckRateCycles = 22

// Field is one field of a packed entry.
type Field struct {
	Name  string
	Width int
	Lo    int
}

// Unit is the derived description of tx_engine for one configuration.
type Unit struct {
	Cfg   config.Config
	P     goldensender.Params // resolved (default depths)
	Reset hdl.ResetStyle
	Win   *window.Unit
	Sack  *sack.Unit

	CW, AW, SW, PW, W    int // conn, path, stream index widths, PSN width, SACK width
	IW                   int // log2(W): the bitmap walk's index
	C, Paths, S, D       int
	WD, WSW              int // work-ring depth per stream and its slot width
	R, RW                int // records per path (power of two) and slot width
	MP, IXW, NW          int // max packets per message, packet-index and count widths
	RetxD, RetxW         int // retransmit FIFO depth and pointer width
	RetryD, RetryW       int // RNR retry FIFO depth and pointer width
	MovedD, MovedW       int // moved FIFO depth per connection and pointer width
	CD, PD, SD           int // padded conn, path-table and stream-table depths
	RecD, RingD, MovedMD int // RAM depths
	ClearW, ClearLast    int
	Planes               int
	MTU                  int
	MaxLen               uint32
	WriteOverhead        int
	SendOverhead         int

	Rec, Ent, Conn, Strm []Field
	Path                 []Field
	RecW, EntW, ConnW    int
	PathW                int
	StrmW                int
	Counters             []Counter
}

// Counter is one event counter port, named after golden/sender.Counters.
type Counter struct {
	Name, Doc string
}

func clog2(n int) int {
	if n <= 1 {
		return 1
	}
	return bits.Len(uint(n - 1))
}

func pack(fs []Field) ([]Field, int) {
	lo := 0
	for i := range fs {
		fs[i].Lo = lo
		lo += fs[i].Width
	}
	return fs, lo
}

// GoldenParams are golden/sender's parameters for a configuration, as the engine is built:
// the FIFO depths of the sender section (0: WithDefaultDepths), TicksPerNS 1 (the NIC's ns
// counter), the scan every rate_hint.scan_ns (golden/transport's TimerScan), the tail probe's
// defaults, the frame overheads of golden/transport (frame, FCS, preamble and gap).
func GoldenParams(c config.Config) (goldensender.Params, error) {
	wp := wire.ParamsFrom(c)
	over := func(op wire.Opcode) int { return transport.DataOverhead(op, wp) }
	ids := make([]uint16, c.Connections)
	for i := range ids {
		ids[i] = uint16(i)
	}
	p := goldensender.Params{Window: goldenwindow.ParamsFrom(c), Sack: goldensack.ParamsFrom(c),
		Placement: placement.ParamsFrom(c), WireConn: ids, TicksPerNS: 1, ScanTicks: uint64(c.RateHint.ScanNS),
		AckDelayNS: uint64(c.AckPolicy.DelayNS), FirstProbeNS: goldensender.DefaultFirstProbeNS,
		TailProbeMinNS: goldensender.DefaultTailProbeMinNS, Announce: c.RateHint.Announce,
		WriteOverhead: over(wire.OpWrite), SendOverhead: over(wire.OpSend)}
	p = p.WithQueueDepths(c.Sender).WithDefaultDepths()
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("sender: %w", err)
	}
	return p, nil
}

// New derives the description from a validated configuration; its sender section sizes the
// FIFOs (small ones make the overflow paths reachable in co-simulation: the sender scenario
// `overflow`).
func New(c config.Config) (*Unit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	p, err := GoldenParams(c)
	if err != nil {
		return nil, err
	}
	win, err := window.NewExplicit(c)
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	sk, err := sack.New(c)
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	u := &Unit{Cfg: c, P: p, Reset: hdl.ResetFor(c.ResetStyle), Win: win, Sack: sk,
		CW: p.Sack.ConnBits, AW: p.Sack.PathBits, PW: c.PSNWidth, W: c.SackWidth,
		C: c.Connections, Paths: c.PathsPerConnection, S: p.Placement.Streams, D: p.Placement.Depth,
		WD: p.WorkDepth, R: p.RecordDepth(), MP: p.MaxPackets(), RetxD: p.RetxDepth, MovedD: p.MovedDepth,
		Planes: c.Ports, MTU: c.MTU, MaxLen: p.Placement.MaxMsgLen(),
		WriteOverhead: p.WriteOverhead, SendOverhead: p.SendOverhead}
	if u.R&(u.R-1) != 0 {
		return nil, fmt.Errorf("sender: record depth %d is not a power of two", u.R)
	}
	u.SW = clog2(u.S)
	u.IW = clog2(u.W)
	u.WSW = clog2(u.WD)
	u.RW = clog2(u.R)
	u.IXW = clog2(u.MP)
	u.NW = clog2(u.MP + 1)
	u.RetxW = clog2(u.RetxD)
	u.RetryD = p.RetryDepth
	u.RetryW = clog2(u.RetryD)
	u.MovedW = clog2(u.MovedD)
	u.CD, u.PD, u.SD = 1<<u.CW, 1<<(u.CW+u.AW), 1<<(u.CW+u.SW)
	u.RecD = 1 << (u.CW + u.AW + u.RW)
	u.RingD = 1 << (u.CW + u.SW + u.WSW)
	u.MovedMD = 1 << (u.CW + u.MovedW)
	clear := max(u.RecD, u.SD, u.PD, u.CD)
	u.ClearW, u.ClearLast = clog2(clear), clear-1
	u.Rec, u.RecW = pack([]Field{
		{Name: "valid", Width: 1}, {Name: "gen", Width: 16}, {Name: "psn", Width: u.PW},
		{Name: "stream", Width: u.SW}, {Name: "msn", Width: 32}, {Name: "wslot", Width: u.WSW},
		{Name: "idx", Width: u.IXW}, {Name: "sacked", Width: 1}, {Name: "init", Width: 1},
		{Name: "retx", Width: 1}, {Name: "queued", Width: 1}, {Name: "innic", Width: 1},
		{Name: "copied", Width: 1}, {Name: "nakked", Width: 1}, {Name: "waiting", Width: 1},
		{Name: "sent_at", Width: 32},
	})
	u.Ent, u.EntW = pack([]Field{
		{Name: "opcode", Width: wire.OpcodeBits}, {Name: "len", Width: 32}, {Name: "local", Width: 64},
		{Name: "va", Width: 64}, {Name: "rkey", Width: 32}, {Name: "id", Width: 64}, {Name: "msn", Width: 32},
		{Name: "n", Width: u.NW}, {Name: "next", Width: u.NW}, {Name: "acked", Width: u.NW},
		{Name: "got", Width: u.MP},
	})
	ps := 1 << u.AW
	u.Conn, u.ConnW = pack([]Field{
		{Name: "rr", Width: u.SW}, {Name: "in_work", Width: 1}, {Name: "blocked", Width: 1},
		{Name: "next_send", Width: 64}, {Name: "sending", Width: 1}, {Name: "heard", Width: 1},
		{Name: "hint", Width: 16}, {Name: "inflight", Width: goldenwindow.ConnInflightBits},
		{Name: "need_init", Width: ps}, {Name: "probed", Width: ps}, {Name: "pstate", Width: 2 * ps},
		{Name: "mv_head", Width: u.MovedW}, {Name: "mv_tail", Width: u.MovedW}, {Name: "mv_count", Width: u.MovedW + 1},
	})
	u.Path, u.PathW = pack([]Field{
		{Name: "entropy", Width: 16}, {Name: "rtt_valid", Width: 1}, {Name: "srtt", Width: 32},
		{Name: "rttvar", Width: 32}, {Name: "npsn", Width: u.PW}, {Name: "live", Width: u.RW + 1},
	})
	u.Strm, u.StrmW = pack([]Field{
		{Name: "head", Width: 32}, {Name: "start", Width: 32}, {Name: "tail", Width: 32},
		{Name: "hslot", Width: u.WSW}, {Name: "sslot", Width: u.WSW}, {Name: "tslot", Width: u.WSW},
		{Name: "cur", Width: 1}, {Name: "nwait", Width: u.NWaitW()}, {Name: "nstart", Width: u.NStartW()},
	})
	u.Counters = []Counter{
		{"data_sent", "first and moved copies sent (DataSent)"}, {"moved_sent", "moved copies sent"},
		{"retransmissions", "retransmissions sent"}, {"blocked_conn_window", "send decisions refused: connection window"},
		{"blocked_rate_cap", "send decisions refused: rate cap"}, {"blocked_no_path", "send decisions refused: no path"},
		{"announces", "ANNOUNCE flags set"}, {"acks", "ACKs taken"}, {"acks_on_failed_path", "ACKs on a failed path"},
		{"ecn_echoes", "ECN echoes summed"}, {"sack_losses", "losses found by SACK"}, {"time_losses", "losses found by send time"},
		{"queue_full", "PostWork refusals"}, {"retx_overflows", "retransmit FIFO overflows"},
		{"stale_dropped", "copies of reposted messages dropped"},
		{"naks", "NAKs taken"}, {"messages_failed", "messages failed by a NAK"},
		{"rnr_retries", "RNR retries that queued their packet for retransmission"},
		{"moved_overflows", "moved FIFO overflows"}, {"retry_overflows", "RNR retry FIFO overflows"},
		{"tail_probes", "tail-loss probes"}, {"timeouts", "retransmit timeouts"}, {"paths_suspect", "paths became suspect"},
		{"paths_failed", "paths failed"}, {"paths_probed", "failed paths probed"},
		{"rto_retransmissions", "oldest packets resent on a timeout"}, {"rto_copies", "packets copied off a timed-out path"},
		{"moved", "packets moved off a failed path"},
		{"blocked_records", "connections blocked by a path's full record table"},
	}
	return u, nil
}

// CounterValues are golden counters in the order of Unit.Counters.
func CounterValues(c goldensender.Counters) []uint64 {
	return []uint64{c.DataSent, c.MovedSent, c.Retransmissions, c.Blocked[goldenwindow.ReasonConnWindow],
		c.Blocked[goldenwindow.ReasonRateCap], c.Blocked[goldenwindow.ReasonNoPath], c.Announces, c.Acks,
		c.AcksOnFailedPath, c.ECNEchoes, c.SackLosses, c.TimeLosses, c.QueueFull, c.RetxOverflows, c.StaleDropped,
		c.Naks, c.MessagesFailed, c.RNRRetries, c.MovedOverflows, c.RetryOverflows, c.TailProbes, c.Timeouts, c.PathsSuspect,
		c.PathsFailed, c.PathsProbed, c.RTORetransmissions, c.RTOCopies, c.Moved, c.BlockedRecords}
}

// DescFields are the descriptor's fields (nic_tx's s_txd fields and the engine's own), in port
// order: m_rsp_<name>.
func (u *Unit) DescFields() []hdl.Port {
	in := hdl.Out
	return []hdl.Port{
		in("m_rsp_conn", u.CW, "local connection index (nic_tx maps it to the peer's id)"),
		in("m_rsp_opcode", wire.OpcodeBits, "BTH opcode: 0x01 WRITE or 0x02 SEND"),
		in("m_rsp_flags", wire.FlagsBits, "BTH flags (FIRST, LAST, ACKREQ, RETX, INIT)"),
		in("m_rsp_path", u.AW, "path id"),
		in("m_rsp_stream", wire.StreamIDBits, "stream id"),
		in("m_rsp_psn", u.PW, "the path's PSN of this packet"),
		in("m_rsp_msn", wire.MSNBits, "message sequence number in the stream"),
		in("m_rsp_msg_len", wire.MsgLenBits, "message length, bytes"),
		in("m_rsp_rkey", wire.RKeyBits, "WRITE: remote key (0 for SEND)"),
		in("m_rsp_va", wire.VABits, "WRITE: remote address of this packet's first byte (0 for SEND)"),
		in("m_rsp_offset", wire.MsgOffsetBits, "offset of this packet's first byte in the message"),
		in("m_rsp_addr", 64, "host address of the payload (DMA read)"),
		in("m_rsp_len", deparser.PayloadLenBits, "payload bytes"),
		in("m_rsp_udp_src", wire.UDPPortBits, "UDP source port: the path's entropy"),
		in("m_rsp_port", PortW, "egress port: path mod planes (golden/transport's portOf)"),
		in("m_rsp_slot", u.RW, "Ref: record slot"),
		in("m_rsp_gen", 16, "Ref: record generation"),
		in("m_rsp_kind", 2, "0 new, 1 retransmission, 2 moved"),
		in("m_rsp_announce", 1, "an ANNOUNCE of the connection goes out just ahead of it"),
		in("m_rsp_id", 64, "the work request's id"),
		in("m_rsp_index", u.IXW, "packet index in the message"),
	}
}

// Module is tx_engine's port list.
func (u *Unit) Module() *hdl.Module {
	in, out := hdl.In, hdl.Out
	ports := append(u.Reset.Ports(),
		in("now", 64, "time, ns (the NIC's timestamp counter); held while a command runs"),
		in("s_cmd_valid", 1, "a command (golden/sender method) is offered"),
		out("s_cmd_ready", 1, "taken when valid and ready: idle, no response waiting"),
		in("s_cmd_op", 4, "0 PostWork, 1 Doorbell, 2 Next, 3 Left, 4 Woke, 5 Retry, 6 Arm, 7 Scan, 8 Rearm"),
		in("s_cmd_conn", u.CW, "connection (PostWork, Doorbell, Left)"),
		in("s_cmd_stream", u.SW, "PostWork: stream"),
		in("s_cmd_wr_op", wire.OpcodeBits, "PostWork: opcode, 0x01 WRITE or 0x02 SEND"),
		in("s_cmd_len", 32, "PostWork: message length, bytes"),
		in("s_cmd_local", 64, "PostWork: host address of byte 0"),
		in("s_cmd_va", 64, "PostWork: WRITE remote address of byte 0"),
		in("s_cmd_rkey", 32, "PostWork: WRITE rkey"),
		in("s_cmd_id", 64, "PostWork: the host's cookie"),
		in("s_cmd_path", u.AW, "Left: Ref path"),
		in("s_cmd_slot", u.RW, "Left: Ref slot"),
		in("s_cmd_gen", 16, "Left: Ref generation"),
		in("s_cmd_time", 64, "Woke: the wake-up time that came"),
		in("s_ackin_valid", 1, "an ACK or NAK arrived (nic_rx m_ackin)"),
		out("s_ackin_ready", 1, "taken when valid and ready (commands first)"),
		in("s_ackin_opcode", wire.OpcodeBits, "0x10 ACK, 0x11 NAK"),
		in("s_ackin_conn", wire.ConnIDBits, "connection id"),
		in("s_ackin_path", wire.PathIDBits, "acknowledged path"),
		in("s_ackin_psn", wire.PSNBits, "ACK: cumulative PSN; NAK: the refused PSN"),
		in("s_ackin_stream", wire.StreamIDBits, "NAK: stream"),
		in("s_ackin_msn", wire.MSNBits, "NAK: message"),
		in("s_ackin_ts_echo", wire.TimestampEchoBits, "timestamp echo"),
		in("s_ackin_ecn_echo", wire.ECNEchoBits, "ACK: ECN echo"),
		in("s_ackin_rate_hint", wire.RateHintBits, "ACK: rate hint"),
		in("s_ackin_sack", u.W, "ACK: SACK bitmap aligned to the cumulative PSN"),
		in("s_ackin_nak_code", wire.NakCodeBits, "NAK: code"),
		in("s_ackin_rnr_delay", wire.RNRDelayBits, "NAK: RNR delay, us"),
		out("m_rsp_valid", 1, "the answer to one command or ACK-port input"),
		in("m_rsp_ready", 1, "taken"),
		out("m_rsp_op", 4, "the command answered (s_cmd_op), or 15 for the ACK port"),
		out("m_rsp_status", 2, "0 ok (Next: packet; NAK: retry queued), 1 none / queue full, 2 error, 3 ignored"),
		out("m_rsp_time", 64, "status 0: NAK, its RNR retry's due time; Arm, Rearm: the next scan's time, ns"),
	)
	ports = append(ports, u.DescFields()...)
	ports = append(ports,
		out("m_done_valid", 1, "a message completed (golden Done), in completion order"),
		in("m_done_ready", 1, "taken"),
		out("m_done_conn", u.CW, "connection"),
		out("m_done_stream", u.SW, "stream"),
		out("m_done_msn", 32, "message sequence number"),
		out("m_done_id", 64, "the work request's id"),
		out("m_wake_valid", 1, "a pacing wake-up is asked for (golden TakeWakes), in order"),
		in("m_wake_ready", 1, "taken"),
		out("m_wake_at", 64, "when, ns: then Woke(at) and Next"),
		out("m_timer_valid", 1, "a timer is pending (golden NextTimer)"),
		out("m_timer_at", 64, "the earliest: scan, oldest RNR retry or pacing wake-up, ns"),
		out("busy", 1, "the post-reset clear is running"),
	)
	for _, c := range u.Counters {
		ports = append(ports, out("cnt_"+c.Name, 32, c.Doc+" (wraps)"))
	}
	return &hdl.Module{
		Name:   Top,
		Source: Source,
		Doc: fmt.Sprintf("MetaRoCE send engine for %d connections x %d paths x %d streams (golden/sender): "+
			"work-request rings, packet records, the retransmit FIFO, per-connection moved FIFOs, the work "+
			"list and stream round robin, pacing, the first-RTT gate and ACK processing, around "+
			"tx_window_unit (windows, spraying) and sack_tx (una/nxt, loss report). One command at a "+
			"time, answered on m_rsp; an ACK of one packet takes 19 cycles from offer to answer, at most "+
			"%d on average with one ACK per packet (docs/sender.md).", u.C, u.Paths, u.S, AckRateCycles),
		Clock: "clk", Reset: u.Reset.Port,
		Ports: ports,
		Tables: []hdl.Table{
			{Name: "rec_mem", Depth: u.RecD, Width: u.RecW, Doc: "packet records per {conn, path, psn mod R}"},
			{Name: "ring_mem", Depth: u.RingD, Width: u.EntW, Doc: "work-request rings per {conn, stream, slot}"},
			{Name: "retx_mem", Depth: u.RetxD, Width: u.RetxEntryW(), Doc: "retransmit FIFO of Refs"},
			{Name: "rt_mem", Depth: u.RetryD, Width: u.RetryEntryW(), Doc: "RNR retry FIFO of {due, Ref}"},
			{Name: "mv_mem", Depth: u.MovedMD, Width: u.MovedEntryW(), Doc: "moved FIFOs per connection"},
			{Name: "conn_st", Depth: u.CD, Width: u.ConnW, Kind: hdl.RegFile, Doc: "connection state"},
			{Name: "strm_st", Depth: u.SD, Width: u.StrmW, Kind: hdl.RegFile, Doc: "stream state"},
			{Name: "wl_next", Depth: u.CD, Width: u.CW, Kind: hdl.RegFile, Doc: "work-list links"},
			{Name: "path_sh", Depth: u.PD, Width: u.PathW, Kind: hdl.RegFile,
				Doc: "per path, what the window unit last reported and the live-record count"},
		},
	}
}

// RetxEntryW is a retransmit FIFO entry's width: a record Ref {conn, path, slot, generation}.
func (u *Unit) RetxEntryW() int { return u.CW + u.AW + u.RW + 16 }

// RetryEntryW is an RNR retry FIFO entry's width: {due time, Ref}.
func (u *Unit) RetryEntryW() int { return 64 + u.RetxEntryW() }

// MovedEntryW is a moved FIFO entry's width: {stream, msn, work slot, index}.
func (u *Unit) MovedEntryW() int { return u.SW + 32 + u.WSW + u.IXW }

// Design renders the engine (its sources rewritten by mutate when not nil).
func (u *Unit) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := u.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(Top, srcs, st, mutate)
}

// Sources are the window unit's modules, sack_tx's, and the engine.
func (u *Unit) Sources() ([]gen.Source, error) {
	var out []gen.Source
	ws, err := u.Win.Sources()
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	out = append(out, ws...)
	ss, err := u.Sack.Sources()
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	for _, s := range ss {
		switch s.Module.Name {
		case "sack_rx", "sack_unit", "sack_rotate":
			continue // the receive side stays out
		}
		out = append(out, s)
	}
	text, err := engineTemplate()
	if err != nil {
		return nil, err
	}
	return append(out, gen.Source{Module: u.Module(), Template: text, Data: u}), nil
}

// engineParts are tx_engine's template files: the module (declarations, the state machine's
// common states, the tables and registers) and the state machine's parts it includes, one rule
// family each.
var engineParts = []string{"engine.v.tmpl", "engine_host.v.tmpl", "engine_next.v.tmpl", "engine_ack.v.tmpl",
	"engine_retry.v.tmpl", "engine_scan.v.tmpl"}

// engineTemplate is tx_engine's template: the module's text followed by its parts' definitions.
func engineTemplate() (string, error) {
	var b strings.Builder
	for _, name := range engineParts {
		text, err := templates.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("sender: template: %w", err)
		}
		b.Write(text)
	}
	return b.String(), nil
}

// Params renders localparams for a packed entry's fields: PREFIX_NAME (low bit) and
// PREFIX_NAME_W (width).
func (u *Unit) Params(which, prefix string) string {
	var fs []Field
	switch which {
	case "rec":
		fs = u.Rec
	case "ent":
		fs = u.Ent
	case "conn":
		fs = u.Conn
	case "strm":
		fs = u.Strm
	case "path":
		fs = u.Path
	}
	s := ""
	for _, f := range fs {
		s += fmt.Sprintf("  localparam %s_%s = %d;\n  localparam %s_%s_W = %d;\n", prefix, upper(f.Name), f.Lo, prefix, upper(f.Name), f.Width)
	}
	return s
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
