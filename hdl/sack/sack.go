// Package sack is the Go description of the SACK bitmap unit: the receive-side table
// (sack_rx), the send-side loss detector (sack_tx), the unit that holds both (sack_unit) and
// the log2 trees they are built from (first-set priority tree, population count, pipelined
// rotator). It derives every width from the shared configuration, builds the port lists and
// hands each module with its template to gen/.
//
// The rules are golden/sack's; this package only decides how hardware implements them:
//
//   - Per-(connection, path) state lives in RAMs indexed by {conn, path}. On the receive side
//     neither the read nor the write is on the recurrence: the read data is registered and
//     merged with the two results not yet in the table, and the result is written a cycle after
//     it is computed. The recurrence (classify, search, advance) is two register stages, so
//     two operations on one entry are 2 cycles apart (the second holds one cycle; different
//     entries go at II=1), or 3 where the line allows it (RxHoldTwo): line rate at every
//     datapath width, whose minimum frame takes at least 2 cycles. The send side reads and
//     writes the same way; where the line leaves it 6 cycles per port (TxHold) an operation
//     holds behind the two ahead on its entry (entry II 3), elsewhere its two-stage recurrence
//     forwards both and it runs at II=1 on one entry too.
//   - Inside the table, bitmaps are kept in absolute (circular) position: the bit of PSN p is
//     p mod W. Setting a bit never needs a shift, and the cumulative advance is a rotating
//     find-first-zero (two masked first-set trees) plus a circular range clear. The only wide
//     shifters, the rotators that align bitmaps to the cumulative PSN for the outside world,
//     sit outside the II=1 recurrence, where they can be pipelined.
//   - The send side needs no bitmap state at all: it keeps una, nxt, the last SACK count and
//     hwm (the PSN below which every loss has been reported), so its table is narrow and it
//     reports losses straight in the ACK's own (aligned) frame, with no rotator.
package sack

import (
	"embed"
	"fmt"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	goldensack "github.com/mrgen/mrgen/golden/sack"
	"github.com/mrgen/mrgen/hdl"
)

//go:embed *.v.tmpl
var templates embed.FS

// Source is the path of this description, named in every banner.
const Source = "hdl/sack/sack.go"

// Opcodes of the sack_tx input (s_ack_op).
const (
	TxOpAck  = 0 // an ACK: s_ack_psn is the cumulative PSN, s_ack_bitmap the SACK bitmap
	TxOpInit = 1 // connection setup: una = nxt = s_ack_psn
	TxOpSent = 2 // the path sent s_ack_psn
	TxOpRead = 3 // read: the entry's una and nxt answered on m_loss (status 1, no loss), unchanged
)

// Unit is the derived description of the SACK unit for one configuration.
type Unit struct {
	Cfg    config.Config
	P      goldensack.Params
	Reset  hdl.ResetStyle
	Rotate RotatePlan

	W, IW, PW, CW, AW int // bitmap width, its index width, PSN width, conn and path id widths
	CntW              int // width of a bit count 0..W
	SlotHiW, SlotLoW  int // the slot predecode halves (SlotHiW + SlotLoW = IW)
	PopcountSplit     int // the popcount's first registered level (stage in_q to pre)
	PopcountLate      int // its second (pre to lp); the count reaches m from lp
	IdxW              int // table index width (conn + path)
	Depth             int // table depth
	RxEntryW          int
	TxEntryW          int
	AckEveryN         int
	AckMode           string
	RxLatency         int
	TxLatency         int
}

// RotatePlan splits the rotator's log2 levels into register stages.
type RotatePlan struct {
	Levels int     // log2 W
	Stages [][]int // the levels of each stage; every stage ends in a register
}

// New derives the SACK unit description from a validated configuration.
func New(c config.Config) (*Unit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("sack: %w", err)
	}
	p := goldensack.ParamsFrom(c)
	u := &Unit{Cfg: c, P: p, W: p.Width, PW: p.PSNBits, CW: p.ConnBits, AW: p.PathBits,
		IdxW: p.IndexBits, Depth: p.TableDepth, AckEveryN: c.AckPolicy.EveryN, AckMode: c.AckPolicy.Mode}
	u.IW = c.Derived().SackIndexWidth
	u.CntW = u.IW + 1
	u.SlotHiW = u.IW / 2
	u.SlotLoW = u.IW - u.SlotHiW
	u.PopcountSplit, u.PopcountLate = popcountSplit(u.IW)
	// rx entry: {since_ack[7:0], bitmap[W-1:0], highest[P-1:0], cum[P-1:0]}
	u.RxEntryW = 8 + u.W + 2*u.PW
	// tx entry: {hwm[P-1:0], count[IW:0], nxt[P-1:0], una[P-1:0]}
	u.TxEntryW = 3*u.PW + u.CntW
	u.Reset = hdl.ResetFor(c.ResetStyle)
	u.Rotate = planRotate(u.IW, c.Pipeline.TreeRegisterEvery)
	s := len(u.Rotate.Stages)
	// rx: input+read register, merged entry, search, new entry, rotator stages.
	u.RxLatency = 4 + s
	// tx: input register, first half of the summary trees, second half + merged entry,
	// the verdict's compares on every candidate, verdict and new entry, report, output register.
	u.TxLatency = 7
	return u, nil
}

func planRotate(levels, every int) RotatePlan {
	p := RotatePlan{Levels: levels}
	if every <= 0 || every >= levels {
		all := make([]int, levels)
		for i := range all {
			all[i] = i
		}
		p.Stages = [][]int{all}
		return p
	}
	for lo := 0; lo < levels; lo += every {
		var st []int
		for l := lo; l < lo+every && l < levels; l++ {
			st = append(st, l)
		}
		p.Stages = append(p.Stages, st)
	}
	return p
}

