// Stimulus of the header parser: valid frames of every opcode and size over IPv4, IPv6 and VLAN
// (golden/wire.RandomPacket), and malformed frames, each class aimed at a group of drop reasons.
// Which reason a frame really earns is always golden/parser's verdict, never the generator's
// intent; the generators only make sure every reason is reached often.

package cosim

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/mrgen/mrgen/golden/parser"
	"github.com/mrgen/mrgen/golden/wire"
)

// parserFrame is one frame on the bus.
type parserFrame struct {
	data []byte // bytes on tdata, lane by lane
	hole int    // index of a null lane (tkeep 0) or -1; the frame then ends there (docs/parser.md)
	kind string // the generator that made it ("valid" or a malformed class)
	seq  int    // frame number from 0
}

// bytesSeen is the frame the parser must judge: the bytes before the first null lane.
func (f *parserFrame) bytesSeen() []byte {
	if f.hole >= 0 && f.hole < len(f.data) {
		return f.data[:f.hole]
	}
	return f.data
}

func (f *parserFrame) String() string {
	s := fmt.Sprintf("frame %d (%s, %d bytes", f.seq, f.kind, len(f.data))
	if f.hole >= 0 {
		s += fmt.Sprintf(", null lane at byte %d", f.hole)
	}
	n := min(len(f.data), 128)
	return s + fmt.Sprintf("): % x", f.data[:n])
}

// frameLayout locates the headers of a frame Encode made.
type frameLayout struct {
	l3, udp, bth, body, icrc int
	v6, vlan                 bool
	op                       wire.Opcode
}

func layoutOf(frame []byte) frameLayout {
	var l frameLayout
	l.l3 = wire.EthHeaderLen
	et := binary.BigEndian.Uint16(frame[wire.EthTypeOff:])
	if et == wire.EtherTypeVLAN {
		l.vlan = true
		l.l3 += wire.VLANTagLen
		et = binary.BigEndian.Uint16(frame[wire.EthTypeOff+wire.VLANTagLen:])
	}
	l.v6 = et == wire.EtherTypeIPv6
	l.udp = l.l3 + wire.IPv4HeaderLen
	if l.v6 {
		l.udp = l.l3 + wire.IPv6HeaderLen
	}
	l.bth = l.udp + wire.UDPHeaderLen
	l.body = l.bth + wire.BTHLen
	l.icrc = len(frame) - wire.ICRCLen
	l.op = wire.Opcode(frame[l.bth+wire.BTHOpcodeOff])
	return l
}

// setDatagramEnd rewrites the IP and UDP length fields for a datagram ending at end.
func setDatagramEnd(frame []byte, l frameLayout, end int) {
	if l.v6 {
		binary.BigEndian.PutUint16(frame[l.l3+wire.IPv6PayloadLengthOff:], uint16(end-l.l3-wire.IPv6HeaderLen))
	} else {
		binary.BigEndian.PutUint16(frame[l.l3+wire.IPv4TotalLengthOff:], uint16(end-l.l3))
	}
	if end-l.udp >= wire.UDPHeaderLen {
		binary.BigEndian.PutUint16(frame[l.udp+wire.UDPLengthOff:], uint16(end-l.udp))
	}
}

// parserTraffic draws frames lazily from one seed.
type parserTraffic struct {
	rng       *rand.Rand
	prm       wire.Params
	malformed float64 // fraction of malformed frames
	small     bool    // minimum-size frames only (line-rate scenario)
	corpus    [][]byte
	seq       int
	kinds     []string
	gens      map[string]func() parserFrame
}

// newParserTraffic draws valid frames and, a malformed fraction of the time, malformed ones of
// every class, or of the classes named in kinds when it is not empty.
func newParserTraffic(prm wire.Params, seed uint64, malformed float64, small bool, kinds []string) (*parserTraffic, error) {
	corpus, err := parser.FuzzCorpus()
	if err != nil {
		return nil, err
	}
	t := &parserTraffic{rng: rand.New(rand.NewPCG(seed, 0x9a55e7)), prm: prm, malformed: malformed, small: small, corpus: corpus}
	t.gens = map[string]func() parserFrame{
		"truncated":        t.truncated,
		"short-datagram":   t.shortDatagram,
		"bad-length":       t.badLength,
		"bad-ip-version":   t.badIPVersion,
		"unknown-opcode":   t.unknownOpcode,
		"wrong-udp-port":   t.wrongUDPPort,
		"bad-icrc":         t.badICRC,
		"runt":             t.runt,
		"tkeep-hole":       t.tkeepHole,
		"oversized":        t.oversized,
		"trailing-bytes":   t.trailingBytes,
		"field":            t.field,
		"payload-length":   t.payloadLength,
		"fuzz-corpus":      t.fuzzCorpus,
		"random-mutations": t.randomMutations,
	}
	for k := range t.gens {
		if len(kinds) == 0 || slices.Contains(kinds, k) {
			t.kinds = append(t.kinds, k)
		}
	}
	if len(t.kinds) == 0 {
		return nil, fmt.Errorf("parser traffic: no malformed frame class among %v", kinds)
	}
	slices.Sort(t.kinds)
	return t, nil
}

