package sim

import (
	"fmt"
	"testing"

	"github.com/mrgen/mrgen/config"
)

func TestTmpHints(t *testing.T) {
	for _, hints := range []bool{true, false} {
		for _, loss := range []float64{0, 0.01} {
			o := Options{Scenario: "loss", NIC: config.Default(), Seed: 1, MsgBytes: 64 << 10, Outstanding: 2, Loss: loss}
			o.NIC.Window.InitCwnd = 4
			flows, _ := pattern("all-to-all", 16)
			s := o.base(leafSpine(16, 1, 1), flows, o.duration(300))
			s.hints = hints
			f, err := run(MetaRoCE, s)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Println(hints, loss, f.GoodputFraction, f.P99FCTus, f.PeakQueueBytes, f.Counters["blocked_rate_cap"], f.Counters["blocked_conn_window"], f.Counters["blocked_no_path"], f.Counters["ecn_echoes"], f.Counters["tail_probes"], f.Counters["timeouts"])
		}
	}
}
