package qor

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// A gate-level netlist as Yosys writes it in BLIF (write_blif -gates -cname, constants as the
// nets vdd and gnd): the form blifFanout reads and writes, and from which the flow writes the
// structural Verilog OpenSTA reads.
type netlist struct {
	model   string
	inputs  []string
	outputs []string
	gates   []gate
}

type gate struct {
	typ   string
	pins  []pinConn // in file order
	cname string    // the cell's name in Yosys (a macro's instance path), "" if none
}

type pinConn struct{ pin, net string }

// parseBLIF reads a one-model BLIF of .gate lines.
func parseBLIF(data []byte) (*netlist, error) {
	nl := &netlist{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var pending string
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line = strings.TrimSpace(pending + line)
		pending = ""
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		switch f[0] {
		case ".model":
			if len(f) > 1 {
				nl.model = f[1]
			}
		case ".inputs":
			nl.inputs = append(nl.inputs, f[1:]...)
		case ".outputs":
			nl.outputs = append(nl.outputs, f[1:]...)
		case ".gate", ".subckt":
			if len(f) < 2 {
				return nil, fmt.Errorf("blif line %d: .gate without a type", n)
			}
			g := gate{typ: f[1]}
			for _, pc := range f[2:] {
				k := strings.IndexByte(pc, '=')
				if k <= 0 {
					return nil, fmt.Errorf("blif line %d: pin connection %q", n, pc)
				}
				g.pins = append(g.pins, pinConn{pc[:k], pc[k+1:]})
			}
			nl.gates = append(nl.gates, g)
		case ".cname":
			if len(nl.gates) > 0 && len(f) > 1 {
				nl.gates[len(nl.gates)-1].cname = f[1]
			}
		case ".end":
		case ".names":
			return nil, fmt.Errorf("blif line %d: a logic function (.names %s) is left unmapped", n,
				strings.Join(f[1:], " "))
		default:
			return nil, fmt.Errorf("blif line %d: unsupported statement %s", n, f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading blif: %w", err)
	}
	if nl.model == "" {
		return nil, fmt.Errorf("blif: no .model")
	}
	return nl, nil
}

// write renders the netlist as BLIF (without cell names, which blifFanout does not read).
func (nl *netlist) write() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, ".model %s\n", nl.model)
	writeList(&b, ".inputs", nl.inputs)
	writeList(&b, ".outputs", nl.outputs)
	for _, g := range nl.gates {
		b.WriteString(".gate " + g.typ)
		for _, p := range g.pins {
			b.WriteString(" " + p.pin + "=" + p.net)
		}
		b.WriteByte('\n')
	}
	b.WriteString(".end\n")
	return b.Bytes()
}

func writeList(b *bytes.Buffer, kw string, names []string) {
	for i := 0; i < len(names); i += 16 {
		j := min(i+16, len(names))
		b.WriteString(kw + " " + strings.Join(names[i:j], " ") + "\n")
	}
}

// busBit splits "name[3]" into ("name", 3, true).
var busBitRE = regexp.MustCompile(`^(.+)\[(\d+)\]$`)

func busBit(s string) (string, int, bool) {
	m := busBitRE.FindStringSubmatch(s)
	if m == nil {
		return s, 0, false
	}
	i, err := strconv.Atoi(m[2])
	if err != nil {
		return s, 0, false
	}
	return m[1], i, true
}

// busPins are the memory family's vector ports.
var busPins = map[string]bool{"waddr": true, "wdata": true, "raddr": true, "rdata": true}

