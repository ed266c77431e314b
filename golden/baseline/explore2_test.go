package baseline

import (
	"testing"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

type dropper struct {
	*NIC
	drop func(p *fabric.Packet) bool
}

func (d *dropper) Receive(now fabric.Time, port int, p *fabric.Packet) {
	if d.drop(p) {
		return
	}
	d.NIC.Receive(now, port, p)
}

func TestExplore2(t *testing.T) {
	e := newEnv(t, smallTopo(), DefaultConfig())
	dropped := false
	e.net.Attach(5, &dropper{NIC: e.nics[5], drop: func(p *fabric.Packet) bool {
		if d, ok := p.Payload.(*DataPacket); ok && d.Index == 100 && !dropped {
			dropped = true
			return true
		}
		return false
	}})
	e.net.OnDeliver = func(now fabric.Time, host, port int, p *fabric.Packet) {
		if d, ok := p.Payload.(*DataPacket); ok && d.Index >= 99 && d.Index < 103 || host == 0 {
			t.Logf("%v host %d %T %+v", now, host, p.Payload, p.Payload)
		}
	}
	e.post(0, 5, wire.OpWrite, 1<<20)
	e.runToEnd(t, 10*fabric.Second)
	e.requireAllDelivered(t)
	t.Logf("%v", e.sum())
}
