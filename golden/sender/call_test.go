package sender

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/wire"
)

// A session of calls made through Call.Apply answers what the same calls made directly
// answer, and Replay on a fresh sender reproduces every result.
func TestCallApplyAndReplay(t *testing.T) {
	direct, viaCall, fresh := newRig(t, 2, nil), newRig(t, 2, nil), newRig(t, 2, nil)
	var log []Call
	do := func(c Call) Call {
		c.Now = viaCall.now
		c.Apply(viaCall.s)
		log = append(log, c)
		return c
	}
	wr := WorkRequest{Conn: 1, Stream: 0, Op: wire.OpWrite, Len: 3 * testMTU, Local: 1 << 20, RemoteVA: 1 << 32, RKey: 0x55, ID: 4}
	require.NoError(t, direct.s.PostWork(0, wr))
	require.Empty(t, do(Call{Op: OpPost, Work: wr}).Err)
	require.NoError(t, direct.s.Doorbell(0, 1))
	do(Call{Op: OpDoorbell, Conn: 1})

	at, ok := direct.s.Arm(0)
	c := do(Call{Op: OpArm})
	require.Equal(t, []any{at, ok}, []any{c.At, c.OK})

	pk, ok := direct.s.Next(0)
	c = do(Call{Op: OpNext})
	require.True(t, ok)
	require.True(t, c.OK)
	require.Empty(t, cmp.Diff(pk, c.Packet))
	direct.s.Left(0, pk.Ref)
	do(Call{Op: OpLeft, Ref: c.Packet.Ref})
	require.Equal(t, direct.s.TakeWakes(), do(Call{Op: OpTakeWakes}).Wakes)

	direct.now, viaCall.now = 4000, 4000
	done := direct.ack(1, pk.Path, pk.PSN+1, nil, 0, 0)
	ack := AckIn{Conn: 1, Path: pk.Path, Cum: pk.PSN + 1, Bitmap: sack.NewBitmap(direct.s.p.Sack.Width)}
	require.Empty(t, cmp.Diff(done, do(Call{Op: OpAck, Ack: ack}).Done))
	direct.s.Scan(4000)
	do(Call{Op: OpScan})
	at, ok = direct.s.Rearm()
	c = do(Call{Op: OpRearm})
	require.Equal(t, []any{at, ok}, []any{c.At, c.OK})
	require.Equal(t, direct.s.Counters, viaCall.s.Counters)

	replayed := Replay(fresh.s, log)
	require.Empty(t, cmp.Diff(log, replayed), "a replay answers as the log's sender did")
}

// Errors and refusals are results: an id out of range sets Err, a full ring sets Full (not
// Err), an unknown op sets Err.
func TestCallErrors(t *testing.T) {
	r := newRig(t, 1, nil)
	c := Call{Op: OpDoorbell, Conn: 9}
	c.Apply(r.s)
	require.NotEmpty(t, c.Err)

	wr := WorkRequest{Conn: 0, Stream: 0, Op: wire.OpSend, Len: 1}
	var full Call
	for i := 0; i <= r.s.p.WorkDepth; i++ {
		full = Call{Op: OpPost, Work: wr}
		full.Apply(r.s)
		require.Empty(t, full.Err)
	}
	require.True(t, full.Full, "the ring refuses the request after WorkDepth posts")

	bad := Call{Op: Op(200)}
	bad.Apply(r.s)
	require.Contains(t, bad.Err, "unknown call")
	require.Equal(t, "op(200)", bad.Op.String())
}

func TestCallString(t *testing.T) {
	for _, tc := range []struct {
		c    Call
		want string
	}{
		{Call{Op: OpNext, Now: 7}, "next at 7"},
		{Call{Op: OpDoorbell, Now: 1, Conn: 3}, "Doorbell at 1: conn 3"},
		{Call{Op: OpWoke, Now: 2, Time: 5}, "Woke at 2: 5"},
		{Call{Op: OpPost, Now: 3, Work: WorkRequest{Conn: 1, Stream: 2, Op: wire.OpWrite, Len: 10, ID: 4}},
			"PostWork at 3: conn 1 stream 2 op WRITE len 10 id 4"},
	} {
		require.Equal(t, tc.want, tc.c.String())
	}
}
