package placement

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/wire"
)

func testParams(t testing.TB, mutate func(*config.Config)) Params {
	t.Helper()
	c := config.Default()
	if mutate != nil {
		mutate(&c)
	}
	require.NoError(t, c.Validate())
	return ParamsFrom(c)
}

func smallMTU(c *config.Config) { c.MTU = 256 }

func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func TestParamsFromDefault(t *testing.T) {
	p := testParams(t, nil)
	want := Params{Conns: 4, Streams: 4, Regions: 16, IndexBits: 4, TagBits: 28, Depth: 8, MTU: 4096,
		MaxMsgPackets: 64, RNRDelayUS: 10}
	require.Empty(t, cmp.Diff(want, p))
	require.NoError(t, p.Validate())
	require.Equal(t, uint32(256<<10), p.MaxMsgLen())
	for _, tc := range []struct {
		l       uint32
		n       uint64
		lastLen uint32
	}{{0, 1, 0}, {1, 1, 1}, {4096, 1, 4096}, {4097, 2, 1}, {8192, 2, 4096}, {math.MaxUint32, 1 << 20, 4095}} {
		require.Equal(t, tc.n, p.Packets(tc.l), "L=%d", tc.l)
		require.Equal(t, tc.lastLen, p.LastLen(tc.l), "L=%d", tc.l)
	}
	i, tag := p.SplitRKey(0xCAFE0001)
	require.Equal(t, 1, i)
	require.Equal(t, uint32(0xCAFE000), tag)
	require.Equal(t, uint32(0xCAFE0001), p.RKey(i, tag))

	bad := p
	bad.MaxMsgPackets = 48
	require.Error(t, bad.Validate())
}

func TestDropReasonNak(t *testing.T) {
	want := map[DropReason]wire.NakCode{
		DropReceiverNotReady: wire.NakReceiverNotReady, DropInconsistent: wire.NakInvalidRequest,
		DropReceiveTooSmall: wire.NakReceiveTooSmall, DropMessageTooLong: wire.NakInvalidRequest,
		DropSegmentation: wire.NakInvalidRequest, DropRKeyInvalid: wire.NakRKeyViolation,
		DropRKeyTag: wire.NakRKeyViolation, DropWrongConnection: wire.NakRKeyViolation,
		DropNoWriteAccess: wire.NakRKeyViolation, DropOutOfBounds: wire.NakBoundsViolation,
	}
	for _, r := range AllDropReasons() {
		require.Equal(t, want[r], r.Nak(), r.String())
		require.NotContains(t, r.String(), "DropReason(")
	}
	require.Equal(t, "DropReason(15)", NumDropReasons.String())
}

func TestRegionTable(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.MemoryRegions = 3 })
	require.Equal(t, 2, p.IndexBits)
	e := New(p)
	k0, err := e.RegisterRegion(0, 0x1000, 0x1000, AccessRemoteWrite)
	require.NoError(t, err)
	require.Equal(t, p.RKey(0, 1), k0)
	k1, err := e.RegisterRegion(1, 0x2000, 0x10, AccessRemoteWrite|AccessRemoteRead)
	require.NoError(t, err)
	require.Equal(t, p.RKey(1, 1), k1)
	k2, err := e.RegisterRegion(1, math.MaxUint64, 1, 0) // the last byte of the address space
	require.NoError(t, err)
	require.Equal(t, p.RKey(2, 1), k2)
	_, err = e.RegisterRegion(0, 0, 1, AccessRemoteWrite)
	require.ErrorIs(t, err, ErrRegionTableFull)

	require.NoError(t, e.DeregisterRegion(k0))
	require.ErrorIs(t, e.DeregisterRegion(k0), ErrNoSuchRegion)
	k0b, err := e.RegisterRegion(2, 0x5000, 8, AccessRemoteWrite)
	require.NoError(t, err)
	require.Equal(t, p.RKey(0, 2), k0b, "same entry, next generation")
	require.ErrorIs(t, e.DeregisterRegion(k0), ErrNoSuchRegion, "stale rkey")
	require.ErrorIs(t, e.DeregisterRegion(p.RKey(3, 1)), ErrNoSuchRegion, "index beyond the table")
	require.Equal(t, Region{Valid: true, Base: 0x5000, Length: 8, Access: AccessRemoteWrite, Conn: 2, Gen: 2}, e.Region(0))

	for _, tc := range []struct {
		name         string
		conn         uint16
		base, length uint64
		access       Access
	}{
		{"zero length", 0, 0, 0, AccessRemoteWrite},
		{"wraps 2^64", 0, math.MaxUint64, 2, AccessRemoteWrite},
		{"conn out of range", 4, 0, 1, AccessRemoteWrite},
		{"unknown access bit", 0, 0, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(p).RegisterRegion(tc.conn, tc.base, tc.length, tc.access)
			require.ErrorIs(t, err, ErrBadRegion)
		})
	}
}

func TestRKeyTagWraps(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.MemoryRegions = 1 << 16 })
	require.Equal(t, 16, p.TagBits)
	e := New(p)
	e.regions[5].Gen = 1<<16 - 1
	for i := range 5 {
		e.regions[i].Valid = true
	}
	k, err := e.RegisterRegion(0, 0, 1, AccessRemoteWrite)
	require.NoError(t, err)
	require.Equal(t, p.RKey(5, 1), k, "tag wraps past 0 to 1")
}

