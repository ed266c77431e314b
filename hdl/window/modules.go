package window

import (
	"fmt"

	"github.com/mrgen/mrgen/gen"
	goldenwindow "github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/firstset"
)

// in and out are hdl.In and hdl.Out, short for the port lists.
var in, out = hdl.In, hdl.Out

// firstSet is the find-first-set tree over the 2^AW path slots of a connection (hdl/firstset).
func (u *Unit) firstSet() (gen.Source, error) {
	return firstset.Source("window_first_set", u.PathSlots, "The spraying pick's priority search over "+
		"the path slots of a connection.")
}

// pickSearch is the staged pick's tree (PickStage): one search over eight bitmaps of the path
// slots, P's six (each class at or after the round-robin pointer, then each class, from class 3
// down) and two of zeros.
func (u *Unit) pickSearch() (gen.Source, error) {
	return firstset.Source("window_pick_search", 8*u.PathSlots, "The staged spraying pick's priority "+
		"search over six bitmaps of a connection's path slots (each class at or after the "+
		"round-robin pointer, then each class, from class 3 down), padded to eight.")
}

// PickModule is the spraying pick of golden/window.SendDecision.
func (u *Unit) PickModule() *hdl.Module {
	return &hdl.Module{
		Name:   "window_pick",
		Source: Source,
		Doc: "Spraying pick of golden/window's SendDecision: among the paths of the highest non-empty " +
			"class (3: at least half the window free, 2: some window free, 1: suspect or ECN-marked, 0: " +
			"ineligible), the first at or after the round-robin pointer in rotating order. A priority " +
			"select of the class bitmap, then a rotating find-first-set (one tree on the slots at or " +
			"after the pointer, one on all slots). Combinational.",
		Ports: []hdl.Port{
			in("cls", 2*u.PathSlots, "class of each path slot, 2 bits per slot, slot 0 lowest"),
			in("rr", u.AW, "round-robin pointer"),
			out("any", 1, "some path has a non-zero class"),
			out("path", u.AW, "the chosen path"),
		},
	}
}

// groupTable is the memory holding group name; its doc says what it holds and, from the group,
// which stages read and write it.
func (u *Unit) groupTable(name, what string) hdl.Table {
	g := u.Group(name)
	depth := u.Depth
	if g.Conn {
		depth = u.ConnDepth
	}
	doc := fmt.Sprintf("%s (read in %s, written in %s)", what, g.Read, g.Write)
	return hdl.Table{Name: name + "_table", Depth: depth, Width: g.Width, Doc: doc}
}

// PSNMacro reports whether the PSN table is a macro: a RAM read in stage A like the other
// tables. Below the macro threshold it is a register file read in F (a RAM of flip-flops would
// put its read multiplexer behind A's spraying pick).
func (u *Unit) PSNMacro() bool {
	t := u.groupTable("psn", "")
	return t.Macro()
}

// PSNW2 reports whether a send's PSN needs W2's forwarding (the PSN table's write two operations
// ahead, at the edge of the read): where the table is a RAM read in A, or where two sends on one
// connection may follow each other in F (SendII 1). A register file read in F, with the
// operation before a send on another connection, already holds it.
func (u *Unit) PSNW2() bool { return u.SendII == 1 || u.PSNMacro() }

// psnTable is the PSN table, a RAM or a register file (PSNMacro).
func (u *Unit) psnTable() hdl.Table {
	t := u.groupTable("psn", "the path's next PSN")
	if !u.PSNMacro() {
		t.Kind = hdl.RegFile
		t.Doc = "the path's next PSN (read in F, written in W)"
	}
	return t
}