// prepare readies the Yosys netlist for blifFanout: macro bus pins become scalar pins
// (rdata[3] -> rdata_3_, as the macro liberty names them), and every net that is not a port
// is renamed n<k>, so that nothing blifFanout cannot parse is left. It returns the names of the
// state elements: for a flip-flop, the RTL register bit it holds (its Q net); for a macro, its
// instance path; keyed by the renamed net they drive (a flip-flop's Q, a macro's rdata_0_),
// which blifFanout keeps.
func (nl *netlist) prepare(macros map[string]bool, flops map[string]string, boxes *partBoxes) (map[string]string, error) {
	ports := map[string]bool{"vdd": true, "gnd": true}
	for _, p := range append(append([]string{}, nl.inputs...), nl.outputs...) {
		ports[p] = true
	}
	rename := map[string]string{}
	netName := func(s string) string {
		if ports[s] {
			return s
		}
		if r, ok := rename[s]; ok {
			return r
		}
		r := "n" + strconv.Itoa(len(rename))
		rename[s] = r
		return r
	}
	state := map[string]string{}
	var bufs []gate
	for gi := range nl.gates {
		g := &nl.gates[gi]
		for pi := range g.pins {
			p := &g.pins[pi]
			orig := p.net
			p.net = netName(p.net)
			if boxes.has(g.typ) {
				out, err := boxes.rename(g.typ, p)
				if err != nil {
					return nil, err
				}
				if out {
					own := "mq_" + strconv.Itoa(len(bufs))
					bufs = append(bufs, gate{typ: "BUFX2", pins: []pinConn{{"A", own}, {"Y", p.net}}})
					p.net = own
					if !boxes.named[g.cname] && g.cname != "" {
						boxes.named[g.cname] = true
						boxes.typeOf[g.cname] = g.typ
						boxes.inst[own] = g.cname
					}
				}
			} else if macros[g.typ] {
				if base, i, ok := busBit(p.pin); ok {
					p.pin = fmt.Sprintf("%s_%d_", base, i)
				} else if busPins[p.pin] {
					p.pin += "_0_" // a one-bit bus: Yosys names it without an index
				}
				if strings.HasPrefix(p.pin, "rdata_") {
					// blifFanout does not buffer a macro's outputs: each drives one BUFX2,
					// whose fanout it buffers (an SRAM's output drive is modest too).
					own := "mq_" + strconv.Itoa(len(bufs))
					bufs = append(bufs, gate{typ: "BUFX2", pins: []pinConn{{"A", own}, {"Y", p.net}}})
					p.net = own
				}
				if p.pin == "rdata_0_" {
					state[p.net] = g.cname
				}
			} else if q, ok := flops[g.typ]; ok && p.pin == q {
				state[p.net] = orig
			}
		}
		g.cname = ""
	}
	nl.gates = append(nl.gates, bufs...)
	return state, nil
}

// partBoxes are the parts of a composed unit as cells of its netlist: their pins renamed for
// blifFanout (P<k>, which it parses, where Yosys writes now[3]), and back to their ports for
// the Verilog OpenSTA links against the parts' own netlists.
type partBoxes struct {
	ports  map[string]map[string]hdl.Port // part module -> port name -> port
	pins   map[string]map[string]partPin  // part module -> renamed pin -> its port bit
	alias  map[string]map[string]string   // part module -> Yosys pin -> renamed pin
	inst   map[string]string              // the net of an instance's first output -> its path
	named  map[string]bool                // instance paths in inst
	typeOf map[string]string              // instance path -> part module
}

type partPin struct {
	port string
	bit  int
	bus  bool
}

func newPartBoxes(parts []SubUnit) *partBoxes {
	b := &partBoxes{ports: map[string]map[string]hdl.Port{}, pins: map[string]map[string]partPin{},
		alias: map[string]map[string]string{}, inst: map[string]string{}, named: map[string]bool{},
		typeOf: map[string]string{}}
	for _, pt := range parts {
		ports := map[string]hdl.Port{}
		for _, p := range pt.Module.Ports {
			ports[p.Name] = p
		}
		b.ports[pt.Name] = ports
		b.pins[pt.Name] = map[string]partPin{}
		b.alias[pt.Name] = map[string]string{}
	}
	return b
}

func (b *partBoxes) has(typ string) bool { return b != nil && b.ports[typ] != nil }

// rename gives a part's pin its blifFanout name and says whether it is an output.
func (b *partBoxes) rename(typ string, p *pinConn) (bool, error) {
	port, bit, bus := busBit(p.pin)
	pp, ok := b.ports[typ][port]
	if !ok {
		return false, fmt.Errorf("qor: the netlist connects pin %s of %s, which has no port %s", p.pin, typ, port)
	}
	a, ok := b.alias[typ][p.pin]
	if !ok {
		a = "P" + strconv.Itoa(len(b.alias[typ]))
		b.alias[typ][p.pin] = a
		b.pins[typ][a] = partPin{port: port, bit: bit, bus: bus}
	}
	p.pin = a
	return pp.Dir == hdl.Output, nil
}

