package baseline

import (
	"testing"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

func TestExplore3(t *testing.T) {
	for _, spray := range []int{1, 8} {
		cfg := DefaultConfig()
		cfg.SprayPaths = spray
		e := newEnv(t, smallTopo(), cfg)
		for s := 0; s < 4; s++ {
			for i := 0; i < 8; i++ {
				e.post(s, 4+s, wire.OpWrite, 256<<10)
				e.post(s, 4+(s+1)%4, wire.OpSend, 256<<10)
			}
		}
		e.runToEnd(t, 10*fabric.Second)
		e.requireAllDelivered(t)
		t.Logf("spray %d goodput %.4f end %v events %d %v ledger %+v maxq %d", spray, e.goodput(400), e.sim.Now(), e.sim.Events(), e.sum(), e.ledger.Totals, e.net.Stats().MaxQueueBytes)
	}
	for _, n := range []int{7, 8} {
		topo := smallTopo()
		topo.Hosts = 12
		e := newEnv(t, topo, DefaultConfig())
		for s := 1; s <= n; s++ {
			e.post(s, 0, wire.OpWrite, 4<<20)
		}
		e.runToEnd(t, 10*fabric.Second)
		e.requireAllDelivered(t)
		d := e.net.DownlinkTo(0, 0)
		r, _ := e.nics[1].Rate(0)
		t.Logf("incast %d goodput %.4f end %v %v ledger %+v down %+v rate %g", n, e.goodput(100), e.sim.Now(), e.sum(), e.ledger.Totals, d.Stats, r)
	}
}
