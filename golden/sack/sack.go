// Package sack is the behavioural truth of MetaRoCE's per-path selective acknowledgement: the
// receive side (per-path cumulative point and W-bit SACK bitmap, loss-visible gaps, ACK policy)
// and the send side (per-path ACK processing that names exactly the PSNs newly known lost).
//
// It is the only Go implementation of these rules: golden/transport uses it for protocol
// experiments and cosim uses it to check hdl/sack's RTL, so its state is kept in the same units
// as the hardware (PSNs of the configured width, W-bit bitmaps, per-(connection, path) tables
// indexed by {connection, path}).
//
// The rules, per (connection, path) entry:
//
// Receive side. cum is the next expected PSN (everything serially before it has arrived);
// the bitmap is aligned to cum (bit i stands for PSN cum+i; bit 0 is therefore always clear)
// and covers the window [cum, cum+W). highest is the highest PSN received (cum-1 when none).
// A data packet with PSN p, d = p - cum (mod 2^bits), is
//
//   - old       when d is negative in serial order (p before cum): already cumulatively received;
//   - beyond    when 0 ≤ d < 2^(bits-1) but d ≥ W: outside the window; dropped and counted,
//     the entry is left untouched;
//   - duplicate when d < W and bit d is set;
//   - new       otherwise: bit d is set, and when d == 0 the cumulative point advances over the
//     contiguous run of received packets.
//
// Because each path carries its own ordered sequence, a new packet above highest makes every
// PSN in (highest, p) a newly visible gap: loss, not reordering. An ACK is due (ack_due) under
// the configured policy; old and duplicate packets always make an ACK due, since they prove the
// sender missed one. Beyond-window packets never do.
//
// Path init. A data packet may carry the path-init flag (wire.FlagPathInit: its sender
// restarted the path's PSN sequence at this packet's PSN after a failure, abandoning the old
// PSNs). When p is at or after cum (d not negative, whether or not it is inside the window) the
// entry is first re-initialised at p (cum = p, nothing received, highest = p-1, since-last-ACK
// count 0) and the packet is then classified by the rules above: new, at the head, so cum
// becomes p+1 with an empty bitmap and no gap, and an ACK is due when the policy gives one for
// a first packet (an ACK request, every packet, or every N with N = 1). A stale copy of an INIT
// packet, p before cum, leaves the entry alone and is old. Receiver.PacketInit is this rule;
// Receiver.Packet is a packet without the flag, Receiver.Init a connection setup.
//
// Send side. una is the oldest unacknowledged PSN, nxt the next PSN to be sent, count the number
// of SACKed packets above una that the last accepted ACK reported, and hwm the PSN below which
// every loss has been announced (the highest SACKed PSN so far, at least una-1). An ACK (cum,
// bitmap aligned to cum) is
//
//   - stale     when cum is before una;
//   - invalid   when cum is after nxt, when the bitmap claims a PSN ≥ nxt, or when it sets bit 0
//     (cum itself cannot be both expected and received);
//   - duplicate when cum == una and its bitmap carries no more SACKed packets than count
//     (receiver bitmaps for one cum only grow, so fewer or equal means nothing new);
//   - accepted  otherwise: una = cum, and every PSN below the highest SACKed one whose bit is
//     clear is lost; those above hwm are new and are emitted, exactly once, for retransmission
//     on the same path (a receiver's bitmap for PSNs at or above its cumulative point only gains
//     bits, so a clear bit below hwm was clear, and reported, when hwm was set).
package sack

import (
	"fmt"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/psn"
)

// Params are the parameters the SACK rules depend on, derived from the shared configuration.
type Params struct {
	Width       int // SACK bitmap width W
	PSNBits     int
	ConnBits    int // connection id width; the table index is {conn, path}
	PathBits    int // path id width
	AckMode     string
	AckEveryN   int
	TableDepth  int
	IndexBits   int
	CounterBits int // width of the global event counters (they wrap)
	Table       config.PathTable
}

// ParamsFrom derives Params from a validated configuration.
func ParamsFrom(c config.Config) Params {
	d := c.Derived()
	return Params{
		Width:       c.SackWidth,
		PSNBits:     c.PSNWidth,
		ConnBits:    d.ConnIDWidth,
		PathBits:    d.PathIDWidth,
		AckMode:     c.AckPolicy.Mode,
		AckEveryN:   c.AckPolicy.EveryN,
		TableDepth:  d.PathTableDepth,
		IndexBits:   d.PathTableAddrWidth,
		CounterBits: 32,
		Table:       c.PathTable(),
	}
}

// Index is the table index of (conn, path): {conn, path}.
func (p Params) Index(conn, path uint32) (int, error) {
	i, err := p.Table.Index(int(conn), int(path))
	if err != nil {
		return 0, fmt.Errorf("sack: %w", err)
	}
	return i, nil
}

func (p Params) space() psn.Space { return psn.MustSpace(p.PSNBits) }

func (p Params) counterMask() uint64 { return 1<<p.CounterBits - 1 }