func TestPostReceive(t *testing.T) {
	p := testParams(t, nil)
	e := New(p)
	for i := range p.Depth {
		require.NoError(t, e.PostReceive(3, 3, uint64(i)<<20, 100))
	}
	require.ErrorIs(t, e.PostReceive(3, 3, 0, 1), ErrQueueFull)
	require.ErrorIs(t, e.PostReceive(4, 0, 0, 1), ErrBadStream)
	require.ErrorIs(t, e.PostReceive(0, 4, 0, 1), ErrBadStream)
	require.ErrorIs(t, e.PostReceive(0, 0, math.MaxUint64, 2), ErrBadBuffer)
	require.NoError(t, e.PostReceive(0, 0, math.MaxUint64, 1))
	require.NoError(t, e.PostReceive(0, 0, math.MaxUint64, 0))
	require.Equal(t, StreamState{Posted: 8}, e.Stream(3, 3))
	require.Equal(t, Buffer{Addr: 2 << 20, Length: 100}, e.Slot(3, 3, 2).Buf)
}

func TestDescFromPacket(t *testing.T) {
	pk := &wire.Packet{BTH: wire.BTH{Opcode: wire.OpWrite, Flags: wire.FlagFirst | wire.FlagLast, ConnID: 3, StreamID: 2, MSN: 7},
		Write: &wire.WriteExt{MsgLen: 8, RKey: 0xCAFE0001, VA: 0x7F0000001000}, Payload: []byte("MetaRoCE")}
	d, err := DescFromPacket(pk)
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(Desc{Op: wire.OpWrite, Flags: wire.FlagFirst | wire.FlagLast, Conn: 3, Stream: 2, MSN: 7,
		MsgLen: 8, RKey: 0xCAFE0001, VA: 0x7F0000001000, Payload: []byte("MetaRoCE")}, d))
	pk = &wire.Packet{BTH: wire.BTH{Opcode: wire.OpSend, MSN: 1}, Send: &wire.SendExt{MsgLen: 9000, Offset: 4096},
		Payload: []byte{1}}
	d, err = DescFromPacket(pk)
	require.NoError(t, err)
	require.Equal(t, Desc{Op: wire.OpSend, MSN: 1, MsgLen: 9000, Offset: 4096, Payload: []byte{1}}, d)
	_, err = DescFromPacket(&wire.Packet{BTH: wire.BTH{Opcode: wire.OpAck}, Ack: &wire.Ack{}})
	require.Error(t, err)
}

func TestSetStreamMSN(t *testing.T) {
	p := testParams(t, nil)
	for _, tc := range []struct {
		name         string
		conn, stream int
		posted       int
		msn          uint32
		err          error
		want         StreamState
	}{
		{"idle stream", 1, 2, 0, math.MaxUint32 - 2, nil, StreamState{CompMSN: math.MaxUint32 - 2, Head: 5}},
		{"zero", 0, 0, 0, 0, nil, StreamState{}},
		{"receive posted", 1, 2, 1, 7, ErrBusy, StreamState{Posted: 1}},
		{"connection out of range", 4, 0, 0, 7, ErrBadStream, StreamState{}},
		{"stream out of range", 0, 4, 0, 7, ErrBadStream, StreamState{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(p)
			for range tc.posted {
				require.NoError(t, e.PostReceive(tc.conn, tc.stream, 0x1000, 16))
			}
			require.ErrorIs(t, e.SetStreamMSN(tc.conn, tc.stream, tc.msn), tc.err)
			if tc.conn < p.Conns && tc.stream < p.Streams {
				require.Empty(t, cmp.Diff(tc.want, e.Stream(tc.conn, tc.stream)))
			}
		})
	}
	// The next message after the set MSN completes, across the 2^32 wrap.
	e := New(p)
	require.NoError(t, e.SetStreamMSN(0, 1, math.MaxUint32))
	for i := range 2 {
		require.NoError(t, e.PostReceive(0, 1, uint64(i)<<12, 16))
	}
	require.Equal(t, DropReceiverNotReady, e.Place(send(0, 1, 1, 16, 0, 16)).Drop)
	require.Empty(t, e.Place(send(0, 1, 0, 16, 0, 16)).Completions)
	r := e.Place(send(0, 1, math.MaxUint32, 16, 0, 16))
	require.Len(t, r.Completions, 2)
	require.Equal(t, []uint32{math.MaxUint32, 0}, []uint32{r.Completions[0].MSN, r.Completions[1].MSN})
	require.Equal(t, DropStaleMessage, e.Place(send(0, 1, math.MaxUint32, 16, 0, 16)).Drop)
}

func TestRestoreGeneration(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.MemoryRegions = 3 })
	require.Equal(t, 2, p.IndexBits)
	last := uint32(1)<<p.TagBits - 1
	for _, tc := range []struct {
		name     string
		rkey     uint32
		err      error
		nextRKey uint32 // the rkey the next registration issues
	}{
		{"near the wrap", p.RKey(0, last-1), nil, p.RKey(0, last)},
		{"last tag: the next wraps past 0", p.RKey(0, last), nil, p.RKey(0, 1)},
		{"tag 0", p.RKey(0, 0), nil, p.RKey(0, 1)},
		{"registered entry", p.RKey(1, 9), ErrBusy, p.RKey(0, 2)},
		{"no such entry", p.RKey(3, 9), ErrNoSuchRegion, p.RKey(0, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(p)
			_, err := e.RegisterRegion(0, 0x1000, 16, AccessRemoteWrite) // entry 0
			require.NoError(t, err)
			_, err = e.RegisterRegion(0, 0x2000, 16, AccessRemoteWrite) // entry 1
			require.NoError(t, err)
			require.NoError(t, e.DeregisterRegion(p.RKey(0, 1)))
			require.ErrorIs(t, e.RestoreGeneration(tc.rkey), tc.err)
			k, err := e.RegisterRegion(0, 0x3000, 16, AccessRemoteWrite)
			require.NoError(t, err)
			require.Equal(t, tc.nextRKey, k)
			require.Equal(t, uint32(1), e.Region(1).Gen, "entry 1 keeps its generation")
		})
	}
}
