package handoff

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/verilator"
)

// settleCycles is how long the status outputs must have held still at the end of a recording
// for the replay to compare them: a counter still moving belongs to an operation in flight.
const settleCycles = 16

// Recorder collects a co-simulation run's transactions on every stream of a module, as the
// verilator.Observer of its model: the input transactions the driver offered and the block took,
// and the output transactions the block gave (the run compared each with golden). The run may
// reset the block before its first transaction (cosim models start with every register at zero,
// as a reset leaves them), never after: a reset in the middle of traffic loses operations in
// flight, which a replay at other timing would not lose the same way.
type Recorder struct {
	it      *Interface
	ordered bool // input transactions keep their order across streams (Ordered)
	reset   verilator.Field
	resetHi bool // the reset is active high (rst), else low (rst_n)
	streams []recStream
	side    []verilator.Field
	status  []verilator.Field

	sideVal     [][]uint32 // the side inputs after the reset, held by the whole run
	status0     [][]uint32 // the status outputs as last seen ...
	statusSince int        // ... unchanged since this cycle
	cycle       int
	traffic     bool
	rank        uint32 // cycles with an input transaction so far
	lastIn      []uint32
	draining    bool
	err         error
}

type recStream struct {
	Stream
	valid, ready verilator.Field
	payload      []verilator.Field
	tx           [][]uint32 // each transaction's payload words, little-endian, first port at the top
	rank         []uint32   // an input transaction's rank: the cycles with an input transaction before it
}

// NewRecorder prepares a recorder for the module lay was built from. ordered records each input
// transaction's rank, so that a replay keeps the order of input transactions across streams (a
// block whose streams act on shared state, such as placement's descriptors and control
// operations); without it each stream keeps only its own order.
func NewRecorder(m *hdl.Module, lay *verilator.Layout, ordered bool) (*Recorder, error) {
	it, err := Split(m)
	if err != nil {
		return nil, err
	}
	r := &Recorder{it: it, ordered: ordered, resetHi: m.Reset != "rst_n", statusSince: -1}
	if m.Reset == "" {
		return nil, fmt.Errorf("handoff: %s has no reset: a replay could not start it in a known state", m.Name)
	}
	if r.reset, err = lay.In(m.Reset); err != nil {
		return nil, err
	}
	for _, s := range it.Streams {
		rs := recStream{Stream: s}
		get := lay.Out
		if s.Input {
			get = lay.In
		}
		if rs.valid, err = get(s.Valid()); err != nil {
			return nil, err
		}
		other := lay.In
		if s.Input {
			other = lay.Out
		}
		if s.Ready() != "" {
			if rs.ready, err = other(s.Ready()); err != nil {
				return nil, err
			}
		}
		for _, p := range s.Payload {
			f, err := get(p.Name)
			if err != nil {
				return nil, err
			}
			rs.payload = append(rs.payload, f)
		}
		r.streams = append(r.streams, rs)
	}
	for _, p := range it.Side {
		f, err := lay.In(p.Name)
		if err != nil {
			return nil, err
		}
		r.side = append(r.side, f)
	}
	for _, p := range it.Status {
		f, err := lay.Out(p.Name)
		if err != nil {
			return nil, err
		}
		r.status = append(r.status, f)
	}
	return r, nil
}

