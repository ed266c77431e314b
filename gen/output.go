package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mrgen/mrgen/hdl"
)

// File is one generated file, its path relative to the output directory.
type File struct {
	Path    string
	Content []byte
}

// Design is a set of rendered modules with the top named.
type Design struct {
	Top     string
	Stamp   Stamp
	Modules []string // module names in dependency order (leaves first)
	Files   []File
	// Memories lists every memory instance (memories.json).
	Memories *MemoryList
	// Descriptions are the rendered modules' descriptions by name (ports, clock, tables).
	Descriptions map[string]*hdl.Module
	texts        map[string]string
}

// BuildMutated is Build after mutate, when not nil, has rewritten the sources (the
// fault-injection tests break a block's template on purpose this way).
func BuildMutated(top string, srcs []Source, st Stamp, mutate func([]Source) error) (*Design, error) {
	if mutate != nil {
		if err := mutate(srcs); err != nil {
			return nil, fmt.Errorf("gen: %s: mutate sources: %w", top, err)
		}
	}
	return Build(top, srcs, st)
}

// Build renders every source (leaves first), the memory modules their tables use (each shape
// once, before them) and adds filelist.f, mrgen.core, manifest.json and the memory list
// (memories.json, memories.md).
func Build(top string, srcs []Source, st Stamp) (*Design, error) {
	d := &Design{Top: top, Stamp: st, Descriptions: map[string]*hdl.Module{}}
	seen := map[string]bool{}
	texts := map[string]string{}
	all := append(memorySources(srcs), srcs...)
	for _, s := range all {
		if seen[s.Module.Name] {
			return nil, fmt.Errorf("gen: module %s rendered twice", s.Module.Name)
		}
		seen[s.Module.Name] = true
		text, err := Render(s, st)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(s.Module.Name, "mrgen_") {
			if err := checkNoInlineArrays(s.Module.Name, text); err != nil {
				return nil, err
			}
		}
		texts[s.Module.Name] = text
		d.Descriptions[s.Module.Name] = s.Module
		d.Modules = append(d.Modules, s.Module.Name)
		d.Files = append(d.Files, File{Path: "rtl/" + s.Module.Name + ".v", Content: []byte(text)})
	}
	if !seen[top] {
		return nil, fmt.Errorf("gen: top module %s is not among the rendered modules", top)
	}
	d.texts = texts
	ml, err := memoryList(top, all, texts, st)
	if err != nil {
		return nil, err
	}
	d.Memories = ml
	mj, err := ml.json()
	if err != nil {
		return nil, err
	}
	d.Files = append(d.Files, File{Path: "memories.json", Content: mj})
	d.Files = append(d.Files, File{Path: "memories.md", Content: []byte(ml.table(st.Version))})
	d.Files = append(d.Files, File{Path: "filelist.f", Content: []byte(d.filelist())})
	d.Files = append(d.Files, File{Path: "mrgen.core", Content: []byte(d.fusesocCore())})
	if err := d.Add(); err != nil {
		return nil, err
	}
	return d, nil
}

// Add adds files to the design (a path already there is replaced) and rewrites manifest.json
// over every file.
func (d *Design) Add(files ...File) error {
	keep := d.Files[:0]
	for _, f := range d.Files {
		replaced := f.Path == "manifest.json"
		for _, n := range files {
			replaced = replaced || n.Path == f.Path
		}
		if !replaced {
			keep = append(keep, f)
		}
	}
	d.Files = append(keep, files...)
	man, err := d.manifest()
	if err != nil {
		return err
	}
	d.Files = append(d.Files, File{Path: "manifest.json", Content: man})
	return nil
}

// inlineArray matches a reg array declaration ("reg [7:0] name [0:15];").
var inlineArray = regexp.MustCompile(`(?m)^\s*reg\b\s*(?:\[[^\]]*\])?\s*[A-Za-z_][A-Za-z0-9_]*\s*\[`)

// checkNoInlineArrays enforces that every memory goes through the memory module family: a block
// declares an hdl.Table and instantiates it with the template function memory.
func checkNoInlineArrays(module, text string) error {
	if loc := inlineArray.FindStringIndex(text); loc != nil {
		line := strings.Count(text[:loc[0]], "\n") + 1
		return fmt.Errorf("render %s: line %d declares a reg array inline (%q); declare an hdl.Table and "+
			"instantiate it with the template function memory (hdl/mem)", module, line,
			strings.TrimSpace(text[loc[0]:loc[1]]))
	}
	return nil
}

// SubtreeBytes is the size of the Verilog of module and every module below it, counted once
// per instance: a measure of how much there is to synthesize.
func (d *Design) SubtreeBytes(module string) int {
	n := 0
	d.walkInstances(module, func(m string) { n += len(d.texts[m]) })
	return n
}

// SubtreeDigest is a digest of the Verilog of module and every module below it, their banners
// (which name the configuration) left out: two configurations with the same digest give the
// module the same hardware.
func (d *Design) SubtreeDigest(module string) string {
	h := sha256.New()
	d.walkInstances(module, func(m string) {
		text := d.texts[m]
		if i := strings.Index(text, "`resetall"); i >= 0 {
			text = text[i:]
		}
		h.Write([]byte(m + "\n" + text))
	})
	return hex.EncodeToString(h.Sum(nil))
}

// Subtree is module and every module instantiated below it, each once, in the order a depth-first
// walk meets them (module first).
func (d *Design) Subtree(module string) []string {
	seen := map[string]bool{}
	var out []string
	d.walkInstances(module, func(m string) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	})
	return out
}

