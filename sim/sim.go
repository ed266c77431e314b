// Package sim runs the protocol experiments of `mrgen sim`: MetaRoCE (golden/transport) and the
// RoCEv2 baseline (golden/baseline) on the same golden/fabric network with the same traffic and
// seed, so that every figure is a ratio from one run. Every message of every run is verified byte
// for byte at its receiver (golden/traffic); a run in which any message is not delivered and
// verified reports it.
package sim

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/transport"
	"github.com/mrgen/mrgen/golden/wire"
)

// Protocol names.
const (
	MetaRoCE = "metaroce"
	RoCEv2   = "rocev2"
)

// Figures are one protocol's measurements in one run.
type Figures struct {
	Protocol                string   `json:"protocol"`
	GoodputFraction         float64  `json:"goodput_fraction"`
	GoodputGbps             float64  `json:"goodput_gbps"`
	Retransmissions         uint64   `json:"retransmissions"`
	SpuriousRetransmissions uint64   `json:"spurious_retransmissions"`
	DataPackets             uint64   `json:"data_packets"`
	Messages                uint64   `json:"messages"`
	MessagesVerified        uint64   `json:"messages_verified"`
	BytesVerified           uint64   `json:"bytes_verified"`
	VerifyFailures          uint64   `json:"verify_failures"`
	FirstVerifyFailure      string   `json:"first_verify_failure,omitempty"`
	P99FCTus                float64  `json:"p99_fct_us"`
	ConvergenceRTTs         *float64 `json:"convergence_rtts,omitempty"`
	BaseRTTus               float64  `json:"base_rtt_us,omitempty"` // the RTT unit of convergence_rtts
	// ConvergenceAfterAllUs is convergence counted from the moment the receiver had seen
	// every sender (the last one's first packet through the bottleneck), in base RTTs.
	ConvergenceAfterAll *float64          `json:"convergence_rtts_after_all_arrived,omitempty"`
	JainFairness        *float64          `json:"jain_fairness,omitempty"`
	PeakQueueBytes      int               `json:"peak_queue_bytes"`
	RecoveryUs          *float64          `json:"recovery_us,omitempty"`
	Timeline            []Sample          `json:"timeline,omitempty"`
	FabricDrops         map[string]uint64 `json:"fabric_drops"`
	Counters            map[string]uint64 `json:"counters"`
	// Occupancy is, for MetaRoCE, the most each of the send engine's bounded tables held on
	// any host (golden/sender Occupancy): the evidence behind the default memory sizes.
	Occupancy map[string]uint64 `json:"occupancy,omitempty"`
	// Spread is every key figure over the seeds of the point (this Figures is the first
	// seed's run); TimelineMean the throughput time series' mean and interval per bin.
	Spread          map[string]Summary `json:"spread,omitempty"`
	TimelineMean    []SampleSpread     `json:"timeline_mean,omitempty"`
	Events          uint64             `json:"events"`
	SimMicroseconds float64            `json:"sim_us"`
	WallSeconds     float64            `json:"wall_seconds"`
}

// Sample is one bin of a throughput time series.
type Sample struct {
	TimeUs float64 `json:"t_us"`
	Gbps   float64 `json:"gbps"`
}

// flow is one sender-receiver pair that keeps messages in flight.
type flow struct {
	src, dst int
	live     []*traffic.Message
	stream   int
	op       int
}

// runSpec is one run of one protocol.
type runSpec struct {
	topo        fabric.Topology
	flows       [][2]int
	msgBytes    uint32
	outstanding int
	warmup      fabric.Time
	duration    fabric.Time // traffic is posted until warmup+duration
	drain       fabric.Time // then the run continues until every message is delivered, at most this long
	loss        float64
	nic         config.Config
	hints       bool
	sprayPaths  int // baseline: source ports per QP (1 = as deployed)
	setup       func(n *fabric.Network) error
	binWidth    fabric.Time                                 // throughput timeline bin (0: none)
	sample      func(now fabric.Time, hosts []traffic.Host) // called every sampleEvery
	sampleEvery fabric.Time
}

// newHosts builds a protocol's NICs on a network.
func newHosts(proto string, n *fabric.Network, l *traffic.Ledger, s runSpec) ([]traffic.Host, error) {
	switch proto {
	case MetaRoCE:
		// The receive side's timers, the hint window and ANNOUNCE come from the run's NIC
		// configuration (ack_policy, rate_hint); the scenario says whether hints are on.
		cfg := transport.ConfigFor(s.nic)
		cfg.RateHints = s.hints
		tn, err := transport.New(n, l, cfg)
		if err != nil {
			return nil, err
		}
		return tn.Hosts(), nil
	case RoCEv2:
		return newBaselineHosts(n, l, s)
	}
	return nil, fmt.Errorf("sim: unknown protocol %q", proto)
}