// Observe is the verilator.Observer: one call per simulated cycle.
func (r *Recorder) Observe(in, out []uint32) {
	if r.err != nil {
		return
	}
	c := r.cycle
	r.cycle++
	if !r.draining {
		r.lastIn = append(r.lastIn[:0], in...)
	}
	if (r.reset.Get(in) == 1) == r.resetHi {
		if r.traffic {
			r.err = fmt.Errorf("handoff: %s: reset at cycle %d in the middle of traffic; record a "+
				"scenario that resets only at its start", r.it.Module.Name, c)
		}
		return
	}
	side := make([][]uint32, len(r.side))
	for i, f := range r.side {
		side[i] = f.GetWords(in)
	}
	took := false
	inputTx := false
	for i := range r.streams {
		s := &r.streams[i]
		var valid, ready uint64
		switch {
		case s.Input:
			valid, ready = s.valid.Get(in), s.ready.Get(out)
		case s.Ready() == "":
			valid, ready = s.valid.Get(out), 1
		default:
			valid, ready = s.valid.Get(out), s.ready.Get(in)
		}
		if valid == 1 && ready == 1 && r.draining {
			r.err = fmt.Errorf("handoff: %s: %s gave a transaction after the run ended, which the run "+
				"did not compare with golden", r.it.Module.Name, s.Name)
			return
		}
		if valid == 1 && ready == 1 {
			buf := in
			if !s.Input {
				buf = out
			}
			s.tx = append(s.tx, pack(s.payload, buf))
			if s.Input {
				s.rank = append(s.rank, r.rank)
				inputTx = true
			}
			took = true
		}
	}
	if inputTx {
		r.rank++
	}
	switch {
	case r.sideVal == nil && took:
		r.sideVal = side
	case took && !slices.EqualFunc(side, r.sideVal, slices.Equal[[]uint32]):
		// (A change between transactions, such as the parser's counter index walking at the end,
		// is allowed: Finish restores the traffic's values before the status settles.)
		r.err = fmt.Errorf("handoff: %s: an input outside the streams changed at cycle %d, during "+
			"traffic; a transaction replay holds them constant", r.it.Module.Name, c)
		return
	}
	r.traffic = r.traffic || took
	st := make([][]uint32, len(r.status))
	for i, f := range r.status {
		st[i] = f.GetWords(out)
	}
	if r.statusSince < 0 || !slices.EqualFunc(st, r.status0, slices.Equal[[]uint32]) {
		r.status0, r.statusSince = st, c
	}
}

// Finish is the run's end (cosim.Probe): it steps the model drainCycles more cycles with no input
// offered, every output ready and the side inputs as during traffic, so that the status outputs
// (counters) settle on their final values. An output transaction then is an error: the run did
// not compare it with golden.
func (r *Recorder) Finish(m *verilator.Model) {
	if r.err != nil || r.lastIn == nil {
		return
	}
	in := append([]uint32(nil), r.lastIn...)
	for _, s := range r.streams {
		switch {
		case s.Input:
			s.valid.Set(in, 0)
		case s.Ready() != "":
			s.ready.Set(in, 1)
		}
	}
	for i, f := range r.side {
		if r.sideVal != nil {
			f.SetWords(in, r.sideVal[i])
		}
	}
	r.draining = true
	out := make([]uint32, m.Layout().OutWords())
	for range drainCycles {
		if err := m.Step(in, out); err != nil {
			r.err = fmt.Errorf("handoff: drain %s: %w", r.it.Module.Name, err)
			return
		}
	}
}

// drainCycles is how long Finish steps a drained model.
const drainCycles = 2 * settleCycles

// pack concatenates fields (the first at the most significant end, as Verilog's {a, b}) into
// little-endian words.
func pack(fields []verilator.Field, buf []uint32) []uint32 {
	v := new(big.Int)
	for _, f := range fields {
		v.Lsh(v, uint(f.Width))
		v.Or(v, wordsToInt(f.GetWords(buf)))
	}
	return intToWords(v)
}

func wordsToInt(w []uint32) *big.Int {
	v := new(big.Int)
	for i := len(w) - 1; i >= 0; i-- {
		v.Lsh(v, 32)
		v.Or(v, big.NewInt(int64(w[i])))
	}
	return v
}

func intToWords(v *big.Int) []uint32 {
	var w []uint32
	mask := big.NewInt(0xffffffff)
	for t := new(big.Int).Set(v); t.Sign() > 0; t.Rsh(t, 32) {
		w = append(w, uint32(new(big.Int).And(t, mask).Uint64()))
	}
	return w
}

// hexWord renders words as width bits of hex, most significant digit first.
func hexWord(w []uint32, width int) string {
	digits := (width + 3) / 4
	s := wordsToInt(w).Text(16)
	return strings.Repeat("0", max(digits-len(s), 0)) + s
}

// Meta is vectors.json: what a recording holds.
type Meta struct {
	Module     string         `json:"module"`
	Scenario   string         `json:"scenario"`
	Seed       uint64         `json:"seed"`
	ConfigHash string         `json:"config_hash"`
	Cycles     int            `json:"cycles"`
	Streams    []MetaStream   `json:"streams"`
	Side       []MetaField    `json:"side,omitempty"`
	Status     []MetaField    `json:"status,omitempty"`
	Settled    bool           `json:"status_settled"` // the replay compares the status outputs
	Ordered    bool           `json:"ordered"`        // input lines carry their rank (32 bits) above the payload
	Coverage   map[string]int `json:"coverage,omitempty"`
}

