package fabric

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// blaster sends count packets of size bytes to dst, one source port per packet from ports.
type blaster struct {
	net      *Network
	host     int
	dst      int
	count    int
	bytes    int
	ports    []uint16
	ecn      uint8
	sent     int
	got      []*Packet
	gotAt    []Time
	perPlane bool
	control  bool // every packet in the control class
	sentAt   map[int]Time
}

func (b *blaster) Pull(now Time, port int) *Packet {
	if b.sent >= b.count || (!b.perPlane && port != 0) {
		return nil
	}
	p := &Packet{Dst: b.dst, SrcPort: b.ports[b.sent%len(b.ports)], DstPort: 4792, Proto: 17,
		Bytes: b.bytes, ECN: b.ecn, Control: b.control, Payload: b.sent}
	if b.sentAt != nil {
		b.sentAt[b.sent] = now
	}
	b.sent++
	return p
}

func (b *blaster) Receive(now Time, port int, p *Packet) {
	b.got = append(b.got, p)
	b.gotAt = append(b.gotAt, now)
}

func smallTopo() Topology {
	t := DefaultTopology()
	t.Hosts, t.HostsPerLeaf, t.Spines, t.Jitter = 8, 4, 2, 0
	return t
}

func setup(t *testing.T, topo Topology) (*Sim, *Network, []*blaster) {
	t.Helper()
	sim := NewSim()
	n, err := Build(sim, topo)
	require.NoError(t, err)
	bs := make([]*blaster, topo.Hosts)
	for h := range bs {
		bs[h] = &blaster{net: n, host: h, ports: []uint16{1000}, bytes: 1000}
		n.Attach(h, bs[h])
	}
	return sim, n, bs
}

func TestLatencyIsSerializationPlusPropagation(t *testing.T) {
	sim, n, bs := setup(t, smallTopo())
	bs[0].dst, bs[0].count = 5, 1 // another leaf: host-leaf-spine-leaf-host, 4 links
	n.Kick(0, 0)
	sim.Run(Second)
	require.Len(t, bs[5].got, 1)
	ser := Time(float64((1000+WireOverhead)*8) * 10) // 100 Gb/s: 10 ps per bit
	require.Equal(t, 4*ser+4*Microsecond, bs[5].gotAt[0])
	require.Equal(t, uint64(1), n.Stats().Delivered)
}

func TestBackToBackFramesAreSpacedBySerialization(t *testing.T) {
	sim, n, bs := setup(t, smallTopo())
	bs[0].dst, bs[0].count = 1, 10 // same leaf
	n.Kick(0, 0)
	sim.Run(Second)
	require.Len(t, bs[1].got, 10)
	ser := Time(float64((1000+WireOverhead)*8) * 10)
	for i := 1; i < 10; i++ {
		require.Equal(t, ser, bs[1].gotAt[i]-bs[1].gotAt[i-1], "frame %d", i)
		require.Equal(t, i, bs[1].got[i].Payload)
	}
}

func TestECMPSpreadsBySourcePort(t *testing.T) {
	topo := smallTopo()
	topo.Spines = 4
	sim, n, bs := setup(t, topo)
	bs[0].dst, bs[0].count = 5, 4000
	for sp := 0; sp < 64; sp++ {
		bs[0].ports = append(bs[0].ports, uint16(49152+sp))
	}
	bs[0].ports = bs[0].ports[1:]
	n.Kick(0, 0)
	sim.Run(Second)
	require.Len(t, bs[5].got, 4000)
	used := 0
	for _, sw := range n.switches {
		if sw.leaf {
			continue
		}
		var tx uint64
		for _, p := range sw.ports {
			tx += p.Stats.TxPackets
		}
		if tx > 0 {
			used++
			require.Greater(t, tx, uint64(400), "%s carried too little of 4000 packets over 64 entropies", sw.name)
		}
	}
	require.Equal(t, 4, used)

	// One source port is one route: every packet crosses the same spine.
	sim2, n2, bs2 := setup(t, topo)
	bs2[0].dst, bs2[0].count = 5, 100
	n2.Kick(0, 0)
	sim2.Run(Second)
	spinesUsed := 0
	for _, sw := range n2.switches {
		if !sw.leaf && sw.ports[0].Stats.TxPackets+sw.ports[1].Stats.TxPackets > 0 {
			spinesUsed++
		}
	}
	require.Equal(t, 1, spinesUsed)
}

