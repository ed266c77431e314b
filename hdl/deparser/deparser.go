// Package deparser is the Go description of the MetaRoCE transmit header builder (tx_deparser):
// a header descriptor (every field of golden/wire.Packet that Encode does not compute) and a
// payload AXI-Stream in, one complete frame out on an AXI-Stream of 64, 128, 256 or 512 bits,
// byte for byte what golden/wire.Encode builds. The rules are golden/wire's; this package
// decides how the hardware builds them:
//
//   - The header is one byte vector, each byte a small multiplexer over the sixteen
//     {tagged, untagged} x {IPv4, IPv6} x {WRITE, SEND, ACK, NAK} layouts (a byte past a
//     layout's header is don't-care there), so every field lands at its fixed offset with no
//     shifter; the beat index picks one beat of it.
//   - The computed fields (IPv4 total length and header checksum, IPv6 payload length, UDP
//     length and destination port, the BTH version) are computed once per frame, as the
//     descriptor is taken, into registers of the frame.
//   - The payload is realigned behind the header by one lane rotator (by the header length mod
//     the beat bytes) and a carry register holding the previous payload beat's top lanes, so a
//     payload beat leaves every cycle one arrives, with no bubble.
//   - The ICRC is one generated parallel CRC-32 over one beat per cycle (hdl/crc), started
//     from Unshift(0xFFFFFFFF, k) at the beat holding byte 14 with the bytes before the IP
//     header zeroed and the variant fields set to ones; the zero pad after the last covered
//     byte is removed by an unshift network, and the trailer is written into the lanes that
//     follow the payload (or spills into one more beat).
package deparser