// Top is the name of the unit's top module.
const Top = "sack_unit"

// Design renders the unit: its sources, rewritten by mutate when it is not nil (fault-injection
// tests break a template on purpose), through gen.Build.
func (u *Unit) Design(st gen.Stamp, mutate func([]gen.Source) error) (*gen.Design, error) {
	srcs, err := u.Sources()
	if err != nil {
		return nil, err
	}
	return gen.BuildMutated(Top, srcs, st, mutate)
}

// Sources returns every module of the unit, leaves first, ready for gen.Build.
func (u *Unit) Sources() ([]gen.Source, error) {
	fs, err := u.firstSet()
	if err != nil {
		return nil, err
	}
	hs, err := u.highestSet()
	if err != nil {
		return nil, err
	}
	out := []gen.Source{fs, hs}
	if u.RxHoldTwo() {
		zs, err := u.zeroSearch()
		if err != nil {
			return nil, err
		}
		out = append(out, zs)
	}
	for _, b := range []struct {
		mod  *hdl.Module
		tmpl string
	}{
		{u.ThermometerModule(), "thermometer.v.tmpl"},
		{u.PopcountModule(), "popcount.v.tmpl"},
		{u.RotateModule(), "rotate.v.tmpl"},
		{u.RxModule(), "rx.v.tmpl"},
		{u.TxModule(), "tx.v.tmpl"},
		{u.UnitModule(), "unit.v.tmpl"},
	} {
		text, err := templates.ReadFile(b.tmpl)
		if err != nil {
			return nil, fmt.Errorf("sack: template %s: %w", b.tmpl, err)
		}
		out = append(out, gen.Source{Module: b.mod, Template: string(text), Data: u})
	}
	return out, nil
}

// RxEntryII is sack_rx's initiation interval between two operations on one (connection, path)
// entry: 3 where the line allows it (see RxHoldTwo), else 2 (its recurrence is two register
// stages). Operations on different entries go at II=1.
func (u *Unit) RxEntryII() int {
	if u.RxHoldTwo() {
		return 3
	}
	return 2
}

// TxEntryII is sack_tx's initiation interval between two operations on one entry: 3 where it
// holds (TxHold), else 1 (it forwards the operations one and two ahead).
func (u *Unit) TxEntryII() int {
	if u.TxHold() {
		return 3
	}
	return 1
}

// TxHold reports whether sack_tx holds an operation in stage pre while either of the two ahead
// of it is on its entry (entry II 3), so that stage m compares the merged read alone instead
// of every forwarding candidate. A port gives sack_tx two streams of operations (a sent record
// per data packet sent, an ACK per ACK received), so the hold needs 6 cycles per minimum frame
// per port: a 64-bit datapath at one port (hdl.MinFrameBeats).
func (u *Unit) TxHold() bool { return u.MinBeatsT()/max(1, u.Cfg.Ports) >= 2*3 }

// TxStartLow is the low part of sack_tx's report start (hwm - floor, P bits) computed in stage m
// where it holds (TxHold); stage n adds the rest with its borrow. Half the PSN, and at least
// the slot bits, which the report's mask needs.
func (u *Unit) TxStartLow() int { return min(u.PW-1, max(u.IW, u.PW/2)) }

// RxHoldTwo reports whether sack_rx holds an operation while either of the two ahead of it is
// on its entry (entry II 3), so that stage a needs no forwarding: whenever a path's operations
// are at least 3 cycles apart at line rate. A path's data packets all arrive on one port
// (golden/transport.PortOf), one per minimum frame (hdl.MinFrameBeats), so that is a minimum
// frame of at least 3 beats (64, 128 and 256 bits, at any number of ports; docs/sack.md has
// what it saves). Where the line needs 2 cycles (512 bits), the forwarding stays, and from
// DualSearchFrom bits its search runs on both candidate entries (DualSearch).
func (u *Unit) RxHoldTwo() bool { return u.MinBeatsT() >= 3 }

// popcountSplit gives the two levels of the sack_tx popcount's adder tree whose sums are
// registered, for a bitmap of 2^iw bits: a third of the levels per stage (in_q, pre, lp), the
// count needed only in stage m. The upper levels' adders are the wider ones, so the registers
// sit just above a third and two thirds (at 1024 bits, two stages measured 3.99-4.01 ns in
// osu018, over 40 FO4 with some ABC mappings, three stages 3.16 ns; on the iCE40 each stage
// holds at most three levels of carry-chain adders).
func popcountSplit(iw int) (split, late int) {
	late = min(2*iw/3+1, iw-1)
	return max(1, min(iw/3+1, late-1)), late
}

// RxSearchSplit is the level after which sack_rx's find-first-zero trees are registered where it
// holds (RxHoldTwo): the levels up to it run in stage c, after the merge, the rest in stage a.
// Half the levels, rounded down, since stage c starts with the merge's multiplexer.
func (u *Unit) RxSearchSplit() int { return u.IW / 2 }

// DualSearchFrom is the bitmap width from which sack_rx runs its find-first-zero trees on both
// candidate entries and selects their results, rather than selecting the entry first.
const DualSearchFrom = 1024

// DualSearch reports whether this unit's sack_rx searches both candidates: from DualSearchFrom
// bits on, when the entry II cannot be 3 (RxHoldTwo).
func (u *Unit) DualSearch() bool { return u.W >= DualSearchFrom && !u.RxHoldTwo() }

// DualSearchFromT is DualSearchFrom, for the template.
func (u *Unit) DualSearchFromT() int { return DualSearchFrom }

// MinBeatsT is the minimum frame's beats at the configuration's datapath width, for the
// template's header.
func (u *Unit) MinBeatsT() int { return hdl.MinFrameBeats(u.Cfg.DatapathWidth) }
