package sender

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// TestFIFO: a bounded FIFO refuses a push when full and keeps order across wrap-around.
func TestFIFO(t *testing.T) {
	f := newFIFO[int](2)
	for i, step := range []struct {
		push   int // 0: pop
		ok     bool
		popped int
		len    int
	}{
		{push: 1, ok: true, len: 1},
		{push: 2, ok: true, len: 2},
		{push: 3, ok: false, len: 2},
		{popped: 1, len: 1},
		{push: 4, ok: true, len: 2},
		{popped: 2, len: 1},
		{popped: 4, len: 0},
		{push: 5, ok: true, len: 1},
	} {
		if step.push != 0 {
			require.Equal(t, step.ok, f.Push(step.push), "step %d", i)
		} else {
			require.Equal(t, step.popped, f.Pop(), "step %d", i)
		}
		require.Equal(t, step.len, f.Len(), "step %d", i)
	}
}

// TestWorkRingFull: a full (connection, stream) ring refuses a post until a completion makes
// room; since it is deeper than Depth, a full ring always has a message to start.
func TestWorkRingFull(t *testing.T) {
	r := newRig(t, 1, func(p *Params) { p.WorkDepth = 3 })
	r.hello(0)
	for id := uint64(1); id <= 3; id++ {
		r.post(0, 0, wire.OpSend, testMTU, id)
	}
	err := r.s.PostWork(r.now, WorkRequest{Conn: 0, Stream: 0, Op: wire.OpSend, Len: testMTU, ID: 4})
	require.True(t, errors.Is(err, ErrQueueFull))
	require.Equal(t, uint64(1), r.s.Counters.QueueFull)
	require.Empty(t, cmp.Diff([]uint32{0, 1}, psnsOf(r.drain())))
	require.Len(t, r.ack(0, 0, 1, nil, 0, 0), 1)
	require.NoError(t, r.s.PostWork(r.now, WorkRequest{Conn: 0, Stream: 0, Op: wire.OpSend, Len: testMTU, ID: 4}))
	got := r.drain()
	require.Empty(t, cmp.Diff([]uint32{2}, psnsOf(got)))
	require.Equal(t, uint32(2), got[0].MSN)
}

// TestQueueOverflows: a full retransmit FIFO drops the request (the record stays unqueued, so a
// later loss signal queues it again); a full moved FIFO drops the copy. Both are counted.
func TestQueueOverflows(t *testing.T) {
	r := newRig(t, 1, func(p *Params) { p.RetxDepth = 1 })
	r.hello(0)
	r.post(0, 0, wire.OpWrite, 8*testMTU, 1)
	r.now = 100
	r.drain()
	r.now = 1000
	r.ack(0, 0, 2, []int{2, 4}, 50, 0) // 2, 3, 5 lost
	require.Equal(t, uint64(2), r.s.Counters.RetxOverflows)
	require.Empty(t, cmp.Diff([]uint32{2}, psnsOf(r.drain())))
	r.ack(0, 0, 2, []int{2, 4, 5}, 500, 0) // 3 and 5 found again by send time
	require.Empty(t, cmp.Diff([]uint32{3}, psnsOf(r.drain())))

	m := newRig(t, 2, func(p *Params) { p.MovedDepth = 1 })
	m.ack(0, 0, 0, nil, 5, 0)
	m.post(0, 0, wire.OpWrite, 4*testMTU, 1)
	m.drain()
	m.now = uint64(m.s.Params().Window.RTOInitial)
	m.s.Scan(m.now) // both paths time out: four copies, one fits
	require.Equal(t, uint64(4), m.s.Counters.RTOCopies)
	require.Equal(t, uint64(3), m.s.Counters.MovedOverflows)
}

// TestStaleReferences: a Ref to a freed record is ignored by Left, and a moved packet whose
// message slot was reposted is dropped.
func TestStaleReferences(t *testing.T) {
	r := newRig(t, 1, func(p *Params) { p.WorkDepth = 3 })
	r.hello(0)
	r.post(0, 0, wire.OpSend, testMTU, 1)
	first := r.drain()[0]
	r.ack(0, 0, 1, nil, 0, 0) // message 0 completes, its record is freed
	r.s.Left(5000, first.Ref)
	require.Nil(t, r.s.resolve(first.Ref))
	for id := uint64(2); id <= 4; id++ { // MSN 1..3: MSN 3 takes slot 0
		r.post(0, 0, wire.OpSend, testMTU, id)
	}
	require.True(t, r.s.conns[0].moved.Push(movedPkt{msg: msgRef{stream: 0, msn: 0}}))
	got := r.drain()
	require.Equal(t, uint64(1), r.s.Counters.StaleDropped)
	require.Empty(t, cmp.Diff([]uint32{1, 2}, msnsOf(got)), "Depth 2: MSN 3 waits")
}

