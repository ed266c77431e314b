package baseline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/wire"
)

// postMix posts, from every host to three others, messages of awkward sizes (empty, one byte,
// around the MTU, several packets), Writes and Sends alternating.
func postMix(e *env) {
	sizes := []uint32{0, 1, 4095, 4096, 4097, 100_000, 300_000}
	hosts := e.net.Hosts()
	for h := 0; h < hosts; h++ {
		for k, off := range []int{1, 3, 5} {
			for i, n := range sizes {
				op := wire.OpWrite
				if (i+k)%2 == 1 {
					op = wire.OpSend
				}
				e.post(h, (h+off)%hosts, op, n)
			}
		}
	}
}

func TestDeliversEveryByteUnderLoss(t *testing.T) {
	for _, loss := range []float64{0, 0.01, 0.05} {
		t.Run(fmt.Sprintf("loss=%g", loss), func(t *testing.T) {
			e := newEnv(t, smallTopo(), DefaultConfig())
			e.net.SetLinkLoss(loss)
			postMix(e)
			e.runToEnd(t, 10*fabric.Second)
			e.requireAllDelivered(t)
			c, tot := e.sum(), e.ledger.Totals
			require.Equal(t, tot.DataPackets, c["data_packets"])
			require.Equal(t, tot.Retransmissions, c["retransmissions"])
			require.LessOrEqual(t, c["naks_received"], c["naks_sent"])
			require.LessOrEqual(t, c["cnps_received"], c["cnps_sent"])
			if loss == 0 {
				// Three senders per receiver still overflow a downlink now and then: every
				// retransmission must follow such a congestion drop.
				drops := e.net.Stats().TailDrops
				t.Logf("no link loss: %d tail drops, %d retransmissions, %d timeouts", drops, c["retransmissions"], c["timeouts"])
				require.Zero(t, e.net.Stats().LossDrops)
				require.True(t, c["retransmissions"] == 0 || drops > 0, "retransmissions with nothing lost")
				return
			}
			require.Positive(t, c["retransmissions"])
			require.Positive(t, c["naks_received"])
			require.Positive(t, c["ooo_dropped"])
			require.Positive(t, tot.SpuriousRetransmissions, "go-back-N resends packets the responder discarded")
			t.Logf("loss %g: %d data packets for %d posted, %d retransmissions (%d spurious), %d NAKs, %d timeouts",
				loss, tot.DataPackets, tot.Messages, tot.Retransmissions, tot.SpuriousRetransmissions, c["naks_sent"], c["timeouts"])
		})
	}
}

// dropper stands in front of a NIC and drops the data packets drop selects.
type dropper struct {
	*NIC
	drop func(d *DataPacket) bool
}

func (d *dropper) Receive(now fabric.Time, port int, p *fabric.Packet) {
	if dp, ok := p.Payload.(*DataPacket); ok && d.drop(dp) {
		return
	}
	d.NIC.Receive(now, port, p)
}

func TestGoBackN(t *testing.T) {
	for _, tc := range []struct {
		name     string
		copies   int // how many copies of packet 100 are lost
		timeouts uint64
	}{
		{"one loss: one NAK, resend from the hole", 1, 0},
		{"lost retransmission: no second NAK, the RTO recovers", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, smallTopo(), DefaultConfig())
			lost := 0
			e.net.Attach(5, &dropper{NIC: e.nics[5], drop: func(d *DataPacket) bool {
				if d.Index == 100 && lost < tc.copies {
					lost++
					return true
				}
				return false
			}})
			m := e.post(0, 5, wire.OpWrite, 1<<20)
			e.runToEnd(t, fabric.Second)
			e.requireAllDelivered(t)
			c, tot := e.sum(), e.ledger.Totals
			require.Equal(t, uint64(1), c["naks_sent"], "one NAK per expected PSN")
			require.Equal(t, uint64(1), c["naks_received"])
			require.Equal(t, tc.timeouts, c["timeouts"])
			// Everything sent after the hole reached the responder and was discarded, and is
			// sent again: each retransmission of those is spurious, the hole's own are not.
			require.Positive(t, c["ooo_dropped"])
			require.Equal(t, c["ooo_dropped"], tot.SpuriousRetransmissions)
			require.Equal(t, tot.SpuriousRetransmissions+uint64(tc.copies), tot.Retransmissions)
			require.Equal(t, uint64(256)+tot.Retransmissions, tot.DataPackets)
			if tc.timeouts > 0 {
				require.Greater(t, m.Received-m.Posted, DefaultConfig().RTO)
			} else {
				require.Less(t, m.Received-m.Posted, 200*fabric.Microsecond)
			}
		})
	}
}

