// Package transport is the golden model of MetaRoCE's endpoints: every host's NIC as a sender
// and a receiver, built from the shared behavioural units (golden/sack, golden/window,
// golden/placement, golden/wire) and run on golden/fabric.
//
// # Connections, paths and streams
//
// Every ordered pair of hosts that exchanges messages has one connection; a host's connection
// table has one entry per peer (Hosts−1 entries), so the connection id a packet carries is the
// receiver's index of the sender: peer p of host h is entry p if p < h, else p−1. A connection
// has paths_per_connection paths; path k leaves on NIC port (plane) k mod planes with the
// path's UDP source port (its entropy, from golden/window) as ECMP entropy, and has its own PSN
// sequence, SACK state, window, RTT estimate, ECN state, RTO and failure state. Messages ride
// on streams_per_connection ordered streams; each message has a per-stream MSN.
//
// # Sending
//
// Every send-side decision below is golden/sender's (its package doc is the specification the
// send pipeline's RTL follows); the NIC owns the port queues, the host's send buffers and
// backlog (work.go), and turns the sender's timers into fabric events (sender.go).
//
// The NIC fills its ports' short queues (PortQueue packets each) in this order: ACKs and NAKs,
// retransmissions of packets found lost, packets moved off failed paths, then new data from the
// connections round robin. A new or moved packet's path comes from window.SendDecision (the
// spraying policy the hardware implements bit for bit); a retransmission goes on the path that
// lost it with its original PSN (if that path has failed since, it is moved instead). A stream
// starts message m only once message m−posted_receives_per_stream has been acknowledged in full,
// so the receiver always has a posted receive for it (the application reposts a receive on every
// completion). Messages are cut into mtu-sized packets (placement's segmentation rule); the last
// packet of a message asks for an immediate ACK.
//
// A connection that has not yet heard from its receiver keeps one packet in flight, asking for
// an immediate ACK (the first-RTT gate), and sends an ANNOUNCE just ahead of it (announce.go):
// the first ACK, usually the ANNOUNCE's answer, brings the receiver's rate hint and an RTT
// sample, so an incast's first round trip sends one packet per sender instead of every sender's
// initial window (64 × 128 KiB overflowed a 1 MB switch buffer). New packets are paced at the
// last rate hint (the window bounds what is in flight; the pacer spreads it and realises shares
// below one packet per RTT). ACKs, NAKs and ANNOUNCEs travel in the fabric's strict-priority
// control class (fabric.Packet.Control).
//
// # Loss recovery (no go-back-N anywhere)
//
//   - SACK: an accepted ACK names exactly the PSNs newly known lost on its path
//     (golden/sack.Sender); each is resent at once on that path.
//   - Loss by send time: a path is FIFO (one 5-tuple, one route), so a packet whose latest copy
//     left before the packet that triggered an ACK, and that the ACK does not acknowledge, was
//     lost; it is resent. This repairs tail losses (no later packet, so no SACK gap) and lost
//     retransmissions within one RTT of the next ACK on the path, leaving the RTO for paths that
//     go silent.
//   - Tail-loss probe: a path silent for max(2·SRTT, SRTT + 4·RTTVar) + AckDelay (at least
//     TailProbeMin) after its
//     oldest unacknowledged packet left resends that packet once; the ACK it draws lets loss by
//     send time repair the rest. (A slow connection spread over many paths may have a single
//     packet on a path, whose loss no SACK gap reveals.)
//   - RTO (golden/window, checked every TimerScan): the oldest unacknowledged packet of the path
//     is resent; repeated unmarked timeouts make the path suspect, then failed. On failure every
//     unacknowledged packet of the path moves to healthy paths and the path's entropy is
//     re-drawn; when its probe interval ends, the path restarts its PSN sequence with a packet
//     flagged FlagPathInit.
//
// # Receiving
//
// A data packet is classified by golden/sack.Receiver on its (connection, path); a new packet is
// placed by golden/placement straight into host memory (no reorder buffer). ACKs are scheduled by
// golden/acker (the rules the receive pipeline's RTL implements) under the configured policy, and a path's packets the policy leaves unacknowledged are acknowledged
// AckDelay later at the latest (a delayed ACK). An ACK carries the path's cumulative PSN, its SACK bitmap, the CE marks seen since
// the path's previous ACK, the timestamp of the triggering packet, and the sender's fair share
// of this receiver's link rate (rate hint): link rate divided among the connections that sent
// data here within HintWindow. A newcomer's first ACK (a connection that starts sending here) is
// held until no other newcomer has arrived for ack_policy.gather_ns (2 µs, at most max_gather_ns = 25 µs after the
// first), so that every sender of an incast is told the share of all of them; the held ACK's
// echo is advanced by the hold, keeping it out of the RTT sample. An ANNOUNCE makes its connection
// a newcomer when it arrives, ahead of the connection's first data packet, and is answered in the
// same window (announce.go). Completions leave placement
// in stream order; each completed
// message is read back from host memory and verified byte for byte (golden/traffic).
//
// Everything is a function of the configuration, the topology and the seeds.
package transport

