// Stimulus of the header builder: valid packets of every opcode, IPv4 and IPv6, tagged or not,
// with payloads of 0..mtu bytes (golden/wire.RandomPacket), each with the frame golden/wire.Encode
// builds for it; and, for the length-error scenario, payloads whose byte count disagrees with
// the descriptor, with the frame the deparser must emit for them (docs/deparser.md).

package cosim

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/mrgen/mrgen/golden/wire"
)

// deparserFrame is one descriptor, the payload the driver sends for it and the frame expected.
type deparserFrame struct {
	seq   int
	pkt   *wire.Packet
	sent  []byte // payload bytes on s_axis (nil: no payload packet)
	want  []byte // the expected frame
	bad   bool   // the payload mismatched: m_axis_tuser on the last beat, ICRC inverted
	hdrAt uint64 // cycle of the descriptor's handshake
}

func (f *deparserFrame) String() string {
	p := f.pkt
	vlan := "untagged"
	if p.Eth.VLAN != nil {
		vlan = "tagged"
	}
	s := fmt.Sprintf("packet %d (%s, IPv%d, %s, conn %d path %d PSN %d, payload %d bytes", f.seq, p.BTH.Opcode,
		p.IP.Version, vlan, p.BTH.ConnID, p.BTH.PathID, p.BTH.PSN, len(p.Payload))
	if f.bad {
		s += fmt.Sprintf(", %d sent", len(f.sent))
	}
	return s + ")"
}

// deparserTraffic draws packets lazily from one seed.
type deparserTraffic struct {
	rng      *rand.Rand
	prm      wire.Params
	badShare float64 // fraction of data packets with a payload of the wrong length
	small    bool    // short payloads only
	seq      int
}

func newDeparserTraffic(prm wire.Params, seed uint64, badShare float64, small bool) *deparserTraffic {
	return &deparserTraffic{rng: rand.New(rand.NewPCG(seed, 0xde9a55e7)), prm: prm, badShare: badShare, small: small}
}

// next returns the next packet with its payload and expected frame.
func (t *deparserTraffic) next() (*deparserFrame, error) {
	var p *wire.Packet
	for {
		p = wire.RandomPacket(t.rng, t.prm)
		if !t.small || len(p.Payload) <= 16 {
			break
		}
	}
	f := &deparserFrame{seq: t.seq, pkt: p, sent: p.Payload}
	t.seq++
	want, err := wire.Encode(p, t.prm)
	if err != nil {
		// RandomPacket promises valid packets; a refusal is a bug in golden/wire.
		return nil, fmt.Errorf("cosim: wire.RandomPacket made a packet Encode refuses: %w", err)
	}
	f.want = want
	n := len(p.Payload)
	if n == 0 || t.rng.Float64() >= t.badShare {
		return f, nil
	}
	// A payload of another length: shorter (at least one byte) or longer (up to two beats more).
	m := n
	for m == n {
		if t.rng.IntN(2) == 0 {
			m = 1 + t.rng.IntN(n)
		} else {
			m = n + 1 + t.rng.IntN(128)
		}
	}
	f.sent = make([]byte, m)
	fill := t.rng.Uint64()
	for i := range f.sent {
		f.sent[i] = byte(fill >> (8 * (i % 8)))
		if i%8 == 7 {
			fill = t.rng.Uint64()
		}
	}
	f.bad = true
	// The deparser takes the descriptor's n bytes: the payload sent, cut or padded with zeros,
	// and inverts the ICRC of what it emitted.
	eff := make([]byte, n)
	copy(eff, f.sent)
	q := *p
	q.Payload = eff
	want, err = wire.Encode(&q, t.prm)
	if err != nil {
		return nil, fmt.Errorf("cosim: encode packet %d with its effective payload: %w", f.seq, err)
	}
	icrc := binary.BigEndian.Uint32(want[len(want)-wire.ICRCLen:])
	binary.BigEndian.PutUint32(want[len(want)-wire.ICRCLen:], ^icrc)
	f.want = want
	return f, nil
}

// hexLines renders bytes as 16-byte hex lines with their offsets, for a readable cmp.Diff.
func hexLines(b []byte) []string {
	var out []string
	for i := 0; i < len(b); i += 16 {
		out = append(out, fmt.Sprintf("%04x: % x", i, b[i:min(len(b), i+16)]))
	}
	return out
}
