package baseline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

// cbr is an unresponsive constant-rate flow on one fixed route (one UDP source port), standing
// in for a host's NIC: it loads one spine and so makes the paths through the spines unequal.
// As a destination (gap 0) it only sinks.
type cbr struct {
	net     *fabric.Network
	host    int
	dst     int
	sport   uint16
	gap     fabric.Time
	next    fabric.Time
	stop    fabric.Time
	waiting bool
}

func (c *cbr) Receive(fabric.Time, int, *fabric.Packet) {}

func (c *cbr) Pull(now fabric.Time, _ int) *fabric.Packet {
	if c.gap == 0 || now >= c.stop {
		return nil
	}
	if now < c.next {
		if !c.waiting {
			c.waiting = true
			c.net.Sim().At(c.next, func() { c.waiting = false; c.net.Kick(c.host, 0) })
		}
		return nil
	}
	c.next = now + c.gap
	return &fabric.Packet{Dst: c.dst, SrcPort: c.sport, DstPort: 9, Proto: 17, Bytes: 4096}
}

// TestSprayingMistakesReorderingForLoss: host 1 loads one spine with 60 Gb/s on a fixed route
// while host 0 sends 16 MB to host 5 on a lossless fabric. On its one fixed route RoCE never
// retransmits; spraying its packets over 8 source ports makes them overtake each other, and the
// go-back-N responder takes every overtaking for a loss.
func TestSprayingMistakesReorderingForLoss(t *testing.T) {
	for _, spray := range []int{1, 8} {
		t.Run(fmt.Sprintf("spray=%d", spray), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.SprayPaths = spray
			e := newEnv(t, smallTopo(), cfg)
			e.net.Attach(1, &cbr{net: e.net, host: 1, dst: 6, sport: 777,
				gap: fabric.Time(float64((4096+fabric.WireOverhead)*8) * 1000 / 60), stop: 20 * fabric.Millisecond})
			e.net.Attach(6, &cbr{net: e.net, host: 6})
			e.net.Kick(1, 0)
			for i := 0; i < 16; i++ {
				e.post(0, 5, wire.OpWrite, 1<<20)
			}
			e.runToEnd(t, fabric.Second)
			e.requireAllDelivered(t)
			st, tot, c := e.net.Stats(), e.ledger.Totals, e.sum()
			require.Zero(t, st.TailDrops+st.LossDrops+st.DownDrops+st.NoRouteDrops, "nothing is lost")
			t.Logf("spray %d: goodput %.3f, %d retransmissions (%d spurious), %d NAKs, %d duplicates",
				spray, e.goodput(100), tot.Retransmissions, tot.SpuriousRetransmissions, c["naks_sent"], c["duplicates"])
			if spray == 1 {
				require.Zero(t, tot.Retransmissions)
				require.Zero(t, c["ooo_dropped"])
				return
			}
			require.Positive(t, c["naks_sent"])
			require.Positive(t, c["duplicates"], "late copies of resent packets")
			require.Positive(t, tot.SpuriousRetransmissions)
		})
	}
}

// TestIncastDCQCN: 8 senders, 4 MB each, to one receiver. The initial burst overflows the
// receiver's downlink before the first CNPs return; DCQCN then cuts every sender and the
// queue drains and stays below the marking threshold. Without DCQCN the queue keeps
// overflowing.
func TestIncastDCQCN(t *testing.T) {
	type result struct {
		drops, lateDrops uint64
		lateMaxQueue     int
		goodput          float64
		c                map[string]uint64
		senders          []Counters
	}
	run := func(dcqcn bool) result {
		topo := smallTopo()
		topo.Hosts = 12
		cfg := DefaultConfig()
		cfg.DCQCN.Enabled = dcqcn
		e := newEnv(t, topo, cfg)
		for s := 1; s <= 8; s++ {
			e.post(s, 0, wire.OpWrite, 4<<20)
		}
		down := e.net.DownlinkTo(0, 0)
		var r result
		settled := fabric.Millisecond
		var dropsAtSettle uint64
		var sample func()
		sample = func() {
			if e.sim.Now() == settled {
				dropsAtSettle = down.Stats.TailDrops
			}
			if e.sim.Now() >= settled {
				r.lateMaxQueue = max(r.lateMaxQueue, down.QueueBytes())
			}
			if e.ledger.Totals.ReceiverCompleted < 8 {
				e.sim.After(10*fabric.Microsecond, sample)
			}
		}
		e.sim.At(0, sample)
		e.runToEnd(t, 10*fabric.Second)
		e.requireAllDelivered(t)
		require.LessOrEqual(t, down.Stats.MaxQueueBytes, topo.BufferBytes)
		r.drops, r.lateDrops = down.Stats.TailDrops, down.Stats.TailDrops-dropsAtSettle
		r.goodput, r.c = e.goodput(100), e.sum()
		for s := 1; s <= 8; s++ {
			r.senders = append(r.senders, e.nics[s].Stats())
		}
		t.Logf("dcqcn %v: goodput %.3f, tail drops %d (%d after %v), queue after %v ≤ %d B, %d CNPs, %d rate decreases, %d retransmissions, %d timeouts",
			dcqcn, r.goodput, r.drops, r.lateDrops, settled, settled, r.lateMaxQueue, r.c["cnps_sent"], r.c["rate_decreases"], r.c["retransmissions"], r.c["timeouts"])
		return r
	}
	on, off := run(true), run(false)
	require.Positive(t, on.c["cnps_sent"])
	require.Equal(t, on.c["cnps_sent"], on.c["cnps_received"], "CNPs cross a lossless fabric")
	for s, c := range on.senders {
		require.Positive(t, c.RateDecreases, "sender %d", s+1)
	}
	require.Zero(t, on.lateDrops, "once DCQCN has cut the rates, nothing overflows")
	require.Less(t, on.lateMaxQueue, smallTopo().RED.KminBytes)
	require.Zero(t, off.c["cnps_sent"])
	require.Positive(t, off.lateDrops, "without DCQCN the downlink keeps overflowing")
	require.Greater(t, off.drops, on.drops)
}
