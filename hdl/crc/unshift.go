package crc

import (
	"embed"
	"fmt"

	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/hdl"
)

//go:embed unshift.v.tmpl
var unshiftFS embed.FS

// UnshiftNet is the pipelined network that runs the CRC-32 register backwards over 0 to B-1
// zero bytes (B = bytes per beat, a power of two): a beat's ICRC input zero-padded up to the
// beat boundary goes through one B-byte CRC unit, and this network removes the pad. Step i is a
// 32×32 XOR map (UnshiftEquations of 2^i bytes) applied when bit i of the pad count is set; a
// register follows every StepsPerStage steps and the last one, so the result leaves Latency()
// cycles after its input. The parser and the deparser share it (one module per beat width,
// crc32_unshift_b<B>).
type UnshiftNet struct {
	B  int // bytes per beat
	BW int // log2(B): steps, and the width of the pad count
}

// StepsPerStage is the number of unshift steps between two registers: a stage chooses among the
// maps of its steps and their composition, each a parity of at most 32 register bits, so it is
// one XOR tree and a 4:1 choice deep (BENCHMARKS.md, "Timing closure I", has the measurements).
const StepsPerStage = 2

// NewUnshiftNet is the network of a beat of b bytes (a power of two, at least 2).
func NewUnshiftNet(b int) (*UnshiftNet, error) {
	bw := 0
	for 1<<bw < b {
		bw++
	}
	if b < 2 || 1<<bw != b {
		return nil, fmt.Errorf("crc: unshift network: beat of %d bytes, want a power of two of at least 2", b)
	}
	return &UnshiftNet{B: b, BW: bw}, nil
}

// UnshiftLatency is the latency of the unshift network of a beat of b bytes (b a power of two):
// one register stage per StepsPerStage steps.
func UnshiftLatency(b int) int {
	bw := 0
	for 1<<bw < b {
		bw++
	}
	return (bw + StepsPerStage - 1) / StepsPerStage
}

// Latency is the number of cycles from crc_in and zeros to crc_out.
func (u *UnshiftNet) Latency() int { return UnshiftLatency(u.B) }

// Module describes crc32_unshift_b<B>.
func (u *UnshiftNet) Module() *hdl.Module {
	return &hdl.Module{
		Name:   fmt.Sprintf("crc32_unshift_b%d", u.B),
		Source: "hdl/crc/unshift.go",
		Doc: fmt.Sprintf("Runs the CRC-32 register backwards over 0..%d zero bytes: the last beat of "+
			"a CRC's input is zero-padded to the beat boundary and this removes the pad, so one "+
			"%d-bit CRC unit serves every tail length. %d conditional 32x32 XOR maps, step i removing "+
			"2^i bytes, derived from hdl/crc.Unshift, with a register after every %d steps and the "+
			"last: a new input every enabled cycle, its result %d enabled cycle(s) later. No reset: "+
			"it holds no control state.", u.B-1, 8*u.B, u.BW, StepsPerStage, u.Latency()),
		Clock: "clk",
		Ports: []hdl.Port{
			{Name: "clk", Dir: hdl.Input, Width: 1, Doc: "clock"},
			{Name: "ce", Dir: hdl.Input, Width: 1, Doc: "clock enable: the stages move (a pipeline that stalls stalls it too)"},
			{Name: "crc_in", Dir: hdl.Input, Width: 32, Doc: "CRC register after the padded beat"},
			{Name: "zeros", Dir: hdl.Input, Width: u.BW, Doc: "pad bytes to remove"},
			{Name: "crc_out", Dir: hdl.Output, Width: 32, Doc: "CRC register without the pad, Latency cycles later"},
		},
		Latency: u.Latency(),
		II:      1,
	}
}

// Source is the module ready for gen.Build (its template's data is the *UnshiftNet).
func (u *UnshiftNet) Source() (gen.Source, error) {
	text, err := unshiftFS.ReadFile("unshift.v.tmpl")
	if err != nil {
		return gen.Source{}, fmt.Errorf("crc: unshift template: %w", err)
	}
	return gen.Source{Module: u.Module(), Template: string(text), Data: u}, nil
}

// UnshiftMap is one of a stage's linear maps: Unshift over Bytes zero bytes, chosen when the
// stage's bits of the pad count equal Sel.
type UnshiftMap struct {
	Name  string
	Sel   int
	Bytes int
	Lines []string
}

// UnshiftStage is one register stage of the network: steps First..First+Steps-1 of the pad
// count, taken at once. Its output is one of the stage's maps, or its input unchanged (the
// stage's bits zero): the maps of both steps and of their composition (Unshift over 3·2^First
// bytes) are computed side by side, so a stage is one XOR tree and a 4:1 choice deep, not two
// trees in a row.
type UnshiftStage struct {
	Index, First, Steps int
	Maps                []UnshiftMap
}

// Stages are the network's register stages: StepsPerStage steps each, the last one fewer.
func (u *UnshiftNet) Stages() []UnshiftStage {
	var out []UnshiftStage
	for first := 0; first < u.BW; first += StepsPerStage {
		st := UnshiftStage{Index: len(out), First: first, Steps: min(StepsPerStage, u.BW-first)}
		for sel := 1; sel < 1<<st.Steps; sel++ {
			bytes := sel << first
			name := fmt.Sprintf("u%d_%d", st.Index, sel)
			st.Maps = append(st.Maps, UnshiftMap{Name: name, Sel: sel, Bytes: bytes,
				Lines: XorLines(name, fmt.Sprintf("s%d", st.Index), UnshiftEquations(bytes))})
		}
		out = append(out, st)
	}
	return out
}

// StepsPerStageT is StepsPerStage, for the template.
func (u *UnshiftNet) StepsPerStageT() int { return StepsPerStage }

// BeatSources are the two CRC modules a datapath of w bits per beat needs, ready for gen.Build:
// the update unit crc32_d<w> and the unshift network crc32_unshift_b<w/8>.
func BeatSources(w int) ([]gen.Source, error) {
	eq, err := Generate(w)
	if err != nil {
		return nil, err
	}
	net, err := NewUnshiftNet(w / 8)
	if err != nil {
		return nil, err
	}
	unshift, err := net.Source()
	if err != nil {
		return nil, err
	}
	return []gen.Source{{Module: Module(w), Template: Template, Data: eq}, unshift}, nil
}
