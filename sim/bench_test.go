package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

// BenchmarkMetaRoCEAllToAll16 runs MetaRoCE alone on the 16-host all-to-all at 1% loss and
// reports simulator events and data packets per wall-clock second.
func BenchmarkMetaRoCEAllToAll16(b *testing.B) {
	o := Options{Scenario: "loss", NIC: config.Default(), Seed: 1, MsgBytes: 64 << 10, Outstanding: 2, Loss: 0.01}
	o.NIC.Window.InitCwnd = DefaultInitCwnd
	flows, err := pattern("all-to-all", 16)
	require.NoError(b, err)
	var events, packets uint64
	var wall float64
	for i := 0; i < b.N; i++ {
		f, err := run(MetaRoCE, o.base(leafSpine(16, 1, 1), flows, o.duration(200)))
		require.NoError(b, err)
		events += f.Events
		packets += f.DataPackets
		wall += f.WallSeconds
	}
	b.ReportMetric(float64(events)/wall, "events/s")
	b.ReportMetric(float64(packets)/wall, "data-pkts/s")
}
