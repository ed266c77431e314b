// Package placement is the Go description of the placement engine (issue 7): the receive-side
// direct data placement of WRITE and SEND packets with no reorder buffer. It derives every width
// from the shared configuration and golden/placement's Params, builds the port list of
// placement_engine and hands it with its template to gen/.
//
// The rules are golden/placement's; this package only decides how hardware implements them
// (docs/placement.md, "Hardware"):
//
//   - Three inferred RAMs: the stream table (CompMSN, Posted and a D-bit done vector per
//     (connection, stream)), the message-slot table (posted receive and message tracker, D per
//     stream) and the region table (base, length, access, owner, generation). The region valid
//     bits live in flip-flops so that registration can find the lowest free entry in one cycle.
//   - D (posted_receives_per_stream) must be a power of two, so the slot of message m is
//     m mod D: the ring head is CompMSN mod D, and every table address is known from the
//     descriptor as it is accepted. All three tables are read in the same cycle.
//   - mtu must be a power of two, so VA mod mtu and VA / mtu are a mask and a shift.
//   - A read-modify-write in two stages (c and e) behind a stage that registers the read data
//     and computes every descriptor-only sum (q): one operation per clock over different
//     streams, one every 2 clocks on one stream (the second waits a clock and takes the first's
//     entries from the write stage). Line rate needs one per minimum frame: 2 clocks at 512 bits.
//     Region operations are rare and serialize (nothing is taken while one is in flight), so
//     region entries need no forwarding.
//   - Completions: a message that completes or fails writes its record into a completion table
//     indexed by (stream, MSN mod 2D). The packet that completes the head message releases it
//     and the run of done messages behind it in the same stage (a find-first-zero over the
//     stream's done vector, kept relative to the head) and queues one release event; a walker
//     reads the records through the completion table's own read port, one per clock, while the
//     input keeps running. A descriptor waits only when its stream has more than D completions
//     not yet handed to m_cpl (m_cpl backpressure), so no record is overwritten before it is read.
//     Every table has one read and one write port (one block RAM per 16 bits of width on iCE40).
//   - Two control operations make the sequence-number and generation wraps reachable, and are
//     what a host needs after a reset: set a stream's MSN, and restore a region entry's
//     generation.
package placement

