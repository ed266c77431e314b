package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/wire"
)

// TestHardwareInvariants checks the two facts hdl/placement is built on, under random posts and
// packets (including inconsistent and failing ones, duplicates, stale and not-posted MSNs):
//
//   - with a power-of-two D the ring head is CompMSN mod D, so the slot of message m is m mod D
//     and every table address is known from the descriptor alone;
//   - at rest the head slot of a stream is never Complete or Failed (it would have been
//     released), so a release can only start when a packet completes or fails the head message.
func TestHardwareInvariants(t *testing.T) {
	p := testParams(t, smallMTU)
	require.Equal(t, 8, p.Depth)
	rng := rand.New(rand.NewPCG(5, 17))
	e := New(p)
	key, err := e.RegisterRegion(0, 1<<32, 1<<30, AccessRemoteWrite)
	require.NoError(t, err)
	mtu := uint32(p.MTU)
	lens := map[[3]uint32]uint32{} // a message's length, fixed at its first packet (mostly)
	released := 0
	for i := range 200_000 {
		c, s := rng.IntN(p.Conns), rng.IntN(p.Streams)
		if rng.IntN(3) == 0 {
			_ = e.PostReceive(c, s, uint64(i)<<14, uint32(rng.IntN(3*p.MTU)))
		} else {
			st := e.Stream(c, s)
			msn := st.CompMSN + uint32(rng.IntN(p.Depth+3)) - 1
			id := [3]uint32{uint32(c), uint32(s), msn}
			l, ok := lens[id]
			if !ok || rng.IntN(50) == 0 {
				l = uint32(rng.IntN(3 * p.MTU))
				lens[id] = l
			}
			k := uint32(rng.IntN(int(p.Packets(l))))
			off := k * mtu
			d := Desc{Op: wire.OpSend, Conn: uint16(c), Stream: uint8(s), MSN: msn, MsgLen: l, Offset: off,
				Payload: make([]byte, min(mtu, l-off))}
			if rng.IntN(2) == 0 {
				d.Op, d.Offset, d.RKey, d.VA = wire.OpWrite, 0, key, 1<<32+uint64(msn%64)<<16+uint64(off)
			}
			released += len(e.Place(d).Completions)
		}
		// Only the stream the operation named can have changed.
		st := e.Stream(c, s)
		if int(st.CompMSN%uint32(p.Depth)) != st.Head {
			t.Fatalf("op %d: stream (%d, %d): head %d, CompMSN %d", i, c, s, st.Head, st.CompMSN)
		}
		if hs := e.Slot(c, s, 0).State; st.Posted > 0 && hs != SlotPosted && hs != SlotOpen {
			t.Fatalf("op %d: stream (%d, %d): the head slot is %d at rest", i, c, s, hs)
		}
	}
	require.Greater(t, released, 500)
}
