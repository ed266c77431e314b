package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/internal/tooltest"
)

// synth places the parser (one module, no units) on the iCE40 board: one JSON object on stdout, the
// module's figures, and the progress report on stderr.
func TestSynthCommandOneBlock(t *testing.T) {
	tooltest.Require(t, "yosys", "nextpnr-ice40")
	cfg := filepath.Join("..", "..", "configs", "synth", "nic-tiny.yaml")
	code, stdout, errOut := run(t, "--config", cfg, "--json", "synth", "--block", "parser", "--out", t.TempDir())
	require.Equal(t, ExitOK, code, errOut)
	var rep synthReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	require.Equal(t, "ice40-hx8k", rep.Board)
	require.Empty(t, rep.Blocks, "the parser has no units placed apart")
	require.NotNil(t, rep.Top, rep.TopError)
	require.Equal(t, "rx_parser", rep.Top.Top)
	require.Greater(t, rep.Top.LUTs, 0)
	require.Greater(t, rep.Top.FmaxMHz, 0.0)
	require.Contains(t, errOut, "synth rx_parser on ice40-hx8k ...")
	requireProgressDone(t, errOut, "synth parser on ice40-hx8k", "modules")
}
