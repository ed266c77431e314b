package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/wire"
)

// refMsg is one message of the reference sender.
type refMsg struct {
	conn, stream int
	msn          uint32
	op           wire.Opcode
	data         []byte
	dst          uint64 // WRITE: VA of byte 0; SEND: receive buffer address
	rkey         uint32
	bufLen       uint32
}

// scenario is random traffic from a reference sender: every stream of every connection sends
// rounds×Depth messages (random opcode and length 0..MaxMsgLen, mtu segmentation), with
// receives posted lazily (so some packets meet receiver_not_ready and are resent), packets of all
// messages and streams delivered in a random permutation, with random duplicates.
type scenario struct {
	e      *Engine
	want   *HostMemory // the reference image: every message's bytes where they belong
	got    *HostMemory // the image built from the engine's DMA commands
	msgs   map[[3]uint32]*refMsg
	comps  map[[2]int][]Completion
	res    [NumDropReasons]uint64
	pkts   uint64 // distinct packets
	dups   uint64 // duplicates injected
	bytes  uint64
	posted map[[2]int]int // receives posted per stream
}

func runScenario(t *testing.T, seed uint64, rounds int, skew uint64) *scenario {
	t.Helper()
	p := testParams(t, smallMTU)
	p.MaxMsgPackets = 16
	rng := rand.New(rand.NewPCG(seed, 99))
	e := New(p)
	e.addrSkew = skew
	sc := &scenario{e: e, want: NewHostMemory(), got: NewHostMemory(), msgs: map[[3]uint32]*refMsg{},
		comps: map[[2]int][]Completion{}, posted: map[[2]int]int{}}
	keys := make([]uint32, p.Conns)
	for c := range p.Conns {
		k, err := e.RegisterRegion(uint16(c), uint64(c+1)<<32, 1<<30, AccessRemoteWrite)
		require.NoError(t, err)
		keys[c] = k
	}
	msn := map[[2]int]uint32{}
	for round := range rounds {
		var all []*refMsg
		for c := range p.Conns {
			for s := range p.Streams {
				for range p.Depth {
					m := &refMsg{conn: c, stream: s, msn: msn[[2]int{c, s}]}
					msn[[2]int{c, s}]++
					l := rng.IntN(int(p.MaxMsgLen()) + 1)
					if rng.IntN(3) > 0 {
						l = rng.IntN(3 * p.MTU)
					}
					m.data = make([]byte, l)
					for i := range m.data {
						m.data[i] = byte(rng.Uint32())
					}
					m.op = wire.OpSend
					if rng.IntN(2) == 0 {
						m.op = wire.OpWrite
						// a fresh, possibly unaligned VA inside the connection's region
						m.dst = uint64(c+1)<<32 + uint64(round*p.Streams*p.Depth*0x10000+s*p.Depth*0x10000) +
							uint64(m.msn%uint32(p.Depth))*0x10000 + uint64(rng.IntN(p.MTU))
						m.rkey = keys[c]
					} else {
						m.dst = uint64(c+1)<<40 + uint64(m.msn)*0x10000 + uint64(s)<<36 + uint64(rng.IntN(64))
						m.bufLen = uint32(l + rng.IntN(100))
					}
					sc.want.Write(m.dst, m.data)
					sc.msgs[[3]uint32{uint32(c), uint32(s), m.msn}] = m
					all = append(all, m)
				}
			}
		}
		// Post a random prefix of each stream's receives now, the rest after the first pass.
		post := func(m *refMsg) {
			require.NoError(t, e.PostReceive(m.conn, m.stream, m.dst, m.bufLen))
			sc.posted[[2]int{m.conn, m.stream}]++
		}
		var later []*refMsg
		cut := map[[2]int]int{}
		for _, m := range all {
			k := [2]int{m.conn, m.stream}
			if _, ok := cut[k]; !ok {
				cut[k] = rng.IntN(p.Depth + 1)
			}
			if int(m.msn)%p.Depth < cut[k] {
				post(m)
			} else {
				later = append(later, m)
			}
		}
		var pkts []Desc
		for _, m := range all {
			n := int(p.Packets(uint32(len(m.data))))
			for i := range n {
				lo, hi := i*p.MTU, min((i+1)*p.MTU, len(m.data))
				d := Desc{Op: m.op, Conn: uint16(m.conn), Stream: uint8(m.stream), MSN: m.msn,
					MsgLen: uint32(len(m.data)), Payload: m.data[lo:hi]}
				if m.op == wire.OpWrite {
					d.RKey, d.VA = m.rkey, m.dst+uint64(lo)
				} else {
					d.Offset = uint32(lo)
				}
				pkts = append(pkts, d)
				sc.pkts++
				sc.bytes += uint64(hi - lo)
			}
		}
		for range len(pkts) / 4 {
			pkts = append(pkts, pkts[rng.IntN(len(pkts))])
			sc.dups++
		}
		rng.Shuffle(len(pkts), func(i, j int) { pkts[i], pkts[j] = pkts[j], pkts[i] })
		var retry []Desc
		for _, d := range pkts {
			if r := sc.place(d); r.Drop == DropReceiverNotReady {
				retry = append(retry, d)
			}
		}
		for _, m := range later {
			post(m)
		}
		rng.Shuffle(len(retry), func(i, j int) { retry[i], retry[j] = retry[j], retry[i] })
		for _, d := range retry {
			require.NotEqual(t, DropReceiverNotReady, sc.place(d).Drop)
		}
	}
	return sc
}