// MetaStream is one stream's file and fields.
type MetaStream struct {
	Name         string      `json:"name"`
	Input        bool        `json:"input"`
	File         string      `json:"file"`
	Transactions int         `json:"transactions"`
	Fields       []MetaField `json:"fields"` // most significant first
}

// MetaField is one port of a packed line.
type MetaField struct {
	Name  string `json:"name"`
	Width int    `json:"width"`
}

func metaFields(ports []hdl.Port) []MetaField {
	out := make([]MetaField, len(ports))
	for i, p := range ports {
		out[i] = MetaField{p.Name, p.Width}
	}
	return out
}

// Transactions is the number of transactions recorded over every stream.
func (r *Recorder) Transactions() int {
	n := 0
	for _, s := range r.streams {
		n += len(s.tx)
	}
	return n
}

// Write writes the recording into dir: one <stream>.hex per stream (a line per transaction:
// a 1 above the payload, then the payload), side.hex and status.hex (one line each, the status
// line led by 1 only when the outputs had settled), and vectors.json.
func (r *Recorder) Write(dir string, meta Meta) error {
	if r.err != nil {
		return r.err
	}
	if !r.traffic {
		return fmt.Errorf("handoff: %s: the run made no transaction", r.it.Module.Name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	meta.Module, meta.Cycles, meta.Ordered = r.it.Module.Name, r.cycle, r.ordered
	for _, s := range r.streams {
		var b strings.Builder
		ranked := r.ordered && s.Input
		rankNote := ""
		if ranked {
			rankNote = "rank[32], "
		}
		fmt.Fprintf(&b, "// %s: %d transactions; a line is 1, then {%s%s}\n", s.Name, len(s.tx), rankNote,
			fieldList(s.Payload))
		for i, t := range s.tx {
			w := s.Width()
			if ranked {
				t = withRank(t, w, s.rank[i])
				w += 32
			}
			b.WriteString(hexWord(withTop(t, w), w+1))
			b.WriteByte('\n')
		}
		file := s.Name + ".hex"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
		meta.Streams = append(meta.Streams, MetaStream{Name: s.Name, Input: s.Input, File: file,
			Transactions: len(s.tx), Fields: metaFields(s.Payload)})
	}
	side := packWords(r.sideVal, r.it.Side)
	meta.Side = metaFields(r.it.Side)
	meta.Status = metaFields(r.it.Status)
	meta.Settled = r.statusSince >= 0 && r.cycle-r.statusSince >= settleCycles
	files := map[string]string{
		"side.hex":   fmt.Sprintf("// {%s}\n%s\n", fieldList(r.it.Side), hexWord(withTop(side, width(r.it.Side)), width(r.it.Side)+1)),
		"status.hex": r.statusLine(meta.Settled),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
	}
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("handoff: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "vectors.json"), append(js, '\n'), 0o644)
}

func (r *Recorder) statusLine(settled bool) string {
	w := width(r.it.Status)
	st := packWords(r.status0, r.it.Status)
	top := withTop(st, w)
	if !settled {
		top = st
	}
	return fmt.Sprintf("// {%s}; led by 1 when the replay compares it\n%s\n", fieldList(r.it.Status), hexWord(top, w+1))
}

// packWords packs per-port word vectors (in port order) as pack does.
func packWords(vals [][]uint32, ports []hdl.Port) []uint32 {
	v := new(big.Int)
	for i, p := range ports {
		v.Lsh(v, uint(p.Width))
		if i < len(vals) {
			v.Or(v, wordsToInt(vals[i]))
		}
	}
	return intToWords(v)
}

// withRank places rank above the width bits of w.
func withRank(w []uint32, width int, rank uint32) []uint32 {
	v := wordsToInt(w)
	v.Or(v, new(big.Int).Lsh(big.NewInt(int64(rank)), uint(width)))
	return intToWords(v)
}

// withTop sets bit width of w: the line's "present" mark.
func withTop(w []uint32, width int) []uint32 {
	v := wordsToInt(w)
	v.SetBit(v, width, 1)
	return intToWords(v)
}

func fieldList(ports []hdl.Port) string {
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = fmt.Sprintf("%s[%d]", p.Name, p.Width)
	}
	return strings.Join(names, ", ")
}
