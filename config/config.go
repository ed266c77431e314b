// Package config holds the one configuration struct shared by every hardware description in
// hdl/ and its golden unit in golden/, so that their parameters cannot drift apart. It loads YAML
// strictly (unknown fields are errors), fills defaults, validates every field against its allowed
// range, checks cross-field rules and derives the widths the hardware needs.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Reset styles accepted by ResetStyle.
const (
	ResetSyncHigh = "sync-high" // FPGA style: synchronous, active-high rst
	ResetAsyncLow = "async-low" // ASIC style: asynchronous, active-low rst_n
)

// ACK policies accepted by AckPolicy.Mode.
const (
	AckEveryPacket = "every-packet"      // an ACK is due for every accepted data packet
	AckEveryN      = "every-n"           // due every N accepted packets per path, or on gap/request
	AckOnGap       = "on-gap-or-request" // due only when a gap appears or the sender asked
)

// Config is a MetaRoCE NIC datapath configuration. Field order is the order of
// docs/configuration.md and of `mrgen config show`.
type Config struct {
	// Name identifies the configuration in reports and banners.
	Name string `yaml:"name" json:"name"`
	// DatapathWidth is the AXI-Stream data width in bits: 64, 128, 256 or 512.
	DatapathWidth int `yaml:"datapath_width" json:"datapath_width"`
	// Connections is the number of connections the NIC holds state for.
	Connections int `yaml:"connections" json:"connections"`
	// PathsPerConnection is the number of paths (UDP source ports) per connection.
	PathsPerConnection int `yaml:"paths_per_connection" json:"paths_per_connection"`
	// SackWidth is the per-path SACK bitmap width in bits (power of two, 64..1024).
	SackWidth int `yaml:"sack_width" json:"sack_width"`
	// PSNWidth is the per-path packet sequence number width in bits (16..32).
	PSNWidth int `yaml:"psn_width" json:"psn_width"`
	// StreamsPerConnection is the number of ordered message streams per connection.
	StreamsPerConnection int `yaml:"streams_per_connection" json:"streams_per_connection"`
	// MemoryRegions is the number of entries of the memory-region (rkey) table.
	MemoryRegions int `yaml:"memory_regions" json:"memory_regions"`
	// PostedReceivesPerStream is the depth of each stream's posted-receive queue.
	PostedReceivesPerStream int `yaml:"posted_receives_per_stream" json:"posted_receives_per_stream"`
	// MTU is the largest transport payload in bytes.
	MTU int `yaml:"mtu" json:"mtu"`
	// UDPDestPort is the UDP destination port that identifies MetaRoCE traffic.
	UDPDestPort int `yaml:"udp_dest_port" json:"udp_dest_port"`
	// Ports is the number of NIC ports (one per fabric plane): path p's packets leave on port
	// p mod Ports, its control frames on the port its data came in on.
	Ports int `yaml:"ports" json:"ports"`
	// ResetStyle is sync-high (FPGA) or async-low (ASIC).
	ResetStyle string `yaml:"reset_style" json:"reset_style"`
	// TargetClockMHz is the clock FPGA synthesis and place-and-route aim at.
	TargetClockMHz int `yaml:"target_clock_mhz" json:"target_clock_mhz"`
	// Timing holds the ASIC timing constraints of the generated SDC (mrgen qor, the handoff).
	Timing Timing `yaml:"timing" json:"timing"`
	// AckPolicy says when the receiver owes the sender an ACK.
	AckPolicy AckPolicy `yaml:"ack_policy" json:"ack_policy"`
	// Pipeline holds micro-architecture options that trade latency for Fmax.
	Pipeline Pipeline `yaml:"pipeline" json:"pipeline"`
	// RateHint configures the receiver's fair-share rate hint (golden/acker and hdl/acker).
	RateHint RateHint `yaml:"rate_hint" json:"rate_hint"`
	// Window holds the sender's per-path and per-connection window, RTT, RTO and path-failure
	// parameters (golden/window and hdl/window).
	Window Window `yaml:"window" json:"window"`
	// Sender sizes the send engine's queues (golden/sender and hdl/sender).
	Sender Sender `yaml:"sender" json:"sender"`
	// Seed seeds every deterministic pseudo-random choice (entropy LFSRs, stimulus).
	Seed uint64 `yaml:"seed" json:"seed"`
}

