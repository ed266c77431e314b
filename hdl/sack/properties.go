package sack

import "github.com/mrgen/mrgen/formal"

// Properties are the labelled properties of sack_rx's and sack_tx's FORMAL blocks (mrgen formal
// --block sack). Each is checked alone: its assertions kept, the others removed, every
// assumption kept.
var Properties = []formal.Property{
	{Top: "sack_rx", Label: "p_hold_registered",
		Rule: "the registered same-entry hold equals the compare of in_q's entry with the entries of the operations ahead that it stands for, and the registered merge selects the compares of in_q's entry with the entries of the results in e and w"},
	{Top: "sack_rx", Label: "p_cum_forward",
		Rule: "the cumulative PSN of an entry never moves backwards (serially), except where the entry restarts (an init, or a path init at or after cum)"},
	{Top: "sack_rx", Label: "p_dup_no_change",
		Rule: "a duplicate, old or beyond-window packet, and every peek, leaves the entry's cum, highest+1 and bitmap as they were"},
	{Top: "sack_rx", Label: "p_cum_received",
		Rule: "cum advances only over PSNs received since it last passed them: an ACK's cumulative point implies accepted packets"},
	{Top: "sack_rx", Label: "p_bitmap_received",
		Rule: "every bit set in an entry's bitmap is a received PSN of its window [cum, cum+W)"},
	{Top: "sack_tx", Label: "p_tx_same_entry",
		Rule: "stage m sees every operation one and two ahead on its entry: the forwarding bits equal the index compares they stand for, or, where sack_tx holds (entry II 3), none is on it and the registered hold equals its compare; and the registered merge selects of lp equal their compares"},
}
