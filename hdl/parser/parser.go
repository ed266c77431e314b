// Package parser is the Go description of the MetaRoCE receive header parser (rx_parser): an
// AXI-Stream of Ethernet frames in, a header descriptor or a drop reason out for every frame, the
// payload beside the descriptor as its own stream, and a counter per outcome. The rules are
// golden/wire's (golden/parser flattens them into the descriptor); this package decides how the
// hardware implements them, for a datapath of 64, 128, 256 or 512 bits:
//
//   - Every field sits at one of four fixed offsets ({tagged, untagged} x {IPv4, IPv6}); IPv4
//     options are a drop, so nothing needs a variable shifter. The header bytes are captured
//     beat by beat into one register per header (EtherTypes, IP, UDP, BTH, body), each byte from
//     the beat and lane its variant puts it in, so the checks read fields at fixed positions.
//   - At the frame's last beat the frame length and the ICRC state are copied into a check stage
//     (the header registers hold still until it moves on), and the next frame's capture starts
//     in the next cycle: one beat per cycle, no bubble between frames, so a one-beat frame goes
//     at one frame per cycle.
//   - The outcome counters are a RAM with a read-modify-write per outcome, not 36 adders.
//   - The check stage evaluates every drop condition of docs/wire-format.md section 13 at once
//     and a priority chain picks the lowest code, which is exactly Decode's check order.
//   - The ICRC is a generated parallel CRC-32 over one beat per cycle (hdl/crc). Bytes before
//     the IP header are zeroed and the register starts from Unshift(0xFFFFFFFF, offset); bytes
//     from the trailer on are zeroed and the pad is removed at the end by an unshift network
//     (log2 of the beat's byte count conditional 32x32 XOR maps), so there is one CRC unit per
//     width, not one per tail length.
//   - The payload is stored beat by beat as it arrives, unaligned, in a frame FIFO; the frame's
//     verdict marks it kept or discarded, and the read side aligns kept payloads to byte lane 0.
package parser