// next returns the next frame.
func (t *parserTraffic) next() parserFrame {
	var f parserFrame
	if t.rng.Float64() < t.malformed {
		f = t.gens[t.kinds[t.rng.IntN(len(t.kinds))]]()
	} else {
		f = parserFrame{data: t.valid(), hole: -1, kind: "valid"}
	}
	f.seq = t.seq
	t.seq++
	return f
}

// valid encodes a random valid packet (every opcode, IPv4/IPv6, tagged or not, payload 0..mtu).
func (t *parserTraffic) valid() []byte {
	for {
		p := wire.RandomPacket(t.rng, t.prm)
		if t.small && len(p.Payload) > 16 {
			continue
		}
		frame, err := wire.Encode(p, t.prm)
		if err != nil {
			// RandomPacket promises valid packets; a refusal is a bug in golden/wire.
			panic(fmt.Sprintf("cosim: wire.RandomPacket made a packet Encode refuses: %v", err))
		}
		return frame
	}
}

// validWhere draws valid frames until one satisfies ok (at most 64 tries, then any).
func (t *parserTraffic) validWhere(ok func(frameLayout) bool) ([]byte, frameLayout) {
	var f []byte
	for range 64 {
		f = t.valid()
		if l := layoutOf(f); ok(l) {
			return f, l
		}
	}
	return f, layoutOf(f)
}

func reseal(f []byte) { _ = wire.Reseal(f) } // a frame too broken to locate keeps its trailer

func (t *parserTraffic) mal(kind string, data []byte) parserFrame {
	return parserFrame{data: data, hole: -1, kind: kind}
}

// truncated cuts a valid frame at or next to a header boundary (or anywhere).
func (t *parserTraffic) truncated() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	cuts := []int{wire.EthTypeOff, wire.EthHeaderLen, l.l3, l.l3 + wire.IPv4HeaderLen, l.udp, l.bth, l.body,
		l.body + wire.NakLen, l.body + wire.SendExtLen, l.body + wire.WriteExtLen, l.body + t.prm.AckLen(),
		l.icrc, len(f) - 1, t.rng.IntN(len(f))}
	n := cuts[t.rng.IntN(len(cuts))] + t.rng.IntN(3) - 1
	n = max(0, min(n, len(f)-1))
	return t.mal("truncated", f[:n])
}

// shortDatagram shortens the datagram and its length fields consistently, so that the UDP
// header, the BTH, the extension or the ACK body no longer fits.
func (t *parserTraffic) shortDatagram() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	end := l.udp + t.rng.IntN(l.icrc+wire.ICRCLen-l.udp)
	if t.rng.IntN(4) == 0 {
		end = l.l3 + t.rng.IntN(end-l.l3+1)
	}
	f = f[:max(end, l.udp)]
	setDatagramEnd(f, l, end)
	reseal(f)
	return t.mal("short-datagram", f)
}

// badLength moves the IP or UDP length field.
func (t *parserTraffic) badLength() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	deltas := []int{-5, -4, -3, -2, -1, 1, 2, 3, 4, 64, -64}
	d := deltas[t.rng.IntN(len(deltas))]
	off := l.l3 + wire.IPv4TotalLengthOff
	if l.v6 {
		off = l.l3 + wire.IPv6PayloadLengthOff
	}
	switch t.rng.IntN(3) {
	case 0: // UDP length only
		off = l.udp + wire.UDPLengthOff
	case 1: // IP length, random value
		binary.BigEndian.PutUint16(f[off:], uint16(t.rng.Uint32()))
		reseal(f)
		return t.mal("bad-length", f)
	}
	binary.BigEndian.PutUint16(f[off:], binary.BigEndian.Uint16(f[off:])+uint16(d))
	reseal(f)
	return t.mal("bad-length", f)
}

