package transport

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/wire"
)

type world struct {
	sim    *fabric.Sim
	net    *fabric.Network
	ledger *traffic.Ledger
	tn     *Network
}

func newWorld(t testing.TB, topo fabric.Topology, cfg Config) *world {
	t.Helper()
	sim := fabric.NewSim()
	net, err := fabric.Build(sim, topo)
	require.NoError(t, err)
	l := traffic.NewLedger()
	tn, err := New(net, l, cfg)
	require.NoError(t, err)
	return &world{sim: sim, net: net, ledger: l, tn: tn}
}

func smallTopo() fabric.Topology {
	t := fabric.DefaultTopology()
	t.Hosts, t.HostsPerLeaf, t.Spines = 8, 4, 4
	return t
}

// post submits count messages of size bytes from src to dst, alternating WRITE and SEND over
// the streams.
func (w *world) post(src, dst, count int, size uint32) {
	for i := 0; i < count; i++ {
		op := wire.OpWrite
		if i%2 == 1 {
			op = wire.OpSend
		}
		m := w.ledger.Post(w.sim.Now(), src, dst, i%4, op, size)
		w.tn.NIC(src).Submit(w.sim.Now(), m)
	}
}

func (w *world) counters() map[string]uint64 {
	sum := map[string]uint64{}
	for h := 0; h < w.net.Hosts(); h++ {
		for k, v := range w.tn.NIC(h).Counters() {
			sum[k] += v
		}
	}
	return sum
}

func requireAllDelivered(t *testing.T, w *world) {
	t.Helper()
	tot := w.ledger.Totals
	require.Zero(t, tot.VerifyFailures, tot.FirstFailure)
	require.Empty(t, w.ledger.Undelivered(), "counters %v", w.counters())
	require.Equal(t, tot.Messages, tot.ReceiverCompleted)
	require.Equal(t, tot.Messages, tot.SenderCompleted)
	require.Equal(t, tot.BytesPosted, tot.BytesDelivered)
}

func TestCleanTransferDeliversEveryByte(t *testing.T) {
	w := newWorld(t, smallTopo(), DefaultConfig())
	w.post(0, 5, 40, 64<<10)
	w.post(5, 0, 10, 10_000)
	w.post(2, 3, 7, 1)
	w.sim.Run(10 * fabric.Millisecond)
	requireAllDelivered(t, w)
	c := w.counters()
	require.Zero(t, w.ledger.Totals.Retransmissions, "%v", c)
	require.Zero(t, c["timeouts"])
}

func TestLossIsRepairedBySACK(t *testing.T) {
	for _, loss := range []float64{0.01, 0.05, 0.1} {
		w := newWorld(t, smallTopo(), DefaultConfig())
		w.net.SetLinkLoss(loss)
		for s := 0; s < 8; s++ {
			w.post(s, (s+3)%8, 20, 64<<10)
		}
		w.sim.Run(100 * fabric.Millisecond)
		requireAllDelivered(t, w)
		c := w.counters()
		require.Greater(t, c["sack_losses"], uint64(0), "loss %g: %v", loss, c)
		// SACK and loss by send time name exactly the lost packets; only the timer-driven
		// resends (RTO, the copies of a timed-out path, tail probes) can resend a packet that
		// had arrived, when its ACK was lost.
		timed := c["rto_retransmissions"] + c["rto_copies"] + c["tail_probes"]
		require.LessOrEqual(t, w.ledger.Totals.SpuriousRetransmissions, timed, "loss %g: %v", loss, c)
	}
}

func TestPlacementBugIsCaughtByTheByteCheck(t *testing.T) {
	w := newWorld(t, smallTopo(), DefaultConfig())
	w.tn.CorruptDMA = func(host int, d *placement.DMAWrite) {
		if len(d.Data) > 100 && d.Addr%3 == 0 {
			d.Addr++ // place one byte too far
		}
	}
	w.post(0, 5, 20, 64<<10)
	w.sim.Run(10 * fabric.Millisecond)
	require.Greater(t, w.ledger.Totals.VerifyFailures, uint64(0))
	require.Contains(t, w.ledger.Totals.FirstFailure, "byte")
}

func TestDeterministic(t *testing.T) {
	run := func() (traffic.Totals, map[string]uint64) {
		w := newWorld(t, smallTopo(), DefaultConfig())
		w.net.SetLinkLoss(0.02)
		for s := 0; s < 8; s++ {
			w.post(s, (s+1)%8, 10, 30_000)
		}
		w.sim.Run(50 * fabric.Millisecond)
		return w.ledger.Totals, w.counters()
	}
	t1, c1 := run()
	t2, c2 := run()
	require.Equal(t, t1, t2)
	require.Equal(t, c1, c2)
}

