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
// `s_<name>_*` payload into the block, or the `m_` equivalents out of it.
type Stream struct {
	Name    string // the prefix, e.g. s_pkt or m_rx
	Input   bool   // driven into the block (s_), else out of it (m_)
	Payload []hdl.Port
}

// Valid and Ready are the handshake ports' names.
func (s Stream) Valid() string { return s.Name + "_valid" }
func (s Stream) Ready() string { return s.Name + "_ready" }

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
	for _, p := range m.Ports {
		if !strings.HasSuffix(p.Name, "_valid") {
			continue
		}
		name := strings.TrimSuffix(p.Name, "_valid")
		input := strings.HasPrefix(name, "s_")
		if !input && !strings.HasPrefix(name, "m_") {
			continue
		}
		ready, ok := m.Port(name + "_ready")
		if !ok {
			continue // a payload flag such as m_rx_gap_valid, not a handshake
		}
		if p.Width != 1 || ready.Width != 1 {
			return nil, fmt.Errorf("handoff: %s: %s has no 1-bit %s_ready", m.Name, p.Name, name)
		}
		validDir, readyDir := hdl.Input, hdl.Output
		if !input {
			validDir, readyDir = hdl.Output, hdl.Input
		}
		if p.Dir != validDir || ready.Dir != readyDir {
			return nil, fmt.Errorf("handoff: %s: %s and %s point the wrong way", m.Name, p.Name, ready.Name)
		}
		s := Stream{Name: name, Input: input}
		for _, q := range m.Ports {
			if q.Name == p.Name || q.Name == ready.Name || !strings.HasPrefix(q.Name, name+"_") {
				continue
			}
			if q.Dir != validDir {
				return nil, fmt.Errorf("handoff: %s: payload port %s of stream %s points the wrong way",
					m.Name, q.Name, name)
			}
			s.Payload = append(s.Payload, q)
			used[q.Name] = true
		}
		used[p.Name], used[ready.Name] = true, true
		it.Streams = append(it.Streams, s)
	}
	if len(it.Streams) == 0 {
		return nil, fmt.Errorf("handoff: %s has no valid/ready stream to replay", m.Name)
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

// width is the total width of ports.
func width(ports []hdl.Port) int {
	w := 0
	for _, p := range ports {
		w += p.Width
	}
	return w
}
