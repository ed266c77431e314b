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
	mode    Replay
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

	// Timed: every input port but the clock, in groups (InputGroups), and the runs of cycles
	// each group held.
	groups []recGroup
}

// Replay is how a testbench replays a module's recordings.
type Replay int

const (
	// PerStream: each stream keeps its own order; the testbench offers inputs and takes outputs
	// at random, so any latency and any backpressure pass.
	PerStream Replay = iota
	// Ordered: as PerStream, and the input transactions also keep their order across streams
	// (each carries its rank): for a block whose streams act on shared state (placement's
	// descriptors and control operations).
	Ordered
	// Timed: every input, the time, the resets and the output streams' readies included, is
	// replayed cycle by cycle as recorded; the outputs are compared per stream, in order. For
	// blocks whose outputs depend on when their inputs come (a `now` input and its timers, a
	// closed loop whose stimulus answers the block's outputs): rx_acker, window_unit, tx_engine,
	// nic_tx, nic_top. A reset in the middle of traffic is replayed too.
	Timed
)

// runMax is the longest run one line of an input group's file holds (its count is 16 bits).
const runMax = 1<<16 - 1

// recGroup is one input group's fields and its runs: each run is n cycles of one value (the
// group's ports packed, the first at the top).
type recGroup struct {
	InputGroup
	fields []verilator.Field
	raw    []uint32   // the fields' words in the last cycle, for the comparison with the next
	val    [][]uint32 // each run's value, packed
	n      []uint32   // each run's cycles
}

type recStream struct {
	Stream
	valid, ready verilator.Field
	payload      []verilator.Field
	tx           [][]uint32 // each transaction's payload words, little-endian, first port at the top
	rank         []uint32   // an input transaction's rank: the cycles with an input transaction before it
	at           []uint32   // Timed: an output transaction's cycle (an event run's last cycle)
	reps         []uint32   // Timed: an event stream's cycles in a run (1 for a stream with a ready)
}

// NewRecorder prepares a recorder for the module lay was built from, for a testbench that
// replays it as mode says.
func NewRecorder(m *hdl.Module, lay *verilator.Layout, mode Replay) (*Recorder, error) {
	it, err := Split(m)
	if err != nil {
		return nil, err
	}
	r := &Recorder{it: it, mode: mode, resetHi: m.Reset != "rst_n", statusSince: -1}
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
	if mode == Timed {
		for _, g := range it.InputGroups() {
			rg := recGroup{InputGroup: g}
			for _, p := range g.Ports {
				f, err := lay.In(p.Name)
				if err != nil {
					return nil, err
				}
				rg.fields = append(rg.fields, f)
			}
			r.groups = append(r.groups, rg)
		}
	}
	return r, nil
}

// observeInputs extends each input group's runs with this cycle's inputs (Timed).
func (r *Recorder) observeInputs(in []uint32) {
	for i := range r.groups {
		g := &r.groups[i]
		same := g.raw != nil
		k := 0
		for _, f := range g.fields {
			for _, word := range f.View(in) {
				if same && g.raw[k] != word {
					same = false
				}
				k++
			}
		}
		if n := len(g.n); same && g.n[n-1] < runMax {
			g.n[n-1]++
			continue
		}
		g.raw = g.raw[:0]
		for _, f := range g.fields {
			g.raw = append(g.raw, f.View(in)...)
		}
		g.val, g.n = append(g.val, pack(g.fields, in)), append(g.n, 1)
	}
}

