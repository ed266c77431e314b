package constraints

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/hdl"
)

func TestPinBoards(t *testing.T) {
	require.Empty(t, cmp.Diff([]string{"ice40-hx8k", "ice40-up5k"}, PinBoards()))
	for _, b := range PinBoards() {
		t.Run(b, func(t *testing.T) {
			pm, err := Pins(b)
			require.NoError(t, err)
			require.NotEmpty(t, pm.Clock)
		})
	}
}

func TestPins(t *testing.T) {
	got, err := Pins("ice40-hx8k")
	require.NoError(t, err)
	want := PinMap{Clock: "J3", Reset: "R2", SerialIn: "T1",
		Out: [OutPins]string{"B5", "B4", "A2", "A1", "C5", "C4", "B3", "C3"}}
	require.Empty(t, cmp.Diff(want, got))

	_, err = Pins("ecp5-45k")
	require.ErrorIs(t, err, ErrNoPinFile)
	require.ErrorContains(t, err, "boards with pins: ice40-hx8k, ice40-up5k")
}

func TestParsePCF(t *testing.T) {
	const outs = "set_io dout[0] 1\nset_io dout[1] 2\nset_io dout[2] 3\nset_io dout[3] 4\n" +
		"set_io dout[4] 5\nset_io dout[5] 6\nset_io dout[6] 7\nset_io dout[7] 8\n"
	tests := []struct {
		name    string
		pcf     string
		want    PinMap
		wantErr string
	}{
		{
			name: "comments, blank lines and options",
			pcf: "# pins\n\nset_io clk 35 # osc\nset_io -nowarn rst 10\nset_io -pullup yes sin 43\n" +
				"\t" + outs,
			want: PinMap{Clock: "35", Reset: "10", SerialIn: "43", Out: [OutPins]string{"1", "2", "3", "4", "5", "6", "7", "8"}},
		},
		{name: "missing roles", pcf: "set_io clk 35\nset_io dout[7] 8\n", wantErr: "roles without a pin: rst, sin, dout[0], dout[1]"},
		{name: "pin used twice", pcf: "set_io clk 35\nset_io rst 35\n", wantErr: "line 2: pin 35 used by both clk and rst"},
		{name: "role twice", pcf: "set_io clk 35\nset_io clk 36\n", wantErr: "line 2: role clk assigned twice"},
		{name: "unknown role", pcf: "set_io led 35\n", wantErr: `line 1: unknown role "led"`},
		{name: "output index out of range", pcf: "set_io dout[8] 35\n", wantErr: "line 1: dout[8]: index out of range 0..7"},
		{name: "other command", pcf: "set_frequency clk 12\n", wantErr: `line 1: unsupported command "set_frequency"`},
		{name: "missing pin", pcf: "set_io clk\n", wantErr: "line 1: want `set_io NAME PIN`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePCF([]byte(tc.pcf))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(tc.want, got))
		})
	}
}

func TestSDC(t *testing.T) {
	tests := []struct {
		name    string
		port    string
		mhz     int
		comment string
		want    string
		wantErr string
	}{
		{name: "100 MHz", port: "clk", mhz: 100, want: "create_clock -name clk -period 10.000 [get_ports clk]\n"},
		{name: "comment lines", port: "aclk", mhz: 250, comment: "one\n\ntwo\n",
			want: "# one\n# two\ncreate_clock -name aclk -period 4.000 [get_ports aclk]\n"},
		{name: "odd frequency", port: "clk", mhz: 156, want: "create_clock -name clk -period 6.410 [get_ports clk]\n"},
		{name: "zero", port: "clk", mhz: 0, wantErr: "target clock 0 MHz: must be > 0"},
		{name: "bad port", port: "clk [x]", mhz: 100, wantErr: "not a plain port name"},
		{name: "empty port", port: "", mhz: 100, wantErr: "not a plain port name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SDC(tc.port, tc.mhz, tc.comment)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestModuleSDC(t *testing.T) {
	m := &hdl.Module{Name: "blk", Clock: "clk", Reset: "rst_n", Ports: []hdl.Port{
		hdl.In("clk", 1, ""), hdl.In("rst_n", 1, ""), hdl.In("s_pkt_valid", 1, ""), hdl.In("s_pkt_psn", 32, ""),
		hdl.Out("s_pkt_ready", 1, ""), hdl.Out("m_rx_cum", 32, ""), hdl.Out("cnt_rx_new", 32, ""),
	}}
	c := config.Default()
	c.ResetStyle = config.ResetAsyncLow
	c.Timing = config.Timing{ASICClockMHz: 500, InputDelayPct: 30, OutputDelayPct: 10}
	sdc, err := ModuleSDC(m, c)
	require.NoError(t, err)
	for _, want := range []string{
		"create_clock -name clk -period 2.000 [get_ports clk]",
		"set_input_delay 0.600 -clock clk [get_ports {s_pkt_valid s_pkt_psn}]",
		"set_output_delay 0.200 -clock clk [get_ports {s_pkt_ready}]",
		"set_output_delay 0.200 -clock clk [get_ports {m_rx_cum}]",
		"set_output_delay 0.200 -clock clk [get_ports {cnt_rx_new}]",
		"set_false_path -from [get_ports rst_n]",
	} {
		require.Contains(t, sdc, want)
	}
	require.NotContains(t, sdc, "[get_ports {rst_n}]", "an asynchronous reset is not an input with a delay")

	c.ResetStyle = config.ResetSyncHigh
	m.Reset = "rst"
	m.Ports[1] = hdl.In("rst", 1, "")
	sdc, err = ModuleSDC(m, c)
	require.NoError(t, err)
	require.Contains(t, sdc, "set_input_delay 0.600 -clock clk [get_ports {rst}]", "a synchronous reset is timed")
	require.NotContains(t, sdc, "set_false_path")

	comb := &hdl.Module{Name: "crc", Ports: []hdl.Port{hdl.In("crc_in", 32, ""), hdl.Out("crc_out", 32, "")}}
	sdc, err = ModuleSDC(comb, c)
	require.NoError(t, err)
	require.Contains(t, sdc, "create_clock -name clk -period 2.000\n", "a virtual clock for a combinational module")

	c.Timing.ASICClockMHz = 0
	_, err = ModuleSDC(m, c)
	require.Error(t, err)
}

func TestPortGroup(t *testing.T) {
	for in, want := range map[string]string{"s_pkt_psn": "s_pkt", "m_rx_valid": "m_rx", "cnt_rx_new": "cnt",
		"now": "now", "s_x": "s", "rx_busy": "rx"} {
		require.Equal(t, want, PortGroup(in), in)
	}
}
