package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const docPath = "../../docs/wire-format.md"

// TestDocMatchesCode keeps docs/wire-format.md and this package from drifting apart: the drop
// reason, opcode and NAK code tables, the worked example, and the constant names.
func TestDocMatchesCode(t *testing.T) {
	data, err := os.ReadFile(docPath)
	require.NoError(t, err)
	doc := string(data)

	t.Run("drop reasons", func(t *testing.T) {
		rows := regexp.MustCompile("(?m)^\\| (\\d+) \\| `([a-z0-9_]+)` \\|").FindAllStringSubmatch(doc, -1)
		require.Len(t, rows, len(AllDropReasons()), "one table row per drop reason")
		for i, r := range AllDropReasons() {
			code, err := strconv.Atoi(rows[i][1])
			require.NoError(t, err)
			require.Equal(t, int(r), code, "row %d", i)
			require.Equal(t, r.String(), rows[i][2], "row %d", i)
		}
	})

	t.Run("opcodes", func(t *testing.T) {
		rows := regexp.MustCompile("(?m)^\\| 0x([0-9a-f]{2}) \\| ([A-Z]+) \\(`(\\w+)`\\)").FindAllStringSubmatch(doc, -1)
		require.Len(t, rows, len(AllOpcodes()))
		for i, op := range AllOpcodes() {
			v, err := strconv.ParseUint(rows[i][1], 16, 8)
			require.NoError(t, err)
			require.Equal(t, uint64(op), v)
			require.Equal(t, op.String(), rows[i][2])
		}
	})

	t.Run("NAK codes", func(t *testing.T) {
		rows := regexp.MustCompile("(?m)^\\| (\\d) \\| `([a-z_]+)` \\(`(\\w+)`\\)").FindAllStringSubmatch(doc, -1)
		require.Len(t, rows, len(AllNakCodes()))
		for i, c := range AllNakCodes() {
			require.Equal(t, strconv.Itoa(int(c)), rows[i][1])
			require.Equal(t, c.String(), rows[i][2])
		}
	})

	t.Run("worked example", func(t *testing.T) {
		const marker = "<!-- worked-example: write_ipv4.hex -->\n```\n"
		i := strings.Index(doc, marker)
		require.GreaterOrEqual(t, i, 0, "marker %q", marker)
		block := doc[i+len(marker):]
		block = block[:strings.Index(block, "```")]
		var hexText strings.Builder
		for _, line := range strings.Split(block, "\n") {
			if _, rest, ok := strings.Cut(line, ":"); ok {
				hexText.WriteString(rest + "\n")
			}
		}
		require.Equal(t, readHex(t, filepath.Join("testdata/vectors", "write_ipv4.hex")), parseHex(t, hexText.String()))
	})

	t.Run("constants", func(t *testing.T) {
		files, err := filepath.Glob("*.go")
		require.NoError(t, err)
		fset := token.NewFileSet()
		known := map[string]bool{}
		var widths []string
		for _, name := range files {
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					known[d.Name.Name] = true
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							known[s.Name.Name] = true
						case *ast.ValueSpec:
							for _, n := range s.Names {
								known[n.Name] = true
								if d.Tok == token.CONST && n.IsExported() && !strings.HasSuffix(name, "_test.go") &&
									(strings.HasSuffix(n.Name, "Bits") || strings.HasSuffix(n.Name, "Off") || strings.HasSuffix(n.Name, "Len")) {
									widths = append(widths, n.Name)
								}
							}
						}
					}
				}
			}
		}
		require.Greater(t, len(widths), 90, "the width/offset/length constants were found")
		// Every field width, offset and header length is named in the doc …
		for _, w := range widths {
			if !strings.Contains(doc, "`"+w+"`") {
				t.Errorf("constant %s is not named in %s", w, docPath)
			}
		}
		// … and every Go identifier the doc names exists.
		names := regexp.MustCompile("`([A-Z][A-Za-z0-9]*)`").FindAllStringSubmatch(doc, -1)
		require.Greater(t, len(names), 100)
		for _, m := range names {
			if !known[m[1]] {
				t.Errorf("%s names %s, which golden/wire does not define", docPath, m[1])
			}
		}
	})
}
