// Stimulus of the transmit data path: data-packet descriptors as golden/transport's sender
// (emit) builds them, over a random host memory image, each with the packet golden would send
// for it (its payload the memory bytes at the descriptor's address) and the peer table's
// addressing.

package cosim

import (
	"fmt"
	"math/rand/v2"

	"github.com/mrgen/mrgen/golden/fabric"
	goldenpl "github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/psn"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/pipeline"
)

// Payload length mixes of the nic_tx scenarios.
const (
	txLenMixed = iota // messages of 0..4 mtu: every segment length, the edges often
	txLenZero         // empty messages: header-only packets, no DMA read
	txLenMax          // every packet a full mtu
)

// hostMemory is a random host memory image over the whole 64-bit address space: the 8-byte
// word at address a&^7 is a hash of a>>3 and the run's key.
type hostMemory struct{ key uint64 }

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// read fills buf with the bytes at [addr, addr+len(buf)).
func (m hostMemory) read(addr uint64, buf []byte) {
	i := 0
	for i < len(buf) {
		a := addr + uint64(i)
		w := mix64(a>>3 ^ m.key)
		for s := a & 7; s < 8 && i < len(buf); s++ {
			buf[i] = byte(w >> (8 * s))
			i++
		}
	}
}

// txPeer is one connection's peer-table entry.
type txPeer struct {
	remote uint16
	mac    wire.MAC
	ipv6   bool
	ip     [16]byte
}

// nicTxDesc is one descriptor with the packet golden builds for it.
type nicTxDesc struct {
	seq   int
	conn  int
	addr  uint64 // host address of the payload
	port  int    // egress port
	pkt   *wire.Packet
	txdAt uint64 // cycle of the s_txd handshake
}

func (d *nicTxDesc) String() string {
	p := d.pkt
	return fmt.Sprintf("packet %d (%s %s, conn %d -> %d, path %d PSN %d, stream %d MSN %d, payload %d bytes at %#x, port %d)",
		d.seq, p.BTH.Opcode, p.BTH.Flags, d.conn, p.BTH.ConnID, p.BTH.PathID, p.BTH.PSN, p.BTH.StreamID, p.BTH.MSN,
		len(p.Payload), d.addr, d.port)
}

// nicTxTraffic draws descriptors lazily from one seed.
type nicTxTraffic struct {
	rng     *rand.Rand
	prm     wire.Params
	pl      goldenpl.Params
	mem     hostMemory
	lenMode int
	// The NIC's addressing, static inputs of the run.
	localMAC wire.MAC
	localIP  [16]byte
	ecn      uint8
	peers    []txPeer
	seq      int
}

