package verilator

import (
	"testing"
)

// benchInputs is a batch of valid regadd stimulus records (reset in the first two cycles only).
func benchInputs(b *testing.B, lay *Layout, n int) []uint32 {
	ins := randomRegaddIns(42, n)
	f := lookupRegadd(b, lay)
	buf := make([]uint32, n*lay.InWords())
	for c, x := range ins {
		x.Rst = c < 2
		f.pack(buf[c*lay.InWords():(c+1)*lay.InWords()], x)
	}
	return buf
}

func reportMcycles(b *testing.B, cycles int) {
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds()/1e6, "Mcycles/s")
}

// BenchmarkStep is one cgo call per cycle, reading one output per cycle as a checker would.
func BenchmarkStep(b *testing.B) {
	lib := regaddLib(b)
	lay := lib.Layout()
	m, err := lib.New()
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const recs = 4096
	iw := lay.InWords()
	ins := benchInputs(b, lay, recs)
	out := make([]uint32, lay.OutWords())
	count, err := lay.Out("count")
	if err != nil {
		b.Fatal(err)
	}
	var sink uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := i % recs
		if err := m.Step(ins[r*iw:(r+1)*iw], out); err != nil {
			b.Fatal(err)
		}
		sink += count.Get(out)
	}
	reportMcycles(b, b.N)
	_ = sink
}

// BenchmarkStepN is batches of 4096 cycles per cgo call.
func BenchmarkStepN(b *testing.B) {
	lib := regaddLib(b)
	lay := lib.Layout()
	m, err := lib.New()
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const batch = 4096
	ins := benchInputs(b, lay, batch)
	outs := make([]uint32, batch*lay.OutWords())
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		if err := m.StepN(ins, outs, n); err != nil {
			b.Fatal(err)
		}
		done += n
	}
	reportMcycles(b, b.N)
}