// TestInputErrors: out-of-range inputs are refused with an error, never a panic.
func TestInputErrors(t *testing.T) {
	r := newRig(t, 1, nil)
	for _, wr := range []WorkRequest{
		{Conn: 2, Op: wire.OpSend},
		{Conn: 0, Stream: 2, Op: wire.OpSend},
		{Conn: 0, Op: wire.OpAck},
		{Conn: 0, Op: wire.OpWrite, Len: r.s.p.Placement.MaxMsgLen() + 1},
	} {
		require.Error(t, r.s.PostWork(0, wr), "%+v", wr)
	}
	require.Error(t, r.s.Doorbell(0, -1))
	_, err := r.s.Ack(0, AckIn{Conn: 0, Path: 1, Bitmap: sack.NewBitmap(64)})
	require.Error(t, err)
	_, err = r.s.Ack(0, AckIn{Conn: 0, Path: 0, Bitmap: sack.NewBitmap(32)})
	require.Error(t, err)

	good := r.s.Params()
	for name, edit := range map[string]func(*Params){
		"work depth not above Depth": func(p *Params) { p.WorkDepth = p.Placement.Depth },
		"wire connection ids":        func(p *Params) { p.WireConn = p.WireConn[:1] },
		"clock":                      func(p *Params) { p.TicksPerNS = 0 },
		"retransmit depth":           func(p *Params) { p.RetxDepth = -1 },
		"overhead":                   func(p *Params) { p.SendOverhead = -1 },
	} {
		p := good
		p.WireConn = append([]uint16(nil), good.WireConn...)
		edit(&p)
		_, err := New(p)
		require.Error(t, err, name)
	}
}

// TestOccupancy: the peaks each bounded table reached, as the memory sizing rules read them;
// they never go down when the tables drain.
func TestOccupancy(t *testing.T) {
	tests := []struct {
		name  string
		paths int
		run   func(r *rig)
		want  Occupancy
	}{
		{"nothing sent", 1, func(r *rig) {}, Occupancy{}},
		{"eight packets on one path, then acknowledged", 1, func(r *rig) {
			r.hello(0)
			r.post(0, 0, wire.OpWrite, 8*testMTU, 1)
			r.drain()
			r.now = 1000
			r.ack(0, 0, 8, nil, 50, 0)
		}, Occupancy{RecordsPerPath: 8, RingAge: 1}},
		{"three losses in one ACK", 1, func(r *rig) {
			r.hello(0)
			r.post(0, 0, wire.OpWrite, 8*testMTU, 1)
			r.now = 100 // after the echo below: no loss by send time
			r.drain()
			r.now = 1000
			r.ack(0, 0, 2, []int{2, 4}, 50, 0) // 2, 3, 5 lost
			r.drain()
		}, Occupancy{RecordsPerPath: 8, RetxFIFO: 3, RingAge: 1}},
		// Each path's oldest packet is queued again, and the four are copied to the moved FIFO.
		{"a timeout copies two paths' packets", 2, func(r *rig) {
			r.ack(0, 0, 0, nil, 5, 0)
			r.post(0, 0, wire.OpWrite, 4*testMTU, 1)
			r.drain()
			r.now = uint64(r.s.Params().Window.RTOInitial)
			r.s.Scan(r.now)
		}, Occupancy{RecordsPerPath: 2, RetxFIFO: 2, MovedFIFO: 4, RingAge: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.paths, nil)
			tc.run(r)
			require.Empty(t, cmp.Diff(tc.want, r.s.Occupancy()))
		})
	}
}

// TestRecordTableFull: a path holding RecordsPerPath live records blocks its connection (no new
// packet, whichever path the window would pick) until an ACK frees one; the SACKed records
// above a hole keep the table full, as they keep the path's span.
func TestRecordTableFull(t *testing.T) {
	r := newRig(t, 1, func(p *Params) { p.RecordsPerPath = 4 })
	require.Equal(t, 4, r.s.Params().RecordDepth())
	r.hello(0)
	r.post(0, 0, wire.OpWrite, 8*testMTU, 1)
	r.now = 100
	require.Empty(t, cmp.Diff([]uint32{0, 1, 2, 3}, psnsOf(r.drain())))
	require.Equal(t, uint64(1), r.s.Counters.BlockedRecords)
	require.Equal(t, uint64(0), r.s.Counters.Blocked[window.ReasonConnWindow], "the window had room")

	r.now = 1000
	r.ack(0, 0, 0, []int{1, 2, 3}, 50, 0) // PSN 0 lost, 1..3 SACKed: still four live records
	require.Empty(t, cmp.Diff([]uint32{0}, psnsOf(r.drain())), "the retransmission needs no record")
	require.Equal(t, uint64(2), r.s.Counters.BlockedRecords)

	r.now = 2000
	r.ack(0, 0, 4, nil, 1500, 0) // all four acknowledged
	require.Empty(t, cmp.Diff([]uint32{4, 5, 6, 7}, psnsOf(r.drain())))
	require.Equal(t, 4, r.s.Occupancy().RecordsPerPath)
}

// TestOccupancyMax: the peaks of two units, table by table.
func TestOccupancyMax(t *testing.T) {
	a := Occupancy{RecordsPerPath: 9, RetxFIFO: 1, RetryFIFO: 4, MovedFIFO: 0, RingAge: 7}
	b := Occupancy{RecordsPerPath: 3, RetxFIFO: 5, RetryFIFO: 4, MovedFIFO: 2, RingAge: 1}
	want := Occupancy{RecordsPerPath: 9, RetxFIFO: 5, RetryFIFO: 4, MovedFIFO: 2, RingAge: 7}
	require.Empty(t, cmp.Diff(want, a.Max(b)))
	require.Empty(t, cmp.Diff(want, b.Max(a)))
}
