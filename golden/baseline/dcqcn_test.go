package baseline

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

func TestDCQCNReactionPoint(t *testing.T) {
	cfg := DefaultConfig().DCQCN
	cfg.ByteCounter = 0 // the timer alone steps the stages, as in ns-3's DCQCN
	us := fabric.Microsecond
	r := newRateState(&cfg, 100, 100)
	require.False(t, r.limited())
	require.False(t, r.paced())

	r.decrease(0) // alpha starts at 1: the first cut halves
	require.Equal(t, 50.0, r.rc)
	require.Equal(t, 100.0, r.rt)
	require.Equal(t, 1.0, r.alpha)
	require.True(t, r.limited())
	require.False(t, r.canDecrease(3*us), "at most one cut per 4 µs")
	require.True(t, r.canDecrease(4*us))

	// Ten alpha periods without a CNP decay alpha by (1-g)^10 before the next cut uses it.
	a := math.Pow(1-cfg.G, 10)
	require.InDelta(t, a, r.alphaNow(10*cfg.AlphaTimer+us), 1e-12)
	r.decrease(10*cfg.AlphaTimer + us)
	require.InDelta(t, 50*(1-a/2), r.rc, 1e-9)
	require.Equal(t, 50.0, r.rt)
	require.InDelta(t, (1-cfg.G)*a+cfg.G, r.alpha, 1e-12)

	// Fast recovery: F-1 timer steps halve the distance to the target, which stays.
	rc := r.rc
	for i := 1; i < cfg.F; i++ {
		r.timerStep()
		rc = (50 + rc) / 2
		require.InDelta(t, rc, r.rc, 1e-9, "step %d", i)
		require.Equal(t, 50.0, r.rt)
	}
	r.timerStep() // stage F: additive increase
	require.InDelta(t, 50+cfg.AIGbps, r.rt, 1e-9)
	r.timerStep() // beyond F: hyper increase
	require.InDelta(t, 50+cfg.AIGbps+cfg.HAIGbps, r.rt, 1e-9)
	for i := 0; i < 1000 && r.limited(); i++ {
		r.timerStep()
	}
	require.Equal(t, 100.0, r.rc, "the rate returns to line rate, never beyond")
	require.Equal(t, 100.0, r.rt)

	for i := 0; i < 100; i++ {
		r.decrease(fabric.Time(i) * cfg.DecreaseInterval)
	}
	require.Equal(t, cfg.MinGbps, r.rc, "never below the minimum rate")
	require.Equal(t, fabric.Time(float64((1000+fabric.WireOverhead)*8)*1000/cfg.MinGbps+0.5), r.gap(1000))
}

func TestDCQCNByteCounter(t *testing.T) {
	cfg := DefaultConfig().DCQCN
	r := newRateState(&cfg, 100, 100)
	require.False(t, r.sent(int(cfg.ByteCounter)), "no counting at line rate")
	r.decrease(0)
	require.False(t, r.sent(int(cfg.ByteCounter)-1))
	require.True(t, r.sent(1))
	require.Equal(t, 1, r.bc)
	require.Equal(t, 75.0, r.rc, "one fast-recovery step")
	// With both counters, hyper increase needs both beyond F: the timer alone only adds AI.
	for i := 0; i < cfg.F+3; i++ {
		r.timerStep()
	}
	require.InDelta(t, 100.0, r.rt, 1e-9, "rt was line rate already")
	r = newRateState(&cfg, 100, 100)
	r.decrease(0)
	r.decrease(cfg.DecreaseInterval)
	r.decrease(2 * cfg.DecreaseInterval) // rc 12.5, rt 25
	for i := 0; i < cfg.F+3; i++ {
		r.timerStep()
	}
	require.InDelta(t, 25+4*cfg.AIGbps, r.rt, 1e-9, "stages F..F+3 of the timer with BC at 0: additive")
}

// TestNotificationPoint: CE-marked arrivals earn one CNP per CNPInterval per QP.
func TestNotificationPoint(t *testing.T) {
	e := newEnv(t, smallTopo(), DefaultConfig())
	e.post(0, 1, wire.OpWrite, 100*4096)
	r := e.nics[1]
	us := fabric.Microsecond
	for i, at := range []fabric.Time{0, 10 * us, 49 * us, 50 * us, 60 * us, 101 * us} {
		r.Receive(at, 0, &fabric.Packet{Src: 0, Dst: 1, ECN: fabric.CE,
			Payload: &DataPacket{Opcode: OpWriteMiddle, PSN: 50 + uint32(i), MsgID: 1, Index: 50}})
	}
	require.Equal(t, uint64(3), r.Stats().CNPsSent, "at 0, 50 and 101 µs")
	off := DefaultConfig()
	off.DCQCN.Enabled = false
	e = newEnv(t, smallTopo(), off)
	e.post(0, 1, wire.OpWrite, 4096)
	e.nics[1].Receive(0, 0, &fabric.Packet{Src: 0, Dst: 1, ECN: fabric.CE,
		Payload: &DataPacket{Opcode: OpWriteMiddle, PSN: 50, MsgID: 1}})
	require.Zero(t, e.nics[1].Stats().CNPsSent)
}