// AckPolicy says when an ACK is due.
type AckPolicy struct {
	// Mode is every-packet, every-n or on-gap-or-request.
	Mode string `yaml:"mode" json:"mode"`
	// EveryN is the packet count between ACKs in every-n mode (1..255).
	EveryN int `yaml:"every_n" json:"every_n"`
	// DelayNS bounds how long a receiver holds an ACK the policy did not make due (a delayed
	// ACK), so a path's tail is acknowledged without the sender's timeout.
	DelayNS int `yaml:"delay_ns" json:"delay_ns"`
	// GatherNS is how long a receiver holds newcomers' first ACKs after the latest newcomer
	// (a connection starting to send to it), so that every sender of an incast is told the
	// share of all of them; MaxGatherNS bounds the wait from the first newcomer.
	GatherNS    int `yaml:"gather_ns" json:"gather_ns"`
	MaxGatherNS int `yaml:"max_gather_ns" json:"max_gather_ns"`
}

// RateHint configures the receiver's fair-share rate hint carried in every ACK.
type RateHint struct {
	// Enabled turns the hint on (off: every ACK says "no limit", 0).
	Enabled bool `yaml:"enabled" json:"enabled"`
	// LinkGbps is the receiver's inbound link rate that the hint divides among active senders.
	LinkGbps int `yaml:"link_gbps" json:"link_gbps"`
	// WindowNS: a connection that sent no data for longer stops counting as active.
	WindowNS int `yaml:"window_ns" json:"window_ns"`
	// ScanNS is the period of the activity scan that applies WindowNS.
	ScanNS int `yaml:"scan_ns" json:"scan_ns"`
	// Announce: a connection sends an ANNOUNCE ahead of its first data packet, so that its
	// receiver counts it for the hint and answers it before the data arrives
	// (docs/wire-format.md §10.1). Off, senders never announce; a receiver with the hint on
	// answers every ANNOUNCE it gets either way.
	Announce bool `yaml:"announce" json:"announce"`
}

// DefaultTreeRegisterEvery is pipeline.tree_register_every's default (Pipeline).
const DefaultTreeRegisterEvery = 4

// Pipeline holds micro-architecture options.
type Pipeline struct {
	// TreeRegisterEvery inserts a pipeline register after every N levels of the wide log2 trees
	// that lie outside a block's recurrence (the SACK bitmap alignment rotator); 0 means one
	// register after the whole tree. The default, 4, keeps at most four 2:1 multiplexers per
	// cycle: seven in one cycle (a 128-bit bitmap) ran at 86 MHz on the iCE40 HX8K, under its
	// 100 MHz budget (BENCHMARKS.md, "Timing closure I, session 38"). Trees inside the
	// recurrence (the SACK find-first-zero) are split by the unit itself where its entry II
	// allows (hdl/sack).
	TreeRegisterEvery int `yaml:"tree_register_every" json:"tree_register_every"`
	// SpeculativeSearch has no effect: the SACK receive side's find-first-zero always runs from
	// the packet's slot with its bit forced set, beside the classification (docs/sack.md). The
	// field stays so that configuration files that set it still load.
	SpeculativeSearch bool `yaml:"speculative_search" json:"speculative_search"`
}

// Timing holds the clock and I/O budget of the SDC mrgen generates for ASIC timing (OpenSTA in
// mrgen qor, and the silicon handoff). The FPGA flows keep target_clock_mhz.
type Timing struct {
	// ASICClockMHz is the clock of the SDC's create_clock.
	ASICClockMHz int `yaml:"asic_clock_mhz" json:"asic_clock_mhz"`
	// InputDelayPct is each input's external delay, in percent of the period: the logic before
	// the port in the surrounding design.
	InputDelayPct int `yaml:"input_delay_pct" json:"input_delay_pct"`
	// OutputDelayPct is each output's external delay (the logic after the port), in percent.
	OutputDelayPct int `yaml:"output_delay_pct" json:"output_delay_pct"`
}

