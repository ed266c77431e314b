package qor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const staSample = `Startpoint: ff_n12 (rising edge-triggered flip-flop clocked by clk)
Endpoint: mem_n40 (rising edge-triggered flip-flop clocked by clk)
Path Group: clk
Path Type: max

   Delay     Time   Description
-----------------------------------------------------------
   0.000    0.000   clock clk (rise edge)
   0.000    0.000   clock network delay (ideal)
   0.000    0.000 ^ ff_n12/CLK (DFFPOSX1)
   0.230    0.230 v ff_n12/Q (DFFPOSX1)
   0.160    0.390 v g7/Y (BUFX2)
   0.203    0.593 ^ g9/Y (NAND2X1)
   0.000    0.593 ^ mem_n40/wdata_3_ (mrgen_ram_1r1w_32x64)
            0.593   data arrival time

   4.000    4.000   clock clk (rise edge)
   0.000    4.000   clock network delay (ideal)
   0.000    4.000   clock reconvergence pessimism
            4.000 ^ mem_n40/clk (mrgen_ram_1r1w_32x64)
  -0.300    3.700   library setup time
            3.700   data required time
-----------------------------------------------------------
            3.700   data required time
           -0.593   data arrival time
-----------------------------------------------------------
            3.107   slack (MET)


Startpoint: s_pkt_psn[3] (input port clocked by clk)
Endpoint: m_rx_cum[0] (output port clocked by clk)
Path Group: clk
Path Type: max

   Delay     Time   Description
-----------------------------------------------------------
   0.000    0.000   clock clk (rise edge)
   0.000    0.000   clock network delay (ideal)
   0.800    0.800 ^ s_pkt_psn[3] (in)
   0.100    0.900 v g1/Y (INVX1)
   0.000    0.900 v m_rx_cum[0] (out)
            0.900   data arrival time

   4.000    4.000   clock clk (rise edge)
   0.000    4.000   clock network delay (ideal)
  -0.800    3.200   output external delay
            3.200   data required time
-----------------------------------------------------------
            3.200   data required time
           -0.900   data arrival time
-----------------------------------------------------------
            2.300   slack (MET)


wns 0.00
tns 0.00
`

func TestParseSTA(t *testing.T) {
	names := map[string]string{"ff_n12": "u_rx.in_q_psn[3]", "mem_n40": "u_rx.u_rx_table"}
	rep, err := parseSTA(staSample, 4.0, names)
	require.NoError(t, err)
	require.Len(t, rep.Paths, 2)
	p := rep.Paths[0]
	require.Equal(t, "u_rx.in_q_psn[3]", p.Start)
	require.Equal(t, "register", p.StartKind)
	require.Equal(t, "u_rx.u_rx_table (macro)", p.End)
	require.Equal(t, "macro", p.EndKind)
	require.InDelta(t, 0.593, p.ArrivalNS, 1e-9)
	require.InDelta(t, 3.107, p.SlackNS, 1e-9)
	require.InDelta(t, 0.893, p.DelayNS, 1e-9)
	require.Equal(t, 2, p.Levels, "the buffer and the NAND between the register and the macro")
	q := rep.Paths[1]
	require.Equal(t, "s_pkt_psn[3]", q.Start)
	require.Equal(t, "input", q.StartKind)
	require.Equal(t, "output", q.EndKind)
	require.Equal(t, 1, q.Levels)

	// A long hierarchical name makes OpenSTA put the point's kind on the next line.
	names["u_window/ff_n40"] = "u_window.rate_q[7]"
	wrapped := strings.Replace(strings.Replace(staSample, "Endpoint: mem_n40 (rising",
		"Endpoint: u_window/ff_n40\n          (rising", 1), "Startpoint: ff_n12 (rising", "Startpoint: ff_n12\n  (rising", 1)
	rep, err = parseSTA(wrapped, 4.0, names)
	require.NoError(t, err)
	require.Equal(t, "u_rx.in_q_psn[3]", rep.Paths[0].Start)
	require.Equal(t, "u_window.rate_q[7]", rep.Paths[0].End)
	require.Equal(t, "register", rep.Paths[0].EndKind)

	_, err = parseSTA("Error: no design\n", 4, nil)
	require.ErrorContains(t, err, "no wns")
	_, err = parseSTA(strings.Replace(staSample, "3.107   slack (MET)", "", 1), 4, names)
	require.Error(t, err, "a path without its slack")
}

