// Package handoff builds the silicon handoff bundle (`mrgen handoff`): the RTL with its memory
// models kept apart, the constraints, golden vectors recorded from co-simulation, one plain
// Verilog testbench per block that replays them under Icarus and Verilator, a manifest of
// hashes and verify.sh, which checks all of it with no Go on the machine.
package handoff

import (
	"fmt"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// Stream is one valid/ready interface of a module: `s_<name>_valid`, `s_<name>_ready` and the
// `s_<name>_*` payload into the block, or the `m_` equivalents out of it; AXI4-Stream's
// `<name>_tvalid`, `<name>_tready` and `<name>_t*` the same way. An output `m_<name>_valid`
// with no ready is an event stream: its transactions are the cycles it is high.
type Stream struct {
	Name         string // the prefix, e.g. s_pkt, m_rx or s_axis
	Input        bool   // driven into the block (s_), else out of it (m_)
	ValidPort    string
	ReadyPort    string // "" for an event stream
	Payload      []hdl.Port
	payloadStart string // the payload ports' common prefix
}

// Valid and Ready are the handshake ports' names (Ready is "" for an event stream).
func (s Stream) Valid() string { return s.ValidPort }
func (s Stream) Ready() string { return s.ReadyPort }

// Width is the payload's width in bits, every payload port concatenated.
func (s Stream) Width() int {
	w := 0
	for _, p := range s.Payload {
		w += p.Width
	}
	return w
}

// Interface is a module's ports sorted for replay: its streams, the inputs outside them that a
// replay holds constant (Side), and the outputs outside them compared once at the end (Status).
type Interface struct {
	Module  *hdl.Module
	Streams []Stream
	Side    []hdl.Port
	Status  []hdl.Port
}

// Split sorts m's ports into streams, side inputs and status outputs. A `*_valid` port with a
// `*_ready` partner is a stream's handshake (one without is a payload flag); a handshake that is
// not 1 bit or points the wrong way, or a payload port of the wrong direction, is an error: the
// module then has no transaction-level interface to replay.
func Split(m *hdl.Module) (*Interface, error) {
	it := &Interface{Module: m}
	used := map[string]bool{m.Clock: true, m.Reset: true}
	var events []Stream
	for _, p := range m.Ports {
		var name, suffix string
		switch {
		case strings.HasSuffix(p.Name, "_tvalid"):
			name, suffix = strings.TrimSuffix(p.Name, "_tvalid"), "_t"
		case strings.HasSuffix(p.Name, "_valid"):
			name, suffix = strings.TrimSuffix(p.Name, "_valid"), "_"
		default:
			continue
		}
		input := strings.HasPrefix(name, "s_")
		if !input && !strings.HasPrefix(name, "m_") {
			continue
		}
		readyName := name + suffix + "ready"
		ready, ok := m.Port(readyName)
		if !ok {
			if !input && p.Dir == hdl.Output && p.Width == 1 {
				// An event stream, unless it is a payload flag of a stream (m_rx_gap_valid).
				events = append(events, Stream{Name: name, ValidPort: p.Name, payloadStart: name + "_"})
			}
			continue
		}
		if p.Width != 1 || ready.Width != 1 {
			return nil, fmt.Errorf("handoff: %s: %s and %s are not 1 bit", m.Name, p.Name, readyName)
		}
		validDir, readyDir := hdl.Input, hdl.Output
		if !input {
			validDir, readyDir = hdl.Output, hdl.Input
		}
		if p.Dir != validDir || ready.Dir != readyDir {
			return nil, fmt.Errorf("handoff: %s: %s and %s point the wrong way", m.Name, p.Name, ready.Name)
		}
		it.Streams = append(it.Streams, Stream{Name: name, Input: input, ValidPort: p.Name, ReadyPort: readyName,
			payloadStart: name + suffix})
	}
	for _, e := range events {
		payloadFlag := false
		for _, s := range it.Streams {
			payloadFlag = payloadFlag || strings.HasPrefix(e.ValidPort, s.payloadStart)
		}
		if !payloadFlag {
			it.Streams = append(it.Streams, e)
		}
	}
	if len(it.Streams) == 0 {
		return nil, fmt.Errorf("handoff: %s has no valid/ready stream to replay", m.Name)
	}
	for _, s := range it.Streams {
		used[s.ValidPort], used[s.ReadyPort] = true, true
	}
	// Payload: the ports under a stream's prefix, the longest prefix winning (m_rx_gap_first
	// belongs to m_rx unless an m_rx_gap stream exists).
	for _, q := range m.Ports {
		if used[q.Name] {
			continue
		}
		best := -1
		for i, s := range it.Streams {
			if strings.HasPrefix(q.Name, s.payloadStart) &&
				(best < 0 || len(s.payloadStart) > len(it.Streams[best].payloadStart)) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		s := &it.Streams[best]
		dir := hdl.Input
		if !s.Input {
			dir = hdl.Output
		}
		if q.Dir != dir {
			return nil, fmt.Errorf("handoff: %s: payload port %s of stream %s points the wrong way",
				m.Name, q.Name, s.Name)
		}
		s.Payload = append(s.Payload, q)
		used[q.Name] = true
	}
	for _, p := range m.Ports {
		if used[p.Name] {
			continue
		}
		if p.Dir == hdl.Input {
			it.Side = append(it.Side, p)
		} else {
			it.Status = append(it.Status, p)
		}
	}
	return it, nil
}

// InputGroup is a set of input ports a Timed replay drives from one file (in_<name>.hex), each
// line a run of cycles with the same values: grouping ports that change together keeps the
// files small (a stream's payload changes with its valid; the readies at random, every cycle).
type InputGroup struct {
	Name  string
	Ports []hdl.Port
}

// File is the group's file in a recording.
func (g InputGroup) File() string { return "in_" + g.Name + ".hex" }

// InputGroups are every input port of the module but its clock, in groups: each input stream
// (its valid and payload), the output streams' readies, and the rest (the reset, the time, the
// side inputs) as "side". Each group lists its ports in port order.
func (it *Interface) InputGroups() []InputGroup {
	of := map[string]string{} // port -> group
	for _, s := range it.Streams {
		switch {
		case s.Input:
			of[s.Valid()] = s.Name
			for _, p := range s.Payload {
				of[p.Name] = s.Name
			}
		case s.Ready() != "":
			of[s.Ready()] = "ready"
		}
	}
	var out []InputGroup
	idx := map[string]int{}
	for _, p := range it.Module.Ports {
		if p.Dir != hdl.Input || p.Name == it.Module.Clock {
			continue
		}
		g, ok := of[p.Name]
		if !ok {
			g = "side"
		}
		i, ok := idx[g]
		if !ok {
			i, idx[g] = len(out), len(out)
			out = append(out, InputGroup{Name: g})
		}
		out[i].Ports = append(out[i].Ports, p)
	}
	return out
}

// width is the total width of ports.
func width(ports []hdl.Port) int {
	w := 0
	for _, p := range ports {
		w += p.Width
	}
	return w
}
