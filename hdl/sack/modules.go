package sack

import (
	"fmt"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/firstset"
)

// in and out are hdl.In and hdl.Out, short for the port lists.
var in, out = hdl.In, hdl.Out

// firstSet is the W-bit find-first-set tree (hdl/firstset): sack_rx's search where it forwards,
// and the send engine's walk (hdl/sender), which takes it from this unit's sources.
func (u *Unit) firstSet() (gen.Source, error) {
	return firstset.Source("sack_first_set", u.W, "sack_rx's rotating find-first-zero of the cumulative "+
		"advance where it forwards (entry II 2), in stage a; the send engine's walk.")
}

// zeroSearch is sack_rx's find-first-zero tree where it holds (RxHoldTwo): the W-bit
// find-first-set tree registered half way, its first levels in stage c and the rest in stage a.
func (u *Unit) zeroSearch() (gen.Source, error) {
	return firstset.Registered("sack_zero_search", u.W, u.RxSearchSplit(), "sack_rx's rotating "+
		"find-first-zero of the cumulative advance: its first levels run in stage c, the rest in stage a.")
}

// highestSet is sack_tx's W-bit find-first-set tree for the highest SACKed bit (on the
// reversed bitmap), registered after half its levels: the tree spans stages in_q and pre.
func (u *Unit) highestSet() (gen.Source, error) {
	return firstset.Registered("sack_highest", u.W, u.IW/2, "sack_tx finds the highest SACKed PSN "+
		"with it, on the bit-reversed bitmap.")
}

// ThermometerModule decodes an index into a thermometer code.
func (u *Unit) ThermometerModule() *hdl.Module {
	return &hdl.Module{
		Name:   "sack_thermometer",
		Source: Source,
		Doc: fmt.Sprintf("Thermometer decode of a %d-bit index: ge[i] = (i >= x) for i in 0..%d, from the "+
			"thermometers of x's low %d and high %d bits (each an explicit tree of 2:1 muxes), combined by one "+
			"3-input function per bit, instead of %d comparators. Combinational. It gives the circular slot "+
			"ranges of the SACK tables (passed slots, lost candidates) and the code of a packet's slot.",
			u.IW, u.W-1, u.ThermoLowBits(), u.IW-u.ThermoLowBits(), u.W),
		Ports: []hdl.Port{
			in("x", u.IW, "index"),
			out("ge", u.W, "bit i set when i >= x"),
		},
	}
}

// ThermoLowBits is how many of the index's low bits the thermometer decodes in its low half:
// all of them up to 4 (one LUT4 per output), else the larger half. Two halves of at most 5 bits
// each take the decode from log2 W levels of 2:1 muxes, which LUT mapping left at 5 LUT4 levels
// at 128 bits (the table read into the head's code was sack_rx's iCE40 critical path in session
// 38, before the search started from the slot), to two or three.
func (u *Unit) ThermoLowBits() int {
	if u.IW <= 4 {
		return u.IW
	}
	return u.IW - u.IW/2
}

// PopcountModule is the W-bit population count adder tree.
func (u *Unit) PopcountModule() *hdl.Module {
	return &hdl.Module{
		Name:   "sack_popcount",
		Source: Source,
		Doc: fmt.Sprintf("Population count of %d bits as an explicit adder tree (%d levels) with a register "+
			"after %s, so no cycle holds more than part of the tree. Counts the SACKed packets an ACK reports.",
			u.W, u.IW, u.popcountRegisters()),
		Ports: []hdl.Port{
			in("clk", 1, "clock"),
			in("en", 1, "register enable (pipeline advance)"),
			in("vec", u.W, "vector to count"),
			out("count", u.CntW, fmt.Sprintf("number of set bits, 0..W, %d cycle(s) after vec", u.popcountLatency())),
		},
		Clock:   "clk",
		Latency: u.popcountLatency(),
		II:      1,
	}
}

// popcountLatency is the popcount's cycles from vec to count: one per registered level.
func (u *Unit) popcountLatency() int { return 2 }

// popcountRegisters names the popcount's registered levels, for its description.
func (u *Unit) popcountRegisters() string {
	return fmt.Sprintf("levels %d and %d", u.PopcountSplit, u.PopcountLate)
}