import (
	"embed"
	"fmt"
	"math/bits"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	goldenpl "github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/firstset"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "hdl/placement/placement.go"

// Top is the name of the engine's top module.
const Top = "placement_engine"

// Control operations (s_ctl_op).
const (
	CtlRegister   = 0 // register a memory region: conn, addr (base), len, access
	CtlDeregister = 1 // deregister the region rkey names
	CtlPost       = 2 // post a receive on (conn, stream): addr, len[31:0]
	CtlSetMSN     = 3 // start the message sequence of (conn, stream) at msn: no receive posted
	CtlRestoreGen = 4 // set the generation of the unregistered entry rkey names to its tag
)

// Control statuses (m_ctl_status).
const (
	CtlOK          = 0
	CtlTableFull   = 1 // golden ErrRegionTableFull
	CtlBadRegion   = 2 // golden ErrBadRegion
	CtlNoSuchRegon = 3 // golden ErrNoSuchRegion
	CtlQueueFull   = 4 // golden ErrQueueFull
	CtlBadBuffer   = 5 // golden ErrBadBuffer
	CtlBadStream   = 6 // golden ErrBadStream
	CtlBusy        = 7 // golden ErrBusy
	CtlUnknownOp   = 15
)

// Limits of the hardware description beyond the configuration's own ranges.
const (
	MaxDepth   = 256 // posted_receives_per_stream
	MaxRegions = 256 // memory_regions (valid bits in flip-flops, one free-entry search)
)

// Unit is the derived description of the placement engine for one configuration.
type Unit struct {
	Cfg   config.Config
	P     goldenpl.Params
	Reset hdl.ResetStyle

	Conns, Streams int // connections, streams per connection
	StreamDepth    int // Conns × Streams
	SIW            int // stream-table index width
	SW             int // stored stream id width
	D, LgD         int // posted receives per stream (power of two) and log2
	SlotDepth      int // 2^SIW × D (slot index {stream index, MSN mod D})
	SlotIW         int // slot-table index width: SIW + LgD
	CplIW          int // completion-table and event-FIFO index width: SIW + LgD + 1
	DoneW          int // done vector (relative to the head): D − 1
	PendW          int // completions of a stream not yet handed out, 0..2D
	PostedW        int // width of Posted (0..D)
	R              int // memory_regions
	RIW            int // region index width (rkey index bits)
	RegionDepth    int // 2^RIW
	TagW           int // rkey tag width
	ConnW          int // stored owner connection width
	MTU, LgMTU     int
	B, LgB         int // packets per message (slot bitmap width) and log2
	MaxMsgLen      int // B × mtu
	RNRDelay       int
	ClearDepth     int // entries the post-reset clear walks: max(StreamDepth, RegionDepth)
	ClearW         int

	StreamEntryW, SlotEntryW, RegionEntryW int
	CplEntryW, EventW                      int
	Latency                                int
}

func clog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

func pow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// New derives the engine description from a validated configuration. Besides the
// configuration's own checks it requires what the hardware relies on: a power-of-two
// posted_receives_per_stream in 2..256, a power-of-two mtu and at most 256 memory regions.
func New(c config.Config) (*Unit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("placement: %w", &config.Error{Err: err})
	}
	// What the hardware relies on, beyond the configuration's own ranges. These are
	// configuration errors (exit status 2 in the CLI), naming the field, value and allowed range.
	fieldErr := func(field string, v int, allowed string) error {
		return fmt.Errorf("placement: %w", &config.Error{Err: &config.FieldError{Field: field, Value: fmt.Sprint(v),
			Allowed: allowed + " for hdl/placement"}})
	}
	switch {
	case !pow2(c.PostedReceivesPerStream) || c.PostedReceivesPerStream < 2 || c.PostedReceivesPerStream > MaxDepth:
		return nil, fieldErr("posted_receives_per_stream", c.PostedReceivesPerStream,
			fmt.Sprintf("a power of two in 2..%d (the slot of message m is m mod D)", MaxDepth))
	case !pow2(c.MTU):
		return nil, fieldErr("mtu", c.MTU, "a power of two (256, 512, ..., 8192; VA mod mtu is a mask)")
	case c.MemoryRegions > MaxRegions:
		return nil, fieldErr("memory_regions", c.MemoryRegions, fmt.Sprintf("1..%d", MaxRegions))
	}
	p := goldenpl.ParamsFrom(c)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	if p.MaxMsgPackets < 2 {
		return nil, fmt.Errorf("placement: MaxMsgPackets %d: hdl/placement needs at least 2", p.MaxMsgPackets)
	}
	u := &Unit{Cfg: c, P: p, Conns: p.Conns, Streams: p.Streams, D: p.Depth, R: p.Regions,
		MTU: p.MTU, B: p.MaxMsgPackets, RNRDelay: int(p.RNRDelayUS), RIW: p.IndexBits, TagW: p.TagBits}
	u.StreamDepth = u.Conns * u.Streams
	u.SIW = max(1, clog2(u.StreamDepth))
	u.LgD = clog2(u.D)
	u.SW = max(1, clog2(u.Streams))
	u.SlotDepth = (1 << u.SIW) * u.D
	u.SlotIW = u.SIW + u.LgD
	u.PostedW = u.LgD + 1
	u.CplIW = u.SIW + u.LgD + 1
	u.DoneW = u.D - 1
	u.PendW = u.LgD + 2
	u.RegionDepth = 1 << u.RIW
	u.ConnW = max(1, clog2(u.Conns))
	u.LgMTU = clog2(u.MTU)
	u.LgB = clog2(u.B)
	u.MaxMsgLen = u.B * u.MTU
	u.ClearDepth = max(1<<u.SIW, u.RegionDepth)
	u.ClearW = clog2(u.ClearDepth)
	// stream entry: {done[D-2:0], posted[PostedW-1:0], comp_msn[31:0]}
	u.StreamEntryW = u.DoneW + u.PostedW + 32
	// slot entry: {bits[B-1:0], nak[2:0], bytes[31:0], residue[LgMTU-1:0], rkey[31:0],
	//              msg_len[31:0], op_send, state[1:0], buf_len[31:0], buf_addr[63:0]}
	u.SlotEntryW = u.B + 3 + 32 + u.LgMTU + 32 + 32 + 1 + 2 + 32 + 64
	// region entry: {gen[TagW-1:0], conn[ConnW-1:0], access[1:0], end[64:0], base[63:0]}
	// (end = base + length, up to 2^64: the bounds check compares VA + payload with it)
	u.RegionEntryW = u.TagW + u.ConnW + 2 + 65 + 64
	// completion record: {rkey, buf_len, buf_addr, status[2:0], bytes, msg_len, op_send, msn}
	u.CplEntryW = 32 + 32 + 64 + 3 + 32 + 32 + 1 + 32
	// release event: {stream, conn, count − 1, first index (msn mod 2D), stream index}
	u.EventW = u.SW + u.ConnW + u.LgD + (u.LgD + 1) + u.SIW
	u.Reset = hdl.ResetFor(c.ResetStyle)
	u.Latency = 4
	return u, nil
}

