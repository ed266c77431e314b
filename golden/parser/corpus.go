package parser

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// The frames golden/wire's fuzz targets (FuzzDecode, FuzzRoundTrip) found interesting, copied
// from the Go fuzz cache in Go's corpus file format ("go test fuzz v1", then one line per
// argument; the frame is the []byte argument). Cosim seeds its malformed traffic with them.
//
//go:embed testdata/wire-fuzz-corpus
var corpusFS embed.FS

// FuzzCorpus returns the frames of the stored golden/wire fuzz corpus, in file-name order.
func FuzzCorpus() ([][]byte, error) {
	const dir = "testdata/wire-fuzz-corpus"
	ents, err := fs.ReadDir(corpusFS, dir)
	if err != nil {
		return nil, fmt.Errorf("parser: fuzz corpus: %w", err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		data, err := corpusFS.ReadFile(dir + "/" + n)
		if err != nil {
			return nil, fmt.Errorf("parser: fuzz corpus %s: %w", n, err)
		}
		frame, err := parseCorpusFile(string(data))
		if err != nil {
			return nil, fmt.Errorf("parser: fuzz corpus %s: %w", n, err)
		}
		out = append(out, frame)
	}
	return out, nil
}

// parseCorpusFile returns the first []byte argument of a Go fuzz corpus file.
func parseCorpusFile(text string) ([]byte, error) {
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "go test fuzz v1" {
		return nil, fmt.Errorf("not a go fuzz corpus file")
	}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "[]byte(") || !strings.HasSuffix(l, ")") {
			continue
		}
		s, err := strconv.Unquote(l[len("[]byte(") : len(l)-1])
		if err != nil {
			return nil, fmt.Errorf("bad []byte literal: %w", err)
		}
		return []byte(s), nil
	}
	return nil, fmt.Errorf("no []byte argument")
}