func (t *parserTraffic) badIPVersion() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	v := byte(t.rng.IntN(16))
	f[l.l3] = v<<4 | f[l.l3]&0x0F
	reseal(f)
	return t.mal("bad-ip-version", f)
}

func (t *parserTraffic) unknownOpcode() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	for {
		op := wire.Opcode(t.rng.IntN(256))
		if t.rng.IntN(4) == 0 {
			op = wire.Opcode(t.rng.IntN(0x20)) // near the real ones
		}
		if !op.Known() {
			f[l.bth+wire.BTHOpcodeOff] = byte(op)
			break
		}
	}
	reseal(f)
	return t.mal("unknown-opcode", f)
}

func (t *parserTraffic) wrongUDPPort() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	port := t.prm.UDPDestPort + uint16(1+t.rng.IntN(3))
	if t.rng.IntN(2) == 0 {
		port = 4791 // RoCEv2's
	}
	binary.BigEndian.PutUint16(f[l.udp+wire.UDPDstPortOff:], port)
	reseal(f)
	return t.mal("wrong-udp-port", f)
}

// badICRC flips one bit of the trailer or of a covered byte (the variant fields are not covered,
// so a flip there is accepted, as golden says).
func (t *parserTraffic) badICRC() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	at := l.icrc + t.rng.IntN(wire.ICRCLen)
	if t.rng.IntN(2) == 0 {
		at = l.udp + t.rng.IntN(l.icrc-l.udp)
	}
	f[at] ^= 1 << t.rng.IntN(8)
	return t.mal("bad-icrc", f)
}

func (t *parserTraffic) runt() parserFrame {
	n := t.rng.IntN(wire.MinFrameLen)
	if t.rng.IntN(2) == 0 {
		return t.mal("runt", t.valid()[:n])
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(t.rng.Uint32())
	}
	return t.mal("runt", b)
}

// tkeepHole sends a valid frame with one null lane.
func (t *parserTraffic) tkeepHole() parserFrame {
	f := t.valid()
	fr := t.mal("tkeep-hole", f)
	fr.hole = t.rng.IntN(len(f))
	return fr
}

func (t *parserTraffic) oversized() parserFrame {
	f := t.valid()
	limit := t.prm.MaxFrameLen()
	n := limit + 1 + t.rng.IntN(3*64)
	if t.rng.IntN(4) == 0 {
		n = limit + 1 + t.rng.IntN(2)
	}
	for len(f) < n {
		f = append(f, byte(t.rng.Uint32()))
	}
	return t.mal("oversized", f)
}

// trailingBytes appends bytes after the datagram (Ethernet padding is legal only up to 64 bytes).
func (t *parserTraffic) trailingBytes() parserFrame {
	f := t.valid()
	for range 1 + t.rng.IntN(16) {
		f = append(f, 0)
	}
	return t.mal("trailing-bytes", f)
}

// payloadLength adds bytes before the trailer (an ACK or NAK with a payload, a data payload
// beyond mtu) or claims a message of a payload-less data packet, lengths and ICRC consistent.
func (t *parserTraffic) payloadLength() parserFrame {
	switch t.rng.IntN(3) {
	case 0: // bytes after an ACK or NAK body
		f, l := t.validWhere(func(l frameLayout) bool { return !l.op.IsData() })
		extra := 1 + t.rng.IntN(8)
		f = slices.Insert(f, l.icrc, make([]byte, extra)...)
		setDatagramEnd(f, l, len(f))
		reseal(f)
		return t.mal("payload-length", f)
	case 1: // a data payload of mtu+1..mtu+24 bytes (untagged IPv4 stays under the frame limit)
		f, l := t.validWhere(func(l frameLayout) bool { return l.op.IsData() && !l.vlan && !l.v6 })
		bodyEnd := l.body + wire.WriteExtLen
		if l.op == wire.OpSend {
			bodyEnd = l.body + wire.SendExtLen
		}
		want := bodyEnd + t.prm.MTU + 1 + t.rng.IntN(24)
		for l.icrc < want {
			f = slices.Insert(f, l.icrc, byte(t.rng.Uint32()))
			l.icrc++
		}
		setDatagramEnd(f, l, len(f))
		reseal(f)
		return t.mal("payload-length", f)
	default: // no payload, but a non-zero message length
		f, l := t.validWhere(func(l frameLayout) bool { return l.op.IsData() })
		bodyEnd := l.body + wire.WriteExtLen
		if l.op == wire.OpSend {
			bodyEnd = l.body + wire.SendExtLen
		}
		f = append(f[:bodyEnd], f[l.icrc:]...)
		l.icrc = bodyEnd
		binary.BigEndian.PutUint32(f[l.body+wire.DataMsgLenOff:], 1+t.rng.Uint32N(1000))
		setDatagramEnd(f, l, len(f))
		reseal(f)
		return t.mal("payload-length", f)
	}
}