// UnitModule is the window unit.
func (u *Unit) UnitModule() *hdl.Module {
	ports := append(u.Reset.Ports(),
		in("now", TimeW, "free-running time, ns mod 2^32 (the wire timestamp's unit)"),
		// ACK port.
		in("s_ack_valid", 1, "an ACK-port operation is offered"),
		out("s_ack_ready", 1, "accepted when valid and ready (priority over sends)"),
		in("s_ack_op", 2, "0 ACK update, 1 set the next PSN (setup), 2 a NAK: liveness only (3 as 2)"),
		in("s_ack_conn", u.CW, "connection id"),
		in("s_ack_path", u.AW, "path id within the connection"),
		in("s_ack_cum_advance", CountInW, "packets newly acknowledged by the cumulative PSN"),
		in("s_ack_newly_sacked", CountInW, "packets newly SACKed above it"),
		in("s_ack_ecn_echo", CountInW, "CE-marked packets since the receiver's previous ACK"),
		in("s_ack_ts_echo", TimeW, "timestamp echo, ns mod 2^32"),
		in("s_ack_rate_hint", RateHintW, "receiver's fair-share rate hint, 100 Mb/s units, 0 = no limit"),
		in("s_ack_psn", u.PW, "op 1: the path's next PSN"),
		out("m_ack_valid", 1, "result of one ACK update (op 1 gives none)"),
		in("m_ack_ready", 1, "downstream takes the result"),
		out("m_ack_conn", u.CW, "connection id"),
		out("m_ack_path", u.AW, "path id"),
		out("m_ack_ignored", 1, "the path is failed: the ACK changed nothing"),
		out("m_ack_sample_valid", 1, "the RTT sample was used"),
		out("m_ack_sample", TimeW, "the RTT sample, ns (0 unless valid)"),
		out("m_ack_acked", goldenwindow.InflightBits, "packets taken out of flight"),
		out("m_ack_increased", 1, "path additive increase"),
		out("m_ack_decreased", 1, "path multiplicative decrease"),
		out("m_ack_conn_increased", 1, "connection additive increase"),
		out("m_ack_conn_decreased", 1, "connection multiplicative decrease"),
		out("m_ack_reactivated", 1, "a suspect path became active"),
		out("m_ack_cwnd", CwndW, "path window after the ACK, packets x 256"),
		out("m_ack_srtt", TimeW, "path SRTT after the ACK, ns"),
		out("m_ack_rttvar", TimeW, "path RTTVAR after the ACK, ns"),
		out("m_ack_rto", TimeW, "path RTO after the ACK, ns"),
		out("m_ack_conn_cwnd", ConnCwndW, "connection window after the ACK, packets x 256"),
		out("m_ack_rate_cap", ConnCwndW, "connection rate-hint cap after the ACK, packets x 256"),
		out("m_ack_min_rtt", TimeW, "connection base RTT (smallest sample) after the ACK, ns"),
		out("m_ack_min_valid", 1, "the connection's base RTT holds a sample"),
		// Send port.
		in("s_send_valid", 1, "a connection asks where its next new packet goes"),
		out("s_send_ready", 1, "accepted when valid and ready (low while an ACK is offered)"),
		in("s_send_conn", u.CW, "connection id"),
		out("m_send_valid", 1, "the decision on one send request"),
		in("m_send_ready", 1, "downstream takes the decision"),
		out("m_send_conn", u.CW, "connection id"),
		out("m_send_ok", 1, "a path was chosen and the packet counted in flight"),
		out("m_send_reason", ReasonW, "0 ok, 1 connection window full, 2 rate cap full, 3 no eligible path"),
		out("m_send_path", u.AW, "the chosen path (0 unless ok)"),
		out("m_send_entropy", EntropyW, "its entropy, the UDP source port (0 unless ok)"),
		out("m_send_psn", u.PW, "the packet's PSN on that path (0 unless ok)"),
		// Timer events.
		out("m_tmr_valid", 1, "the timer scan found an expired entry"),
		in("m_tmr_ready", 1, "downstream takes the event"),
		out("m_tmr_conn", u.CW, "connection id"),
		out("m_tmr_path", u.AW, "path id"),
		out("m_tmr_event", EventW, "1 timeout, 2 became suspect, 3 failed, 4 probe (failed -> suspect)"),
		out("m_tmr_outstanding", goldenwindow.InflightBits, "timeout: packets in flight (resend the oldest)"),
		out("m_tmr_moved", goldenwindow.InflightBits, "failure: packets taken out of flight, to resend elsewhere"),
		out("m_tmr_timeouts", goldenwindow.TimeoutBits, "consecutive counted timeouts after the event"),
		out("m_tmr_entropy", EntropyW, "the path's entropy after the event (re-drawn on failure)"),
		out("busy", 1, "the post-reset table initialisation is running"),
	)
	doc := ""
	if u.Explicit {
		ports = append(ports,
			in("s_exp_valid", 1, "check one entry's timer now (golden Expire); answered on m_tmr, event 0 included"),
			out("s_exp_ready", 1, "accepted when valid and ready (lowest priority: low while an ACK or send is offered)"),
			in("s_exp_conn", u.CW, "connection id"),
			in("s_exp_path", u.AW, "path id within the connection"),
			out("armed", u.Depth, "bit {conn, path}: that entry's timer is armed (golden Armed)"),
			out("m_early_valid", 1, "an ACK-port operation's early result, 5 cycles ahead of m_ack"),
			out("m_early_acked", goldenwindow.InflightBits, "with m_early_valid: as m_ack_acked"),
			out("m_early_reactivated", 1, "with m_early_valid: as m_ack_reactivated"),
			out("m_rtt_sample_valid", 1, "the cycle after m_early_valid (pipeline advancing): as m_ack_sample_valid"),
			out("m_rtt_srtt", TimeW, "then: as m_ack_srtt"),
			out("m_rtt_rttvar", TimeW, "then: as m_ack_rttvar"),
		)
		doc = " Explicit expiry: no free-running scan; an entry's timer is checked only when s_exp asks."
	}
	return &hdl.Module{
		Name:   u.Name(),
		Source: Source,
		Doc: fmt.Sprintf("Sender window unit of MetaRoCE for %d connections x %d paths: per path the "+
			"window (ECN AIMD, at most one decrease per SRTT), the RFC 6298 RTT estimator, the "+
			"retransmit timer with exponential backoff, the path state (active / suspect / failed) "+
			"and the ECMP entropy; per connection the connection window, the packets in flight, the "+
			"base RTT and the rate-hint cap. ACK updates, send decisions (spraying over the paths) and "+
			"timer-scan checks share one read-modify-write pipeline; one operation enters per clock. The rules "+
			"are golden/window's, bit for bit (fixed point, 8 fraction bits).",
			u.Cfg.Connections, u.Cfg.PathsPerConnection) + doc,
		Clock: "clk", Reset: u.Reset.Port,
		Ports: ports,
		Tables: []hdl.Table{
			u.groupTable("fast", "the path's decision state"),
			u.psnTable(),
			u.groupTable("rtt", "the RTT estimator's SRTT"),
			u.groupTable("aimd", "RTTVAR and the path's ECN AIMD"),
			u.groupTable("rto", "the path's RTO"),
			u.groupTable("cbase", "the connection's base RTT"),
			u.groupTable("caimd", "the connection's ECN AIMD"),
			u.groupTable("ccap", "the connection's rate cap"),
			{Name: "rr_table", Depth: u.ConnDepth, Width: u.AW, Kind: hdl.RegFile,
				Doc: "each connection's round-robin pointer, read in the cycle a send is accepted"},
			{Name: "pub_path", Depth: u.Depth, Width: PubPathW,
				Doc: "each path's published {rto, cwnd}: what the decisions read"},
			{Name: "pub_ring", Depth: u.PubRingDepth(), Width: u.PubRingW(),
				Doc: "per connection, the last PubLag operations' publications, each applied by the operation PubLag later"},
		},
		Latency: LatencyAck,
		II:      1,
		EntryII: u.SendII,
	}
}

// PickIdxW is the width of the staged pick's search index: log2 of eight bitmaps of the path
// slots.
func (u *Unit) PickIdxW() int { return u.AW + 3 }