// InputLines is the most lines any input group of a Timed recording has.
func (r *Recorder) InputLines() int {
	n := 0
	for _, g := range r.groups {
		n = max(n, len(g.n))
	}
	return n
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
	timed := r.mode == Timed
	if timed {
		r.observeInputs(in)
	}
	if !timed && (r.reset.Get(in) == 1) == r.resetHi {
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
		event := s.Ready() == ""
		if valid == 1 && ready == 1 && r.draining && !(timed && event) {
			r.err = fmt.Errorf("handoff: %s: %s gave a transaction after the run ended, which the run "+
				"did not compare with golden", r.it.Module.Name, s.Name)
			return
		}
		if valid == 1 && ready == 1 {
			buf := in
			if !s.Input {
				buf = out
			}
			p := pack(s.payload, buf)
			if n := len(s.tx); timed && event && n > 0 && s.at[n-1] == uint32(c-1) && slices.Equal(s.tx[n-1], p) {
				// The same event as in the cycle before: one line of that many cycles.
				s.at[n-1], s.reps[n-1] = uint32(c), s.reps[n-1]+1
				continue
			}
			s.tx = append(s.tx, p)
			if s.Input {
				s.rank = append(s.rank, r.rank)
				inputTx = true
			} else {
				s.at, s.reps = append(s.at, uint32(c)), append(s.reps, 1)
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
	case timed:
		// The side inputs are replayed with every other input.
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
	Timed      bool           `json:"timed"`          // in_<group>.hex replay every input cycle by cycle; output lines carry their cycle
	InputLines int            `json:"input_lines,omitempty"`
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
	meta.Module, meta.Cycles = r.it.Module.Name, r.cycle
	meta.Ordered, meta.Timed = r.mode == Ordered, r.mode == Timed
	for _, s := range r.streams {
		if r.mode == Timed && s.Input {
			// Replayed from its input group's file; the count is the run's.
			meta.Streams = append(meta.Streams, MetaStream{Name: s.Name, Input: true,
				Transactions: len(s.tx), Fields: metaFields(s.Payload)})
			continue
		}
		var b strings.Builder
		tag, tags := "", []uint32(nil)
		switch {
		case r.mode == Ordered && s.Input:
			tag, tags = "rank[32], ", s.rank
		case r.mode == Timed:
			tag = "cycle[32], cycles[32], "
		}
		fmt.Fprintf(&b, "// %s: %d transactions; a line is 1, then {%s%s}\n", s.Name, len(s.tx), tag,
			fieldList(s.Payload))
		for i, t := range s.tx {
			w := s.Width()
			switch {
			case tags != nil:
				t = withRank(t, w, tags[i])
				w += 32
			case r.mode == Timed:
				t = withRank(withRank(t, w, s.reps[i]), w+32, s.at[i])
				w += 64
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
	if r.mode == Timed {
		if err := r.writeInputs(dir); err != nil {
			return err
		}
		meta.InputLines = r.InputLines()
	}
	side := packWords(r.sideVal, r.it.Side)
	meta.Side = metaFields(r.it.Side)
	meta.Status = metaFields(r.it.Status)
	meta.Settled = r.statusSince >= 0 && r.cycle-r.statusSince >= settleCycles
	files := map[string]string{"status.hex": r.statusLine(meta.Settled)}
	if r.mode != Timed { // (Timed: the side inputs are in in_side.hex)
		files["side.hex"] = fmt.Sprintf("// {%s}\n%s\n", fieldList(r.it.Side), hexWord(withTop(side, width(r.it.Side)), width(r.it.Side)+1))
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

// writeInputs writes in_<group>.hex for each input group (Timed): a line per run of cycles with
// the same values, 1 above the run's length in cycles (16 bits) above the group's ports, packed in
// port order.
func (r *Recorder) writeInputs(dir string) error {
	for _, g := range r.groups {
		var b strings.Builder
		w := width(g.Ports)
		fmt.Fprintf(&b, "// %s: %d runs over %d cycles; a line is 1, then {cycles[16], %s}\n", g.Name, len(g.n), r.cycle,
			fieldList(g.Ports))
		for i, v := range g.val {
			b.WriteString(hexWord(withTop(withRank(v, w, g.n[i]), w+16), w+17))
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, g.File()), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("handoff: %w", err)
		}
	}
	return nil
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

// withRank places rank (at most 32 bits) above the width bits of w.
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