// field breaks one header field (resealed), aimed at the checks from the EtherType to the
// message bounds.
func (t *parserTraffic) field() parserFrame {
	f := t.valid()
	l := layoutOf(f)
	b := f[l.bth:]
	x := f[l.body:]
	ip := f[l.l3:]
	put16 := func(p []byte, v int) { binary.BigEndian.PutUint16(p, uint16(v)) }
	switch t.rng.IntN(22) {
	case 0: // EtherType
		et := []int{0x0806, 0x88A8, 0x9100, 0x86DE, 0x0801, int(t.rng.Uint32() & 0xFFFF)}[t.rng.IntN(6)]
		off := wire.EthTypeOff
		if l.vlan && t.rng.IntN(2) == 0 {
			off += wire.VLANTagLen
		}
		put16(f[off:], et)
	case 1: // a second tag
		if !l.vlan {
			f, l = t.validWhere(func(l frameLayout) bool { return l.vlan })
		}
		put16(f[wire.EthTypeOff+wire.VLANTagLen:], []int{0x8100, 0x88A8, 0x9100}[t.rng.IntN(3)])
	case 2: // IHL
		if l.v6 {
			f, l = t.validWhere(func(l frameLayout) bool { return !l.v6 })
			ip = f[l.l3:]
		}
		ihl := byte(t.rng.IntN(15))
		if ihl >= 5 {
			ihl++
		}
		ip[0] = 0x40 | ihl
		reseal(f)
		return t.mal("field", f)
	case 3: // IPv4 header checksum (not resealed)
		if !l.v6 {
			ip[wire.IPv4ChecksumOff] ^= byte(1 + t.rng.IntN(255))
			return t.mal("field", f)
		}
		ip[wire.IPv6NextHeaderOff] = byte(t.rng.IntN(256))
	case 4: // fragment
		if !l.v6 {
			v := binary.BigEndian.Uint16(ip[wire.IPv4FlagsFragOff:])
			if t.rng.IntN(2) == 0 {
				v |= wire.IPv4FlagMoreFrags
			} else {
				v |= uint16(1 + t.rng.IntN(wire.IPv4FragOffsetMask))
			}
			put16(ip[wire.IPv4FlagsFragOff:], int(v))
		}
	case 5: // reserved flag
		if !l.v6 {
			ip[wire.IPv4FlagsFragOff] |= 0x80
		}
	case 6: // protocol / next header
		off := wire.IPv4ProtocolOff
		if l.v6 {
			off = wire.IPv6NextHeaderOff
		}
		ip[off] = []byte{6, 1, 0, 43, 44, 58, 16, 18}[t.rng.IntN(8)]
	case 7: // BTH version
		b[wire.BTHVersionOff] = byte(t.rng.IntN(256))
		if b[wire.BTHVersionOff] == wire.BTHVersion {
			b[wire.BTHVersionOff] = 0
		}
	case 8: // flags
		if l.op.IsData() {
			b[wire.BTHFlagsOff] |= byte(1 + t.rng.IntN(15))
		} else {
			b[wire.BTHFlagsOff] = byte(1 + t.rng.IntN(255))
		}
	case 9: // NAK code
		f, l = t.validWhere(func(l frameLayout) bool { return l.op == wire.OpNak })
		f[l.body+wire.NakCodeOff] = []byte{0, 6, 7, 255, byte(t.rng.IntN(256))}[t.rng.IntN(5)]
	case 10: // reserved fields
		switch t.rng.IntN(3) {
		case 0:
			b[wire.BTHReservedOff] = byte(1 + t.rng.IntN(255))
		case 1:
			f, l = t.validWhere(func(l frameLayout) bool { return l.op == wire.OpAck })
			if t.rng.IntN(2) == 0 {
				f[l.bth+wire.BTHStreamIDOff] = byte(1 + t.rng.IntN(3))
			} else {
				f[l.bth+wire.BTHMSNOff+3] = byte(1 + t.rng.IntN(255))
			}
		default:
			f, l = t.validWhere(func(l frameLayout) bool { return l.op == wire.OpNak })
			if t.rng.IntN(2) == 0 {
				f[l.body+wire.NakReservedOff] = byte(1 + t.rng.IntN(255))
			} else if f[l.body+wire.NakCodeOff] != byte(wire.NakReceiverNotReady) {
				put16(f[l.body+wire.NakRNRDelayOff:], 1+t.rng.IntN(65535))
			}
		}
	case 11: // connection
		put16(b[wire.BTHConnIDOff:], t.prm.Connections+t.rng.IntN(4))
		if t.rng.IntN(4) == 0 {
			put16(b[wire.BTHConnIDOff:], 0xFFFF)
		}
	case 12: // path
		b[wire.BTHPathIDOff] = byte(min(255, t.prm.PathsPerConnection+t.rng.IntN(4)))
	case 13: // stream
		b[wire.BTHStreamIDOff] = byte(min(255, t.prm.StreamsPerConnection+t.rng.IntN(4)))
	case 14: // PSN above psn_width
		bit := t.prm.PSNWidth + t.rng.IntN(max(1, 32-t.prm.PSNWidth))
		if bit < 32 {
			v := binary.BigEndian.Uint32(b[wire.BTHPSNOff:]) | 1<<bit
			binary.BigEndian.PutUint32(b[wire.BTHPSNOff:], v)
		}
	case 15: // SACK base bit
		f, l = t.validWhere(func(l frameLayout) bool { return l.op == wire.OpAck })
		f[l.body+wire.AckSackOff] |= 1
	case 16, 17: // message bounds
		f, l = t.validWhere(func(l frameLayout) bool { return l.op.IsData() && l.icrc > l.body+wire.WriteExtLen })
		x = f[l.body:]
		n := l.icrc - l.body - wire.WriteExtLen
		if l.op == wire.OpSend {
			n = l.icrc - l.body - wire.SendExtLen
		}
		msgLen := binary.BigEndian.Uint32(x[wire.DataMsgLenOff:])
		switch {
		case l.op == wire.OpWrite && t.rng.IntN(2) == 0: // VA wraps
			binary.BigEndian.PutUint64(x[wire.WriteVAOff:], ^uint64(0)-uint64(t.rng.IntN(max(1, n-1))))
		case l.op == wire.OpWrite: // payload longer than the message
			if n > 0 {
				binary.BigEndian.PutUint32(x[wire.DataMsgLenOff:], t.rng.Uint32N(uint32(n)))
			}
		default: // offset + payload beyond the message
			binary.BigEndian.PutUint32(x[wire.SendMsgOffsetOff:], msgLen-uint32(n)+1+t.rng.Uint32N(8))
		}
	case 18, 19: // position flags
		b[wire.BTHFlagsOff] ^= []byte{0x80, 0x40, 0xC0}[t.rng.IntN(3)]
	case 20: // send offset or write length nudged
		if l.op == wire.OpSend {
			v := binary.BigEndian.Uint32(x[wire.SendMsgOffsetOff:])
			binary.BigEndian.PutUint32(x[wire.SendMsgOffsetOff:], v+uint32(t.rng.IntN(3))-1)
		} else if l.op == wire.OpWrite {
			v := binary.BigEndian.Uint32(x[wire.DataMsgLenOff:])
			binary.BigEndian.PutUint32(x[wire.DataMsgLenOff:], v+uint32(t.rng.IntN(3))-1)
		}
	default: // the IP length one off with a consistent UDP length
		end := len(f) + t.rng.IntN(3) - 1
		setDatagramEnd(f, l, end)
	}
	reseal(f)
	return t.mal("field", f)
}

// fuzzCorpus replays a frame of golden/wire's fuzz corpus, or a splice of it with a valid frame.
func (t *parserTraffic) fuzzCorpus() parserFrame {
	c := slices.Clone(t.corpus[t.rng.IntN(len(t.corpus))])
	if t.rng.IntN(2) == 0 {
		return t.mal("fuzz-corpus", c)
	}
	f := t.valid()
	n := t.rng.IntN(min(len(c), len(f)) + 1)
	copy(f, c[:n])
	if t.rng.IntN(2) == 0 {
		reseal(f)
	}
	return t.mal("fuzz-corpus", f)
}

// randomMutations flips 1..4 random bytes of a valid frame, resealed or not.
func (t *parserTraffic) randomMutations() parserFrame {
	f := t.valid()
	for range 1 + t.rng.IntN(4) {
		i := t.rng.IntN(min(len(f), 160))
		f[i] = byte(t.rng.Uint32())
	}
	if t.rng.IntN(2) == 0 {
		reseal(f)
	}
	return t.mal("random-mutations", f)
}