// RotateModule is the pipelined right-rotator.
func (u *Unit) RotateModule() *hdl.Module {
	return &hdl.Module{
		Name:   "sack_rotate",
		Source: Source,
		Doc: fmt.Sprintf("Rotates a %d-bit vector right by amt (out[i] = in[(i+amt) mod W]) as %d explicit "+
			"levels, with a register after each of its %d stage(s) (pipeline.tree_register_every). "+
			"A side vector of SIDE_WIDTH bits travels through the same registers. All registers load "+
			"when en is high; they hold data only, so they have no reset.", u.W, u.IW, len(u.Rotate.Stages)),
		Params: []hdl.Param{{Name: "SIDE_WIDTH", Value: 1, Doc: "width of the side vector"}},
		Ports: []hdl.Port{
			in("clk", 1, "clock"),
			in("en", 1, "stage enable (pipeline advance)"),
			in("in_data", u.W, "vector to rotate"),
			in("in_amt", u.IW, "rotate-right amount"),
			{Name: "in_side", Dir: hdl.Input, Width: 1, WidthParam: "SIDE_WIDTH", Doc: "side data delayed with the vector"},
			out("out_data", u.W, "rotated vector, registered"),
			{Name: "out_side", Dir: hdl.Output, Width: 1, WidthParam: "SIDE_WIDTH", Doc: "side data, registered"},
		},
		Clock:   "clk",
		Latency: len(u.Rotate.Stages),
		II:      1,
	}
}

// RxModule is the receive-side table.
func (u *Unit) RxModule() *hdl.Module {
	ports := append(u.Reset.Ports(),
		in("s_pkt_valid", 1, "a data packet or an entry init is offered"),
		out("s_pkt_ready", 1, "accepted when valid and ready; low during the post-reset table clear"),
		in("s_pkt_init", 1, "1: set the entry's first PSN (connection setup); 0: data packet"),
		in("s_pkt_conn", u.CW, "connection id"),
		in("s_pkt_path", u.AW, "path id within the connection"),
		in("s_pkt_psn", u.PW, "packet PSN (or first PSN for init)"),
		in("s_pkt_ack_req", 1, "the sender asked for an ACK"),
		in("s_pkt_path_init", 1, "path-init flag: at or after cum, re-initialise the entry at psn first"),
		in("s_pkt_peek", 1, "1: classify the data packet and change nothing (no table write, not counted)"),
		out("m_rx_valid", 1, "result of one data packet (inits give none)"),
		in("m_rx_ready", 1, "downstream takes the result"),
		out("m_rx_conn", u.CW, "connection id"),
		out("m_rx_path", u.AW, "path id"),
		out("m_rx_psn", u.PW, "the packet's PSN"),
		out("m_rx_class", 2, "0 new, 1 duplicate, 2 old, 3 beyond window (dropped)"),
		out("m_rx_cum", u.PW, "cumulative PSN after the packet (next expected)"),
		out("m_rx_bitmap", u.W, "SACK bitmap aligned to m_rx_cum: bit i = PSN cum+i"),
		out("m_rx_ack_due", 1, "an ACK is due under the ACK policy"),
		out("m_rx_gap_valid", 1, "PSNs (highest, psn) became visible as lost"),
		out("m_rx_gap_first", u.PW, "first PSN of the new gap"),
		out("m_rx_gap_count", u.IW, "number of PSNs in the new gap"),
		out("m_rx_path_init", 1, "the path-init flag re-initialised the entry (psn was at or after cum)"),
		out("m_rx_peek", 1, "a peek's result: class, ack_due, gap as the packet would make them; cum, bitmap as is"),
		out("rx_busy", 1, "the post-reset table clear is running"),
		out("cnt_rx_new", 32, "data packets classified new (wraps)"),
		out("cnt_rx_duplicate", 32, "duplicates"),
		out("cnt_rx_old", 32, "packets below the window"),
		out("cnt_rx_beyond", 32, "packets beyond the window, dropped"),
	)
	return &hdl.Module{
		Name:   "sack_rx",
		Source: Source,
		Doc: fmt.Sprintf("Receive side of the MetaRoCE SACK unit: per (connection, path) the next expected "+
			"PSN, the highest PSN received and a %d-bit SACK bitmap. Each data packet is classified new / "+
			"duplicate / old / beyond window, its bit is set, the cumulative point advances over the "+
			"contiguous run of received packets, and the path's ACK information leaves aligned to it. "+
			"A packet flagged path-init at or after the cumulative point first re-initialises its entry at "+
			"its own PSN (the sender restarted the path's sequence there); a stale copy behind it is old. "+
			"On a per-path ordered sequence a gap below the highest received PSN is loss, not reordering, "+
			"so the gap is reported the moment it appears.", u.W),
		Clock: "clk", Reset: u.Reset.Port,
		Ports:   ports,
		Tables:  []hdl.Table{{Name: "rx_table", Depth: u.Depth, Width: u.RxEntryW, Doc: "{since_ack, bitmap (circular), highest+1, cum}"}},
		Latency: u.RxLatency,
		II:      1,
		EntryII: u.RxEntryII(),
	}
}

