package placement

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/wire"
)

// fixture: mtu 256; conn 1 owns region A (write) at 0x10000, 0x1000 bytes; conn 1 owns region R
// (read only); conn 2 owns region B; region D was registered and deregistered, and region W,
// which covers the top of the address space, took its entry (so keyD's tag no longer matches). Every stream of conns 0..2 has one receive of 1024 bytes posted
// at 0x100000 + 0x10000·(conn·streams+stream).
type fixture struct {
	e                  *Engine
	p                  Params
	keyA, keyR, keyB   uint32
	keyD, keyW, keyA2x uint32
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	p := testParams(t, smallMTU)
	e := New(p)
	f := &fixture{e: e, p: p}
	var err error
	f.keyA, err = e.RegisterRegion(1, 0x10000, 0x1000, AccessRemoteWrite)
	require.NoError(t, err)
	f.keyR, err = e.RegisterRegion(1, 0x20000, 0x1000, AccessRemoteRead)
	require.NoError(t, err)
	f.keyB, err = e.RegisterRegion(2, 0x30000, 0x1000, AccessRemoteWrite)
	require.NoError(t, err)
	f.keyD, err = e.RegisterRegion(1, 0x40000, 0x1000, AccessRemoteWrite)
	require.NoError(t, err)
	require.NoError(t, e.DeregisterRegion(f.keyD))
	f.keyW, err = e.RegisterRegion(1, math.MaxUint64-0xFFF, 0x1000, AccessRemoteWrite)
	require.NoError(t, err)
	// the tag of keyA with the index of another entry's generation: tag mismatch on entry 0.
	i, tag := p.SplitRKey(f.keyA)
	f.keyA2x = p.RKey(i, tag+1)
	for c := range 3 {
		for s := range p.Streams {
			require.NoError(t, e.PostReceive(c, s, 0x100000+0x10000*uint64(c*p.Streams+s), 1024))
		}
	}
	return f
}

func write(conn uint16, msn, msgLen, rkey uint32, va uint64, n int) Desc {
	return Desc{Op: wire.OpWrite, Conn: conn, MSN: msn, MsgLen: msgLen, RKey: rkey, VA: va, Payload: payload(n, byte(va))}
}

func send(conn uint16, stream uint8, msn, msgLen, off uint32, n int) Desc {
	return Desc{Op: wire.OpSend, Conn: conn, Stream: stream, MSN: msn, MsgLen: msgLen, Offset: off, Payload: payload(n, byte(off))}
}