func TestResponderAcceptsOnlyTheExpectedPSN(t *testing.T) {
	e := newEnv(t, smallTopo(), DefaultConfig())
	e.post(0, 1, wire.OpWrite, 5*4096) // creates the QP; the sim never runs
	r := e.nics[1]
	psn0 := DefaultConfig().StartPSN
	deliver := func(psn uint32, idx uint32) {
		r.Receive(0, 0, &fabric.Packet{Src: 0, Dst: 1, Bytes: PacketOverhead + 4096, ECN: fabric.ECT0,
			Payload: &DataPacket{Opcode: dataOpcode(true, uint64(idx), 5), PSN: psn, Data: make([]byte, 4096), MsgID: 1, Index: idx}})
	}
	deliver(psn0+2, 2)
	deliver(psn0+3, 3)
	require.Equal(t, Counters{OOODropped: 2, NAKsSent: 1}, r.Stats(), "one NAK for two packets ahead")
	deliver(psn0, 0)
	deliver(psn0, 0)
	deliver(psn0+3, 3)
	require.Equal(t, Counters{OOODropped: 3, NAKsSent: 2, Duplicates: 1, ACKsSent: 1}, r.Stats(),
		"a duplicate is re-ACKed; a new expected PSN earns a new NAK")
	q := r.qps[0]
	require.Equal(t, psn0+1, q.epsn)
	require.True(t, q.rx.open)
}

func TestRetryExceededFailsTheQP(t *testing.T) {
	e := newEnv(t, smallTopo(), DefaultConfig())
	require.NoError(t, e.net.FailLink("host5", "p0.leaf1", 0)) // never rerouted: a black hole
	e.post(0, 5, wire.OpSend, 64<<10)
	e.post(0, 5, wire.OpWrite, 64<<10)
	e.runToEnd(t, fabric.Second)
	c := e.sum()
	cfg := DefaultConfig()
	require.Equal(t, uint64(cfg.RetryLimit+1), c["timeouts"])
	require.Equal(t, uint64(1), c["retry_exceeded"])
	require.Equal(t, uint64(2), c["messages_flushed"])
	require.True(t, e.nics[0].QPFailed(5))
	require.Greater(t, e.sim.Now(), fabric.Time(cfg.RetryLimit+1)*cfg.RTO)
	require.Len(t, e.ledger.Undelivered(), 2)
	e.post(0, 5, wire.OpSend, 1)
	require.Equal(t, uint64(3), e.nics[0].Stats().MessagesFlushed, "a QP in error flushes new work")
}

func TestSubmitRejectsBadMessages(t *testing.T) {
	e := newEnv(t, smallTopo(), DefaultConfig())
	n := e.nics[2]
	for _, m := range []*traffic.Message{
		nil,
		{ID: 1, Src: 3, Dst: 4, Op: wire.OpSend},
		{ID: 2, Src: 2, Dst: 2, Op: wire.OpSend},
		{ID: 3, Src: 2, Dst: 8, Op: wire.OpSend},
		{ID: 4, Src: 2, Dst: -1, Op: wire.OpSend},
		{ID: 5, Src: 2, Dst: 3, Op: wire.OpAck},
		{ID: 6, Src: 2, Dst: 3, Op: wire.OpWrite, Len: MaxMessageBytes + 1},
	} {
		n.Submit(0, m)
	}
	require.Equal(t, Counters{Rejected: 7}, n.Stats())
	e.runToEnd(t, fabric.Second)
	require.Zero(t, e.net.Stats().Injected)
}