import (
	"fmt"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// Config configures every NIC of a run.
type Config struct {
	// NIC is the datapath configuration (paths, SACK width, PSN width, window, mtu, ACK policy,
	// streams, posted receives, UDP port, seed). Its connections field is overridden with
	// Hosts−1 (one entry per peer), and memory_regions with at least that.
	NIC config.Config
	// RateHints turns the receiver's fair-share rate hint on (false: every ACK says "no limit").
	RateHints bool
	// Announce: a connection sends an ANNOUNCE ahead of its first data packet (announce.go). A
	// receiver with hints answers every ANNOUNCE it gets, whatever its own Announce says.
	Announce bool
	// HintWindow is how recently a connection must have sent data to count as active for the
	// rate hint.
	HintWindow fabric.Time
	// TimerScan is the period of the RTO and hint-activity check.
	TimerScan fabric.Time
	// AckDelay bounds how long a receiver holds an ACK the policy did not make due yet (a
	// delayed ACK): a path's tail packets are acknowledged within it, not by the sender's RTO.
	AckDelay fabric.Time
	// PortQueue is how many data packets a NIC keeps ready per port.
	PortQueue int
	// ECN marks data packets ECT(0), so switches may mark them.
	ECN bool
	// RepostDelay is how long the application takes to repost a receive after a completion (0:
	// at once). A sender starts a message once the one posted_receives_per_stream before it is
	// acknowledged, so with a delay a SEND may find no receive: the receiver drops it with a
	// receiver-not-ready NAK and the sender resends it RNR delay later.
	RepostDelay fabric.Time
}

// DefaultConfig is the default NIC configuration with hints on, a 100 µs hint window (longer
// than the packet spacing of a 1/64 share of 100 Gb/s, 21 µs, so that paced senders stay
// counted), a 5 µs timer scan and two ready packets per port.
func DefaultConfig() Config {
	return ConfigFor(config.Default())
}

// ConfigFor is the transport configuration of NIC configuration c: the receive side's timers
// and rate hint come from its ack_policy and rate_hint sections (the values the RTL is
// generated with), two ready packets per port, ECN on.
func ConfigFor(c config.Config) Config {
	return Config{NIC: c, RateHints: c.RateHint.Enabled, Announce: c.RateHint.Announce, HintWindow: fabric.Time(c.RateHint.WindowNS) * fabric.Nanosecond,
		TimerScan: fabric.Time(c.RateHint.ScanNS) * fabric.Nanosecond, AckDelay: fabric.Time(c.AckPolicy.DelayNS) * fabric.Nanosecond,
		PortQueue: 2, ECN: true}
}

// Hook lets a test corrupt a DMA write before it reaches host memory (to prove the byte-for-byte
// check catches a placement bug). nil in every real run.
type Hook func(host int, w *placement.DMAWrite)

// Network is every MetaRoCE NIC of a run.
type Network struct {
	cfg    Config
	net    *fabric.Network
	ledger *traffic.Ledger
	nics   []*NIC
	wprm   wire.Params
	sprm   sack.Params
	winPrm window.Params
	plPrm  placement.Params
	slot   uint64 // bytes reserved per message buffer
	// CorruptDMA, when set, sees every DMA write first (tests only).
	CorruptDMA Hook
}

// New creates one NIC per host of net and attaches them.
func New(net *fabric.Network, ledger *traffic.Ledger, cfg Config) (*Network, error) {
	if cfg.TimerScan <= 0 || cfg.HintWindow <= 0 || cfg.AckDelay <= 0 || cfg.PortQueue < 1 {
		return nil, fmt.Errorf("transport: timer scan %v, hint window %v, ACK delay %v and port queue %d must be positive",
			cfg.TimerScan, cfg.HintWindow, cfg.AckDelay, cfg.PortQueue)
	}
	c := cfg.NIC
	c.Connections = max(net.Hosts()-1, 1)
	c.MemoryRegions = max(c.MemoryRegions, c.Connections)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("transport: NIC configuration for %d hosts: %w", net.Hosts(), err)
	}
	cfg.NIC = c
	n := &Network{cfg: cfg, net: net, ledger: ledger, wprm: wire.ParamsFrom(c), sprm: sack.ParamsFrom(c),
		winPrm: window.ParamsFrom(c), plPrm: placement.ParamsFrom(c)}
	if err := n.plPrm.Validate(); err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	n.slot = uint64(n.plPrm.MaxMsgLen()+placement.PageSize-1) / placement.PageSize * placement.PageSize
	for h := 0; h < net.Hosts(); h++ {
		nic, err := newNIC(n, h)
		if err != nil {
			return nil, err
		}
		n.nics = append(n.nics, nic)
		net.Attach(h, nic)
	}
	return n, nil
}