func newNicTxTraffic(prm wire.Params, pl goldenpl.Params, seed uint64, lenMode int) *nicTxTraffic {
	rng := rand.New(rand.NewPCG(seed, 0x7e1dd47a))
	t := &nicTxTraffic{rng: rng, prm: prm, pl: pl, mem: hostMemory{key: rng.Uint64()}, lenMode: lenMode}
	randBytes := func(b []byte) {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	randBytes(t.localMAC[:])
	randBytes(t.localIP[:])
	if rng.IntN(2) == 1 {
		t.ecn = fabric.ECT0 // the transport is ECN-capable
	}
	for c := 0; c < prm.Connections; c++ {
		p := txPeer{remote: uint16(rng.IntN(prm.Connections)), ipv6: rng.IntN(3) == 0}
		// Connection 0 over IPv4 and 1 over IPv6, so every run has both.
		switch c {
		case 0:
			p.ipv6 = false
		case 1:
			p.ipv6 = true
		}
		randBytes(p.mac[:])
		randBytes(p.ip[:])
		t.peers = append(t.peers, p)
	}
	return t
}

// msgLen draws a message length for the scenario's mix.
func (t *nicTxTraffic) msgLen() uint32 {
	mtu := uint32(t.prm.MTU)
	switch t.lenMode {
	case txLenZero:
		return 0
	case txLenMax:
		return mtu * uint32(1+t.rng.IntN(4))
	}
	if t.rng.IntN(20) == 0 {
		return 0
	}
	n := uint32(1 + t.rng.IntN(4))
	switch t.rng.IntN(4) {
	case 0: // the edges: a last segment of one byte or a full mtu
		return (n-1)*mtu + 1 + uint32(t.rng.IntN(2))*(mtu-1)
	case 1: // short messages
		return 1 + uint32(t.rng.IntN(64))
	}
	return (n-1)*mtu + 1 + uint32(t.rng.IntN(int(mtu)))
}

// next draws one descriptor: one packet of a random message, with the flags emit sets.
func (t *nicTxTraffic) next() *nicTxDesc {
	r := t.rng
	op := wire.OpWrite
	if r.IntN(2) == 1 {
		op = wire.OpSend
	}
	ml := t.msgLen()
	n := uint32(t.pl.Packets(ml))
	idx := uint32(r.IntN(int(n)))
	off, plen := t.pl.Segment(ml, idx)
	// A retransmission one time in six, a path restart and a first-RTT packet one in eight.
	flags := sender.DataFlags(idx, n, r.IntN(6) == 0, r.IntN(8) == 0, r.IntN(8) != 0)
	conn := r.IntN(t.prm.Connections)
	peer := &t.peers[conn]
	d := &nicTxDesc{seq: t.seq, conn: conn, addr: r.Uint64() >> 1, port: r.IntN(1 << pipeline.PortBits)}
	t.seq++
	psnMask := psn.MustSpace(t.prm.PSNWidth).Mask()
	p := &wire.Packet{
		Eth: wire.EthHeader{Dst: peer.mac, Src: t.localMAC},
		IP:  wire.IPHeader{Version: 4, DSCP: pipeline.DataDSCP, ECN: t.ecn, TTL: pipeline.CtlTTL},
		UDP: wire.UDPHeader{SrcPort: uint16(r.Uint32())},
		BTH: wire.BTH{Opcode: op, Flags: flags, ConnID: peer.remote, PathID: uint8(r.IntN(t.prm.PathsPerConnection)),
			StreamID: uint8(r.IntN(t.prm.StreamsPerConnection)), PSN: r.Uint32() & psnMask, MSN: r.Uint32()},
	}
	if peer.ipv6 {
		p.IP.Version, p.IP.Src, p.IP.Dst = 6, t.localIP, peer.ip
	} else {
		p.IP.DontFragment = true
		copy(p.IP.Src[:4], t.localIP[:4])
		copy(p.IP.Dst[:4], peer.ip[:4])
	}
	if op == wire.OpWrite {
		p.Write = &wire.WriteExt{MsgLen: ml, RKey: r.Uint32(), VA: r.Uint64()>>1 + uint64(off)}
	} else {
		p.Send = &wire.SendExt{MsgLen: ml, Offset: off}
	}
	if plen > 0 {
		p.Payload = make([]byte, plen)
		t.mem.read(d.addr, p.Payload)
	}
	d.pkt = p
	return d
}

// frame is the frame golden sends for d, stamped with ts.
func (t *nicTxTraffic) frame(d *nicTxDesc, ts uint32) ([]byte, error) {
	q := *d.pkt
	if q.Write != nil {
		w := *q.Write
		w.Timestamp, q.Write = ts, &w
	} else {
		s := *q.Send
		s.Timestamp, q.Send = ts, &s
	}
	b, err := wire.Encode(&q, t.prm)
	if err != nil {
		return nil, fmt.Errorf("cosim: encode %s: %w", d, err)
	}
	return b, nil
}

// timestampOff is the offset of a data frame's send timestamp (untagged, as nic_tx sends).
func timestampOff(ipv6 bool) int {
	ip := wire.IPv4HeaderLen
	if ipv6 {
		ip = wire.IPv6HeaderLen
	}
	return wire.EthHeaderLen + ip + wire.UDPHeaderLen + wire.BTHLen + wire.DataTimestampOff
}
