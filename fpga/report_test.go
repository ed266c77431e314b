package fpga

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// The fixture is the --report of nextpnr-ice40 0.4 for counter32 in its wrapper on ice40-hx8k
// at 100 MHz (seed default), captured from a real run.
func TestParsePnRReportFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "nextpnr-report-counter32-hx8k.json"))
	require.NoError(t, err)
	got, err := ParsePnRReport(data, ClockPin)
	require.NoError(t, err)
	want := &PnRReport{
		ClockNet:      "clk$SB_IO_IN_$glb_clk",
		FmaxMHz:       138.7,
		ConstraintMHz: 100,
		Utilization: map[string]Utilization{
			"ICESTORM_LC":  {Used: 162, Available: 7680},
			"ICESTORM_PLL": {Used: 0, Available: 2},
			"ICESTORM_RAM": {Used: 0, Available: 32},
			"SB_GB":        {Used: 3, Available: 8},
			"SB_IO":        {Used: 11, Available: 256},
			"SB_WARMBOOT":  {Used: 0, Available: 1},
		},
		// The 32-bit increment's carry chain, from the count register's bit 0 (seen through
		// the block's output port net) to the LUT that computes bit 31.
		CriticalPath: &CriticalPath{
			StartNet: "dut_count[0]", EndNet: "u_dut.count_next_SB_LUT4_O_9_I1[30]",
			EndCell: "u_dut.count_next_SB_LUT4_O_1_LC", EndPort: "I1",
			LogicLevels: 31, DelayNS: 7.21, LogicNS: 5.187, RoutingNS: 2.023,
		},
	}
	require.Empty(t, cmp.Diff(want, got))
	require.Equal(t, "dut_count[0] -> u_dut.count_next_SB_LUT4_O_9_I1[30] "+
		"(into u_dut.count_next_SB_LUT4_O_1_LC.I1): 31 logic levels, 7.21 ns "+
		"(5.19 ns logic, 2.02 ns routing)", got.CriticalPath.String())
}

func TestCriticalPathDescribe(t *testing.T) {
	src := map[string]string{"u_dut.a_reg[3]": "blk.v:12", "dut_y": "top.v:30"}
	lookup := func(net string) string { return src[net] }
	tests := []struct {
		name string
		p    CriticalPath
		src  func(string) string
		want string
	}{
		{
			name: "with sources",
			p: CriticalPath{StartNet: "u_dut.a_reg[3]", EndNet: "u_dut.sum[3]", EndCell: "b_LC", EndPort: "I2",
				LogicLevels: 2, DelayNS: 3.5, LogicNS: 1.25, RoutingNS: 2.25},
			src:  lookup,
			want: "u_dut.a_reg[3] (blk.v:12) -> u_dut.sum[3] (into b_LC.I2): 2 logic levels, 3.50 ns (1.25 ns logic, 2.25 ns routing)",
		},
		{
			name: "one net straight into a register",
			p: CriticalPath{StartNet: "dut_y", EndNet: "dut_y", EndCell: "fold0_reg_LC", EndPort: "I0",
				DelayNS: 2, LogicNS: 1, RoutingNS: 1},
			src:  lookup,
			want: "dut_y (top.v:30) (into fold0_reg_LC.I0): 0 logic levels, 2.00 ns (1.00 ns logic, 1.00 ns routing)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.p.Describe(tc.src))
		})
	}
}