// Design renders the engine, its sources rewritten by mutate when it is not nil
// (fault-injection tests break the template on purpose).
func (u *Unit) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := u.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(Top, srcs, st, mutate)
}

// Sources returns the engine's modules ready for gen.Build.
func (u *Unit) Sources() ([]gen.Source, error) {
	text, err := templates.ReadFile("engine.v.tmpl")
	if err != nil {
		return nil, fmt.Errorf("placement: template engine.v.tmpl: %w", err)
	}
	fs, err := u.firstSet()
	if err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	return []gen.Source{fs, {Module: u.Module(), Template: string(text), Data: u}}, nil
}

// firstSet is the D-bit find-first-set tree (hdl/firstset) that measures the run of done
// messages behind a released head.
func (u *Unit) firstSet() (gen.Source, error) {
	return firstset.Source("placement_first_set", u.D, "Used on the inverted done vector of a "+
		"stream (with a sentinel one on top): the number of done messages right behind the head.")
}

// in and out are hdl.In and hdl.Out, short for the port lists.
var in, out = hdl.In, hdl.Out

// EntryII is the initiation interval between two operations on one stream (the stream table's
// entry): the read-modify-write spans two register stages.
const EntryII = 2

// RegionHold is how many cycles after a region operation (register, deregister, restore
// generation) is taken nothing else is: it is in flight through q, c, e and wb.
const RegionHold = 4

// StreamIndex is the stream table's entry of (conn, stream) as the engine addresses it:
// conn × streams + stream in the index's width (a descriptor out of range aliases an entry; it
// changes nothing there).
func (u *Unit) StreamIndex(conn, stream int) int {
	return (conn*u.Streams + stream) & (1<<u.SIW - 1)
}

// Port widths that follow the wire format (so a descriptor the parser should have refused is
// representable and rule 1 is testable).
const (
	LenW    = 16 // payload length in bytes
	TagBits = 32 // payload handle
)