func TestFrameSizes(t *testing.T) {
	e := newEnv(t, smallTopo(), DefaultConfig())
	sizes := map[string][]int{}
	e.net.OnDeliver = func(_ fabric.Time, _, _ int, p *fabric.Packet) {
		var k string
		switch pl := p.Payload.(type) {
		case *DataPacket:
			k = fmt.Sprintf("data %#02x", pl.Opcode)
			require.Equal(t, fabric.ECT0, p.ECN&fabric.ECT0, "data is ECN-capable")
		case *AckPacket:
			k = "ack"
		}
		require.Equal(t, uint16(UDPPort), p.DstPort)
		sizes[k] = append(sizes[k], p.Bytes)
	}
	e.post(0, 1, wire.OpWrite, 4096+10)
	e.runToEnd(t, fabric.Second)
	e.post(0, 1, wire.OpSend, 3)
	e.runToEnd(t, fabric.Second)
	require.Equal(t, map[string][]int{
		"data 0x06": {14 + 20 + 8 + 12 + 16 + 4096 + 4 + 4}, // WRITE_FIRST: RETH
		"data 0x08": {14 + 20 + 8 + 12 + 10 + 4 + 4},        // WRITE_LAST
		"data 0x04": {14 + 20 + 8 + 12 + 3 + 4 + 4},         // SEND_ONLY
		"ack":       {66, 66},
	}, sizes)
	e.requireAllDelivered(t)
}

func TestPSNWrapsAt24Bits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.StartPSN = 1<<24 - 300
	e := newEnv(t, smallTopo(), cfg)
	e.net.SetLinkLoss(0.01)
	var maxPSN, minPSN uint32 = 0, 1 << 24
	e.net.OnDeliver = func(_ fabric.Time, _, _ int, p *fabric.Packet) {
		if d, ok := p.Payload.(*DataPacket); ok {
			maxPSN, minPSN = max(maxPSN, d.PSN), min(minPSN, d.PSN)
		}
	}
	for i := 0; i < 4; i++ {
		e.post(0, 5, wire.OpWrite, 1<<20)
		e.post(5, 0, wire.OpSend, 1<<20)
	}
	e.runToEnd(t, 10*fabric.Second)
	e.requireAllDelivered(t)
	require.Equal(t, uint32(1<<24-1), maxPSN, "PSNs reach the top of the 24-bit space")
	require.Zero(t, minPSN, "and wrap to 0")
	require.Positive(t, e.sum()["naks_received"], "NAKs across the wrap")
	require.Positive(t, e.ledger.Totals.Retransmissions)
}

func TestDeterministic(t *testing.T) {
	run := func(seed uint64) (map[string]uint64, traffic.Totals, []fabric.Time) {
		topo := smallTopo()
		topo.Seed = seed
		cfg := DefaultConfig()
		cfg.Seed = seed
		e := newEnv(t, topo, cfg)
		e.net.SetLinkLoss(0.02)
		postMix(e)
		e.runToEnd(t, 10*fabric.Second)
		var done []fabric.Time
		for _, m := range e.ledger.Messages() {
			done = append(done, m.Sent, m.Received)
		}
		return e.sum(), e.ledger.Totals, done
	}
	c1, t1, d1 := run(7)
	c2, t2, d2 := run(7)
	require.Equal(t, c1, c2)
	require.Equal(t, t1, t2)
	require.Equal(t, d1, d2)
	c3, _, _ := run(8)
	require.NotEqual(t, c1, c3, "the seed drives the loss draws")
}