import (
	"embed"
	"fmt"
	"math/bits"
	"strings"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/crc"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "hdl/deparser/deparser.go"

// Top is the name of the deparser's top module.
const Top = "tx_deparser"

// Latency is the number of cycles from the handshake of a descriptor, taken while no frame is
// being emitted, to the first beat of its frame on m_axis at a datapath of w bits: one into the
// frame registers (stage e), one into the assembled-beat register (a), one into the CRC stage
// (c), one per stage of the ICRC's unshift network (d1..dN, beside it), one into the output
// register (o).
func Latency(w int) int { return 4 + crc.UnshiftLatency(w/8) }

// AcceptDelay is the number of cycles a descriptor is offered before tx_deparser can take it:
// stage p registers its decode (layout, header length, the header bytes' selects) from the
// ports, and the handshake waits until p holds it. AXI-Stream keeps an offered descriptor
// unchanged until it is taken, so the decode stays true until then. Back-to-back frames lose
// nothing: a frame is at least two beats, so the next descriptor's decode is in p before the
// frame's last beat.
const AcceptDelay = 1

// PayloadLatency is the number of cycles from the handshake of a payload beat to the output
// beat that carries its first byte (stages a, c, d1..dN, o) at a datapath of w bits.
func PayloadLatency(w int) int { return Latency(w) - 1 }

// CounterWidth is the width of the length-mismatch counter.
const CounterWidth = 32

// PayloadLenBits is the width of the descriptor's payload length.
const PayloadLenBits = 16

// Unit is the derived description of the deparser for one configuration.
type Unit struct {
	Cfg   config.Config
	Prm   wire.Params
	Reset hdl.ResetStyle

	W, B, BW   int // datapath bits, bytes per beat, log2(bytes per beat)
	S          int // SACK bitmap bits
	BodyLen    int // longest body after the BTH (Write extension or ACK body), bytes
	HdrMax     int // longest header: tagged IPv6 + UDP + BTH + longest body
	HdrBeats   int // beats that can carry header bytes
	PosW       int // width of frame byte positions (header + 16-bit payload + ICRC)
	KW         int // width of the beat index (PosW - BW)
	CrcBeat    int // beat holding byte 14: the ICRC starts there
	EarlyBeats int // beats holding bytes before the end of the longest Ethernet+IP+UDP stack
	CsumBeat   int // beat holding the IPv4 header checksum (untagged)
	Init14     uint32
	Init18     uint32
	Fields     []Field
}

// New derives the deparser description from a validated configuration.
func New(c config.Config) (*Unit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("deparser: %w", err)
	}
	prm := wire.ParamsFrom(c)
	if err := prm.Validate(); err != nil {
		return nil, fmt.Errorf("deparser: %w", err)
	}
	u := &Unit{Cfg: c, Prm: prm, W: c.DatapathWidth, S: c.SackWidth}
	u.B = u.W / 8
	u.BW = bits.Len(uint(u.B)) - 1
	if u.B < 8 || 1<<u.BW != u.B {
		return nil, fmt.Errorf("deparser: datapath_width %d: must be a power of two of at least 64 bits", u.W)
	}
	// A frame's first beat is never its last (stage e's e_last starts low): the smallest frame,
	// wire.MinValidFrameLen bytes, takes hdl.MinFrameBeats beats.
	if hdl.MinFrameBeats(u.W) < 2 {
		return nil, fmt.Errorf("deparser: datapath_width %d: the smallest frame (%d bytes) fits in one beat", u.W, wire.MinValidFrameLen)
	}
	u.BodyLen = max(wire.WriteExtLen, wire.SendExtLen, wire.NakLen, prm.AckLen())
	u.HdrMax = wire.EthHeaderLen + wire.VLANTagLen + wire.IPv6HeaderLen + wire.UDPHeaderLen + wire.BTHLen + u.BodyLen
	u.HdrBeats = (u.HdrMax + u.B - 1) / u.B
	// The last byte of the longest frame the 16-bit payload length can ask for, plus one beat.
	u.PosW = bits.Len(uint(u.HdrMax + 1<<PayloadLenBits + wire.ICRCLen + u.B))
	u.KW = u.PosW - u.BW
	u.CrcBeat = wire.EthHeaderLen / u.B
	u.EarlyBeats = len(crc.EarlyRules(u.B))
	u.CsumBeat = (wire.EthHeaderLen + wire.IPv4ChecksumOff) / u.B
	u.Init14 = crc.Unshift(0xFFFFFFFF, wire.EthHeaderLen-u.CrcBeat*u.B)
	u.Init18 = crc.Unshift(0xFFFFFFFF, wire.EthHeaderLen+wire.VLANTagLen-u.CrcBeat*u.B)
	u.Reset = hdl.ResetFor(c.ResetStyle)
	u.Fields = descriptorFields(u.S)
	// The ICRC never starts in a frame's first beat (stage e's ICRC flags start as "before it"):
	// the shortest header (66 bytes) is longer than the widest beat.
	for vo := range u.Layouts() {
		if h := u.HdrLen(vo); h < u.B {
			return nil, fmt.Errorf("deparser: datapath_width %d: layout %d's header (%d bytes) ends in the first beat", u.W, vo, h)
		}
	}
	var ops []string
	for _, c := range u.Classes() {
		ops = append(ops, fmt.Sprintf("0x%02x %s", uint8(c.Op), c.Op))
	}
	for i := range u.Fields {
		if u.Fields[i].Name == "opcode" {
			u.Fields[i].Doc = "BTH opcode: " + strings.Join(ops, ", ")
		}
	}
	return u, nil
}

// Design renders the deparser: its sources, rewritten by mutate when it is not nil
// (fault-injection tests break a template on purpose), through gen.BuildMutated.
func (u *Unit) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := u.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(Top, srcs, st, mutate)
}

// Sources returns every module of the deparser, leaves first, ready for gen.Build.
func (u *Unit) Sources() ([]gen.Source, error) {
	out, err := crc.BeatSources(u.W)
	if err != nil {
		return nil, fmt.Errorf("deparser: %w", err)
	}
	for _, b := range []struct {
		mod  *hdl.Module
		tmpl string
	}{
		{u.DeparserModule(), "deparser.v.tmpl"},
	} {
		text, err := templates.ReadFile(b.tmpl)
		if err != nil {
			return nil, fmt.Errorf("deparser: template %s: %w", b.tmpl, err)
		}
		out = append(out, gen.Source{Module: b.mod, Template: string(text), Data: u})
	}
	return out, nil
}
