package traffic

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/wire"
)

func TestPatternIsDeterministicAndDistinct(t *testing.T) {
	a, b := make([]byte, 4096), make([]byte, 4096)
	Fill(7, 0, a)
	Fill(7, 0, b)
	require.Equal(t, a, b)
	Fill(8, 0, b)
	require.NotEqual(t, a, b)
	for _, off := range []uint32{0, 3, 1000, 1001, 4090} {
		part := make([]byte, 5)
		Fill(7, off, part)
		require.Equal(t, a[off:off+5], part, "offset %d", off)
		require.Equal(t, Byte(7, off), a[off])
	}
}

func TestLedgerVerifiesEveryByte(t *testing.T) {
	l := NewLedger()
	m := l.Post(0, 1, 2, 0, wire.OpSend, 5000)
	data := make([]byte, 5000)
	Fill(m.ID, 0, data)
	bad := append([]byte(nil), data...)
	bad[4321] ^= 1
	require.ErrorContains(t, l.Delivered(10, m.ID, bad), "byte 4321")
	require.ErrorContains(t, l.Delivered(10, m.ID, data[:10]), "delivered 10 bytes")
	require.NoError(t, l.Delivered(10, m.ID, data))
	require.ErrorContains(t, l.Delivered(11, m.ID, data), "twice")
	require.ErrorContains(t, l.Delivered(11, 99, data), "unknown")
	require.Equal(t, uint64(4), l.Totals.VerifyFailures)
	require.Equal(t, uint64(1), l.Totals.ReceiverCompleted)
	require.Equal(t, uint64(5000), l.Totals.BytesDelivered)
	require.Empty(t, l.Undelivered())
}

func TestSpuriousRetransmissions(t *testing.T) {
	l := NewLedger()
	m := l.Post(0, 1, 2, 0, wire.OpWrite, 8192)
	l.SentPacket(m.ID, 0, false)
	l.SentPacket(m.ID, 1, false)
	l.ArrivedPacket(m.ID, 1)
	l.SentPacket(m.ID, 0, true) // packet 0 was lost: needed
	l.ArrivedPacket(m.ID, 0)
	l.SentPacket(m.ID, 1, true) // packet 1 had arrived: spurious
	l.ArrivedPacket(m.ID, 1)
	require.Equal(t, Totals{Messages: 1, BytesPosted: 8192, DataPackets: 4, Retransmissions: 2, SpuriousRetransmissions: 1}, l.Totals)
}