const blifSample = `.model top
.inputs clk a[0] a[1]
.outputs y
.gate DFFPOSX1 CLK=clk D=a[0] Q=u_x.q[2]
.cname _5_
.gate mrgen_ram_1r1w_16x2 clk=clk we=u_x.q[2] waddr[0]=a[0] waddr[1]=a[1] waddr[2]=a[0] waddr[3]=a[1] wdata[0]=a[0] wdata[1]=a[1] re=vdd raddr[0]=a[1] raddr[1]=a[0] raddr[2]=a[1] raddr[3]=a[0] rdata[0]=d0 rdata[1]=d1
.cname u_x.u_tab
.gate NAND2X1 A=d0 B=d1 Y=y
.end
`

func TestBLIFPrepareAndVerilog(t *testing.T) {
	nl, err := parseBLIF([]byte(blifSample))
	require.NoError(t, err)
	require.Len(t, nl.gates, 3)
	require.Equal(t, "u_x.u_tab", nl.gates[1].cname)
	macros := map[string]bool{"mrgen_ram_1r1w_16x2": true}
	state, err := nl.prepare(macros, flopTypes, nil)
	require.NoError(t, err)
	require.Len(t, nl.gates, 5, "a BUFX2 after each macro output")
	out := string(nl.write())
	require.Contains(t, out, "rdata_0_=mq_0")
	require.Contains(t, out, ".gate BUFX2 A=mq_0 Y=")
	require.NotContains(t, out, "[0]=", "no bus pins left on the macro")
	require.NotContains(t, out, "u_x.q", "internal nets renamed")
	v, names := nl.writeVerilog(macros, flopTypes, state, nil)
	require.Contains(t, string(v), "input [1:0] a;")
	require.Contains(t, string(v), "wire vdd = 1'b1;")
	var ff, mem string
	for inst, rtl := range names {
		if strings.HasPrefix(inst, "ff_") {
			ff = rtl
		}
		if strings.HasPrefix(inst, "mem_") {
			mem = rtl
		}
	}
	require.Equal(t, "u_x.q[2]", ff, "a flip-flop is named by the RTL register it holds")
	require.Equal(t, "u_x.u_tab", mem, "a macro by its instance")

	_, err = parseBLIF([]byte(".model m\n.names a b\n1 1\n.end\n"))
	require.ErrorContains(t, err, "left unmapped")
}

func TestBudgetsUpdateAndCheck(t *testing.T) {
	rep := &Report{Config: "c", Units: []UnitReport{{Unit: "u", MemoryBits: 100,
		ASIC: &ASICResult{CriticalNS: 5}, XCUP: &XCUPResult{LUTLevels: 10, LUTs: 200}}}}
	b := &Budgets{TolerancePct: 5}
	require.NoError(t, b.Update(rep, ""))
	require.Len(t, b.Budgets, 4)
	viol, un := b.Check(rep)
	require.Empty(t, viol)
	require.Empty(t, un)

	rep.Units[0].ASIC.CriticalNS = 5.2 // within 5%
	viol, _ = b.Check(rep)
	require.Empty(t, viol)
	rep.Units[0].ASIC.CriticalNS = 5.3 // over
	viol, _ = b.Check(rep)
	require.Len(t, viol, 1)
	require.ErrorContains(t, b.Update(rep, ""), "needs a reason")
	require.NoError(t, b.Update(rep, "the new stage"))
	for _, x := range b.Budgets {
		if x.Metric == MetricCriticalNS {
			require.Equal(t, 5.3, x.Max)
			require.Equal(t, "raised: the new stage", x.Why)
		}
	}
	rep.Units[0].ASIC.CriticalNS = 4 // lower figures lower the budget without a reason
	require.NoError(t, b.Update(rep, ""))
	viol, _ = b.Check(&Report{Config: "c", Units: []UnitReport{{Unit: "u", MemoryBits: 100, ASIC: &ASICResult{CriticalNS: 4.5}}}})
	require.Len(t, viol, 1)
	other := &Report{Config: "other"}
	viol, un = b.Check(other)
	require.Empty(t, viol, "budgets of other configurations are not checked")
	require.Empty(t, un)
}