func TestParsePnRReport(t *testing.T) {
	// Two clocks; the input-to-register path of clk is listed before its register-to-register
	// path, which must still be the one described.
	const twoClocks = `{
	  "fmax": {
	    "clk$SB_IO_IN_$glb_clk": {"achieved": 99.996, "constraint": 100},
	    "other_clk$SB_IO_IN": {"achieved": 250, "constraint": 100}
	  },
	  "utilization": {"ICESTORM_LC": {"used": 10, "available": 7680}},
	  "critical_paths": [
	    {"from": "<async>", "to": "posedge clk$SB_IO_IN_$glb_clk", "path": [
	      {"type": "source", "delay": 0, "from": {"cell": "x", "port": "D"}, "to": {"cell": "rst$sb_io", "port": "D_IN_0"}},
	      {"type": "routing", "delay": 1.5, "net": "rst$SB_IO_IN", "from": {"cell": "rst$sb_io", "port": "D_IN_0"}, "to": {"cell": "r_LC", "port": "SR"}},
	      {"type": "setup", "delay": 0.1, "from": {"cell": "r_LC", "port": "SR"}, "to": {"cell": "r_LC", "port": "SR"}}
	    ]},
	    {"from": "posedge other_clk$SB_IO_IN", "to": "posedge other_clk$SB_IO_IN", "path": [
	      {"type": "clk-to-q", "delay": 0.5, "from": {"cell": "o_LC", "port": "CLK"}, "to": {"cell": "o_LC", "port": "O"}}
	    ]},
	    {"from": "posedge clk$SB_IO_IN_$glb_clk", "to": "posedge clk$SB_IO_IN_$glb_clk", "path": [
	      {"type": "clk-to-q", "delay": 0.5, "from": {"cell": "b_LC", "port": "CLK"}, "to": {"cell": "a_LC", "port": "O"}},
	      {"type": "routing", "delay": 1.25, "net": "u_dut.a_reg[3]", "from": {"cell": "a_LC", "port": "O"}, "to": {"cell": "l_LC", "port": "I0"}},
	      {"type": "logic", "delay": 0.45, "from": {"cell": "l_LC", "port": "I0"}, "to": {"cell": "l_LC", "port": "O"}},
	      {"type": "routing", "delay": 1.0, "net": "u_dut.sum[3]", "from": {"cell": "l_LC", "port": "O"}, "to": {"cell": "b_LC", "port": "I2"}},
	      {"type": "setup", "delay": 0.3, "from": {"cell": "b_LC", "port": "I2"}, "to": {"cell": "b_LC", "port": "I2"}}
	    ]}
	  ]
	}`
	tests := []struct {
		name    string
		data    string
		clock   string
		want    *PnRReport
		wantErr string
	}{
		{
			name: "picks the clock of the port and its register-to-register path", data: twoClocks, clock: "clk",
			want: &PnRReport{
				ClockNet: "clk$SB_IO_IN_$glb_clk", FmaxMHz: 100, ConstraintMHz: 100,
				Utilization: map[string]Utilization{"ICESTORM_LC": {Used: 10, Available: 7680}},
				CriticalPath: &CriticalPath{
					StartNet: "u_dut.a_reg[3]", EndNet: "u_dut.sum[3]", EndCell: "b_LC", EndPort: "I2",
					LogicLevels: 1, DelayNS: 3.5, LogicNS: 1.25, RoutingNS: 2.25,
				},
			},
		},
		{
			name: "a single clock is used whatever its name", clock: "sysclk",
			data: `{"fmax": {"clk_pll": {"achieved": 50.123, "constraint": 48}}}`,
			want: &PnRReport{ClockNet: "clk_pll", FmaxMHz: 50.12, ConstraintMHz: 48},
		},
		{name: "unknown clock among several", data: twoClocks, clock: "sysclk", wantErr: `no clock for port "sysclk" among clk$SB_IO_IN_$glb_clk, other_clk$SB_IO_IN`},
		{name: "no clock at all", data: `{"fmax": {}, "utilization": {}}`, clock: "clk", wantErr: "no clock"},
		{name: "not JSON", data: `Info: Program finished normally.`, clock: "clk", wantErr: "nextpnr report"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePnRReport([]byte(tc.data), tc.clock)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(tc.want, got))
		})
	}
}

