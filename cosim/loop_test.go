package cosim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/gen"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/transport"
	hdlsender "github.com/mrgen/mrgen/hdl/sender"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func runLoopTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int, mutate func([]gen.Source) error) *Result {
	t.Helper()
	return runLoopFaultsTest(t, c, scenario, seed, packets, mutate, LoopFaults{})
}

// runLoopFaultsTest is runLoopTest with the scenario's faults overridden.
func runLoopFaultsTest(t *testing.T, c config.Config, scenario string, seed uint64, packets int,
	mutate func([]gen.Source) error, faults LoopFaults) *Result {
	t.Helper()
	tooltest.Require(t, "verilator", "g++", "make")
	res, err := RunLoop(context.Background(), Options{Config: c, Scenario: scenario, Seed: seed, Packets: packets,
		Mutate: mutate, Stamp: stamp(c), Faults: faults})
	require.NoError(t, err)
	return res
}

// TestLoopScenarios runs every closed-loop scenario on the default configuration: nic_rx as
// host 0, every frame it receives compared with its golden shadow's handling, and every message
// delivered and verified at the end.
func TestLoopScenarios(t *testing.T) {
	for _, sc := range LoopScenarios() {
		t.Run(sc, func(t *testing.T) {
			res := runLoopTest(t, config.Default(), sc, 5, 400, nil)
			requireClean(t, res)
			require.GreaterOrEqual(t, res.Packets, 400)
			require.Positive(t, res.Counts["messages_verified"])
			require.Positive(t, res.Counts["dma_writes"])
			require.Positive(t, res.Counts["control_frames"])
			// Host 0 sends too: the engine's answers, its data frames and their reads.
			require.Positive(t, res.Counts["data_frames"])
			require.Positive(t, res.Counts["dma_reads"])
			require.Positive(t, res.Counts["engine_answers"])
			require.Positive(t, res.Counts["engine_ack"])
			if sc == "rnr" {
				require.Positive(t, res.Counts["naks"], "nic_rx refuses SENDs without a receive")
				require.Positive(t, res.Counts["engine_nak"], "the peers refuse host 0's SENDs")
				require.Positive(t, res.Counts["engine_retry"], "and the engine resends them")
			}
			if sc == "chaos" {
				require.Positive(t, res.Drops["bad_icrc"], "corrupted frames are dropped by both")
				require.Positive(t, res.Counts["duplicated_frames"])
				require.Positive(t, res.Counts["fabric_loss_drops"])
			}
		})
	}
}

// TestLoopTwoPorts runs the closed loop on a NIC of two ports (two fabric planes): a path's data
// leaves on port path mod 2 (the engine's descriptor), its ACKs come back on the port its data
// went out on, and the rate hint divides both ports' rate.
func TestLoopTwoPorts(t *testing.T) {
	c, err := config.Load(filepath.Join("..", "configs", "matrix", "nic-w256-2ports.yaml"))
	require.NoError(t, err)
	res := runLoopTest(t, c, "failure", 5, 400, nil)
	requireClean(t, res)
	require.Positive(t, res.Counts["data_frames"])
	require.Positive(t, res.Counts["engine_answers"])
}