// ASICPeriodNS is the SDC clock period in ns.
func (t Timing) ASICPeriodNS() float64 { return 1000.0 / float64(t.ASICClockMHz) }

// DefaultRecordsPerPath is the default R: about five times the most live records any path
// held in the protocol experiments and closed loops (26; docs/sender.md, "Memory sizing"), and
// 512 KiB in flight on one path at a 4 KiB MTU.
const DefaultRecordsPerPath = 128

// Sender sizes the send engine's three request FIFOs, in entries; 0 keeps golden/sender's
// default, a rule of the configuration (docs/sender.md, "Memory sizing"). A full FIFO drops
// the request and counts it: a retransmission or an RNR retry is taken again by loss recovery,
// a moved packet is lost to the sender (its message does not complete).
type Sender struct {
	// RetxDepth is the retransmit FIFO's depth; 0 means two paths' packet records (2·R).
	RetxDepth int `yaml:"retx_depth" json:"retx_depth"`
	// MovedDepth is each connection's moved FIFO's depth; 0 means a connection's packet
	// records (paths_per_connection·R).
	MovedDepth int `yaml:"moved_depth" json:"moved_depth"`
	// RNRRetryDepth is the RNR retry FIFO's depth; 0 means one path's packet records (R).
	RNRRetryDepth int `yaml:"rnr_retry_depth" json:"rnr_retry_depth"`
	// RecordsPerPath is R, the packet records of each (connection, path), a power of two: a
	// connection whose path holds R live records sends no new packet until an ACK or a timer
	// event frees one. R is at most, and 0 means, the smallest power of two ≥ sack_width +
	// max_cwnd, which no path can fill.
	RecordsPerPath int `yaml:"records_per_path" json:"records_per_path"`
}

// Window holds the sender's congestion-window, RTT-estimation, retransmit-timer and
// path-failure parameters. Windows are in packets, times in nanoseconds (the wire's timestamp
// unit). docs/configuration.md gives the defaults' sources.
type Window struct {
	// InitCwnd is a path's initial window in packets; the connection starts at
	// InitCwnd × paths_per_connection (capped at the connection maximum).
	InitCwnd int `yaml:"init_cwnd" json:"init_cwnd"`
	// MinCwnd is the floor of every window in packets (decreases and timeouts stop there).
	MinCwnd int `yaml:"min_cwnd" json:"min_cwnd"`
	// MaxCwnd is a path's largest window in packets; 0 means sack_width. Never above sack_width.
	MaxCwnd int `yaml:"max_cwnd" json:"max_cwnd"`
	// ConnMaxCwnd is the connection window's largest value in packets; 0 means
	// max_cwnd × paths_per_connection.
	ConnMaxCwnd int `yaml:"conn_max_cwnd" json:"conn_max_cwnd"`
	// AIStep is the additive increase, in packets per window's worth of unmarked ACKs (per RTT).
	AIStep int `yaml:"ai_step" json:"ai_step"`
	// MDShift sets a path's multiplicative decrease: cwnd -= cwnd >> md_shift, once per RTT.
	MDShift int `yaml:"md_shift" json:"md_shift"`
	// ConnMDShift is the same for the connection window.
	ConnMDShift int `yaml:"conn_md_shift" json:"conn_md_shift"`
	// SRTTShift is the SRTT EWMA gain as a shift: gain = 2^-srtt_shift (RFC 6298: 3, 1/8).
	SRTTShift int `yaml:"srtt_shift" json:"srtt_shift"`
	// RTTVarShift is the RTTVAR EWMA gain as a shift (RFC 6298: 2, 1/4).
	RTTVarShift int `yaml:"rttvar_shift" json:"rttvar_shift"`
	// RTOMinNS, RTOInitialNS and RTOMaxNS bound the retransmit timeout; the initial value
	// applies before a path's first RTT sample, and backoff doubles up to the maximum.
	RTOMinNS     int `yaml:"rto_min_ns" json:"rto_min_ns"`
	RTOInitialNS int `yaml:"rto_initial_ns" json:"rto_initial_ns"`
	RTOMaxNS     int `yaml:"rto_max_ns" json:"rto_max_ns"`
	// SuspectTimeouts is the count of consecutive unmarked timeouts that makes a path suspect.
	SuspectTimeouts int `yaml:"suspect_timeouts" json:"suspect_timeouts"`
	// FailedTimeouts is the count that makes it failed (entropy re-drawn, packets moved).
	FailedTimeouts int `yaml:"failed_timeouts" json:"failed_timeouts"`
	// ProbeIntervalNS is how long a failed path rests before it is probed again.
	ProbeIntervalNS int `yaml:"probe_interval_ns" json:"probe_interval_ns"`
}

