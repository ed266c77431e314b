package baseline

import (
	"testing"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

func TestExplore(t *testing.T) {
	for _, loss := range []float64{0, 0.001, 0.01, 0.05} {
		e := newEnv(t, smallTopo(), DefaultConfig())
		e.net.SetLinkLoss(loss)
		for i := 0; i < 64; i++ {
			e.post(0, 5, wire.OpWrite, 1<<20)
		}
		e.runToEnd(t, 10*fabric.Second)
		e.requireAllDelivered(t)
		t.Logf("loss %g goodput %.4f end %v events %d %v ledger %+v", loss, e.goodput(100), e.sim.Now(), e.sim.Events(), e.sum(), e.ledger.Totals)
	}
}
