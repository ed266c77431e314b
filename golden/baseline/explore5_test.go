package baseline

import (
	"testing"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

type cbr struct {
	net     *fabric.Network
	host    int
	dst     int
	sport   uint16
	gap     fabric.Time
	next    fabric.Time
	stop    fabric.Time
	waiting bool
	sent    int
}

func (c *cbr) Receive(fabric.Time, int, *fabric.Packet) {}
func (c *cbr) Pull(now fabric.Time, port int) *fabric.Packet {
	if now >= c.stop {
		return nil
	}
	if now < c.next {
		if !c.waiting {
			c.waiting = true
			c.net.Sim().At(c.next, func() { c.waiting = false; c.net.Kick(c.host, 0) })
		}
		return nil
	}
	c.next = now + c.gap
	c.sent++
	return &fabric.Packet{Dst: c.dst, SrcPort: c.sport, DstPort: 9, Proto: 17, Bytes: 4096}
}

func TestExplore5(t *testing.T) {
	for _, spray := range []int{1, 2, 4, 8, 16} {
		cfg := DefaultConfig()
		cfg.SprayPaths = spray
		e := newEnv(t, smallTopo(), cfg)
		bg := &cbr{net: e.net, host: 1, dst: 6, sport: 777, gap: fabric.Time(float64(4116*8) * 1000 / 60), stop: 10 * fabric.Millisecond}
		e.net.Attach(1, bg)
		e.net.Attach(6, &cbr{net: e.net, host: 6})
		e.net.Kick(1, 0)
		for i := 0; i < 16; i++ {
			e.post(0, 5, wire.OpWrite, 1<<20)
		}
		e.sim.Run(20 * fabric.Millisecond)
		e.requireAllDelivered(t)
		t.Logf("spray %d goodput %.4f %v ledger %+v fabric %+v", spray, e.goodput(100), e.sum(), e.ledger.Totals, e.net.Stats())
	}
}