func TestRandomLossRate(t *testing.T) {
	for _, p := range []float64{0, 0.01, 0.1} {
		sim, n, bs := setup(t, smallTopo())
		n.SetLinkLoss(p)
		bs[0].dst, bs[0].count = 5, 20000
		n.Kick(0, 0)
		sim.Run(Second)
		lost := 20000 - len(bs[5].got)
		require.Equal(t, uint64(lost), n.Stats().LossDrops)
		require.InDelta(t, p*20000, float64(lost), 1+4*math.Sqrt(20000*p*(1-p)), "loss %g", p) // 4 sigma
	}
}

func TestRandomMarkRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		ecn  uint8
		p    float64
	}{
		{"ect0 1%", ECT0, 0.01},
		{"ect1 20%", ECT1, 0.2},
		{"not ECN-capable", 0, 0.5},
		{"off", ECT0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, n, bs := setup(t, smallTopo())
			n.SetLinkMark(tc.p)
			bs[0].dst, bs[0].count, bs[0].ecn = 5, 20000, tc.ecn
			n.Kick(0, 0)
			sim.Run(Second)
			require.Len(t, bs[5].got, 20000)
			marked := 0
			for _, p := range bs[5].got {
				if p.ECN == CE {
					marked++
				}
			}
			require.Equal(t, uint64(marked), n.Stats().Marks)
			want := tc.p
			if tc.ecn == 0 {
				want = 0
			}
			require.InDelta(t, want*20000, float64(marked), 1+4*math.Sqrt(20000*want*(1-want)), "mark %g", tc.p) // 4 sigma
		})
	}
}

func TestIncastFillsTheDownlinkMarksAndTailDrops(t *testing.T) {
	topo := smallTopo()
	topo.BufferBytes = 200_000
	topo.RED = RED{KminBytes: 20_000, KmaxBytes: 100_000, Pmax: 0.5}
	sim, n, bs := setup(t, topo)
	for h := 1; h < 8; h++ {
		bs[h].dst, bs[h].count, bs[h].bytes, bs[h].ecn = 0, 500, 4000, ECT0
		bs[h].ports = []uint16{uint16(2000 + h)}
		n.Kick(h, 0)
	}
	sim.Run(Second)
	st := n.Stats()
	down := n.DownlinkTo(0, 0)
	require.Greater(t, down.Stats.Marks, uint64(0))
	require.Greater(t, down.Stats.TailDrops, uint64(0))
	require.LessOrEqual(t, down.Stats.MaxQueueBytes, 200_000)
	require.Equal(t, uint64(7*500), uint64(len(bs[0].got))+st.TailDrops)
	marked := 0
	for _, p := range bs[0].got {
		if p.ECN == CE {
			marked++
		}
	}
	require.Equal(t, int(st.Marks), marked)
}

func TestSpineFailureBlackholesUntilReroute(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reroute  Time
		wantLoss bool
	}{{"never", -1, true}, {"after 10us", 10 * Microsecond, true}} {
		t.Run(tc.name, func(t *testing.T) {
			topo := smallTopo()
			sim, n, bs := setup(t, topo)
			n.RerouteDelay = tc.reroute
			bs[0].dst, bs[0].count = 5, 20000
			for sp := 0; sp < 32; sp++ {
				bs[0].ports = append(bs[0].ports, uint16(49152+sp))
			}
			require.NoError(t, n.FailSwitch("p0.spine0", 50*Microsecond))
			require.Error(t, n.FailSwitch("nope", 0))
			n.Kick(0, 0)
			sim.Run(Second)
			got := len(bs[5].got)
			require.Less(t, got, 20000)
			if tc.reroute < 0 {
				// About half the entropies hash onto the dead spine for the rest of the run.
				require.InDelta(t, 0.5, float64(20000-got)/20000, 0.3)
			} else {
				require.Equal(t, 1, n.Reroutes)
				// Only the frames of the first 10 us after the failure are lost.
				require.Less(t, 20000-got, 300)
			}
		})
	}
}