// TestRefusals: every refusal writes nothing, is counted under its reason, answers with its NAK
// code, and (when it fails the message) releases the message's completion with that status.
func TestRefusals(t *testing.T) {
	type tc struct {
		name  string
		desc  func(f *fixture) Desc
		drop  DropReason
		fails bool // the message fails: completion with status Nak is released
	}
	cases := []tc{
		{"write ok", func(f *fixture) Desc { return write(1, 0, 16, f.keyA, 0x10000, 16) }, DropNone, false},
		{"bad rkey index beyond table", func(f *fixture) Desc { return write(1, 0, 16, f.p.RKey(15, 1), 0x10000, 16) }, DropRKeyInvalid, true},
		{"rkey of empty entry", func(f *fixture) Desc { return write(1, 0, 16, f.p.RKey(9, 1), 0x10000, 16) }, DropRKeyInvalid, true},
		{"rkey 0", func(f *fixture) Desc { return write(1, 0, 16, 0, 0x10000, 16) }, DropRKeyTag, true},
		{"deregistered region, entry reused", func(f *fixture) Desc { return write(1, 0, 16, f.keyD, 0x40000, 16) }, DropRKeyTag, true},
		{"deregistered region", func(f *fixture) Desc {
			require.NoError(t, f.e.DeregisterRegion(f.keyB))
			return write(2, 0, 16, f.keyB, 0x30000, 16)
		}, DropRKeyInvalid, true},
		{"tag mismatch", func(f *fixture) Desc { return write(1, 0, 16, f.keyA2x, 0x10000, 16) }, DropRKeyTag, true},
		{"wrong connection", func(f *fixture) Desc { return write(2, 0, 16, f.keyA, 0x10000, 16) }, DropWrongConnection, true},
		{"no remote write", func(f *fixture) Desc { return write(1, 0, 16, f.keyR, 0x20000, 16) }, DropNoWriteAccess, true},
		{"below base", func(f *fixture) Desc { return write(1, 0, 16, f.keyA, 0xFFFF, 16) }, DropOutOfBounds, true},
		{"past end by one", func(f *fixture) Desc { return write(1, 0, 16, f.keyA, 0x10FF1, 16) }, DropOutOfBounds, true},
		{"exactly to end", func(f *fixture) Desc { return write(1, 0, 16, f.keyA, 0x10FF0, 16) }, DropNone, false},
		{"far beyond (va - base > length)", func(f *fixture) Desc { return write(1, 0, 16, f.keyA, 0x7FFF_0000_0000, 16) }, DropOutOfBounds, true},
		{"top of address space ok", func(f *fixture) Desc { return write(1, 0, 16, f.keyW, math.MaxUint64-15, 16) }, DropNone, false},
		{"va + len wraps 2^64", func(f *fixture) Desc { return write(1, 0, 16, f.keyW, math.MaxUint64-14, 16) }, DropInvalidDesc, false},
		{"other region's range", func(f *fixture) Desc { return write(1, 0, 16, f.keyA, 0x30000, 16) }, DropOutOfBounds, true},
		{"write segmentation: short middle", func(f *fixture) Desc { return write(1, 0, 600, f.keyA, 0x10000, 100) }, DropSegmentation, true},
		{"write too long", func(f *fixture) Desc { return write(1, 0, 64*256+1, f.keyA, 0x10000, 256) }, DropMessageTooLong, true},
		{"send ok", func(f *fixture) Desc { return send(0, 1, 0, 1024, 0, 256) }, DropNone, false},
		{"send receive too small", func(f *fixture) Desc { return send(0, 1, 0, 1025, 0, 256) }, DropReceiveTooSmall, true},
		{"send offset not mtu aligned", func(f *fixture) Desc { return send(0, 1, 0, 1024, 8, 256) }, DropSegmentation, true},
		{"send short middle", func(f *fixture) Desc { return send(0, 1, 0, 1024, 256, 255) }, DropSegmentation, true},
		{"send not posted (msn 1)", func(f *fixture) Desc { return send(0, 1, 1, 16, 0, 16) }, DropReceiverNotReady, false},
		{"send on conn without receives", func(f *fixture) Desc { return send(3, 1, 0, 16, 0, 16) }, DropReceiverNotReady, false},
		{"write not posted", func(f *fixture) Desc { return write(1, 5, 16, f.keyA, 0x10000, 16) }, DropReceiverNotReady, false},
		{"stale msn", func(f *fixture) Desc { return send(0, 1, math.MaxUint32, 16, 0, 16) }, DropStaleMessage, false},
		{"stream out of range", func(f *fixture) Desc { return send(0, 4, 0, 16, 0, 16) }, DropInvalidDesc, false},
		{"conn out of range", func(f *fixture) Desc { return send(4, 0, 0, 16, 0, 16) }, DropInvalidDesc, false},
		{"payload beyond message", func(f *fixture) Desc { return send(0, 0, 0, 16, 8, 16) }, DropInvalidDesc, false},
		{"payload above mtu", func(f *fixture) Desc { return send(0, 0, 0, 1024, 0, 257) }, DropInvalidDesc, false},
		{"ack opcode", func(f *fixture) Desc { d := send(0, 0, 0, 16, 0, 16); d.Op = wire.OpAck; return d }, DropInvalidDesc, false},
		{"empty send", func(f *fixture) Desc { return send(0, 0, 0, 0, 0, 0) }, DropNone, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			d := c.desc(f)
			r := f.e.Place(d)
			require.Equal(t, c.drop, r.Drop)
			var want Counters
			want.Drops[c.drop] = 1
			switch {
			case c.drop == DropNone:
				want.BytesPlaced = uint64(len(d.Payload))
				if len(d.Payload) > 0 {
					require.Equal(t, &DMAWrite{Addr: r.DMA.Addr, Data: d.Payload}, r.DMA)
				} else {
					require.Nil(t, r.DMA)
				}
				if d.MsgLen == uint32(len(d.Payload)) {
					want.Completed = 1
					require.Len(t, r.Completions, 1)
					require.Equal(t, wire.NakCode(0), r.Completions[0].Status)
				}
			default:
				require.Nil(t, r.DMA, "a refused packet writes nothing")
				require.Equal(t, c.drop.Nak(), r.Nak)
				if c.drop == DropReceiverNotReady {
					require.Equal(t, uint16(DefaultRNRDelayUS), r.RNRDelay)
				}
			}
			if c.fails {
				want.Failed = 1
				require.Len(t, r.Completions, 1)
				cp := r.Completions[0]
				require.Equal(t, c.drop.Nak(), cp.Status)
				require.Equal(t, uint32(0), cp.Bytes)
				require.Equal(t, d.MSN, cp.MSN)
				// A later packet of the failed message (here the same one) repeats the NAK; the
				// message was released, so it is stale now.
				require.Equal(t, DropStaleMessage, f.e.Place(d).Drop)
				want.Drops[DropStaleMessage] = 1
			} else if c.drop != DropNone {
				require.Empty(t, r.Completions)
			}
			require.Empty(t, cmp.Diff(want, f.e.Counters()))
		})
	}
}

