package transport

import (
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/wire"
)

// Tap observes one NIC for closed-loop co-simulation, where the generated RTL takes the NIC's
// place on the fabric and the golden NIC runs beside it as a shadow: the control packets the
// golden NIC would send are handed to the tap instead of being sent (the RTL's go instead),
// and its host-memory writes, completions and reposted receives are reported as they happen.
type Tap interface {
	// Control is an ACK or NAK the NIC sends at now toward p.Dst.
	Control(now fabric.Time, p *fabric.Packet, w *wire.Packet)
	// DMA is a write into the NIC's host memory (already applied to the golden memory).
	DMA(now fabric.Time, d *placement.DMAWrite)
	// Completion is a message released by placement on connection conn; addr is where its
	// bytes are in host memory (0 for a failed message), still there when Completion is called.
	Completion(now fabric.Time, conn int, cp placement.Completion, addr uint64)
	// Freed is the host freeing n bytes at addr once it has read a completed message.
	Freed(now fabric.Time, addr, n uint64)
	// Op is a control operation the host performs on the NIC: at construction the regions it
	// registers and the receives it posts, then a repost after every completion.
	Op(now fabric.Time, op SetupOp)
}

// SetupOp is a host's control operation on its NIC's placement engine.
type SetupOp struct {
	Register bool // true: register a region (Conn, Addr, Len, Access, and the rkey golden got)
	Conn     int
	Stream   int
	Addr     uint64
	Len      uint64
	Access   placement.Access
	RKey     uint32
}

// SetTap taps host h's NIC (nil: untap). While tapped, the NIC's control packets go to the tap
// only. The setup operations the NIC already performed are replayed to the tap first.
func (n *Network) SetTap(h int, t Tap) {
	nic := n.nics[h]
	nic.tap = t
	if t == nil {
		return
	}
	for _, op := range nic.setup {
		t.Op(0, op)
	}
}

// WireOf is the MetaRoCE packet a fabric packet of this transport carries (nil for any other).
func WireOf(p *fabric.Packet) *wire.Packet {
	if fr, ok := p.Payload.(*frame); ok {
		return fr.w
	}
	return nil
}

// ControlPacket is the fabric packet that carries control packet w from host src, leaving on
// plane with the given UDP ports, toward host dst: what a tapped NIC's RTL sends.
func (n *Network) ControlPacket(src, dst, plane int, srcPort, dstPort uint16, w *wire.Packet) *fabric.Packet {
	return &fabric.Packet{Src: src, Dst: dst, SrcPort: srcPort, DstPort: dstPort, Proto: 17, Plane: plane,
		Bytes: wire.FrameLen(w, n.wprm) + fabric.FCSBytes, Control: !w.BTH.Opcode.IsData(), Payload: &frame{w: w}}
}

// PeerOf is the peer host of host h's connection index i (ConnIndex's inverse).
func PeerOf(h, i int) int { return peerOf(h, i) }

// WireParams are the codec parameters of the run.
func (n *Network) WireParams() wire.Params { return n.wprm }

// Carrying is the fabric packet p (one the NIC's Pull returned) carrying w instead of its own
// wire packet: a tapped NIC's RTL builds the frame of the packet golden chose, and its decoded
// frame is what travels on, with golden's bookkeeping (message, packet index, record).
func Carrying(p *fabric.Packet, w *wire.Packet) *fabric.Packet {
	q := *p
	if fr, ok := p.Payload.(*frame); ok {
		f := *fr
		f.w = w
		q.Payload = &f
	}
	return &q
}
