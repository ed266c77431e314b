package sack

import "github.com/mrgen/mrgen/formal"

// Properties are the labelled properties of sack_rx's FORMAL block (mrgen formal --block sack).
// Each is checked alone: its assertions kept, the others removed, every assumption kept.
var Properties = []formal.Property{
	{Top: "sack_rx", Label: "p_hold_registered",
		Rule: "the registered same-entry hold equals the compare of in_q's entry with the entries of the operations ahead that it stands for"},
	{Top: "sack_rx", Label: "p_cum_forward",
		Rule: "the cumulative PSN of an entry never moves backwards (serially), except where the entry restarts (an init, or a path init at or after cum)"},
	{Top: "sack_rx", Label: "p_dup_no_change",
		Rule: "a duplicate, old or beyond-window packet, and every peek, leaves the entry's cum, highest+1 and bitmap as they were"},
	{Top: "sack_rx", Label: "p_cum_received",
		Rule: "cum advances only over PSNs received since it last passed them: an ACK's cumulative point implies accepted packets"},
	{Top: "sack_rx", Label: "p_bitmap_received",
		Rule: "every bit set in an entry's bitmap is a received PSN of its window [cum, cum+W)"},
}