// TestFailedMessageWaits: a failed message behind an incomplete one keeps NAKing its packets
// until it is released, in order.
func TestFailedMessageWaits(t *testing.T) {
	f := newFixture(t)
	e := f.e
	require.NoError(t, e.PostReceive(1, 0, 0x900000, 1024))
	r := e.Place(write(1, 1, 512, f.keyR, 0x20000, 256))
	require.Equal(t, DropNoWriteAccess, r.Drop)
	require.Empty(t, r.Completions, "MSN 0 is still open")
	r = e.Place(write(1, 1, 512, f.keyR, 0x20100, 256))
	require.Equal(t, Result{Drop: DropMessageFailed, Nak: wire.NakRKeyViolation}, r)
	r = e.Place(write(1, 0, 16, f.keyA, 0x10000, 16))
	require.Equal(t, DropNone, r.Drop)
	want := []Completion{
		{Conn: 1, MSN: 0, Op: wire.OpWrite, MsgLen: 16, Bytes: 16, Buf: Buffer{0x100000 + 0x10000*4, 1024}, RKey: f.keyA},
		{Conn: 1, MSN: 1, Op: wire.OpWrite, MsgLen: 512, Status: wire.NakRKeyViolation, Buf: Buffer{0x900000, 1024}, RKey: f.keyR},
	}
	require.Empty(t, cmp.Diff(want, r.Completions))
}

func TestInconsistentAndPartialFailure(t *testing.T) {
	f := newFixture(t)
	e := f.e
	mem := NewHostMemory()
	r := e.Place(send(0, 0, 0, 768, 256, 256))
	require.Equal(t, DropNone, r.Drop)
	mem.Apply(r.DMA)
	for _, d := range []Desc{
		send(0, 0, 0, 512, 0, 256), // message length differs
		func() Desc { d := write(0, 0, 768, f.keyA, 0x10000, 256); return d }(), // opcode differs
	} {
		f2 := newFixture(t)
		require.Equal(t, DropNone, f2.e.Place(send(0, 0, 0, 768, 256, 256)).Drop)
		r := f2.e.Place(d)
		require.Equal(t, DropInconsistent, r.Drop)
		require.Equal(t, wire.NakInvalidRequest, r.Nak)
		require.Len(t, r.Completions, 1)
		require.Equal(t, uint32(256), r.Completions[0].Bytes, "bytes placed before the failure stay")
	}
	// WRITE rkey differs from the message's.
	require.NoError(t, e.PostReceive(1, 0, 0x900000, 0))
	require.Equal(t, DropNone, e.Place(write(1, 1, 512, f.keyA, 0x10100, 256)).Drop)
	r = e.Place(write(1, 1, 512, f.keyW, math.MaxUint64-255, 256))
	require.Equal(t, DropInconsistent, r.Drop)
	// WRITE residue differs.
	require.NoError(t, e.PostReceive(1, 0, 0x900000, 0))
	require.Equal(t, DropNone, e.Place(write(1, 2, 512, f.keyA, 0x10100, 256)).Drop)
	require.Equal(t, DropSegmentation, e.Place(write(1, 2, 512, f.keyA, 0x10208, 256)).Drop)
}

