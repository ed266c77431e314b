package cli

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/parser"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/internal/pcapout"
	"github.com/mrgen/mrgen/internal/tooltest"
)

// TestCosimParserPcap records a parser cosim's input frames and checks the pcap against the
// run: one frame per packet, times non-decreasing and on the clock grid, and the golden
// parser's verdict on each recorded frame agreeing with the result's accepted and drop counts.
func TestCosimParserPcap(t *testing.T) {
	tooltest.Require(t, "verilator", "g++", "make")
	path := filepath.Join(t.TempDir(), "in.pcap")
	code, stdout, errOut := run(t, "--config", defaultConfigPath(), "--json", "cosim", "--block", "parser",
		"--scenario", "random", "--packets", "300", "--seed", "5", "--vcd", "", "--pcap", path)
	require.Equal(t, ExitOK, code, errOut)
	var res struct {
		Packets int            `json:"packets"`
		Drops   map[string]int `json:"drops"`
		Counts  map[string]int `json:"counts"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))

	c, err := config.Load(defaultConfigPath())
	require.NoError(t, err)
	gold, err := parser.New(wire.ParamsFrom(c))
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(t, err)
	drops := map[string]int{}
	accepted, n := 0, 0
	var last int64
	periodNS := int64(1000 / c.TargetClockMHz)
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		n++
		ns := ci.Timestamp.UnixNano()
		require.GreaterOrEqual(t, ns, last, "frame %d", n)
		require.Zero(t, ns%periodNS, "frame %d at %d ns is not on the %d ns clock grid", n, ns, periodNS)
		last = ns
		if _, _, reason := gold.Parse(data); reason == wire.DropNone {
			accepted++
		} else {
			drops[reason.String()]++
		}
	}
	require.Equal(t, res.Packets, n)
	require.Equal(t, res.Counts["accepted"], accepted)
	require.Equal(t, res.Drops, drops)

	nf, err := os.Open(pcapout.NotesPath(path))
	require.NoError(t, err)
	defer nf.Close()
	notes, err := pcapout.ReadNotes(nf)
	require.NoError(t, err)
	require.Len(t, notes, n)

	code, _, errOut = run(t, "--config", defaultConfigPath(), "cosim", "--block", "sack", "--packets", "10", "--pcap", path)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "--pcap is for --block parser (every input frame) or the closed loop")
}