func TestPlaneFailureLeavesOtherPlanes(t *testing.T) {
	topo := smallTopo()
	topo.Planes = 2
	sim, n, bs := setup(t, topo)
	bs[0].dst, bs[0].count, bs[0].perPlane = 5, 2000, true
	require.NoError(t, n.FailPlane(1, 0))
	require.Error(t, n.FailPlane(2, 0))
	n.Kick(0, 0)
	n.Kick(0, 1)
	sim.Run(Second)
	for _, p := range bs[5].got {
		require.Equal(t, 0, p.Plane)
	}
	require.Greater(t, len(bs[5].got), 900)
}

func TestBackgroundLoadIsConsumedAndCompetes(t *testing.T) {
	sim, n, _ := setup(t, smallTopo())
	require.NoError(t, n.AddBackground(Background{Src: 1, Dst: 6, Gbps: 50, Bytes: 1500, Start: 0, Stop: 100 * Microsecond}))
	require.Error(t, n.AddBackground(Background{Src: 1, Dst: 60, Gbps: 50, Bytes: 1500, Stop: 1}))
	sim.Run(Second)
	st := n.Stats()
	require.InDelta(t, 100e-6*50e9/(1520*8), float64(st.BackgroundSent), 2)
	require.Equal(t, st.BackgroundSent, st.Background)
	require.Zero(t, st.Delivered)
}

func TestJitterKeepsLinksFIFO(t *testing.T) {
	topo := smallTopo()
	topo.Jitter = 500 * Nanosecond // more than a 1000-byte frame's 82 ns: would reorder without FIFO
	sim, n, bs := setup(t, topo)
	bs[0].dst, bs[0].count = 5, 2000
	n.Kick(0, 0)
	sim.Run(Second)
	require.Len(t, bs[5].got, 2000)
	spread := map[Time]bool{}
	for i, p := range bs[5].got {
		require.Equal(t, i, p.Payload, "frames of one 5-tuple arrive in order")
		if i > 0 {
			spread[bs[5].gotAt[i]-bs[5].gotAt[i-1]] = true
		}
	}
	require.Greater(t, len(spread), 100, "jitter varies the spacing")
}

func TestDeterministic(t *testing.T) {
	run := func() []Time {
		topo := smallTopo()
		topo.Jitter = 30 * Nanosecond
		sim, n, bs := setup(t, topo)
		n.SetLinkLoss(0.05)
		for h := 1; h < 8; h++ {
			bs[h].dst, bs[h].count, bs[h].ecn = 0, 300, ECT0
			bs[h].ports = []uint16{uint16(h), uint16(h + 100)}
			n.Kick(h, 0)
		}
		sim.Run(Second)
		return bs[0].gotAt
	}
	require.Equal(t, run(), run())
}

func TestTopologyValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Topology)
	}{
		{"hosts", func(t *Topology) { t.Hosts = 1 }},
		{"planes", func(t *Topology) { t.Planes = 0 }},
		{"spines", func(t *Topology) { t.Spines = 0 }},
		{"rate", func(t *Topology) { t.HostLinkGbps = 0 }},
		{"red", func(t *Topology) { t.RED.Pmax = 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := DefaultTopology()
			tc.edit(&topo)
			_, err := Build(NewSim(), topo)
			require.Error(t, err)
		})
	}
	one := DefaultTopology()
	one.Hosts, one.HostsPerLeaf, one.Spines = 4, 4, 0
	_, err := Build(NewSim(), one)
	require.NoError(t, err, "a single switch needs no spines")
}

