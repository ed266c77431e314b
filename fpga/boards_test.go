package fpga

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/constraints"
)

func TestBoards(t *testing.T) {
	require.Empty(t, cmp.Diff([]string{"ecp5-45k", "ice40-hx8k", "ice40-up5k"}, BoardNames()))
	for _, b := range Boards() {
		t.Run(b.Name, func(t *testing.T) {
			got, err := LookupBoard(b.Name)
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(b, got))
			if b.PlaceAndRoute() {
				// Place-and-route needs the wrapper's pins on this board.
				_, err := constraints.Pins(b.Name)
				require.NoError(t, err)
				require.Equal(t, "synth_ice40", b.SynthCommand())
			} else {
				require.NotEmpty(t, b.Note, "a board without place-and-route must say so")
			}
		})
	}
	bs := Boards()
	bs[0].Nextpnr = append(bs[0].Nextpnr, "--mutated")
	bs[1].Nextpnr[0] = "--mutated"
	for _, b := range Boards() {
		require.NotContains(t, b.Nextpnr, "--mutated", "Boards must return copies")
	}
}

func TestLookupBoardUnknown(t *testing.T) {
	_, err := LookupBoard("ice40-hx1k")
	require.EqualError(t, err, `fpga: unknown board "ice40-hx1k" (valid: ecp5-45k, ice40-hx8k, ice40-up5k)`)
}

func TestBoardCount(t *testing.T) {
	ice40, err := LookupBoard("ice40-hx8k")
	require.NoError(t, err)
	ecp5, err := LookupBoard("ecp5-45k")
	require.NoError(t, err)
	tests := []struct {
		name  string
		board Board
		cells map[string]int
		want  Resources
	}{
		{
			name: "ice40", board: ice40,
			cells: map[string]int{
				"SB_LUT4": 75, "SB_CARRY": 31, "SB_DFF": 1, "SB_DFFE": 20, "SB_DFFSR": 3, "SB_DFFESR": 9,
				"SB_RAM40_4K": 2, "SB_RAM40_4KNR": 1, "SB_IO": 11, "SB_GB": 2,
			},
			want: Resources{LUTs: 75, FFs: 33, RAMs: 3},
		},
		{
			name: "ecp5", board: ecp5,
			cells: map[string]int{
				"LUT4": 45, "CCU2C": 16, "PFUMX": 1, "L6MUX21": 5, "TRELLIS_DPR16X4": 2,
				"TRELLIS_FF": 33, "DP16KD": 1, "PDPW16KD": 1,
			},
			want: Resources{LUTs: 45 + 2*16 + 4*2, FFs: 33, RAMs: 2},
		},
		{name: "empty", board: ice40, cells: nil, want: Resources{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Empty(t, cmp.Diff(tc.want, tc.board.Count(tc.cells)))
		})
	}
}
