// Package gen renders hardware descriptions into Verilog through text/template and sprig, and
// writes a deterministic output tree: rtl/*.v, filelist.f, mrgen.core (FuseSoC) and
// manifest.json (generator version, configuration hash, sha256 of every file).
//
// Templates use {% and %} as delimiters, because Verilog's concatenation and replication
// ({{W{1'b0}}, x}) would collide with text/template's default {{ }}.
//
// Every file starts with a banner naming the generator version, the command and configuration
// hash that produced it and the Go description it came from. Output depends only on the
// configuration and the generator: no timestamps, no map iteration, no host names, so
// regenerating from the same configuration is byte-identical.
package gen

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"

	"github.com/mrgen/mrgen/hdl"
	"github.com/mrgen/mrgen/hdl/mem"
)

// Source is one module ready to render: its description, its template and the template data.
type Source struct {
	Module   *hdl.Module
	Template string // template text (embedded next to the description)
	Data     any    // passed to the template as .D; the module is .M
}

// Stamp is what the banner says about the run that produced a file.
type Stamp struct {
	Version    string // generator version
	Command    string // the command line, normalised (no absolute paths)
	ConfigName string
	ConfigHash string
}

// Funcs are the template functions available to every block template, on top of sprig's.
func Funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	// Remove the few sprig functions that would make output depend on the run.
	for _, name := range []string{"now", "date", "dateInZone", "date_in_zone", "randAlpha", "randAlphaNum",
		"randAscii", "randNumeric", "randBytes", "uuidv4", "env", "expandenv", "getHostByName"} {
		delete(f, name)
	}
	f["range_"] = hdl.Range
	// dec renders a sized decimal literal: dec 8 1 -> 8'd1. Arguments may be int or int64 (sprig's
	// arithmetic returns int64).
	f["dec"] = func(width, v any) (string, error) {
		w, err := toInt(width)
		if err != nil {
			return "", fmt.Errorf("dec: width: %w", err)
		}
		n, err := toInt(v)
		if err != nil {
			return "", fmt.Errorf("dec: value: %w", err)
		}
		if w < 1 || n < 0 || (w < 63 && n >= 1<<w) {
			return "", fmt.Errorf("dec: %d does not fit %d bits", n, w)
		}
		return fmt.Sprintf("%d'd%d", w, n), nil
	}
	f["seq"] = func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	f["pow2"] = func(k any) (int, error) {
		n, err := toInt(k)
		if err != nil || n < 0 || n > 30 {
			return 0, fmt.Errorf("pow2: bad exponent %v", k)
		}
		return 1 << n, nil
	}
	f["portDecl"] = portDecl
	f["cmpSliced"] = CompareSliced
	// memory renders the instance of one of the module's tables (hdl/mem): memory .M "name"
	// (dict "we" "..." "waddr" "..." ...).
	f["memory"] = mem.Instance
	return f
}

// toInt converts the integer kinds text/template and sprig produce (int, int64) to int.
func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case int32:
		return int(x), nil
	case uint64:
		return int(x), nil
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}

// portDecl renders one port declaration, padded for alignment, with its comment.
func portDecl(p hdl.Port, last bool) string {
	rng := hdl.Range(p.Width)
	if p.WidthParam != "" {
		rng = "[" + p.WidthParam + "-1:0]"
	}
	comma := ","
	if last {
		comma = ""
	}
	decl := fmt.Sprintf("  %-6s wire %-7s %s%s", p.Dir.String(), rng, p.Name, comma)
	if p.Doc != "" {
		line := fmt.Sprintf("%-52s // %s", decl, p.Doc)
		if len(line) > 100 {
			// A long comment goes on its own line above the declaration.
			line = "  // " + p.Doc + "\n" + decl
		}
		decl = line
	}
	return strings.TrimRight(decl, " ")
}

// Render renders one module to Verilog text, banner included, and checks the result against
// the generated-file contract (keyword guard on every declared identifier, ASCII, line length).
func Render(src Source, st Stamp) (string, error) {
	m := src.Module
	if err := m.Check(); err != nil {
		return "", fmt.Errorf("render %s: %w", m.Name, err)
	}
	t, err := template.New(m.Name).Delims("{%", "%}").Funcs(Funcs()).Option("missingkey=error").Parse(src.Template)
	if err != nil {
		return "", fmt.Errorf("render %s: parse template: %w", m.Name, err)
	}
	var body bytes.Buffer
	if err := t.Execute(&body, map[string]any{"M": m, "D": src.Data}); err != nil {
		return "", fmt.Errorf("render %s: execute template: %w", m.Name, err)
	}
	text := Banner(m, st) + tidy(body.String())
	if err := checkText(m.Name, text); err != nil {
		return "", err
	}
	return text, nil
}

// bannerRule opens and closes the banner's stamp block.
var bannerRule = "// " + strings.Repeat("-", 96) + "\n"