// instance renders a part's cell as a Verilog instance of its module: pins back to ports, a
// bus's bits concatenated (a bit the netlist does not connect: gnd in, a dangling wire out).
func (b *partBoxes) instance(g gate, inst string, ident func(string) string, dangling func() string) string {
	type bits map[int]string
	conn := map[string]bits{}
	var order []string
	for _, p := range g.pins {
		pp := b.pins[g.typ][p.pin]
		if conn[pp.port] == nil {
			conn[pp.port] = bits{}
			order = append(order, pp.port)
		}
		conn[pp.port][pp.bit] = ident(p.net)
	}
	sort.Strings(order)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s (", g.typ, inst)
	for i, name := range order {
		if i > 0 {
			sb.WriteString(", ")
		}
		port := b.ports[g.typ][name]
		c := conn[name]
		if port.Width == 1 && c[0] != "" && len(c) == 1 {
			fmt.Fprintf(&sb, ".%s(%s)", name, c[0])
			continue
		}
		parts := make([]string, 0, port.Width)
		for k := port.Width - 1; k >= 0; k-- {
			n, ok := c[k]
			switch {
			case ok:
			case port.Dir == hdl.Output:
				n = dangling()
			default:
				n = "gnd"
			}
			parts = append(parts, n)
		}
		fmt.Fprintf(&sb, ".%s({%s})", name, strings.Join(parts, ", "))
	}
	sb.WriteString(");\n")
	return sb.String()
}

// verilogIdent makes a net name a Verilog identifier: ports keep their names (a bus bit is
// name[i]), other nets are plain identifiers.
var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var unsafeRE = regexp.MustCompile(`[^A-Za-z0-9_]`)

// safeIdent turns a net reference (a port bit m_rx_psn[3]) into identifier characters.
func safeIdent(s string) string { return unsafeRE.ReplaceAllString(s, "_") }

// writeVerilog renders the netlist as structural Verilog for OpenSTA. Instances are named by
// kind: ff_<net> for a flip-flop (its Q net), mem_<net> for a macro (its rdata[0] net), g<k>
// for other cells; names maps every instance name to what a report should call it.
func (nl *netlist) writeVerilog(macros map[string]bool, flops map[string]string, state map[string]string, boxes *partBoxes) ([]byte, map[string]string) {
	type port struct {
		name  string
		width int // 0: scalar
		dir   string
	}
	var ports []*port
	byName := map[string]*port{}
	isPortBit := map[string]bool{}
	addPort := func(bit, dir string) {
		isPortBit[bit] = true
		base, i, bus := busBit(bit)
		p, ok := byName[base]
		if !ok {
			p = &port{name: base, dir: dir}
			byName[base] = p
			ports = append(ports, p)
		}
		if bus && i+1 > p.width {
			p.width = i + 1
		}
	}
	for _, s := range nl.inputs {
		addPort(s, "input")
	}
	for _, s := range nl.outputs {
		addPort(s, "output")
	}
	wire := map[string]string{} // net -> identifier
	var wires []string
	ident := func(net string) string {
		if isPortBit[net] || net == "vdd" || net == "gnd" {
			return net
		}
		if id, ok := wire[net]; ok {
			return id
		}
		id := net
		if !plainIdent.MatchString(id) || byName[id] != nil {
			id = "w" + strconv.Itoa(len(wires))
		}
		wire[net] = id
		wires = append(wires, id)
		return id
	}
	var body bytes.Buffer
	names := map[string]string{}
	used := map[string]bool{}
	dangling := func() string {
		id := "nc" + strconv.Itoa(len(wires))
		wires = append(wires, id)
		return id
	}
	for k, g := range nl.gates {
		if boxes.has(g.typ) {
			// Named by its instance path, so its pins read u_rx/ff_n12/D in OpenSTA's report.
			inst := ""
			for _, p := range g.pins {
				if path, ok := boxes.inst[p.net]; ok {
					inst = safeIdent(path)
					names[inst] = path
					break
				}
			}
			if inst == "" || used[inst] {
				inst = "g" + strconv.Itoa(k)
			}
			used[inst] = true
			body.WriteString(boxes.instance(g, inst, ident, dangling))
			continue
		}
		inst := ""
		for _, p := range g.pins {
			if q, ok := flops[g.typ]; ok && p.pin == q {
				inst = "ff_" + safeIdent(ident(p.net))
				names[inst] = state[p.net]
			}
			if macros[g.typ] && p.pin == "rdata_0_" {
				inst = "mem_" + safeIdent(ident(p.net))
				names[inst] = state[p.net]
			}
		}
		if inst == "" || used[inst] {
			inst = "g" + strconv.Itoa(k)
		}
		used[inst] = true
		fmt.Fprintf(&body, "%s %s (", g.typ, inst)
		for i, p := range g.pins {
			if i > 0 {
				body.WriteString(", ")
			}
			fmt.Fprintf(&body, ".%s(%s)", p.pin, ident(p.net))
		}
		body.WriteString(");\n")
	}
	var b bytes.Buffer
	names2 := make([]string, len(ports))
	for i, p := range ports {
		names2[i] = p.name
	}
	fmt.Fprintf(&b, "module %s (%s);\n", nl.model, strings.Join(names2, ", "))
	for _, p := range ports {
		if p.width > 0 {
			fmt.Fprintf(&b, "%s [%d:0] %s;\n", p.dir, p.width-1, p.name)
		} else {
			fmt.Fprintf(&b, "%s %s;\n", p.dir, p.name)
		}
	}
	b.WriteString("wire vdd = 1'b1;\nwire gnd = 1'b0;\n")
	sort.Strings(wires)
	for _, w := range wires {
		fmt.Fprintf(&b, "wire %s;\n", w)
	}
	b.Write(body.Bytes())
	b.WriteString("endmodule\n")
	return b.Bytes(), names
}