// A NIC whose sender counts nanoseconds (the RTL's clock) still repairs loss and delivers
// everything; the clock can be set only before the NIC has work, and only to 1 ps or 1 ns.
func TestSenderClockNanoseconds(t *testing.T) {
	w := newWorld(t, smallTopo(), DefaultConfig())
	require.NoError(t, w.tn.SenderClock(0, fabric.Nanosecond))
	require.ErrorContains(t, w.tn.SenderClock(1, 10*fabric.Picosecond), "want 1 ps or 1 ns")
	w.net.SetLinkLoss(0.02)
	w.post(0, 5, 30, 64<<10)
	w.post(5, 0, 10, 10_000)
	require.ErrorContains(t, w.tn.SenderClock(0, fabric.Picosecond), "already has work")
	w.sim.Run(100 * fabric.Millisecond)
	requireAllDelivered(t, w)
	require.Positive(t, w.tn.NIC(0).Counters()["sack_losses"]+w.tn.NIC(0).Counters()["time_losses"])
	p := w.tn.NIC(0).snd.Params()
	require.Equal(t, uint64(1), p.TicksPerNS)
	require.Equal(t, uint64(DefaultConfig().TimerScan/fabric.Nanosecond), p.ScanTicks)
}

// The sender's call log is complete: a fresh sender given host 0's log (posts, doorbells, Next
// pulls, Left, ACKs and NAKs, every timer) answers every call exactly as host 0's did, on both
// sender clocks, under loss.
func TestSenderLogReplays(t *testing.T) {
	for _, tick := range []fabric.Time{fabric.Picosecond, fabric.Nanosecond} {
		w := newWorld(t, smallTopo(), DefaultConfig())
		require.NoError(t, w.tn.SenderClock(0, tick))
		var log []sender.Call
		w.tn.ObserveSender(0, func(_ fabric.Time, c sender.Call) { log = append(log, c) })
		w.net.SetLinkLoss(0.03)
		w.post(0, 5, 20, 64<<10)
		w.post(0, 2, 20, 3000)
		w.post(5, 0, 10, 10_000)
		w.sim.Run(100 * fabric.Millisecond)
		requireAllDelivered(t, w)
		ops := map[sender.Op]int{}
		for _, c := range log {
			ops[c.Op]++
		}
		for _, op := range []sender.Op{sender.OpPost, sender.OpDoorbell, sender.OpNext, sender.OpTakeWakes, sender.OpLeft, sender.OpAck, sender.OpArm, sender.OpScan, sender.OpRearm} {
			require.Positive(t, ops[op], "tick %d: no %v call in the log", tick, op)
		}
		fresh, err := sender.New(w.tn.NIC(0).snd.Params())
		require.NoError(t, err)
		got := sender.Replay(fresh, log)
		for i := range log {
			if d := cmp.Diff(log[i], got[i]); d != "" {
				t.Fatalf("tick %d: call %d (%v) answers differently on replay (-log +replay):\n%s", tick, i, log[i].Op, d)
			}
		}
	}
}

// TestReceiverNotReadyIsResent: applications that repost their receives late make SENDs find
// none; the receiver refuses them with receiver-not-ready NAKs and leaves their PSNs
// unacknowledged; the senders resend each on its path with its PSN RNR delay after the NAK
// (and, with loss, loss recovery resends the ones whose NAK was lost) until every message is
// delivered. The NAKs keep the paths alive: no timeouts, no copies, no duplicates without loss
// (docs/transport.md).
func TestReceiverNotReadyIsResent(t *testing.T) {
	for _, loss := range []float64{0, 0.02} {
		t.Run(fmt.Sprintf("loss %.2f", loss), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RepostDelay = 150 * fabric.Microsecond
			w := newWorld(t, smallTopo(), cfg)
			w.net.SetLinkLoss(loss)
			w.post(0, 5, 200, 1000)
			w.post(5, 0, 200, 3000)
			w.sim.Run(50 * fabric.Millisecond)
			requireAllDelivered(t, w)
			c := w.counters()
			t.Logf("%v", c)
			require.Positive(t, c["naks_sent"], "%v", c)
			require.Equal(t, c["naks_sent"], c["placement_receiver_not_ready"], "%v", c)
			require.GreaterOrEqual(t, c["retransmissions"], c["rnr_retries"], "%v", c)
			require.Positive(t, c["rnr_retries"], "%v", c)
			if loss == 0 {
				require.Equal(t, c["naks_sent"], c["rnr_retries"], "one RNR retry per NAK: %v", c)
				require.Equal(t, c["naks_sent"], c["retransmissions"], "one resend per NAK, nothing else: %v", c)
				for _, k := range []string{"moved_sent", "timeouts", "paths_suspect", "placement_duplicate", "placement_stale_message"} {
					require.Zero(t, c[k], "%s: %v", k, c)
				}
			}
		})
	}
}

// TestPeakOccupancy: the peaks over the hosts are each table's largest on any NIC, here the
// two senders'; a host list with no MetaRoCE NIC has none.
func TestPeakOccupancy(t *testing.T) {
	w := newWorld(t, smallTopo(), DefaultConfig())
	w.post(0, 5, 40, 64<<10)
	w.post(2, 3, 7, 1)
	w.sim.Run(10 * fabric.Millisecond)
	requireAllDelivered(t, w)
	got, ok := PeakOccupancy(w.tn.Hosts())
	require.True(t, ok)
	want := w.tn.NIC(0).Occupancy().Max(w.tn.NIC(2).Occupancy())
	require.Empty(t, cmp.Diff(want, got))
	require.Positive(t, got.RecordsPerPath)
	_, ok = PeakOccupancy(nil)
	require.False(t, ok)
}
