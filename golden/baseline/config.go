package baseline

import (
	"errors"
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

// Header sizes of a RoCEv2 frame in bytes (IBTA RoCEv2 annex over Ethernet II, IPv4, UDP).
const (
	EthHeaderBytes  = wire.EthHeaderLen  // destination, source, EtherType (no VLAN tag)
	IPv4HeaderBytes = wire.IPv4HeaderLen // no options
	UDPHeaderBytes  = wire.UDPHeaderLen
	BTHBytes        = 12 // base transport header (RoCEv2's, not MetaRoCE's)
	RETHBytes       = 16 // RDMA extended transport header: VA 64, R_Key 32, DMA length 32
	AETHBytes       = 4  // ACK extended transport header: syndrome 8, MSN 24
	CNPPadBytes     = 16 // a CNP carries 16 reserved bytes after its BTH
	ICRCBytes       = wire.ICRCLen
	FCSBytes        = fabric.FCSBytes

	// PacketOverhead is every data packet's cost beyond its payload (RETH not included).
	PacketOverhead = EthHeaderBytes + IPv4HeaderBytes + UDPHeaderBytes + BTHBytes + ICRCBytes + FCSBytes
	// AckBytes is the frame length of an ACK or NAK (BTH + AETH, no payload).
	AckBytes = PacketOverhead + AETHBytes
	// CNPBytes is the frame length of a congestion notification packet.
	CNPBytes = PacketOverhead + CNPPadBytes

	// UDPPort is RoCEv2's UDP destination port.
	UDPPort = 4791
	// MaxMessageBytes is the longest message (IBTA: 2^31 bytes); Submit rejects longer ones.
	MaxMessageBytes = 1 << 31
	// PSNBits is the width of the BTH PSN.
	PSNBits = 24
	// MaxOutstanding is the most packets a requester may have unacknowledged: half the PSN
	// space, so that the responder can tell a duplicate from a packet ahead of it.
	MaxOutstanding = 1 << (PSNBits - 1)
)

// LocalAckTimeout is InfiniBand's local ACK timeout for a QP's timeout exponent:
// 4.096 µs × 2^exp (exp 1..31; exp 0 means "infinite" in the spec and is not modelled).
func LocalAckTimeout(exp int) (fabric.Time, error) {
	if exp < 1 || exp > 31 {
		return 0, fmt.Errorf("baseline: local ACK timeout exponent %d out of range 1..31", exp)
	}
	return 4096 * fabric.Nanosecond << exp, nil
}

// DefaultTimeoutExp is the timeout exponent of the default RTO: 4.096 µs × 2^8 ≈ 1.05 ms, a
// tuned value (deployed settings are often much larger, e.g. 14, about 67 ms).
const DefaultTimeoutExp = 8

// DCQCN are the congestion-control parameters (Zhu et al., SIGCOMM 2015, with the constants
// of the common ns-3 HPCC setup; see docs/baseline.md for each source).
type DCQCN struct {
	// Enabled turns the reaction point (rate limiter) and the notification point (CNPs) on.
	Enabled bool
	// G is the gain of the alpha estimate (default 1/256).
	G float64
	// AIGbps and HAIGbps are the additive and hyper increase steps (50 and 100 Mb/s).
	AIGbps, HAIGbps float64
	// MinGbps is the lowest rate a decrease may reach (100 Mb/s).
	MinGbps float64
	// RateTimer is the rate-increase timer period (900 µs).
	RateTimer fabric.Time
	// ByteCounter is the byte-counter increase period in bytes sent (10 MB); 0 disables the
	// byte counter, and the timer alone then steps the stages.
	ByteCounter int64
	// F is the number of fast-recovery stages (5).
	F int
	// DecreaseInterval is the shortest time between two rate decreases of a QP (4 µs).
	DecreaseInterval fabric.Time
	// AlphaTimer is the period after which alpha decays by (1-G) when no CNP arrived (55 µs).
	AlphaTimer fabric.Time
	// CNPInterval is the notification point's shortest gap between two CNPs of a QP (50 µs).
	CNPInterval fabric.Time
}

// Config configures every RoCEv2 NIC of a run.
type Config struct {
	// MTU is the payload bytes per data packet (4096, RoCE's largest path MTU).
	MTU int
	// RTO is the local ACK timeout: a requester with unacknowledged packets and no progress
	// for RTO goes back to the oldest one (default LocalAckTimeout(DefaultTimeoutExp)).
	RTO fabric.Time
	// RetryLimit is the QP's retry count (IB retry_cnt, 0..7; default 7): after RetryLimit
	// retries in a row without progress the next failure moves the QP to the error state.
	RetryLimit int
	// AckEvery is the responder's ACK coalescing: an ACK after every AckEvery in-order packets,
	// and always on a packet with AckReq (the last packet of every message). Default 8.
	AckEvery int
	// AckDelay bounds the coalescing in time: an in-order packet arriving AckDelay or more
	// after the oldest unacknowledged one is ACKed at once, so a slow QP (paced far below line
	// rate) is not left without ACKs for longer than the RTO. Default 10 µs.
	AckDelay fabric.Time
	// SprayPaths is the number of UDP source ports a QP's data packets rotate over, one per
	// packet. 1 (default) is RoCE as deployed: one fixed ECMP route per QP.
	SprayPaths int
	// StartPSN is every QP's initial PSN (24-bit; default 0).
	StartPSN uint32
	// LineGbps is the rate DCQCN starts from and never exceeds; 0 (default) takes each NIC
	// port's host link rate from the fabric.
	LineGbps float64
	// Seed chooses each QP's UDP source ports and plane.
	Seed uint64
	// DCQCN is the rate control.
	DCQCN DCQCN
}

// DefaultConfig is RoCEv2 as deployed, with the defaults documented on each field.
func DefaultConfig() Config {
	rto, _ := LocalAckTimeout(DefaultTimeoutExp)
	return Config{
		MTU: 4096, RTO: rto, RetryLimit: 7, AckEvery: 8, AckDelay: 10 * fabric.Microsecond, SprayPaths: 1, Seed: 1,
		DCQCN: DCQCN{
			Enabled: true, G: 1.0 / 256, AIGbps: 0.05, HAIGbps: 0.1, MinGbps: 0.1,
			RateTimer: 900 * fabric.Microsecond, ByteCounter: 10_000_000, F: 5,
			DecreaseInterval: 4 * fabric.Microsecond, AlphaTimer: 55 * fabric.Microsecond,
			CNPInterval: 50 * fabric.Microsecond,
		},
	}
}

// Validate checks a configuration; the error names every bad field, its value and the range.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.MTU < 1 || c.MTU > 1<<20 {
		bad("mtu %d: 1..1048576 bytes", c.MTU)
	}
	if c.RTO <= 0 {
		bad("rto %v: must be positive", c.RTO)
	}
	if c.RetryLimit < 0 || c.RetryLimit > 7 {
		bad("retry_limit %d: 0..7", c.RetryLimit)
	}
	if c.AckEvery < 1 {
		bad("ack_every %d: at least 1", c.AckEvery)
	}
	if c.AckDelay <= 0 {
		bad("ack_delay %v: must be positive", c.AckDelay)
	}
	if c.SprayPaths < 1 || c.SprayPaths > 1<<14 {
		bad("spray_paths %d: 1..16384", c.SprayPaths)
	}
	if c.StartPSN >= 1<<PSNBits {
		bad("start_psn %d: below 2^24", c.StartPSN)
	}
	if c.LineGbps < 0 {
		bad("line_gbps %g: 0 (the host link's rate) or positive", c.LineGbps)
	}
	if d := c.DCQCN; d.Enabled {
		if d.G <= 0 || d.G > 1 {
			bad("dcqcn.g %g: in (0, 1]", d.G)
		}
		if d.AIGbps <= 0 || d.HAIGbps <= 0 || d.MinGbps <= 0 {
			bad("dcqcn rates ai %g, hai %g, min %g Gb/s: must be positive", d.AIGbps, d.HAIGbps, d.MinGbps)
		}
		if d.RateTimer <= 0 || d.DecreaseInterval < 0 || d.AlphaTimer <= 0 || d.CNPInterval < 0 {
			bad("dcqcn timers rate %v, decrease %v, alpha %v, cnp %v: rate and alpha timers positive, intervals not negative",
				d.RateTimer, d.DecreaseInterval, d.AlphaTimer, d.CNPInterval)
		}
		if d.ByteCounter < 0 {
			bad("dcqcn.byte_counter %d: 0 (off) or positive", d.ByteCounter)
		}
		if d.F < 1 {
			bad("dcqcn.f %d: at least 1", d.F)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("baseline config: %w", errors.Join(errs...))
	}
	return nil
}
