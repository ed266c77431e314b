package sender

import (
	"errors"
	"fmt"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// Params configure a Sender. The table sizes are in the package doc ("Tables").
type Params struct {
	Window    window.Params    // windows, paths, spraying, timers (golden/window)
	Sack      sack.Params      // per-path loss detection (golden/sack)
	Placement placement.Params // segmentation (mtu), streams, posted receives per stream (Depth)
	// WireConn[c] is the connection id connection c's packets carry: the peer's index of this
	// host (len Conns).
	WireConn []uint16
	// WorkDepth is the depth of each (connection, stream) work-request ring: started messages
	// (at most Depth) plus those posted and not started. It must exceed Depth.
	WorkDepth int
	// RetxDepth, MovedDepth (per connection) and RetryDepth bound the retransmit FIFO, the
	// moved FIFOs and the RNR retry FIFO.
	RetxDepth, MovedDepth, RetryDepth int
	// RecordsPerPath sizes each (connection, path) packet-record table (a power of two); 0
	// means RecordDepth's rule, a table no path can fill (package doc, "Tables").
	RecordsPerPath int
	// TicksPerNS is the resolution of the clock the unit is given (now): 1 for the NIC's
	// nanosecond timestamp counter, 1000 for golden/fabric's picoseconds. Wire timestamps and
	// the window unit's times are now/TicksPerNS mod 2^32.
	TicksPerNS uint64
	ScanTicks  uint64 // period of the timer scan, in ticks
	// AckDelayNS, FirstProbeNS and TailProbeMinNS shape the tail-loss probe (package doc).
	AckDelayNS, FirstProbeNS, TailProbeMinNS uint64
	Announce                                 bool // send an ANNOUNCE ahead of a connection's first data packet
	// WriteOverhead and SendOverhead are the bytes a WRITE or SEND data frame takes on the wire
	// beyond its payload (headers, ICRC, FCS, preamble and inter-frame gap): the pacer's unit.
	WriteOverhead, SendOverhead int
}

// Defaults of the tail-loss probe, in nanoseconds.
const (
	// DefaultFirstProbeNS is the tail-probe timeout of a path with no RTT sample: a
	// connection's first packet (held alone by the first-RTT gate) is resent after it rather
	// than after the initial RTO. It exceeds the first round trip of a 64:1 incast (about 30 µs).
	DefaultFirstProbeNS = 50_000
	// DefaultTailProbeMinNS is the shortest silence that triggers a tail-loss probe.
	DefaultTailProbeMinNS = 10_000
	// WorkDepthPerReceive is the default work-request ring depth per posted receive: a ring
	// slot (and its local buffer) is reused WorkDepthPerReceive×Depth messages later, after
	// any copy of its packets can still be resent (package doc, "Stale references"; the most
	// any experiment or closed loop needed is 27 messages, docs/sender.md "Memory sizing").
	WorkDepthPerReceive = 8
	// RetxDepthPerPath is the default retransmit FIFO depth in a path's records: one ACK
	// queues at most its path's live records (fewer than RecordDepth), and a second ACK's
	// losses find room before the engine has resent the first's.
	RetxDepthPerPath = 2
)

// ErrQueueFull is PostWork's answer when the (connection, stream) work-request ring is full:
// the host keeps the request and posts it again once a message of the stream completes.
var ErrQueueFull = errors.New("sender: work-request ring full")

// Derived sizes.
func (p Params) conns() int   { return p.Window.Conns }
func (p Params) paths() int   { return p.Window.Paths }
func (p Params) streams() int { return p.Placement.Streams }
func (p Params) depth() int   { return p.Placement.Depth }

// RecordDepth is the number of packet records per (connection, path): the smallest power of
// two holding the sack_width PSNs a path may have SACKed above its oldest unacknowledged one
// plus the max_cwnd packets it may have in flight beyond them, at most the PSN space (then no
// path's table can fill; package doc, "Tables"), or RecordsPerPath when that is set and less.
func (p Params) RecordDepth() int {
	need := p.Sack.Width + int(p.Window.MaxCwnd>>window.FracBits)
	r := 1
	for r < need && r < 1<<min(p.Sack.PSNBits, 30) {
		r <<= 1
	}
	if p.RecordsPerPath > 0 {
		return min(r, p.RecordsPerPath)
	}
	return r
}

// MaxPackets is the number of packets of the longest message.
func (p Params) MaxPackets() int { return int(p.Placement.Packets(p.Placement.MaxMsgLen())) }

// WithQueueDepths takes the FIFO depths and the record-table size of a configuration's sender
// section (a 0 stays 0, for WithDefaultDepths and RecordDepth to fill).
func (p Params) WithQueueDepths(s config.Sender) Params {
	p.RetxDepth, p.MovedDepth, p.RetryDepth = s.RetxDepth, s.MovedDepth, s.RNRRetryDepth
	p.RecordsPerPath = s.RecordsPerPath
	return p
}

// WithDefaultDepths fills the queue depths left zero, each from the tables it serves rather
// than the worst case of every record of the NIC at once (docs/sender.md, "Memory sizing"):
//   - WorkDepth = WorkDepthPerReceive×Depth;
//   - RetxDepth = RetxDepthPerPath×RecordDepth (overflow is recovered: a later loss signal or
//     the RTO queues the packet again);
//   - MovedDepth = a connection's records, Paths×RecordDepth: a timeout copies, and a failure
//     or probe moves, each live record of a path once, and every path of the connection may
//     fail together;
//   - RetryDepth = RecordDepth: one path's records refused at once (overflow is recovered: the
//     packet is resent by loss recovery, without the RNR delay).
func (p Params) WithDefaultDepths() Params {
	r := p.RecordDepth()
	if p.WorkDepth == 0 {
		p.WorkDepth = WorkDepthPerReceive * p.depth()
	}
	if p.RetxDepth == 0 {
		p.RetxDepth = RetxDepthPerPath * r
	}
	if p.MovedDepth == 0 {
		p.MovedDepth = p.paths() * r
	}
	if p.RetryDepth == 0 {
		p.RetryDepth = r
	}
	return p
}

// Validate checks the parameters.
func (p Params) Validate() error {
	switch {
	case p.conns() < 1 || p.paths() < 1 || p.streams() < 1 || p.depth() < 1:
		return fmt.Errorf("sender: conns %d, paths %d, streams %d and depth %d must be at least 1",
			p.conns(), p.paths(), p.streams(), p.depth())
	case p.Sack.Width < 1 || p.Sack.PSNBits != p.Window.PSNBits:
		return fmt.Errorf("sender: SACK width %d, PSN widths %d (sack) and %d (window)", p.Sack.Width, p.Sack.PSNBits, p.Window.PSNBits)
	case len(p.WireConn) != p.conns():
		return fmt.Errorf("sender: %d wire connection ids, want %d", len(p.WireConn), p.conns())
	case p.WorkDepth <= p.depth():
		return fmt.Errorf("sender: work depth %d must exceed the posted receives per stream %d", p.WorkDepth, p.depth())
	case p.RetxDepth < 1 || p.MovedDepth < 1 || p.RetryDepth < 1:
		return fmt.Errorf("sender: retransmit %d, moved %d and retry %d depths must be positive", p.RetxDepth, p.MovedDepth, p.RetryDepth)
	case p.TicksPerNS < 1 || p.ScanTicks < 1:
		return fmt.Errorf("sender: ticks per ns %d and scan period %d must be positive", p.TicksPerNS, p.ScanTicks)
	case p.WriteOverhead < 0 || p.SendOverhead < 0:
		return fmt.Errorf("sender: frame overheads %d and %d must not be negative", p.WriteOverhead, p.SendOverhead)
	}
	if err := p.Placement.Validate(); err != nil {
		return fmt.Errorf("sender: %w", err)
	}
	return nil
}

// overhead is the wire bytes of a data frame of op beyond its payload.
func (p Params) overhead(op wire.Opcode) int {
	if op == wire.OpWrite {
		return p.WriteOverhead
	}
	return p.SendOverhead
}