// WindowMaxCwnd is the resolved per-path window maximum (max_cwnd, or sack_width when 0).
func (c Config) WindowMaxCwnd() int {
	if c.Window.MaxCwnd == 0 {
		return c.SackWidth
	}
	return c.Window.MaxCwnd
}

// WindowConnMaxCwnd is the resolved connection window maximum (conn_max_cwnd, or
// max_cwnd × paths_per_connection when 0).
func (c Config) WindowConnMaxCwnd() int {
	if c.Window.ConnMaxCwnd == 0 {
		return c.WindowMaxCwnd() * c.PathsPerConnection
	}
	return c.Window.ConnMaxCwnd
}

// Default returns the default configuration (the one configs/default.yaml spells out).
func Default() Config {
	return Config{
		Name:                    "default",
		DatapathWidth:           64,
		Connections:             4,
		PathsPerConnection:      8,
		SackWidth:               256,
		PSNWidth:                32,
		StreamsPerConnection:    4,
		MemoryRegions:           16,
		PostedReceivesPerStream: 8,
		MTU:                     4096,
		UDPDestPort:             4792,
		Ports:                   1,
		ResetStyle:              ResetSyncHigh,
		TargetClockMHz:          100,
		Timing:                  Timing{ASICClockMHz: 250, InputDelayPct: 20, OutputDelayPct: 20},
		AckPolicy:               AckPolicy{Mode: AckEveryN, EveryN: 4, DelayNS: 2000, GatherNS: 2000, MaxGatherNS: 25_000},
		RateHint:                RateHint{Enabled: true, LinkGbps: 100, WindowNS: 100_000, ScanNS: 5000, Announce: true},
		Pipeline:                Pipeline{TreeRegisterEvery: DefaultTreeRegisterEvery},
		Sender:                  Sender{RecordsPerPath: DefaultRecordsPerPath},
		Window: Window{
			InitCwnd:        16,
			MinCwnd:         1,
			MaxCwnd:         0,
			ConnMaxCwnd:     0,
			AIStep:          1,
			MDShift:         1,
			ConnMDShift:     2,
			SRTTShift:       3,
			RTTVarShift:     2,
			RTOMinNS:        100_000,
			RTOInitialNS:    454_000,
			RTOMaxNS:        1_350_000,
			SuspectTimeouts: 2,
			FailedTimeouts:  4,
			ProbeIntervalNS: 1_000_000,
		},
		Seed: 1,
	}
}

// Hash is a stable sha256 over the resolved configuration, used in banners, manifests and as
// the cache key of Verilated models.
func (c Config) Hash() string {
	b, err := json.Marshal(c)
	if err != nil {
		// Config holds only plain values; Marshal cannot fail on it.
		panic(fmt.Sprintf("config: marshal for hash: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ShortHash is the first 12 hex digits of Hash.
func (c Config) ShortHash() string { return c.Hash()[:12] }
