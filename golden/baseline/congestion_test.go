package baseline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

// TestSprayingMistakesReorderingForLoss: spine s's links are s × 2 µs longer, so routes
// through the two spines differ by 4 µs, and host 0 sends 16 MB to host 5 on a lossless
// fabric. On its one fixed route RoCE never retransmits; spraying its packets over 8 source
// ports makes them overtake each other, and the go-back-N responder takes every overtaking for
// a loss.
func TestSprayingMistakesReorderingForLoss(t *testing.T) {
	for _, spray := range []int{1, 8} {
		t.Run(fmt.Sprintf("spray=%d", spray), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.SprayPaths = spray
			topo := smallTopo()
			topo.SpineDelaySkew = 2 * fabric.Microsecond
			e := newEnv(t, topo, cfg)
			for i := 0; i < 16; i++ {
				e.post(0, 5, wire.OpWrite, 1<<20)
			}
			e.runToEnd(t, fabric.Second)
			e.requireAllDelivered(t)
			st, tot, c := e.net.Stats(), e.ledger.Totals, e.sum()
			require.Zero(t, st.TailDrops+st.LossDrops+st.DownDrops+st.NoRouteDrops, "nothing is lost")
			t.Logf("spray %d: goodput %.3f, %d retransmissions (%d spurious), %d NAKs, %d duplicates, %d timeouts",
				spray, e.goodput(100), tot.Retransmissions, tot.SpuriousRetransmissions, c["naks_sent"], c["duplicates"], c["timeouts"])
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
