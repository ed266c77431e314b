package cosim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// BenchmarkCosimSack measures end-to-end co-simulation throughput (RTL + golden model +
// stimulus + comparison) in packets per second, per scenario.
func BenchmarkCosimSack(b *testing.B) {
	tooltest.Require(b, "verilator")
	c := config.Default()
	for _, sc := range []string{"random", "back-to-back", "in-order"} {
		b.Run(sc, func(b *testing.B) {
			opt := Options{Config: c, Scenario: sc, Seed: 1, Packets: 200_000, Stamp: stamp(c)}
			_, err := RunSack(context.Background(), opt) // build or load the model outside the timer
			require.NoError(b, err)
			b.ResetTimer()
			packets, seconds := 0, 0.0
			for i := 0; i < b.N; i++ {
				res, err := RunSack(context.Background(), opt)
				require.NoError(b, err)
				require.Nil(b, res.Mismatch)
				packets += res.Packets
				seconds += res.WallSeconds
			}
			b.ReportMetric(float64(packets)/seconds, "packets/s")
			b.ReportMetric(seconds/float64(packets)*1e9, "ns/packet")
		})
	}
}

// BenchmarkSackModelRaw measures the Verilated model alone: back-to-back packets to one path,
// inputs precomputed, 4096 cycles per cgo call, no golden model and no checking. Its ratio to
// BenchmarkCosimSack is the cost of lockstep checking.
func BenchmarkSackModelRaw(b *testing.B) {
	tooltest.Require(b, "verilator")
	c := config.Default()
	lib, u, err := BuildSackModel(context.Background(), Options{Config: c, Stamp: stamp(c)}, false)
	require.NoError(b, err)
	m, err := lib.New()
	require.NoError(b, err)
	defer m.Close()
	lay := lib.Layout()
	pt, err := bindSackPorts(lay, u.Reset.Port)
	require.NoError(b, err)
	const batch = 4096
	in := make([]uint32, lay.InWords()*batch)
	out := make([]uint32, lay.OutWords()*batch)
	for i := 0; i < batch; i++ {
		w := in[i*lay.InWords() : (i+1)*lay.InWords()]
		pt.pktValid.Set(w, 1)
		pt.pktPSN.Set(w, uint64(i))
		pt.rxReady.Set(w, 1)
		pt.lossReady.Set(w, 1)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		require.NoError(b, m.StepN(in, out, batch))
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkLoop measures the closed loop (nic_top as host 0 of the golden transport, every
// output compared with its shadow) in frames per second, with the RTL cycles per frame and the
// model's cycles per second, per configuration: the numbers behind the 50,000
// frames/s criterion (BENCHMARKS.md).
func BenchmarkLoop(b *testing.B) {
	tooltest.Require(b, "verilator", "g++", "make")
	for _, tc := range []struct{ name, config string }{
		{"default", "default.yaml"},
		{"w512-64paths", "matrix/nic-w512-64paths.yaml"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := config.Load(filepath.Join("..", "configs", tc.config))
			require.NoError(b, err)
			opt := Options{Config: c, Scenario: "loss", Seed: 1, Packets: 2000, Stamp: stamp(c)}
			_, err = RunLoop(context.Background(), opt) // build or load the model outside the timer
			require.NoError(b, err)
			b.ResetTimer()
			frames, seconds, cycles := 0, 0.0, uint64(0)
			for i := 0; i < b.N; i++ {
				res, err := RunLoop(context.Background(), opt)
				require.NoError(b, err)
				require.Nil(b, res.Mismatch)
				frames += res.Packets
				seconds += res.WallSeconds
				cycles += res.RTLCycles
			}
			b.ReportMetric(float64(frames)/seconds, "frames/s")
			b.ReportMetric(float64(cycles)/float64(frames), "cycles/frame")
			b.ReportMetric(float64(cycles)/seconds, "cycles/s")
		})
	}
}
