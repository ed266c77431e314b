package gen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/mem"
)

// MemoryInstance is one memory of a design: one row of memories.json.
type MemoryInstance struct {
	Path        string `json:"path"`   // hierarchical instance path from the top, e.g. nic_top.u_rx.u_sack_rx.u_rx_table
	Module      string `json:"module"` // the memory module of its shape, e.g. mrgen_ram_1r1w_32x290
	Block       string `json:"block"`  // the module that declares it
	Table       string `json:"table"`  // its name there
	Kind        string `json:"kind"`   // ram (registered read) | regfile (combinational read)
	Depth       int    `json:"depth"`
	Width       int    `json:"width"`
	AddrWidth   int    `json:"addr_width"`
	Ports       string `json:"ports"` // 1R1W: one write port and one read port
	ReadLatency int    `json:"read_latency"`
	// ReadDuringWrite is what a read of the entry written at the same edge returns: old (the
	// contents before the write) or dont_care (the block never uses it).
	ReadDuringWrite string `json:"read_during_write"`
	Bits            int    `json:"bits"`
	Implementation  string `json:"implementation"` // macro (ASIC black box) | flops
	Doc             string `json:"doc,omitempty"`
	// Modules are the modules on its path, top first (the last is Block).
	Modules []string `json:"-"`
}

// MemoryList is memories.json: every memory instance of the design and the totals.
type MemoryList struct {
	Top         string           `json:"top"`
	Config      string           `json:"config"`
	ConfigHash  string           `json:"config_hash"`
	Rule        string           `json:"rule"` // which memories are macros
	Instances   []MemoryInstance `json:"instances"`
	Bits        int              `json:"bits"`
	MacroBits   int              `json:"macro_bits"`
	FlopBits    int              `json:"flop_bits"`
	MacroShapes []string         `json:"macro_shapes"` // the distinct macro modules
}

// MacroRule says which memories the ASIC flow treats as macros.
var MacroRule = fmt.Sprintf("a registered-read RAM of at least %d bits and %d entries is a macro; "+
	"smaller RAMs and register files (combinational read) are flip-flops",
	hdl.MacroMinBits, hdl.MacroMinDepth)

