package baseline

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/wire"
)

// env is one run: a fabric, a ledger and a RoCEv2 NIC on every host.
type env struct {
	sim    *fabric.Sim
	net    *fabric.Network
	ledger *traffic.Ledger
	nics   []*NIC
	hosts  []traffic.Host
}

// smallTopo is 8 hosts on 2 leaves and 2 spines, 100 Gb/s, 1 µs links.
func smallTopo() fabric.Topology {
	t := fabric.DefaultTopology()
	t.Hosts, t.HostsPerLeaf, t.Spines = 8, 4, 2
	return t
}

func newEnv(t testing.TB, topo fabric.Topology, cfg Config) *env {
	t.Helper()
	sim := fabric.NewSim()
	net, err := fabric.Build(sim, topo)
	require.NoError(t, err)
	e := &env{sim: sim, net: net, ledger: traffic.NewLedger()}
	e.nics, err = New(net, e.ledger, cfg)
	require.NoError(t, err)
	for _, n := range e.nics {
		e.hosts = append(e.hosts, n)
	}
	return e
}

// post posts a message now and submits it to its source NIC.
func (e *env) post(src, dst int, op wire.Opcode, n uint32) *traffic.Message {
	m := e.ledger.Post(e.sim.Now(), src, dst, 0, op, n)
	e.nics[src].Submit(e.sim.Now(), m)
	return m
}

// runToEnd runs until no event is left (every timer of an idle NIC stops) or for d more.
func (e *env) runToEnd(t testing.TB, d fabric.Time) {
	t.Helper()
	e.sim.Run(e.sim.Now() + d)
	require.Zero(t, e.sim.Pending(), "events still pending at %v", e.sim.Now())
}

// requireAllDelivered checks that every posted message completed at both ends, verified.
func (e *env) requireAllDelivered(t testing.TB) {
	t.Helper()
	tot := e.ledger.Totals
	require.Zero(t, tot.VerifyFailures, tot.FirstFailure)
	require.Empty(t, e.ledger.Undelivered())
	require.Equal(t, tot.Messages, tot.ReceiverCompleted)
	require.Equal(t, tot.Messages, tot.SenderCompleted)
	require.Equal(t, tot.BytesPosted, tot.BytesDelivered)
	require.Equal(t, tot.BytesPosted, tot.BytesPlaced, "go-back-N places every byte once")
	c := e.sum()
	for _, k := range []string{"verify_failures", "opcode_errors", "length_errors", "unknown_packets", "rejected", "retry_exceeded", "messages_flushed"} {
		require.Zero(t, c[k], k)
	}
}

func (e *env) sum() map[string]uint64 { return Sum(e.hosts) }

// goodput is delivered bytes over the time from the first post to the last receiver
// completion, as a fraction of line rate.
func (e *env) goodput(gbps float64) float64 {
	var first, last fabric.Time = 1<<63 - 1, 0
	var bytes uint64
	for _, m := range e.ledger.Messages() {
		first = min(first, m.Posted)
		last = max(last, m.Received)
		bytes += uint64(m.Len)
	}
	return float64(bytes*8) / (last - first).Seconds() / (gbps * 1e9)
}