// TestLoopFaultsCombine overrides scenarios' faults the way `mrgen cosim --mark ... --fail-plane`
// does: every fault at once, a whole plane failing under them, and CE marks on every data frame's
// last hop (the peers echo host 0's marks to its engine, nic_rx echoes theirs).
func TestLoopFaultsCombine(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	plane, at, jitter := 1, 20*fabric.Microsecond, 200*fabric.Nanosecond
	for _, tc := range []struct {
		name, config, scenario string
		faults                 LoopFaults
		sender                 config.Sender // the send engine's FIFO depths (zero: the defaults)
	}{
		{"default: loss with marks and reordering", "default.yaml", "loss",
			LoopFaults{Loss: f(0.03), Mark: f(0.2), Jitter: &jitter, Duplicate: f(0.02)}, config.Sender{}},
		// A lost RNR NAK must not lose its packet: the refused PSN stays unacknowledged and
		// is resent on its path.
		{"default: rnr with loss", "default.yaml", "rnr",
			LoopFaults{Loss: f(0.02), Mark: f(0.05), Duplicate: f(0.01)}, config.Sender{}},
		{"two ports: chaos with a plane failing and marks", "matrix/nic-w256-2ports.yaml", "chaos",
			LoopFaults{Mark: f(0.1), FailPlane: &plane, FailAt: &at, HostReady: f(0.8)}, config.Sender{}},
		// Two-entry FIFOs in the engine and in golden's host 0: a retransmission finds the
		// retransmit FIFO full, is dropped and counted, and loss recovery sends it later. (12%
		// loss: at 10% a path whose tail is lost while its siblings answer fails and moves its
		// packets instead, and the retransmit FIFO no longer fills in this run; at 20% the
		// 2-entry moved FIFO overflows, and a moved packet it drops is lost to its message, as
		// golden/sender documents.)
		{"default with 2-entry FIFOs: rnr with 12% loss", "default.yaml", "rnr",
			LoopFaults{Loss: f(0.12), Mark: f(0.05), Duplicate: f(0.01)},
			config.Sender{RetxDepth: 2, MovedDepth: 2, RNRRetryDepth: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tooltest.Require(t, "verilator", "g++", "make")
			c, err := config.Load(filepath.Join("..", "configs", tc.config))
			require.NoError(t, err)
			c.Sender = tc.sender
			res, err := RunLoop(context.Background(), Options{Config: c, Scenario: tc.scenario, Seed: 5, Packets: 1000,
				Stamp: stamp(c), Faults: tc.faults})
			require.NoError(t, err)
			requireClean(t, res)
			require.Positive(t, res.Counts["fabric_ce_marks"])
			require.Positive(t, res.Counts["fabric_loss_drops"])
			require.Positive(t, res.Counts["duplicated_frames"])
			require.Positive(t, res.Counts["engine_ack"])
			if tc.scenario == "rnr" {
				require.Positive(t, res.Counts["naks"])
				require.Positive(t, res.Counts["engine_nak"])
			}
			if tc.sender.RetxDepth != 0 {
				require.Positive(t, res.Counts["engine_cnt_retx_overflows"])
			}
			if tc.faults.FailPlane != nil {
				// The failed plane's paths time out while the other plane's are heard, so they
				// fail at once; host 0's engine moves the packets it had sent on them.
				require.Positive(t, res.Counts["peers_paths_failed"])
				require.Positive(t, res.Counts["data_packets_moved"])
			}
		})
	}
}

// TestLoopCatchesBlockFault breaks one block's template inside the top (rx_acker's rate-hint
// ROM is one unit high) and requires the closed loop to stop on the first control frame that
// differs.
func TestLoopCatchesBlockFault(t *testing.T) {
	faults := []templateFault{{Name: "rate-hint ROM one unit high", Module: "rx_acker", Scenario: "clean",
		From: "hint_of = 16'd{% .Value %};", To: "hint_of = 16'd{% .Value %} + 16'd1;", Stream: "control frames"},
		// The send side: nic_tx reads the byte after the payload's. (Each fault builds its own
		// model of the whole top, a few minutes on 2 cores: one per block kind.)
		{Name: "DMA read one byte late", Module: "nic_tx", Scenario: "clean", From: "assign m_rd_addr = rq_addr;",
			To: "assign m_rd_addr = rq_addr + 64'd1;", Stream: "DMA reads", Field: "Addr"},
		// The send engine: a connection's first-RTT packets do not ask for their ACK at once.
		{Name: "first-RTT packets without ACK request", Module: "tx_engine", Scenario: "clean",
			From: "(cs[C_HEARD] ? 8'h00 : 8'h20)", To: "8'h00", Stream: "send engine", Field: "Flags"},
		// Its timer output (m_timer_at, golden NextTimer after each answered call) a ns late.
		{Name: "scan timer one ns late", Module: "tx_engine", Scenario: "clean",
			From: "                    : scan_on ? scan_at : 64'hFFFF_FFFF_FFFF_FFFF;",
			To:   "                    : scan_on ? scan_at + 64'd1 : 64'hFFFF_FFFF_FFFF_FFFF;", Stream: "send engine", Field: "TimerAt"},
		// nic_rx's registered handshake with rx_acker: offering the packet again in the cycle the
		// controller learns it was taken gives rx_acker every packet twice.
		{Name: "packet offered to the ACK scheduler twice", Module: "nic_rx", Scenario: "clean",
			From: "wire ak_offer = (state == C_ACKER) && !ak_fired;", To: "wire ak_offer = (state == C_ACKER);",
			Stream: "control frames"},
		// Its registered idle: without the time-moved term it is high the cycle after the time
		// changes, before a timer falling due at the new time has sent its ACK; the loop checks
		// every idle with one more cycle.
		{Name: "idle a cycle early after a time change", Module: "nic_rx", Scenario: "clean",
			From: "&& ak_idle_q && !ak_off_q && !now_moved_q &&", To: "&& ak_idle_q && !ak_off_q &&",
			Stream: "idle"}}
	requireFaultsCaught(t, faults, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, _ string) *Result {
		return runLoopTest(t, config.Default(), f.Scenario, f.SeedOr(5), f.RunLength(400), mutate)
	})
}

