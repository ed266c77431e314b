package baseline

import (
	"testing"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

func TestExplore4(t *testing.T) {
	for _, on := range []bool{true, false} {
		topo := smallTopo()
		topo.Hosts = 12
		cfg := DefaultConfig()
		cfg.DCQCN.Enabled = on
		e := newEnv(t, topo, cfg)
		for s := 1; s <= 8; s++ {
			e.post(s, 0, wire.OpWrite, 4<<20)
		}
		d := e.net.DownlinkTo(0, 0)
		var tick func()
		tick = func() {
			r, _ := e.nics[1].Rate(0)
			t.Logf("%v q %d drops %d marks %d rate1 %.2f delivered %d", e.sim.Now(), d.QueueBytes(), d.Stats.TailDrops, d.Stats.Marks, r, e.ledger.Totals.ReceiverCompleted)
			if e.ledger.Totals.ReceiverCompleted < 8 {
				e.sim.After(100*fabric.Microsecond, tick)
			}
		}
		e.sim.At(0, tick)
		e.runToEnd(t, 10*fabric.Second)
		e.requireAllDelivered(t)
		t.Logf("dcqcn %v goodput %.4f end %v %v ledger %+v down %+v", on, e.goodput(100), e.sim.Now(), e.sum(), e.ledger.Totals, d.Stats)
	}
}