// TxModule is the send-side loss detector.
func (u *Unit) TxModule() *hdl.Module {
	ports := append(u.Reset.Ports(),
		in("s_ack_valid", 1, "an ACK, init or sent record is offered"),
		out("s_ack_ready", 1, "accepted when valid and ready; low during the post-reset table clear"),
		in("s_ack_op", 2, "0 ACK, 1 init (una = nxt = psn), 2 sent (psn went out), 3 read (una, nxt)"),
		in("s_ack_conn", u.CW, "connection id"),
		in("s_ack_path", u.AW, "path id within the connection"),
		in("s_ack_psn", u.PW, "ACK: cumulative PSN; init: first PSN; sent: the PSN sent"),
		in("s_ack_bitmap", u.W, "ACK: SACK bitmap aligned to the cumulative PSN"),
		out("m_loss_valid", 1, "verdict on one ACK (or the answer to a read)"),
		in("m_loss_ready", 1, "downstream takes the verdict"),
		out("m_loss_conn", u.CW, "connection id"),
		out("m_loss_path", u.AW, "path id"),
		out("m_loss_status", 2, "0 accepted, 1 duplicate, 2 stale, 3 invalid"),
		out("m_loss_base", u.PW, "the ACK's cumulative PSN"),
		out("m_loss_bitmap", u.W, "PSNs newly known lost, bit i = base+i; retransmit on this path"),
		out("m_loss_una", u.PW, "the path's oldest unacknowledged PSN before the ACK or read"),
		out("m_loss_nxt", u.PW, "the path's next PSN to send"),
		out("tx_busy", 1, "the post-reset table clear is running"),
		out("cnt_ack_accepted", 32, "ACKs accepted (wraps)"),
		out("cnt_ack_duplicate", 32, "duplicate ACKs ignored"),
		out("cnt_ack_stale", 32, "stale ACKs ignored"),
		out("cnt_ack_invalid", 32, "invalid ACKs ignored"),
	)
	return &hdl.Module{
		Name:   "sack_tx",
		Source: Source,
		Doc: "Send side of the MetaRoCE SACK unit: per (connection, path) the oldest unacknowledged PSN, " +
			"the next PSN to send, the SACK count of the last accepted ACK and hwm, the PSN below which " +
			"every loss has been reported. Each ACK is judged stale / invalid / duplicate / accepted; an accepted ACK names exactly " +
			"the PSNs newly known lost -- every clear bit below the highest SACKed PSN -- once, for " +
			"retransmission on the same path.",
		Clock: "clk", Reset: u.Reset.Port,
		Ports:   ports,
		Tables:  []hdl.Table{{Name: "tx_table", Depth: u.Depth, Width: u.TxEntryW, Doc: "{hwm, count, nxt, una}"}},
		Latency: u.TxLatency,
		II:      1,
		EntryII: u.TxEntryII(),
	}
}

// UnitModule holds both sides.
func (u *Unit) UnitModule() *hdl.Module {
	rx, tx := u.RxModule(), u.TxModule()
	ports := u.Reset.Ports()
	for _, m := range []*hdl.Module{rx, tx} {
		for _, p := range m.Ports[2:] {
			ports = append(ports, p)
		}
	}
	return &hdl.Module{
		Name:   "sack_unit",
		Source: Source,
		Doc: fmt.Sprintf("The MetaRoCE SACK bitmap unit for %d connections x %d paths with %d-bit bitmaps and "+
			"%d-bit PSNs: sack_rx (receive side) and sack_tx (send side) side by side. The two sides share "+
			"nothing but clock and reset; each has its own valid/ready input and output.",
			u.Cfg.Connections, u.Cfg.PathsPerConnection, u.W, u.PW),
		Clock: "clk", Reset: u.Reset.Port,
		Ports:   ports,
		Latency: u.RxLatency,
		II:      1,
	}
}