// Hosts returns the NICs as traffic.Hosts.
func (n *Network) Hosts() []traffic.Host {
	out := make([]traffic.Host, len(n.nics))
	for i, nic := range n.nics {
		out[i] = nic
	}
	return out
}

// NIC returns host h's NIC.
func (n *Network) NIC(h int) *NIC { return n.nics[h] }

// MaxMessage is the longest message a connection carries (placement's MaxMsgLen).
func (n *Network) MaxMessage() uint32 { return n.plPrm.MaxMsgLen() }

// Config is the resolved configuration.
func (n *Network) Config() Config { return n.cfg }

// connIndex is host h's connection-table index of peer p.
func ConnIndex(h, p int) int {
	if p < h {
		return p
	}
	return p - 1
}

// peerOf is the peer host of host h's connection index i.
func peerOf(h, i int) int {
	if i < h {
		return i
	}
	return i + 1
}

// Addresses. Each connection has one memory region at the receiver for WRITEs and one buffer
// area for SENDs; a message's bytes go to slot (stream, MSN mod depth) of the area its opcode
// uses. A slot is reused only after its previous message was acknowledged in full (the sender's
// per-stream credit), and so verified. A sender reads a message from its send buffer (work.go,
// from localBase), which holds traffic's bytes of (message, offset).
const (
	writeBase = uint64(1) << 40
	sendBase  = uint64(2) << 40
	localBase = uint64(3) << 40
)

func (n *Network) areaSize() uint64 { return n.ringArea(n.plPrm.Depth) }

func (n *Network) slotAddr(base uint64, conn, stream int, msn uint32) uint64 {
	return n.ringSlot(base, n.plPrm.Depth, conn, stream, msn)
}

// ringArea is the bytes of one connection's area of buffer rings, depth buffers per stream.
func (n *Network) ringArea(depth int) uint64 { return uint64(n.plPrm.Streams*depth) * n.slot }

// ringSlot is the buffer of the k-th message of (conn, stream) in an area of rings of depth
// buffers per stream from base: buffer k mod depth of the stream's ring.
func (n *Network) ringSlot(base uint64, depth, conn, stream int, k uint32) uint64 {
	return base + uint64(conn)*n.ringArea(depth) + uint64(stream*depth+int(k%uint32(depth)))*n.slot
}