// Module is placement_engine.
func (u *Unit) Module() *hdl.Module {
	ports := append(u.Reset.Ports(),
		// Descriptor of an accepted data packet.
		in("s_desc_valid", 1, "a data-packet descriptor is offered"),
		out("s_desc_ready", 1, "taken when valid and ready (see docs/placement.md for when it is low)"),
		in("s_desc_op", wire.OpcodeBits, "BTH opcode (0x01 WRITE, 0x02 SEND)"),
		in("s_desc_conn", wire.ConnIDBits, "connection id"),
		in("s_desc_stream", wire.StreamIDBits, "stream id"),
		in("s_desc_msn", wire.MSNBits, "message sequence number"),
		in("s_desc_msg_len", wire.MsgLenBits, "message length in bytes"),
		in("s_desc_rkey", wire.RKeyBits, "WRITE: remote key"),
		in("s_desc_va", wire.VABits, "WRITE: address of the packet's first payload byte"),
		in("s_desc_offset", wire.MsgOffsetBits, "SEND: offset of the first payload byte in the message"),
		in("s_desc_len", LenW, "payload length in bytes"),
		in("s_desc_tag", TagBits, "payload handle, echoed in the result and the DMA command"),
		// Host control port.
		in("s_ctl_valid", 1, "a control operation is offered (priority over descriptors)"),
		out("s_ctl_ready", 1, "taken when valid and ready"),
		in("s_ctl_op", 3, "0 register, 1 deregister, 2 post receive, 3 set stream MSN, 4 restore generation"),
		in("s_ctl_conn", wire.ConnIDBits, "register: owner; post: connection"),
		in("s_ctl_stream", wire.StreamIDBits, "post: stream"),
		in("s_ctl_addr", 64, "register: base; post: buffer address"),
		in("s_ctl_len", 64, "register: length; post: buffer length (bits 31:0)"),
		in("s_ctl_access", 8, "register: access rights (bit 0 remote write, bit 1 remote read)"),
		in("s_ctl_rkey", wire.RKeyBits, "deregister: rkey; restore generation: index and generation"),
		in("s_ctl_msn", wire.MSNBits, "set stream MSN: the MSN of the stream's next message"),
		// Per-descriptor result.
		out("m_res_valid", 1, "the verdict on one descriptor"),
		in("m_res_ready", 1, "downstream takes the verdict"),
		out("m_res_drop", goldenpl.DropReasonBits, "drop reason (0 placed), golden/placement codes"),
		out("m_res_nak", wire.NakCodeBits, "NAK code due (0 none)"),
		out("m_res_rnr_delay", wire.RNRDelayBits, "RNR delay of a receiver_not_ready NAK, else 0"),
		out("m_res_tag", TagBits, "the descriptor's tag"),
		// DMA command stream.
		out("m_dma_valid", 1, "a DMA write command: write m_dma_len bytes of payload m_dma_tag"),
		in("m_dma_ready", 1, "the DMA engine takes the command"),
		out("m_dma_addr", 64, "host address of the first byte"),
		out("m_dma_len", LenW, "bytes to write (never 0)"),
		out("m_dma_tag", TagBits, "payload handle: the descriptor's tag"),
		// Completions.
		out("m_cpl_valid", 1, "a message completion, released in MSN order per stream"),
		in("m_cpl_ready", 1, "the host takes the completion"),
		out("m_cpl_conn", wire.ConnIDBits, "connection id"),
		out("m_cpl_stream", wire.StreamIDBits, "stream id"),
		out("m_cpl_msn", wire.MSNBits, "message sequence number"),
		out("m_cpl_op", wire.OpcodeBits, "opcode of the message"),
		out("m_cpl_msg_len", 32, "message length"),
		out("m_cpl_bytes", 32, "bytes placed (msg_len on success)"),
		out("m_cpl_status", wire.NakCodeBits, "0 success, else the NAK code the message failed with"),
		out("m_cpl_buf_addr", 64, "the consumed receive: address"),
		out("m_cpl_buf_len", 32, "the consumed receive: length"),
		out("m_cpl_rkey", 32, "WRITE: the message's rkey; 0 for SEND"),
		// Control responses.
		out("m_ctl_valid", 1, "the response to one control operation"),
		in("m_ctl_ready", 1, "the host takes the response"),
		out("m_ctl_status", 4, "0 ok, 1 full, 2 bad region, 3 no region, 4 queue full, 5 bad buffer, 6 bad stream, 7 busy"),
		out("m_ctl_rkey", 32, "register: the new region's rkey"),
		out("busy", 1, "the post-reset table clear is running"),
		out("cnt_drop", int(goldenpl.NumDropReasons)*32, "per drop reason r, bits 32r+31:32r: descriptors (r=0: placed; wraps)"),
		out("cnt_bytes", 32, "bytes placed (wraps)"),
		out("cnt_completed", 32, "completions released with status 0"),
		out("cnt_failed", 32, "completions released with a NAK status"),
	)
	return &hdl.Module{
		Name:   Top,
		Source: Source,
		Doc: fmt.Sprintf("MetaRoCE placement engine for %d connections x %d streams, %d posted receives per "+
			"stream, %d memory regions, mtu %d: direct data placement of WRITE and SEND packets with no "+
			"reorder buffer. Each descriptor is checked (receive match by MSN, message consistency, mtu "+
			"segmentation, duplicate bitmap, rkey protection and bounds) and leaves as a verdict and, when "+
			"placed, a DMA write command; messages complete in any arrival order and their completions "+
			"leave each stream in MSN order. The rules are golden/placement's (docs/placement.md).",
			u.Conns, u.Streams, u.D, u.R, u.MTU),
		Clock: "clk", Reset: u.Reset.Port,
		Ports: ports,
		Tables: []hdl.Table{
			{Name: "stream_ram", Depth: 1 << u.SIW, Width: u.StreamEntryW, Doc: "{done, posted, comp_msn}"},
			{Name: "slot_ram", Depth: 1 << u.SlotIW, Width: u.SlotEntryW,
				Doc: "receive and message tracker"},
			{Name: "region_ram", Depth: u.RegionDepth, Width: u.RegionEntryW, Doc: "{gen, conn, access, end (base + length), base}"},
			{Name: "cpl_ram", Depth: 1 << u.CplIW, Width: u.CplEntryW,
				Doc: "completion records at {stream index, msn mod 2D}"},
			{Name: "event_ram", Depth: 1 << u.CplIW, Width: u.EventW, Doc: "release-event FIFO"},
		},
		Latency: u.Latency,
		II:      1,
		EntryII: EntryII,
	}
}