// TestGoodput measures a 1:1 long flow (32 MB of 1 MB Writes) across the spines at rising
// random loss on every last hop (data and ACKs alike).
func TestGoodput(t *testing.T) {
	ideal := float64(4096) / float64(4096+PacketOverhead+fabric.WireOverhead)
	losses := []float64{0, 0.001, 0.01, 0.05}
	goodput := make([]float64, len(losses))
	for i, loss := range losses {
		e := newEnv(t, smallTopo(), DefaultConfig())
		e.net.SetLinkLoss(loss)
		for k := 0; k < 32; k++ {
			e.post(0, 5, wire.OpWrite, 1<<20)
		}
		e.runToEnd(t, 10*fabric.Second)
		e.requireAllDelivered(t)
		c, tot := e.sum(), e.ledger.Totals
		goodput[i] = e.goodput(100)
		t.Logf("loss %5.3f: goodput %.4f of line rate (ideal %.4f); %d data packets, %d retransmissions (%d spurious), %d NAKs, %d timeouts",
			loss, goodput[i], ideal, tot.DataPackets, tot.Retransmissions, tot.SpuriousRetransmissions, c["naks_sent"], c["timeouts"])
		if loss == 0 {
			require.Zero(t, tot.Retransmissions)
		}
		if i > 0 {
			require.Less(t, goodput[i], goodput[i-1], "goodput falls as loss rises")
		}
	}
	require.LessOrEqual(t, goodput[0], ideal)
	require.Greater(t, goodput[0], 0.98*ideal, "a lone flow runs at line rate minus headers")
	require.Less(t, goodput[2], 0.75*goodput[0], "go-back-N collapses at 1% loss")
}

// TestPacingHoldsTheConfiguredRate: a line rate below the link's makes the rate limiter pace.
func TestPacingHoldsTheConfiguredRate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LineGbps = 25
	e := newEnv(t, smallTopo(), cfg)
	for i := 0; i < 4; i++ {
		e.post(0, 5, wire.OpWrite, 1<<20)
	}
	e.runToEnd(t, fabric.Second)
	e.requireAllDelivered(t)
	g := e.goodput(100)
	require.InDelta(t, 0.25*4096/float64(4096+PacketOverhead+fabric.WireOverhead), g, 0.005)
}

// TestAckDelayKeepsSlowQPsAcknowledged: a QP paced at 200 Mb/s sends a 4 KB packet every
// 165 µs, so eight packets take 1.3 ms, more than the RTO. ACKs by count alone leave it
// without progress past the RTO; the ACK delay bound keeps it acknowledged.
func TestAckDelayKeepsSlowQPsAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name     string
		delay    fabric.Time
		timeouts bool
	}{{"by count only", fabric.Second, true}, {"with the delay bound", DefaultConfig().AckDelay, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LineGbps, cfg.AckDelay = 0.2, tc.delay
			e := newEnv(t, smallTopo(), cfg)
			e.post(0, 5, wire.OpWrite, 20*4096)
			e.runToEnd(t, fabric.Second)
			e.requireAllDelivered(t)
			c := e.sum()
			require.Equal(t, tc.timeouts, c["timeouts"] > 0, "timeouts: %d", c["timeouts"])
			require.Equal(t, tc.timeouts, c["retransmissions"] > 0)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"mtu", func(c *Config) { c.MTU = 0 }},
		{"rto", func(c *Config) { c.RTO = 0 }},
		{"retry_limit", func(c *Config) { c.RetryLimit = 8 }},
		{"ack_every", func(c *Config) { c.AckEvery = 0 }},
		{"ack_delay", func(c *Config) { c.AckDelay = 0 }},
		{"spray_paths", func(c *Config) { c.SprayPaths = 0 }},
		{"start_psn", func(c *Config) { c.StartPSN = 1 << 24 }},
		{"line_gbps", func(c *Config) { c.LineGbps = -1 }},
		{"dcqcn.g", func(c *Config) { c.DCQCN.G = 0 }},
		{"dcqcn rates", func(c *Config) { c.DCQCN.MinGbps = 0 }},
		{"dcqcn timers", func(c *Config) { c.DCQCN.AlphaTimer = 0 }},
		{"dcqcn.byte_counter", func(c *Config) { c.DCQCN.ByteCounter = -1 }},
		{"dcqcn.f", func(c *Config) { c.DCQCN.F = 0 }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.edit(&cfg)
			require.ErrorContains(t, cfg.Validate(), tc.field)
			_, err := NewHosts(nil, traffic.NewLedger(), cfg)
			require.Error(t, err)
			net, err := fabric.Build(fabric.NewSim(), smallTopo())
			require.NoError(t, err)
			_, err = NewHosts(net, traffic.NewLedger(), cfg)
			require.ErrorContains(t, err, tc.field)
		})
	}
	off := DefaultConfig()
	off.DCQCN = DCQCN{}
	require.NoError(t, off.Validate(), "DCQCN off needs no parameters")

	to, err := LocalAckTimeout(14)
	require.NoError(t, err)
	require.Equal(t, 67108864*fabric.Nanosecond, to)
	_, err = LocalAckTimeout(0)
	require.Error(t, err)
	require.Equal(t, 1048576*fabric.Nanosecond, DefaultConfig().RTO)
}