func BenchmarkFabricEvents(b *testing.B) {
	topo := DefaultTopology()
	topo.Hosts, topo.HostsPerLeaf = 64, 16
	sim := NewSim()
	n, err := Build(sim, topo)
	require.NoError(b, err)
	bs := make([]*blaster, 64)
	for h := range bs {
		bs[h] = &blaster{net: n, host: h, dst: (h + 17) % 64, count: 1 << 62, bytes: 4096, ports: []uint16{uint16(h), uint16(h + 64), uint16(h + 128)}}
		n.Attach(h, bs[h])
	}
	for h := range bs {
		n.Kick(h, 0)
	}
	b.ResetTimer()
	start := sim.Events()
	for sim.Events()-start < uint64(b.N) {
		sim.Run(sim.Now() + 10*Microsecond)
	}
	b.ReportMetric(float64(sim.Events()-start)/b.Elapsed().Seconds(), "events/s")
}

// TestControlClassOvertakesTheIncastQueue: three senders fill host 0's downlink with data; a
// fourth, behind a spine, sends small control packets to host 0. In the control class they wait
// at most for the data frame being serialized at each hop; without it (ControlBufferBytes 0)
// they queue behind the incast. A control queue that overflows drops control packets only.
func TestControlClassOvertakesTheIncastQueue(t *testing.T) {
	worst := func(ctrlBuf, ctrlSenders int) (Time, Stats, int) {
		topo := smallTopo()
		topo.ControlBufferBytes = ctrlBuf
		sim, n, bs := setup(t, topo)
		for h := 1; h < 4; h++ {
			bs[h].dst, bs[h].count, bs[h].bytes = 0, 100, 4000
			bs[h].ports = []uint16{uint16(2000 + h)}
			n.Kick(h, 0)
		}
		for h := 4; h < 4+ctrlSenders; h++ {
			bs[h].dst, bs[h].count, bs[h].bytes, bs[h].control = 0, 50, 80, true
			bs[h].ports = []uint16{uint16(3000 + h)}
			bs[h].sentAt = map[int]Time{}
		}
		// The control senders start once the queue has built up.
		sim.At(50*Microsecond, func() {
			for h := 4; h < 4+ctrlSenders; h++ {
				n.Kick(h, 0)
			}
		})
		sim.Run(Second)
		var worst Time
		ctrl := 0
		for i, p := range bs[0].got {
			if p.Control {
				ctrl++
				worst = max(worst, bs[0].gotAt[i]-bs[p.Src].sentAt[p.Payload.(int)])
			}
		}
		return worst, n.Stats(), ctrl
	}
	// Unloaded: 4 links and 4 serializations of 80+20 bytes at 100 Gb/s; a data frame (4000+20
	// bytes) may be in serialization at each of the 3 switch hops.
	unloaded := 4*Microsecond + 4*FrameTime(80, 100)
	prio, st, got := worst(64<<10, 1)
	require.Equal(t, 50, got)
	require.LessOrEqual(t, prio, unloaded+3*FrameTime(4000, 100), "control class: %v", prio)
	require.Greater(t, st.MaxQueueBytes, 100_000, "the data queue did build up")
	require.Zero(t, st.ControlTailDrops)
	shared, _, _ := worst(0, 1)
	require.Greater(t, shared, 5*prio, "without the class control waits behind the incast queue")
	// Four control senders into a control queue of 1000 bytes: some control packets are
	// dropped there, no data packet is.
	_, st, got = worst(1000, 4)
	require.Greater(t, st.ControlTailDrops, uint64(0))
	require.Equal(t, st.TailDrops, st.ControlTailDrops)
	require.Equal(t, uint64(200), uint64(got)+st.ControlTailDrops)
	require.LessOrEqual(t, st.MaxControlBytes, 1000)
}
