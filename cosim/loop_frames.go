// The closed loop's framing: how golden/fabric's packets become Ethernet frames and back.

package cosim

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/pipeline"
)

// Host addressing of the closed loop: host h has MAC 02:00:00:00:hh:hh and IPv4 address
// 10.0.hh.hh (h's two bytes), so that a frame's addresses name fabric hosts.
func hostMAC(h int) wire.MAC { return wire.MAC{0x02, 0, 0, 0, byte(h >> 8), byte(h)} }

func hostIP(h int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, byte(h >> 8), byte(h)}) }

// hostOfIP is the host of a closed-loop address (-1 for any other).
func hostOfIP(a netip.Addr) int {
	if !a.Is4() {
		return -1
	}
	b := a.As4()
	if b[0] != 10 || b[1] != 0 {
		return -1
	}
	return int(b[2])<<8 | int(b[3])
}

// macBits is a MAC as the RTL's 48-bit port value (first byte on the wire in bits 47:40).
func macBits(m wire.MAC) uint64 {
	var v uint64
	for _, b := range m {
		v = v<<8 | uint64(b)
	}
	return v
}

// ipWords is an IPv4 address in the RTL's 128-bit layout (bits 127:96), as 32-bit words.
func ipWords(a netip.Addr) []uint32 {
	b := a.As4()
	return []uint32{0, 0, 0, binary.BigEndian.Uint32(b[:])}
}

// frameOf encodes the MetaRoCE packet w carried by fabric packet p, with the closed loop's
// addressing and the fixed IP fields (control frames: DSCP pipeline.CtlDSCP, as nic_rx sends).
func frameOf(p *fabric.Packet, w *wire.Packet, prm wire.Params) ([]byte, error) {
	q := *w
	q.Eth = wire.EthHeader{Dst: hostMAC(p.Dst), Src: hostMAC(p.Src)}
	q.IP = wire.IPHeader{TTL: pipeline.CtlTTL, DontFragment: true, ECN: p.ECN}
	if err := q.IP.SetAddrs(hostIP(p.Src), hostIP(p.Dst)); err != nil {
		return nil, err
	}
	if !w.BTH.Opcode.IsData() {
		q.IP.DSCP = pipeline.CtlDSCP
	}
	q.UDP = wire.UDPHeader{SrcPort: p.SrcPort}
	b, err := wire.Encode(&q, prm)
	if err != nil {
		return nil, fmt.Errorf("cosim: encode %v from host %d to %d: %w", w.BTH.Opcode, p.Src, p.Dst, err)
	}
	return b, nil
}

// beat is one AXI-Stream beat: data as 32-bit little-endian words, keep, last.
type beat struct {
	data []uint32
	keep uint64
	last bool
	port int // ingress port (tuser)
}

// beatsOf cuts a frame into beats of nb bytes, byte 0 in lane 0.
func beatsOf(frame []byte, nb int) []beat {
	var out []beat
	for off := 0; off < len(frame); off += nb {
		n := min(nb, len(frame)-off)
		buf := make([]byte, nb)
		copy(buf, frame[off:off+n])
		b := beat{data: make([]uint32, nb/4), last: off+n == len(frame)}
		for j := range b.data {
			b.data[j] = binary.LittleEndian.Uint32(buf[4*j:])
		}
		b.keep = keepMask(n)
		out = append(out, b)
	}
	return out
}

// appendBeat appends a beat's kept bytes (the kept lanes are leading) to buf.
func appendBeat(buf []byte, data []uint32, keep uint64, nb int) []byte {
	for i := 0; i < nb; i++ {
		if keep>>i&1 == 0 {
			break
		}
		buf = append(buf, byte(data[i/4]>>(8*(i%4))))
	}
	return buf
}