// WithoutStamp returns a generated file's text without the stamp block at the top of its banner
// (the version, command, configuration and description lines between its first two rules), so
// that two renderings can be compared, or a model cached, by what they describe rather than by
// the run that wrote them. Text that does not open with the banner is returned unchanged.
func WithoutStamp(text []byte) []byte {
	rule := []byte(bannerRule)
	if !bytes.HasPrefix(text, rule) {
		return text
	}
	end := bytes.Index(text[len(rule):], rule)
	if end < 0 {
		return text
	}
	return text[len(rule)+end:]
}

// Banner is the header comment of every generated file.
func Banner(m *hdl.Module, st Stamp) string {
	var b strings.Builder
	rule := bannerRule
	b.WriteString(rule)
	fmt.Fprintf(&b, "// %s.v -- generated by mrgen %s -- do not edit\n", m.Name, st.Version)
	for i, line := range wrap(st.Command, 80) {
		label := "command:    "
		if i > 0 {
			label = "            "
		}
		fmt.Fprintf(&b, "// %s %s\n", label, line)
	}
	fmt.Fprintf(&b, "// config:      %s\n", st.ConfigName)
	fmt.Fprintf(&b, "// config hash: sha256 %s\n", st.ConfigHash)
	fmt.Fprintf(&b, "// description: %s\n", m.Source)
	b.WriteString(rule)
	for _, line := range wrap(m.Doc, 94) {
		b.WriteString("// " + line + "\n")
	}
	if m.Latency > 0 {
		fmt.Fprintf(&b, "//\n// Latency: %d cycles from an input handshake to its output. Initiation interval: %d", m.Latency, m.II)
		if m.EntryII > m.II {
			fmt.Fprintf(&b, ",\n// %d between two operations on one table entry", m.EntryII)
		}
		b.WriteString(".\n")
	}
	for _, t := range m.Tables {
		line := fmt.Sprintf("Table %s: %d x %d bits, %s (%s, %s). %s", t.Name, t.Depth, t.Width, t.Instance(),
			t.MemModule(), t.Implementation(), t.Doc)
		for i, l := range wrap(line, 94) {
			if i > 0 {
				l = "  " + l
			}
			b.WriteString("// " + l + "\n")
		}
	}
	b.WriteString(rule)
	return b.String()
}

var blankRuns = regexp.MustCompile(`\n{3,}`)

// tidy strips trailing spaces and collapses runs of blank lines left by template control flow.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = strings.Join(lines, "\n")
	s = blankRuns.ReplaceAllString(s, "\n\n")
	return strings.TrimLeft(s, "\n")
}

var declStartRE = regexp.MustCompile(`^\s*(input|output|inout|wire|reg|localparam|parameter|genvar|integer)\b`)
var rangeRE = regexp.MustCompile(`\[[^\]]*\]`)
var identTokRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*`)

// declaredName returns the identifier a declaration line declares ("output wire [7:0] idx,"
// -> "idx"; "wire reg = a;" -> "reg"), or "" when the line declares nothing: the last word
// before the first '=', ';', ',' or ')', ranges and comments removed.
func declaredName(line string) string {
	if declStartRE.FindStringIndex(line) == nil {
		return ""
	}
	if i := strings.Index(line, "//"); i >= 0 {
		line = line[:i]
	}
	if i := strings.IndexAny(line, "=;,)"); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(rangeRE.ReplaceAllString(line, " "))
	if len(fields) < 2 {
		return ""
	}
	return identTokRE.FindString(fields[len(fields)-1])
}

// checkText enforces the generated-file contract on rendered text.
func checkText(module, text string) error {
	for i, line := range strings.Split(text, "\n") {
		if len(line) > 100 {
			return fmt.Errorf("render %s: line %d is %d columns (limit 100): %q", module, i+1, len(line), line)
		}
		for _, r := range line {
			if r > 127 {
				return fmt.Errorf("render %s: line %d has non-ASCII %q", module, i+1, r)
			}
		}
	}
	for i, line := range strings.Split(text, "\n") {
		if name := declaredName(line); name != "" && hdl.IsKeyword(name) {
			return fmt.Errorf("render %s: line %d declares %q, a Verilog/SystemVerilog keyword", module, i+1, name)
		}
	}
	if !strings.Contains(text, "`resetall") || !strings.Contains(text, "`default_nettype none") {
		return fmt.Errorf("render %s: missing `resetall / `default_nettype none", module)
	}
	return nil
}

func wrap(s string, width int) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		if len(words) == 0 {
			lines = append(lines, "")
			continue
		}
		cur := words[0]
		for _, w := range words[1:] {
			if len(cur)+1+len(w) > width {
				lines = append(lines, cur)
				cur = w
				continue
			}
			cur += " " + w
		}
		lines = append(lines, cur)
	}
	return lines
}