// TestPlanesPinEachQP: on a two-plane fabric every QP lives on one plane (RoCE has no
// multiplane awareness), the QPs of a host spread over both, and everything arrives.
func TestRegionCursorWraps(t *testing.T) {
	base := regionBase(3)
	next := base
	regionAdvance(&next, base, 1)
	require.Equal(t, base+4096, next)
	regionAdvance(&next, base, 0)
	require.Equal(t, base+4096, next, "an empty message takes no room")
	next = base + sendRegion - MaxMessageBytes - 4096
	regionAdvance(&next, base, 4096)
	require.Equal(t, base+sendRegion-MaxMessageBytes, next, "a longest message still fits")
	regionAdvance(&next, base, 1)
	require.Equal(t, base, next)
}

func TestPlanesPinEachQP(t *testing.T) {
	topo := smallTopo()
	topo.Planes = 2
	e := newEnv(t, topo, DefaultConfig())
	planes := map[[2]int]map[int]bool{}
	e.net.OnDeliver = func(_ fabric.Time, host, port int, p *fabric.Packet) {
		if _, ok := p.Payload.(*DataPacket); ok {
			k := [2]int{p.Src, host}
			if planes[k] == nil {
				planes[k] = map[int]bool{}
			}
			planes[k][port] = true
			require.Equal(t, p.Plane, port)
		}
	}
	postMix(e)
	e.runToEnd(t, 10*fabric.Second)
	e.requireAllDelivered(t)
	used := map[int]int{}
	for pair, ps := range planes {
		require.Len(t, ps, 1, "QP %v on one plane", pair)
		for k := range ps {
			used[k]++
		}
	}
	require.Len(t, used, 2, "QPs spread over both planes: %v", used)
}

// TestSpineFailureRecoversAfterReroute: QPs hashed onto a failed spine lose everything until
// routing reconverges 2.5 ms later; their timeouts retry within the retry limit (8 RTOs of
// about 1 ms) and then everything is delivered.
func TestSpineFailureRecoversAfterReroute(t *testing.T) {
	e := newEnv(t, smallTopo(), DefaultConfig())
	e.net.RerouteDelay = 2500 * fabric.Microsecond
	require.NoError(t, e.net.FailSwitch("p0.spine0", 20*fabric.Microsecond))
	postMix(e)
	e.runToEnd(t, 10*fabric.Second)
	e.requireAllDelivered(t)
	c := e.sum()
	require.Positive(t, e.net.Stats().DownDrops)
	require.Positive(t, c["timeouts"])
	require.Equal(t, 1, e.net.Reroutes)
	t.Logf("spine failure: %d down drops, %d timeouts, %d retransmissions", e.net.Stats().DownDrops, c["timeouts"], c["retransmissions"])
}