// run executes one protocol on a fresh network.
func run(proto string, s runSpec) (Figures, error) {
	start := time.Now()
	sm := fabric.NewSim()
	n, err := fabric.Build(sm, s.topo)
	if err != nil {
		return Figures{}, err
	}
	n.SetLinkLoss(s.loss)
	l := traffic.NewLedger()
	hosts, err := newHosts(proto, n, l, s)
	if err != nil {
		return Figures{}, err
	}
	if s.setup != nil {
		if err := s.setup(n); err != nil {
			return Figures{}, err
		}
	}
	flows := make([]*flow, len(s.flows))
	for i, f := range s.flows {
		flows[i] = &flow{src: f[0], dst: f[1], stream: i}
	}
	streams := s.nic.StreamsPerConnection
	end := s.warmup + s.duration
	var post func()
	post = func() {
		now := sm.Now()
		for _, f := range flows {
			live := f.live[:0]
			for _, m := range f.live {
				if m.Sent == 0 {
					live = append(live, m)
				}
			}
			f.live = live
			for len(f.live) < s.outstanding {
				op := wire.OpWrite
				if f.op%2 == 1 {
					op = wire.OpSend
				}
				f.op++
				f.stream = (f.stream + 1) % streams
				m := l.Post(now, f.src, f.dst, f.stream, op, s.msgBytes)
				f.live = append(f.live, m)
				hosts[f.src].Submit(now, m)
			}
		}
		if now+2*fabric.Microsecond < end {
			sm.After(2*fabric.Microsecond, post)
		}
	}
	sm.At(0, post)
	// Goodput is measured on the payload bytes placed for the first time in the window; every
	// message is still verified byte for byte when it completes.
	var atWarmup uint64
	sm.At(s.warmup, func() { atWarmup = l.Totals.BytesPlaced })
	var fig Figures
	var atEnd uint64
	// Jain's index is over each flow's bytes placed in the second half of the window.
	perFlowHalf := make([]float64, len(s.flows))
	sm.At(s.warmup+s.duration/2, func() {
		for i, f := range s.flows {
			perFlowHalf[i] = -float64(l.FlowPlaced(f[0], f[1]))
		}
	})
	sm.At(end, func() {
		atEnd = l.Totals.BytesPlaced
		for i, f := range s.flows {
			perFlowHalf[i] += float64(l.FlowPlaced(f[0], f[1]))
		}
	})
	if s.binWidth > 0 {
		var last uint64
		var bin func()
		bin = func() {
			d := l.Totals.BytesPlaced - last
			last = l.Totals.BytesPlaced
			fig.Timeline = append(fig.Timeline, Sample{TimeUs: float64(sm.Now()) / float64(fabric.Microsecond),
				Gbps: float64(d*8) / s.binWidth.Seconds() / 1e9})
			if sm.Now()+s.binWidth <= end {
				sm.After(s.binWidth, bin)
			}
		}
		sm.At(s.binWidth, bin)
	}
	if s.sample != nil {
		var tick func()
		tick = func() {
			s.sample(sm.Now(), hosts)
			if sm.Now()+s.sampleEvery <= end {
				sm.After(s.sampleEvery, tick)
			}
		}
		sm.At(0, tick)
	}
	sm.Run(end)
	// Drain: run until everything posted is delivered (or the drain limit).
	for step := fabric.Time(0); step < s.drain && l.Totals.ReceiverCompleted < l.Totals.Messages; step += 100 * fabric.Microsecond {
		sm.Run(sm.Now() + 100*fabric.Microsecond)
	}
	capacity := 0.0
	for h := 0; h < n.Hosts(); h++ {
		for k := 0; k < n.Planes(); k++ {
			capacity += n.HostPort(h, k).Gbps()
		}
	}
	receivers := map[int]bool{}
	for _, f := range s.flows {
		receivers[f[1]] = true
	}
	// The receivers' link capacity is what all-to-all, ring and incast can fill at most.
	rxCap := capacity / float64(n.Hosts()) * float64(len(receivers))
	gbps := float64((atEnd-atWarmup)*8) / s.duration.Seconds() / 1e9
	tot := l.Totals
	st := n.Stats()
	fig.Protocol = proto
	fig.GoodputGbps = gbps
	fig.GoodputFraction = gbps / rxCap
	fig.Retransmissions, fig.SpuriousRetransmissions, fig.DataPackets = tot.Retransmissions, tot.SpuriousRetransmissions, tot.DataPackets
	fig.Messages, fig.MessagesVerified, fig.BytesVerified = tot.Messages, tot.ReceiverCompleted, tot.BytesDelivered
	fig.VerifyFailures, fig.FirstVerifyFailure = tot.VerifyFailures, tot.FirstFailure
	fig.P99FCTus = p99FCT(l)
	j := jain(perFlowHalf)
	fig.JainFairness = &j
	fig.PeakQueueBytes = st.MaxQueueBytes
	fig.FabricDrops = map[string]uint64{"random_loss": st.LossDrops, "tail_drop": st.TailDrops, "link_down": st.DownDrops, "no_route": st.NoRouteDrops}
	fig.Counters = map[string]uint64{}
	for _, h := range hosts {
		for k, v := range h.Counters() {
			fig.Counters[k] += v
		}
	}
	if o, ok := transport.PeakOccupancy(hosts); ok {
		fig.Occupancy = o.Named()
	}
	fig.Events = sm.Events()
	fig.SimMicroseconds = float64(sm.Now()) / float64(fabric.Microsecond)
	fig.WallSeconds = time.Since(start).Seconds()
	return fig, nil
}

// p99FCT is the 99th percentile of post-to-verified time over the delivered messages, in µs.
func p99FCT(l *traffic.Ledger) float64 {
	var d []float64
	for _, m := range l.Messages() {
		if m.Received > 0 {
			d = append(d, float64(m.Received-m.Posted)/float64(fabric.Microsecond))
		}
	}
	if len(d) == 0 {
		return 0
	}
	sort.Float64s(d)
	return d[min(len(d)-1, int(math.Ceil(0.99*float64(len(d))))-1)]
}

// jain is Jain's fairness index of xs.
func jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 0
	}
	return s * s / (float64(len(xs)) * s2)
}