import (
	"embed"
	"fmt"
	"math/bits"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/crc"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "hdl/parser/parser.go"

// Top is the name of the parser's top module.
const Top = "rx_parser"

// CounterWidth is the width of every outcome counter.
const CounterWidth = 32

// CounterSlots is the depth of the counter RAMs (cnt_rd_idx is 6 bits): the outcomes' counters
// and unused slots, which read 0. After reset the parser sweeps every slot to zero, one a cycle,
// so its input waits CounterSlots cycles (InitCycles).
const CounterSlots = 64

// InitCycles is the number of cycles from the end of reset to the first with s_axis_tready
// high: the counter sweep.
func (u *Unit) InitCycles() int { return CounterSlots }

// Unit is the derived description of the parser for one configuration.
type Unit struct {
	Cfg   config.Config
	Prm   wire.Params
	Reset hdl.ResetStyle

	W, B, BW    int // datapath bits, bytes per beat, log2(bytes per beat)
	S           int // SACK bitmap bits
	BodyLen     int // longest body after the BTH (Write extension or ACK body), bytes
	HdrLen      int // header bytes captured: tagged IPv6 + UDP + BTH + longest body
	HdrBeats    int // beats that carry captured header bytes
	MaxFrame    int // longest valid frame (Params.MaxFrameLen)
	LenW        int // frame length counter width (saturates at MaxFrame+1)
	BeatW       int // beat index width (saturates)
	MaxBeat     int // saturation value of the beat index
	PosW        int // width of byte positions computed from the IP length fields
	CrcBeat     int // beat holding byte 14 (the first possible CRC byte): the CRC starts there
	TailBeat    int // first beat that can hold the trailer or payload (byte 58 on)
	Init14      uint32
	Init18      uint32
	Reasons     []wire.DropReason // every drop reason, in code order (code 0 = accepted excluded)
	Outcomes    int               // counters: accepted + one per reason
	FifoDepth   int               // payload FIFO entries (beats)
	FifoAW      int               // log2(FifoDepth)
	MaxPayBeats int               // raw beats of the longest payload
	Fields      []Field
	Latency     int // cycles from the handshake of a frame's last beat to its outcome
	DescSlots   int // descriptor slots (docs/parser.md)
}

// New derives the parser description from a validated configuration.
func New(c config.Config) (*Unit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("parser: %w", err)
	}
	prm := wire.ParamsFrom(c)
	if err := prm.Validate(); err != nil {
		return nil, fmt.Errorf("parser: %w", err)
	}
	u := &Unit{Cfg: c, Prm: prm, W: c.DatapathWidth, S: c.SackWidth}
	u.B = u.W / 8
	u.BW = bits.Len(uint(u.B)) - 1
	u.BodyLen = max(wire.WriteExtLen, wire.SendExtLen, wire.NakLen, prm.AckLen())
	u.HdrLen = wire.EthHeaderLen + wire.VLANTagLen + wire.IPv6HeaderLen + wire.UDPHeaderLen + wire.BTHLen + u.BodyLen
	u.HdrBeats = (u.HdrLen + u.B - 1) / u.B
	u.MaxFrame = prm.MaxFrameLen()
	u.LenW = bits.Len(uint(u.MaxFrame + 1))
	u.MaxBeat = (u.MaxFrame+u.B-1)/u.B + 1
	u.BeatW = bits.Len(uint(u.MaxBeat))
	// The largest datagram end: tagged IPv6 with a 16-bit payload length, plus the beat pad.
	u.PosW = bits.Len(uint(wire.EthHeaderLen+wire.VLANTagLen+wire.IPv6HeaderLen+0xFFFF)) + 1
	u.CrcBeat = wire.EthHeaderLen / u.B
	u.TailBeat = (wire.MinFrameLen - wire.ICRCLen) / u.B
	u.Init14 = crc.Unshift(0xFFFFFFFF, wire.EthHeaderLen-u.CrcBeat*u.B)
	u.Init18 = crc.Unshift(0xFFFFFFFF, wire.EthHeaderLen+wire.VLANTagLen-u.CrcBeat*u.B)
	for _, r := range wire.AllDropReasons() {
		if r != wire.DropNone {
			u.Reasons = append(u.Reasons, r)
		}
	}
	u.Outcomes = len(u.Reasons) + 1
	u.Latency = pipelineLatency(u.B)
	u.DescSlots = descSlots(u.W, u.Latency)
	// Raw beats of the longest payload (it may start anywhere in a beat), plus slack so that the
	// next frames can be written while it waits for its verdict and drains.
	u.MaxPayBeats = (u.B - 1 + prm.MTU + u.B - 1) / u.B
	u.FifoDepth = 1 << bits.Len(uint(u.MaxPayBeats+u.Latency+payloadSlack-1))
	u.FifoAW = bits.Len(uint(u.FifoDepth)) - 1
	u.Reset = hdl.ResetFor(c.ResetStyle)
	u.Fields = descriptorFields(u.S)
	return u, nil
}

// Design renders the parser: its sources, rewritten by mutate when it is not nil (fault-injection
// tests break a template on purpose), through gen.Build.
func (u *Unit) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := u.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(Top, srcs, st, mutate)
}

// Sources returns every module of the parser, leaves first, ready for gen.Build.
func (u *Unit) Sources() ([]gen.Source, error) {
	out, err := crc.BeatSources(u.W)
	if err != nil {
		return nil, fmt.Errorf("parser: %w", err)
	}
	fs, err := u.firstSet()
	if err != nil {
		return nil, err
	}
	out = append(out, fs)
	for _, b := range []struct {
		mod  *hdl.Module
		tmpl string
	}{
		{u.KeepModule(), "keep.v.tmpl"},
		{u.PayloadModule(), "payload.v.tmpl"},
		{u.ParserModule(), "parser.v.tmpl"},
	} {
		text, err := templates.ReadFile(b.tmpl)
		if err != nil {
			return nil, fmt.Errorf("parser: template %s: %w", b.tmpl, err)
		}
		out = append(out, gen.Source{Module: b.mod, Template: string(text), Data: u})
	}
	return out, nil
}