func (sc *scenario) place(d Desc) Result {
	r := sc.e.Place(d)
	sc.res[r.Drop]++
	sc.got.Apply(r.DMA)
	for _, c := range r.Completions {
		k := [2]int{int(c.Conn), int(c.Stream)}
		sc.comps[k] = append(sc.comps[k], c)
	}
	return r
}

// TestRandomTraffic: the property. Whatever the arrival order, duplicates and RNR retries, the
// memory image is exactly every message's bytes, every message completes once, in MSN order per
// stream, with the right record, and the counters are exact.
func TestRandomTraffic(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			sc := runScenario(t, seed, 3, 0)
			require.Empty(t, sc.want.Diff(sc.got), "memory image")
			for _, m := range sc.msgs {
				require.Equal(t, m.data, sc.got.Read(m.dst, len(m.data)))
			}
			p := sc.e.Params()
			for c := range p.Conns {
				for s := range p.Streams {
					cs := sc.comps[[2]int{c, s}]
					require.Len(t, cs, 3*p.Depth)
					for i, got := range cs {
						m := sc.msgs[[3]uint32{uint32(c), uint32(s), uint32(i)}]
						want := Completion{Conn: uint16(c), Stream: uint8(s), MSN: uint32(i), Op: m.op,
							MsgLen: uint32(len(m.data)), Bytes: uint32(len(m.data)), Buf: Buffer{m.dst, m.bufLen}, RKey: m.rkey}
						require.Empty(t, cmp.Diff(want, got))
					}
					require.Equal(t, StreamState{CompMSN: uint32(3 * p.Depth), Head: 0}, sc.e.Stream(c, s))
				}
			}
			cnt := sc.e.Counters()
			require.Equal(t, sc.res, cnt.Drops, "counters = observed results")
			require.Equal(t, sc.pkts, cnt.Drops[DropNone], "every packet placed exactly once")
			require.Equal(t, sc.dups, cnt.Drops[DropDuplicate]+cnt.Drops[DropStaleMessage])
			require.NotZero(t, cnt.Drops[DropDuplicate], "some duplicates meet an unreleased message")
			require.NotZero(t, cnt.Drops[DropReceiverNotReady], "some packets meet RNR and are resent")
			require.Equal(t, sc.bytes, cnt.BytesPlaced)
			require.Equal(t, uint64(len(sc.msgs)), cnt.Completed)
			for _, r := range []DropReason{DropInvalidDesc, DropMessageFailed, DropInconsistent, DropSegmentation,
				DropMessageTooLong, DropReceiveTooSmall, DropRKeyInvalid, DropRKeyTag, DropOutOfBounds} {
				require.Zero(t, cnt.Drops[r], r.String())
			}
			require.Zero(t, cnt.Failed)
		})
	}
}