// known is the set of the design's module names.
func (d *Design) known() map[string]bool {
	known := make(map[string]bool, len(d.texts))
	for n := range d.texts {
		known[n] = true
	}
	return known
}

// Instance is one module instance inside another: its instance name and its module.
type Instance struct {
	Name, Module string
}

// Instances lists the instances module's text declares, of the design's modules, in order.
func (d *Design) Instances(module string) []Instance {
	var out []Instance
	for _, c := range instancesOf(d.texts[module], d.known()) {
		out = append(out, Instance{Name: c.name, Module: c.module})
	}
	return out
}

// walkInstances visits module and, depth first, every module instantiated below it, once per
// instance (64 levels at most).
func (d *Design) walkInstances(module string, visit func(m string)) {
	known := d.known()
	var walk func(m string, depth int)
	walk = func(m string, depth int) {
		if depth > 64 {
			return
		}
		visit(m)
		for _, c := range instancesOf(d.texts[m], known) {
			walk(c.module, depth+1)
		}
	}
	walk(module, 0)
}

// Parts walks the instances below module and stops at the modules isPart accepts: it returns
// those, each with its instance count, the bytes of the Verilog left above them (the glue, one
// count per instance as SubtreeBytes), and the parts instanced with a parameter list (whose
// hardware is not the module's own).
func (d *Design) Parts(module string, isPart func(string) bool) (parts map[string]int, glueBytes int, withParams []string) {
	known := d.known()
	parts = map[string]int{}
	seenParam := map[string]bool{}
	var walk func(m string, depth int)
	walk = func(m string, depth int) {
		if depth > 64 {
			return
		}
		glueBytes += len(d.texts[m])
		for _, c := range instancesOf(d.texts[m], known) {
			if !isPart(c.module) {
				walk(c.module, depth+1)
				continue
			}
			parts[c.module]++
			if c.params && !seenParam[c.module] {
				seenParam[c.module] = true
				withParams = append(withParams, c.module)
			}
		}
	}
	walk(module, 0)
	sort.Strings(withParams)
	return parts, glueBytes, withParams
}

// RTLFiles returns the paths of the Verilog files under dir, in dependency order.
func (d *Design) RTLFiles(dir string) []string {
	out := make([]string, len(d.Modules))
	for i, m := range d.Modules {
		out[i] = filepath.Join(dir, "rtl", m+".v")
	}
	return out
}

func (d *Design) filelist() string {
	var b strings.Builder
	fmt.Fprintf(&b, "// mrgen %s filelist, top %s, config %s (sha256 %s)\n", d.Stamp.Version, d.Top, d.Stamp.ConfigName, d.Stamp.ConfigHash)
	for _, m := range d.Modules {
		fmt.Fprintf(&b, "rtl/%s.v\n", m)
	}
	return b.String()
}

func (d *Design) fusesocCore() string {
	var b strings.Builder
	b.WriteString("CAPI=2:\n")
	fmt.Fprintf(&b, "# generated by mrgen %s -- do not edit; config %s (sha256 %s)\n", d.Stamp.Version, d.Stamp.ConfigName, d.Stamp.ConfigHash)
	// A VLNV version is the release alone; the commit (semver build metadata) is in the comment.
	release, _, _ := strings.Cut(d.Stamp.Version, "+")
	fmt.Fprintf(&b, "name: mrgen:metaroce:%s:%s\n", d.Top, release)
	fmt.Fprintf(&b, "description: MetaRoCE NIC datapath block %s generated by mrgen\n\n", d.Top)
	b.WriteString("filesets:\n  rtl:\n    files:\n")
	for _, m := range d.Modules {
		fmt.Fprintf(&b, "      - rtl/%s.v\n", m)
	}
	b.WriteString("    file_type: verilogSource\n\n")
	b.WriteString("targets:\n  default:\n    filesets: [rtl]\n")
	fmt.Fprintf(&b, "    toplevel: %s\n", d.Top)
	b.WriteString("  lint:\n    default_tool: verilator\n    filesets: [rtl]\n")
	b.WriteString("    tools:\n      verilator:\n        mode: lint-only\n        verilator_options: [-Wall]\n")
	fmt.Fprintf(&b, "    toplevel: %s\n", d.Top)
	return b.String()
}

// Manifest is manifest.json.
type Manifest struct {
	Generator  string            `json:"generator"`
	Version    string            `json:"version"`
	Command    string            `json:"command"`
	Config     string            `json:"config"`
	ConfigHash string            `json:"config_hash"`
	Top        string            `json:"top"`
	Files      map[string]string `json:"files"` // path -> sha256
}

func (d *Design) manifest() ([]byte, error) {
	m := Manifest{Generator: "mrgen", Version: d.Stamp.Version, Command: d.Stamp.Command,
		Config: d.Stamp.ConfigName, ConfigHash: d.Stamp.ConfigHash, Top: d.Top, Files: map[string]string{}}
	for _, f := range d.Files {
		sum := sha256.Sum256(f.Content)
		m.Files[f.Path] = hex.EncodeToString(sum[:])
	}
	b, err := json.MarshalIndent(m, "", "  ") // encoding/json sorts map keys: deterministic
	if err != nil {
		return nil, fmt.Errorf("gen: manifest: %w", err)
	}
	return append(b, '\n'), nil
}

// Write writes every file under dir, creating folders as needed. Files are written in sorted
// order; existing files are replaced.
func (d *Design) Write(dir string) error {
	files := append([]File(nil), d.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("gen: create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return fmt.Errorf("gen: write %s: %w", p, err)
		}
	}
	return nil
}
