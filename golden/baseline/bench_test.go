package baseline

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

// BenchmarkAllToAll16 runs 16 hosts (fabric.DefaultTopology), each sending four 64 KB
// messages, Writes and Sends, to every other host, at 1% link loss, to the last completion.
// One iteration is one run: 960 messages, 61 MB.
func BenchmarkAllToAll16(b *testing.B) {
	var events, packets uint64
	var simTime fabric.Time
	for i := 0; i < b.N; i++ {
		e := newEnv(b, fabric.DefaultTopology(), DefaultConfig())
		e.net.SetLinkLoss(0.01)
		for k := 0; k < 4; k++ {
			for s := 0; s < 16; s++ {
				for d := 0; d < 16; d++ {
					if s != d {
						op := wire.OpWrite
						if (s+d+k)%2 == 1 {
							op = wire.OpSend
						}
						e.post(s, d, op, 64<<10)
					}
				}
			}
		}
		for e.ledger.Totals.ReceiverCompleted < e.ledger.Totals.Messages {
			e.sim.Run(e.sim.Now() + 100*fabric.Microsecond)
		}
		require.Zero(b, e.ledger.Totals.VerifyFailures)
		events += e.sim.Events()
		packets += e.net.Stats().Injected
		simTime += e.sim.Now()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(packets)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(simTime.Seconds()*1e3/float64(b.N), "sim-ms/op")
}
