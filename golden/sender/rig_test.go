package sender

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// rig drives one Sender on a nanosecond clock (TicksPerNS 1): two connections, mtu 1024,
// SACK width 64, two streams of two posted receives each.
type rig struct {
	t   *testing.T
	s   *Sender
	now uint64
}

const (
	testMTU      = 1024
	testOverhead = 100 // wire bytes of a data frame beyond its payload
)

func testConfig(paths int) config.Config {
	c := config.Default()
	c.Connections, c.PathsPerConnection, c.StreamsPerConnection, c.PostedReceivesPerStream = 2, paths, 2, 2
	c.SackWidth, c.MTU = 64, testMTU
	return c
}

func newRig(t *testing.T, paths int, tweak func(*Params)) *rig {
	t.Helper()
	c := testConfig(paths)
	require.NoError(t, c.Validate())
	p := Params{Window: window.ParamsFrom(c), Sack: sack.ParamsFrom(c), Placement: placement.ParamsFrom(c), WireConn: []uint16{7, 9},
		TicksPerNS: 1, ScanTicks: 5000, AckDelayNS: 2000, FirstProbeNS: DefaultFirstProbeNS, TailProbeMinNS: DefaultTailProbeMinNS,
		Announce: true, WriteOverhead: testOverhead, SendOverhead: testOverhead}
	if tweak != nil {
		tweak(&p)
	}
	s, err := New(p)
	require.NoError(t, err)
	return &rig{t: t, s: s}
}

// post posts a message of n bytes on (conn, stream) and rings the doorbell. A WRITE's remote VA
// is 1<<32 and its rkey 0x55; the local buffer is at 1<<20 + id<<16.
func (r *rig) post(conn, stream int, op wire.Opcode, n uint32, id uint64) {
	r.t.Helper()
	wr := WorkRequest{Conn: conn, Stream: stream, Op: op, Len: n, Local: 1<<20 + id<<16, ID: id}
	if op == wire.OpWrite {
		wr.RemoteVA, wr.RKey = 1<<32, 0x55
	}
	require.NoError(r.t, r.s.PostWork(r.now, wr))
	require.NoError(r.t, r.s.Doorbell(r.now, conn))
}

// drain takes every packet Next has at now, telling each one left at now.
func (r *rig) drain() []Packet {
	var out []Packet
	for {
		pk, ok := r.s.Next(r.now)
		if !ok {
			return out
		}
		r.s.Left(r.now, pk.Ref)
		out = append(out, pk)
	}
}

// ack delivers an ACK of (conn, path) with cumulative PSN cum and SACK bits at offsets sacks.
func (r *rig) ack(conn, path int, cum uint32, sacks []int, echo uint32, hint uint16) []Done {
	r.t.Helper()
	bm := sack.NewBitmap(r.s.p.Sack.Width)
	for _, i := range sacks {
		bm.Set(i)
	}
	done, err := r.s.Ack(r.now, AckIn{Conn: conn, Path: path, Cum: cum, Bitmap: bm, TSEcho: echo, Hint: hint})
	require.NoError(r.t, err)
	return done
}

// hello opens conn's first-RTT gate with a duplicate ACK (no hint) on path 0.
func (r *rig) hello(conn int) { r.ack(conn, 0, 0, nil, uint32(r.now), 0) }

// brief is the part of a packet the tables compare.
type brief struct {
	Kind     Kind
	Path     int
	PSN, MSN uint32
	Index    uint32
	Flags    wire.Flags
}

func briefs(pks []Packet) []brief {
	var out []brief
	for _, pk := range pks {
		out = append(out, brief{Kind: pk.Kind, Path: pk.Path, PSN: pk.PSN, MSN: pk.MSN, Index: pk.Index, Flags: pk.Flags})
	}
	return out
}

// column is one field of every packet.
func column(pks []Packet, field func(Packet) uint32) []uint32 {
	var out []uint32
	for _, pk := range pks {
		out = append(out, field(pk))
	}
	return out
}

func psnsOf(pks []Packet) []uint32 { return column(pks, func(pk Packet) uint32 { return pk.PSN }) }
func msnsOf(pks []Packet) []uint32 { return column(pks, func(pk Packet) uint32 { return pk.MSN }) }