func TestNetlistCells(t *testing.T) {
	// top holds two instances of mid and its own LUT; mid holds a leaf and two flip-flops; the
	// cell library modules are blackboxes and count as primitives.
	const netlist = `{"modules": {
	  "SB_LUT4": {"attributes": {"blackbox": "00000000000000000000000000000001"}, "cells": {}},
	  "SB_DFF": {"attributes": {"blackbox": "00000000000000000000000000000001"}, "cells": {}},
	  "SB_RAM40_4K": {"attributes": {"blackbox": "00000000000000000000000000000001"},
	    "cells": {"sim_internal": {"type": "SB_LUT4"}}},
	  "top": {"attributes": {"top": "00000000000000000000000000000001"}, "cells": {
	    "m0": {"type": "mid"}, "m1": {"type": "mid"}, "l": {"type": "SB_LUT4"}},
	    "netnames": {"dut_q": {"attributes": {"src": "/w/top.v:30.15-30.24"}}, "anon": {"attributes": {}}}},
	  "mid": {"attributes": {"keep_hierarchy": "00000000000000000000000000000001"}, "cells": {
	    "leaf0": {"type": "leaf"}, "f0": {"type": "SB_DFF"}, "f1": {"type": "SB_DFF"}},
	    "netnames": {
	      "count_next_SB_LUT4_O_9_I1": {"attributes": {"src": "/a/mid.v:26.20-26.37|/usr/share/yosys/ice40/arith_map.v:33.26-33.27"}},
	      "mem.0.0_WADDR": {"attributes": {"src": "/a/mid.v:40.3-40.9"}},
	      "mem.0.0_RDATA": {"attributes": {"src": "/usr/bin/../share/yosys/ice40/cells_map.v:6.21-6.22"}},
	      "x_SB_LUT4_O": {"attributes": {"src": "/usr/share/yosys/ice40/arith_map.v:1.1-1.2|/a/mid.v:7.1-7.5"}}}},
	  "leaf": {"cells": {"r": {"type": "SB_RAM40_4K"}, "l0": {"type": "SB_LUT4"}, "l1": {"type": "SB_LUT4"}}},
	  "loop_a": {"cells": {"b": {"type": "loop_b"}}},
	  "loop_b": {"cells": {"a": {"type": "loop_a"}}}
	}}`
	nl, err := ParseNetlist([]byte(netlist))
	require.NoError(t, err)
	tests := []struct {
		name    string
		module  string
		own     bool
		want    map[string]int
		wantErr string
	}{
		{name: "whole hierarchy", module: "top", want: map[string]int{"SB_LUT4": 5, "SB_DFF": 4, "SB_RAM40_4K": 2}},
		{name: "one block", module: "mid", want: map[string]int{"SB_LUT4": 2, "SB_DFF": 2, "SB_RAM40_4K": 1}},
		{name: "own cells leave instances out", module: "top", own: true, want: map[string]int{"SB_LUT4": 1}},
		{name: "unknown module", module: "nope", wantErr: "module nope is not in the netlist"},
		{name: "unknown module, own", module: "nope", own: true, wantErr: "module nope is not in the netlist"},
		{name: "hierarchy loop", module: "loop_a", wantErr: "loops through loop_a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got map[string]int
			var err error
			if tc.own {
				got, err = nl.OwnCells(tc.module)
			} else {
				got, err = nl.Cells(tc.module)
			}
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(tc.want, got))
		})
	}
	sources := []struct{ net, want string }{
		{"dut_q[3]", "top.v:30"},
		{"dut_q", "top.v:30"},
		{"m1.count_next_SB_LUT4_O_9_I1[30]", "mid.v:26"},
		{"m0.mem.0.0_WADDR[2]", "mid.v:40"}, // a net name with dots inside an instance
		{"m0.mem.0.0_RDATA[1]", ""},         // only Yosys' cell library
		{"m0.x_SB_LUT4_O", "mid.v:7"},       // the first location outside the library
		{"anon", ""},                        // no src attribute
		{"m0.nope", ""},
		{"l.x", ""}, // a primitive cell is not hierarchy
		{"nope", ""},
	}
	for _, s := range sources {
		require.Equal(t, s.want, nl.Source("top", s.net), "net %s", s.net)
	}
	require.False(t, nl.Has("SB_LUT4"), "a blackbox is a primitive, not a module")
	require.True(t, nl.Has("leaf"))

	_, err = ParseNetlist([]byte("not json"))
	require.ErrorContains(t, err, "yosys netlist")
}

func TestResourcesShare(t *testing.T) {
	hx8k := Resources{LUTs: 7680, FFs: 7680, RAMs: 32}
	for _, tc := range []struct {
		name string
		r    Resources
		want float64
	}{
		{"LUTs fullest", Resources{LUTs: 3840, FFs: 768, RAMs: 8}, 0.5},
		{"RAMs fullest", Resources{LUTs: 768, FFs: 768, RAMs: 24}, 0.75},
		{"over the device", Resources{LUTs: 9216}, 1.2},
		{"empty", Resources{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, tc.r.Share(hx8k), 1e-9)
		})
	}
	require.InDelta(t, 0.5, Resources{LUTs: 10, RAMs: 4}.Share(Resources{LUTs: 20}), 1e-9, "no RAMs on the device: left out")
}