// memorySources are the memory modules the sources' tables use, each shape once, sorted.
func memorySources(srcs []Source) []Source {
	byName := map[string]hdl.Table{}
	for _, s := range srcs {
		for _, t := range s.Module.Tables {
			byName[t.MemModule()] = t
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Source, 0, len(names))
	for _, n := range names {
		t := byName[n]
		out = append(out, Source{Module: mem.Module(t), Template: mem.Template, Data: t})
	}
	return out
}

// instLine matches an instance name line of the generated style: "  module u_name (" or, after
// a parameter list, "  ) u_name (".
var instLine = regexp.MustCompile(`^\s*(?:([a-z][a-z0-9_]*)\s+|\)\s*)(u_[a-z0-9_]+)\s*\($`)
var modLine = regexp.MustCompile(`^\s*([a-z][a-z0-9_]*)\s+(?:#\(|u_)`)

type childInst struct {
	module, name string
	params       bool // instanced with a parameter list
}

// instancesOf lists the instances of known modules in a rendered module's text, in order.
func instancesOf(text string, known map[string]bool) []childInst {
	var out []childInst
	pending := ""
	for _, line := range strings.Split(text, "\n") {
		if m := modLine.FindStringSubmatch(line); m != nil && known[m[1]] {
			pending = m[1]
		}
		paramd := pending != ""
		m := instLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		mod := m[1]
		if mod == "" {
			mod = pending
		} else {
			paramd = false
		}
		if known[mod] {
			out = append(out, childInst{module: mod, name: m[2], params: paramd})
		}
		pending = ""
	}
	return out
}

// memoryList walks the design's hierarchy from the top and lists every table instance.
func memoryList(top string, srcs []Source, texts map[string]string, st Stamp) (*MemoryList, error) {
	mods := map[string]*hdl.Module{}
	known := map[string]bool{}
	for _, s := range srcs {
		mods[s.Module.Name] = s.Module
		known[s.Module.Name] = true
	}
	ml := &MemoryList{Top: top, Config: st.ConfigName, ConfigHash: st.ConfigHash, Rule: MacroRule,
		Instances: []MemoryInstance{}, MacroShapes: []string{}}
	shapes := map[string]bool{}
	var walk func(module, path string, chain []string, depth int) error
	walk = func(module, path string, chain []string, depth int) error {
		chain = append(append([]string(nil), chain...), module)
		if depth > 64 {
			return fmt.Errorf("gen: memories: hierarchy below %s is deeper than 64 (a recursive instance?)", path)
		}
		m := mods[module]
		children := instancesOf(texts[module], known)
		for _, t := range m.Tables {
			found := false
			for _, c := range children {
				if c.name == t.Instance() && c.module == t.MemModule() {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("gen: module %s declares table %s but does not instantiate it "+
					"(want %s %s, from the template function memory)", module, t.Name, t.MemModule(), t.Instance())
			}
			mi := MemoryInstance{Path: path + "." + t.Instance(), Module: t.MemModule(), Block: module,
				Table: t.Name, Kind: t.Kind.String(), Depth: t.Depth, Width: t.Width, AddrWidth: t.AddrWidth(),
				Ports: "1R1W", ReadLatency: t.ReadLatency(), ReadDuringWrite: t.ReadDuringWrite(), Bits: t.Bits(), Implementation: t.Implementation(), Doc: t.Doc,
				Modules: chain}
			ml.Instances = append(ml.Instances, mi)
			ml.Bits += mi.Bits
			if t.Macro() {
				ml.MacroBits += mi.Bits
				if !shapes[mi.Module] {
					shapes[mi.Module] = true
					ml.MacroShapes = append(ml.MacroShapes, mi.Module)
				}
			} else {
				ml.FlopBits += mi.Bits
			}
		}
		for _, c := range children {
			if _, isMem := mods[c.module]; !isMem || strings.HasPrefix(c.module, "mrgen_") {
				continue
			}
			if err := walk(c.module, path+"."+c.name, chain, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(top, top, nil, 0); err != nil {
		return nil, err
	}
	sort.Strings(ml.MacroShapes)
	return ml, nil
}

func (ml *MemoryList) json() ([]byte, error) {
	b, err := json.MarshalIndent(ml, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("gen: memories.json: %w", err)
	}
	return append(b, '\n'), nil
}

// table is memories.md: the same list for people.
func (ml *MemoryList) table(version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Memories of %s\n\n", ml.Top)
	fmt.Fprintf(&b, "Generated by mrgen %s for configuration %s (sha256 %s); the same list is memories.json.\n\n",
		version, ml.Config, ml.ConfigHash)
	fmt.Fprintf(&b, "Rule: %s.\n\n", ml.Rule)
	b.WriteString("| instance | module | kind | depth | width | read latency | read during write | bits | implementation |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---|---:|---|\n")
	for _, m := range ml.Instances {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %d | %d | %d | %s | %d | %s |\n", m.Path, m.Module, m.Kind, m.Depth,
			m.Width, m.ReadLatency, m.ReadDuringWrite, m.Bits, m.Implementation)
	}
	fmt.Fprintf(&b, "\n%d memories, %d bits: %d in macros (%d shapes), %d in flip-flops.\n", len(ml.Instances),
		ml.Bits, ml.MacroBits, len(ml.MacroShapes), ml.FlopBits)
	return b.String()
}

// Under lists the memories of one instance of module (the first the hierarchy reaches), their
// paths from the top.
func (ml *MemoryList) Under(module string) []MemoryInstance {
	var out []MemoryInstance
	prefix := ""
	for _, m := range ml.Instances {
		for i, mod := range m.Modules {
			if mod != module {
				continue
			}
			p := strings.Join(strings.Split(m.Path, ".")[:i+1], ".")
			if prefix == "" {
				prefix = p
			}
			if p == prefix {
				out = append(out, m)
			}
			break
		}
	}
	return out
}