// TestReceiverNotReadyRetry: RNR changes nothing; the same packet placed after the receive is
// posted succeeds, and the receive for MSN m is the (m − CompMSN)-th posted.
func TestReceiverNotReadyRetry(t *testing.T) {
	p := testParams(t, smallMTU)
	e := New(p)
	d1 := send(0, 0, 1, 10, 0, 10)
	d0 := send(0, 0, 0, 10, 0, 10)
	require.Equal(t, DropReceiverNotReady, e.Place(d1).Drop)
	require.NoError(t, e.PostReceive(0, 0, 0x1000, 10))
	require.Equal(t, DropReceiverNotReady, e.Place(d1).Drop, "one receive posted: it is MSN 0's")
	require.NoError(t, e.PostReceive(0, 0, 0x2000, 10))
	r := e.Place(d1)
	require.Equal(t, DropNone, r.Drop)
	require.Equal(t, uint64(0x2000), r.DMA.Addr)
	require.Empty(t, r.Completions)
	r = e.Place(d0)
	require.Equal(t, uint64(0x1000), r.DMA.Addr)
	require.Equal(t, []uint32{0, 1}, []uint32{r.Completions[0].MSN, r.Completions[1].MSN})
	require.Equal(t, StreamState{CompMSN: 2, Head: 2, Posted: 0}, e.Stream(0, 0))
	require.Equal(t, uint64(2), e.Counters().Drops[DropReceiverNotReady])
}

// TestMSNWrap: the MSN and the ring index wrap.
func TestMSNWrap(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.MTU = 256; c.PostedReceivesPerStream = 3 })
	e := New(p)
	e.streams[0].CompMSN = math.MaxUint32 - 1
	var got []uint32
	for i := range 7 {
		require.NoError(t, e.PostReceive(0, 0, uint64(i)<<12, 16))
		msn := uint32(math.MaxUint32 - 1 + i)
		r := e.Place(send(0, 0, msn, 16, 0, 16))
		require.Equal(t, DropNone, r.Drop)
		for _, c := range r.Completions {
			got = append(got, c.MSN)
		}
		require.Equal(t, DropStaleMessage, e.Place(send(0, 0, msn, 16, 0, 16)).Drop)
	}
	require.Equal(t, []uint32{math.MaxUint32 - 1, math.MaxUint32, 0, 1, 2, 3, 4}, got)
	require.Equal(t, StreamState{CompMSN: 5, Head: 7 % 3}, e.Stream(0, 0))
}

func TestSegmentCutsAtMTU(t *testing.T) {
	p := Params{MTU: 1024}
	for _, tc := range []struct {
		msgLen, i, off, n uint32
	}{
		{0, 0, 0, 0},
		{1, 0, 0, 1},
		{1024, 0, 0, 1024},
		{3000, 1, 1024, 1024},
		{3000, 2, 2048, 952},
		{3000, 3, 3072, 0},
	} {
		off, n := p.Segment(tc.msgLen, tc.i)
		require.Equal(t, [2]uint32{tc.off, tc.n}, [2]uint32{off, n}, "%d bytes, packet %d", tc.msgLen, tc.i)
	}
	for _, l := range []uint32{1, 1023, 1024, 1025, 5000} {
		_, n := p.Segment(l, uint32(p.Packets(l)-1))
		require.Equal(t, p.LastLen(l), n, "last packet of %d bytes", l)
	}
}