// TestLoopCatchesIdleWithPayloadOwed is nic_rx's idle without the payloads still owed: under
// host backpressure a payload's beats trail its header. `chaos` (seed 1, 1,500 packets) caught
// it through the end-of-run check (one more cycle after idle) until sack_tx's latency went from 6
// to 7 cycles (session 34) and no run ended in that gap any more; the harness now also requires,
// every cycle, that idle is low while m_pay offers a beat, which `clean` with the host ready 20%
// of cycles reaches in its first packets.
func TestLoopCatchesIdleWithPayloadOwed(t *testing.T) {
	c := config.Default()
	faults := []templateFault{{Name: "idle between two payloads still owed", Module: "nic_rx", Scenario: "clean",
		From: "(pf_count == 6'd0) && (next_tag == pay_tag)", To: "(pf_count == 6'd0)",
		Stream: "idle", Field: "m_pay offered a beat", Seed: 1, Packets: 100}}
	requireFaultsCaught(t, faults, func(t *testing.T, f templateFault, mutate func([]gen.Source) error, _ string) *Result {
		ready := 0.2
		return runLoopFaultsTest(t, c, f.Scenario, f.SeedOr(5), f.RunLength(400), mutate, LoopFaults{HostReady: &ready})
	})
}

func TestLoopUnknownScenario(t *testing.T) {
	_, err := RunLoop(context.Background(), Options{Config: config.Default(), Scenario: "nope", Packets: 1})
	require.ErrorContains(t, err, "unknown closed-loop scenario")
}

// The closed loop compares the engine with host 0's shadow only if both run golden/sender with
// the same parameters: the engine's (hdl/sender.GoldenParams of the configuration) must equal
// the shadow's on its nanosecond clock, but for the wire connection ids, which nic_tx's peer
// table supplies.
func TestEngineParamsAreTheShadows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sender config.Sender
	}{
		{"default.yaml", config.Sender{}}, {"matrix/nic-w512-64paths.yaml", config.Sender{}},
		{"matrix/nic-w256-2ports.yaml", config.Sender{}},
		{"default.yaml", config.Sender{RetxDepth: 100, MovedDepth: 3, RNRRetryDepth: 64}}, // the sender section
	} {
		name := tc.name
		c, err := config.Load(filepath.Join("..", "configs", name))
		require.NoError(t, err, name)
		c.Sender = tc.sender
		topo := fabric.DefaultTopology()
		topo.Hosts, topo.HostsPerLeaf, topo.Planes = c.Connections+1, (c.Connections+2)/2, c.Ports
		net, err := fabric.Build(fabric.NewSim(), topo)
		require.NoError(t, err, name)
		tn, err := transport.New(net, traffic.NewLedger(), transport.ConfigFor(c))
		require.NoError(t, err, name)
		require.NoError(t, tn.SenderClock(dut, fabric.Nanosecond))
		shadow := tn.NIC(dut).SenderParams()
		engine, err := hdlsender.GoldenParams(c)
		require.NoError(t, err, name)
		shadow.WireConn, engine.WireConn = nil, nil
		require.Empty(t, cmp.Diff(shadow, engine), name)
	}
}