// TestDuplicatesIdempotent: placing the same traffic twice more leaves memory, completions and
// every counter but the duplicate/stale ones unchanged.
func TestDuplicatesIdempotent(t *testing.T) {
	sc := runScenario(t, 7, 1, 0)
	before := sc.e.Counters()
	require.Empty(t, sc.want.Diff(sc.got))
	for _, m := range sc.msgs {
		for lo := 0; lo < max(len(m.data), 1); lo += sc.e.Params().MTU {
			hi := min(lo+sc.e.Params().MTU, len(m.data))
			d := Desc{Op: m.op, Conn: uint16(m.conn), Stream: uint8(m.stream), MSN: m.msn, MsgLen: uint32(len(m.data)),
				RKey: m.rkey, VA: m.dst + uint64(lo), Offset: uint32(lo), Payload: m.data[lo:hi]}
			if m.op == wire.OpSend {
				d.RKey, d.VA = 0, 0
			}
			r := sc.place(d)
			require.Equal(t, Result{Drop: DropStaleMessage}, r)
		}
	}
	after := sc.e.Counters()
	require.Equal(t, before.BytesPlaced, after.BytesPlaced)
	require.Equal(t, before.Completed, after.Completed)
	require.Equal(t, before.Drops[DropNone], after.Drops[DropNone])
	require.Empty(t, sc.want.Diff(sc.got))
}

// TestPlacementBugCaught: an engine that places every byte one address too high (a bug injected
// through the test-only address skew) is caught by the byte-for-byte memory comparison, while
// every other observable (drops, completions, counters) looks right.
func TestPlacementBugCaught(t *testing.T) {
	good := runScenario(t, 3, 1, 0)
	bad := runScenario(t, 3, 1, 1)
	require.Equal(t, good.e.Counters(), bad.e.Counters())
	require.Empty(t, cmp.Diff(good.comps, bad.comps))
	require.Empty(t, good.want.Diff(good.got))
	require.NotEmpty(t, bad.want.Diff(bad.got), "the memory check must see the placement bug")
}

func TestHostMemory(t *testing.T) {
	m := NewHostMemory()
	require.Equal(t, []byte{0, 0}, m.Read(12, 2))
	data := payload(3*PageSize+5, 1)
	m.Write(PageSize-3, data)
	require.Equal(t, data, m.Read(PageSize-3, len(data)))
	require.Equal(t, []uint64{0, 1, 2, 3, 4}, m.Pages())
	m.Write(^uint64(0)-1, []byte{1, 2, 3}) // wraps to address 0
	require.Equal(t, []byte{1, 2}, m.Read(^uint64(0)-1, 2))
	require.Equal(t, []byte{3}, m.Read(0, 1))
	o := NewHostMemory()
	o.Write(PageSize-3, data)
	o.Write(^uint64(0)-1, []byte{1, 2, 3})
	require.Empty(t, m.Diff(o))
	o.Write(10*PageSize, []byte{0}) // a written zero equals an unwritten byte
	require.Empty(t, m.Diff(o))
	o.Write(PageSize+7, []byte{0xEE})
	require.Equal(t, fmt.Sprintf("address 0x%016x: 0x%02x vs 0xee", PageSize+7, data[10]), m.Diff(o))
	m.Apply(nil)
}

func BenchmarkPlace(b *testing.B) {
	p := testParams(b, nil)
	for _, op := range []wire.Opcode{wire.OpWrite, wire.OpSend} {
		b.Run(op.String()+"_4096B", func(b *testing.B) {
			e := New(p)
			k, err := e.RegisterRegion(0, 0, 1<<40, AccessRemoteWrite)
			require.NoError(b, err)
			data := payload(p.MTU, 0)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			msn := uint32(0)
			for b.Loop() {
				if e.Stream(0, 0).Posted == 0 {
					for range p.Depth {
						require.NoError(b, e.PostReceive(0, 0, 0x1000, uint32(p.MTU)))
					}
				}
				d := Desc{Op: op, MSN: msn, MsgLen: uint32(p.MTU), RKey: k, VA: 0x1000, Payload: data}
				if r := e.Place(d); r.Drop != DropNone {
					b.Fatal(r.Drop)
				}
				msn++
			}
		})
	}
	b.Run("duplicate", func(b *testing.B) {
		e := New(p)
		require.NoError(b, e.PostReceive(0, 0, 0x1000, 1<<20))
		d := Desc{Op: wire.OpSend, MsgLen: 1 << 16, Payload: payload(p.MTU, 0)}
		e.Place(d)
		b.ReportAllocs()
		for b.Loop() {
			if r := e.Place(d); r.Drop != DropDuplicate {
				b.Fatal(r.Drop)
			}
		}
	})
}
