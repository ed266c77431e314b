// The closed loop: the generated receive pipeline (nic_rx) takes host 0's place in the golden
// transport on golden/fabric, with host 0's golden NIC running beside it as a shadow.

package cosim

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/placement"
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/transport"
	"github.com/mrgen/mrgen/golden/wire"
	hdlsender "github.com/mrgen/mrgen/hdl/sender"
	"github.com/mrgen/mrgen/internal/pcapout"
	"github.com/mrgen/mrgen/pipeline"
	"github.com/mrgen/mrgen/verilator"
)

// loopKnobs shape a closed-loop scenario. Every peer of host 0 sends to it.
type loopKnobs struct {
	Outstanding    int     // messages each peer keeps in flight toward host 0
	MinMsg, MaxMsg uint32  // message sizes, uniform
	Loss           float64 // random loss on every link
	Corrupt        float64 // a frame toward host 0 has one byte flipped (the ICRC drops it)
	Duplicate      float64 // a frame toward host 0 arrives twice
	Jitter         fabric.Time
	HostReady      float64 // the host interfaces (payload, verdicts, DMA, completions) are ready
	Mark           float64 // an ECN-capable data frame is marked CE on its last hop
	// FailSwitch fails a fabric switch (e.g. "p0.spine1") at FailAt: the paths through it time
	// out, turn suspect, fail, move their packets and later restart with INIT packets.
	FailSwitch string
	FailAt     fabric.Time
	FailPlane  *int // every switch of this plane fails at FailAt (nil: none)
	NoReroute  bool // routing never stops using the failed switch: only new entropy escapes it
	// RepostDelay is how long the applications take to repost a receive after a completion:
	// SENDs that find no receive are refused receiver-not-ready (NAKs both ways).
	RepostDelay fabric.Time
	// DutOutstanding is the number of messages host 0 keeps in flight toward each peer: its
	// data packets are built by the RTL (loop_tx.go).
	DutOutstanding int
}

var loopScenarios = map[string]loopKnobs{
	"clean": {Outstanding: 2, MinMsg: 1, MaxMsg: 12_000, HostReady: 1, DutOutstanding: 1},
	"loss":  {Outstanding: 2, MinMsg: 1, MaxMsg: 12_000, Loss: 0.01, HostReady: 1, DutOutstanding: 1},
	"chaos": {Outstanding: 3, MinMsg: 1, MaxMsg: 16_000, Loss: 0.10, Corrupt: 0.01, Duplicate: 0.02,
		Jitter: 300 * fabric.Nanosecond, HostReady: 0.6, DutOutstanding: 1},
	// Path failure under incast: every peer sends to host 0 when a spine fails.
	"failure": {Outstanding: 3, MinMsg: 1, MaxMsg: 12_000, HostReady: 1, FailSwitch: "p0.spine1",
		FailAt: 200 * fabric.Microsecond, NoReroute: true, DutOutstanding: 1},
	// Receiver not ready: the applications repost receives 200 µs after each completion, so
	// SENDs both ways find none and are refused with RNR NAKs and resent. No loss: a lost RNR
	// NAK loses its packet for good (its PSN was acknowledged; docs/transport.md).
	"rnr": {Outstanding: 2, MinMsg: 1, MaxMsg: 4_000, HostReady: 1, DutOutstanding: 1,
		RepostDelay: 200 * fabric.Microsecond},
}

// loopFabric builds the closed loop's fabric with the scenario's faults: host 0 and one peer per
// connection, two leaves and four spines per plane, one plane per NIC port (sprayed packets take
// routes of different delay, so they arrive out of order).
func loopFabric(c config.Config, k loopKnobs, seed uint64) (*fabric.Sim, *fabric.Network, error) {
	hosts := c.Connections + 1
	topo := fabric.DefaultTopology()
	topo.Hosts, topo.HostsPerLeaf, topo.Spines, topo.Planes = hosts, (hosts+1)/2, 4, c.Ports
	topo.HostLinkGbps, topo.FabricLinkGbps = float64(c.RateHint.LinkGbps), float64(c.RateHint.LinkGbps)
	topo.Jitter, topo.SpineDelaySkew, topo.Seed = k.Jitter, 40*fabric.Nanosecond, seed
	sim := fabric.NewSim()
	net, err := fabric.Build(sim, topo)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: closed-loop fabric: %w", err)
	}
	net.SetLinkLoss(k.Loss)
	net.SetLinkMark(k.Mark)
	if k.NoReroute {
		net.RerouteDelay = -1
	}
	if k.FailSwitch != "" {
		if err := net.FailSwitch(k.FailSwitch, k.FailAt); err != nil {
			return nil, nil, fmt.Errorf("cosim: fail-switch: %w", err)
		}
	}
	if k.FailPlane != nil {
		if err := net.FailPlane(*k.FailPlane, k.FailAt); err != nil {
			return nil, nil, fmt.Errorf("cosim: fail-plane: %w", err)
		}
	}
	return sim, net, nil
}

// LoopScenarios lists the closed-loop scenario names, sorted.
func LoopScenarios() []string {
	out := make([]string, 0, len(loopScenarios))
	for n := range loopScenarios {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Host 0 is the device under test.
const dut = 0

type pairItem struct {
	at   int64  // ns
	what string // rendered, for the report
	key  any    // compared with cmp.Diff
}

// pair compares two streams of items in order: golden's and the RTL's.
type pair struct {
	name       string
	gold, rtl  fifo[pairItem]
	n          int
	firstDiff  *Mismatch
	onMismatch func(stream string, n int, input, diff string)
}

func (p *pair) push(side *fifo[pairItem], it pairItem) {
	side.push(it)
	for p.gold.len() > 0 && p.rtl.len() > 0 {
		g, r := p.gold.pop(), p.rtl.pop()
		if !sameItem(g.key, r.key) || g.at != r.at {
			d := cmp.Diff(g.key, r.key)
			if d == "" {
				d = fmt.Sprintf("golden at %d ns, RTL at %d ns", g.at, r.at)
			}
			p.onMismatch(p.name, p.n, g.what, d)
		}
		p.n++
	}
}

// sameItem is the fast equality of two compared items (cmp.Diff renders a difference only).
func sameItem(a, b any) bool {
	switch x := a.(type) {
	case ctlFrame:
		y, ok := b.(ctlFrame)
		return ok && x.Port == y.Port && bytes.Equal(x.Bytes, y.Bytes)
	case dmaKey:
		y, ok := b.(dmaKey)
		return ok && x.Addr == y.Addr && bytes.Equal(x.Data, y.Data)
	case cplKey:
		y, ok := b.(cplKey)
		if !ok || !bytes.Equal(x.Data, y.Data) {
			return false
		}
		x.Data, y.Data = nil, nil
		return cmp.Equal(x, y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return cmp.Equal(a, b)
}

type ctlFrame struct {
	Port  int
	Bytes []byte
}

type cplKey struct {
	Conn, Stream, Op, Status int
	MSN, MsgLen, Bytes       uint32
	BufAddr                  uint64
	BufLen, RKey             uint32
	Data                     []byte // the message's bytes in host memory (nil for a failed one)
}

type dmaKey struct {
	Addr uint64
	Data []byte
}

// loopHarness runs nic_rx as host 0.
type loopHarness struct {
	opt       Options
	k         loopKnobs
	rng       *rand.Rand
	m         *verilator.Model
	pt        *rxPorts
	tp        *txPorts
	watch     cycleWatch
	in, out   []uint32
	nb        int // datapath bytes
	cycle     uint64
	res       *Result
	mm        *Mismatch
	sim       *fabric.Sim
	net       *fabric.Network
	tn        *transport.Network
	gold      *transport.NIC
	prm       wire.Params
	frames    []beat // beats waiting for s_axis
	framePos  int
	ctlOps    []transport.SetupOp
	ctlWait   []transport.SetupOp // issued, response pending
	outBuf    []byte
	pay       map[uint64][]byte
	payDone   map[uint64]bool
	payCur    []byte
	rtlMem    *placement.HostMemory
	frees     map[uint64]uint64    // completion address -> bytes to free after the RTL's completion
	cplAddr   map[[3]uint64]uint64 // {conn, stream, msn} -> where golden found the message
	reposts   map[[2]int][]transport.SetupOp
	released  map[[2]int]int // completions the RTL released before golden's repost (a repost delay)
	asyncLow  bool
	err       error // from inside a fabric callback
	frameLog  []loggedFrame
	lastIn    uint64 // cycle of the latest frame's last beat
	answered  bool   // a control frame has followed it
	watchOver bool   // a trace rerun has written its window
	ctl       pair
	dma       pair
	cpl       pair
	drops     pair
	data      pair // host 0's data and ANNOUNCE frames
	reads     pair // host 0's DMA reads of payload
	eng       pair // the send engine's answers to host 0's sender calls
	// The send side (loop_tx.go).
	sendMem  *placement.HostMemory // host 0's send buffers
	dataPend [][]sender.Packet     // per port: the shadow's data packets queued, in order
	rtlPend  [][]*sndPkt           // per port: the engine's descriptors, in order
	rtlAnn   [][]*sndPkt           // per port: the descriptors an ANNOUNCE goes ahead of
	// The send engine (loop_engine.go).
	eu       *hdlsender.Unit
	ep       *sndPorts
	calls    []sender.Call // host 0's sender calls not yet replayed
	drainAt  bool          // a replay is scheduled
	inGold   bool          // golden's Receive is running (its calls wait for the frame)
	cmd      *sender.Call  // the command offered to the engine
	cmdTaken bool
	cmdRsp   *engAnswer
	ackRsp   []engAnswer   // the engine's answers to ACKs and NAKs, not yet compared
	rtlDone  []sender.Done // completions since the last ACK compared
	rtlWakes []uint64      // pacing wake-ups since the last TakeWakes compared
	txds     []txDesc      // descriptors for s_txd
	rdBeats  []beat        // read data for s_rd (port: the read's tag)
	txOut    *txFrame      // the transmit path's frame of the current pull
	inRun    bool
	txTook   bool // a descriptor or read beat went in in the last cycle
	dataECN  uint8
	outQ     [][]*fabric.Packet
	wakeAt   fabric.Time
	nowNS    uint64
	traceAt  int64
}

// CheckLoop checks a closed-loop run's scenario and fault overrides against its configuration
// without building anything.
func CheckLoop(opt Options) error {
	_, err := loopKnobsOf(opt)
	return err
}

// loopKnobsOf is opt's scenario with its fault overrides, checked; the fabric is built once to
// check the failures' switch and plane.
func loopKnobsOf(opt Options) (loopKnobs, error) {
	k, ok := loopScenarios[opt.Scenario]
	if !ok {
		return k, fmt.Errorf("unknown closed-loop scenario %q; scenarios: %s", opt.Scenario, strings.Join(LoopScenarios(), ", "))
	}
	if err := opt.Faults.apply(&k, opt.Config.Ports); err != nil {
		return k, err
	}
	_, _, err := loopFabric(opt.Config, k, opt.Seed)
	return k, err
}

// RunLoop runs a closed-loop scenario: Packets frames reach host 0's RTL.
func RunLoop(ctx context.Context, opt Options) (*Result, error) {
	k, err := loopKnobsOf(opt)
	if err != nil {
		return nil, err
	}
	var nic *pipeline.NIC
	return runLockstep(opt, func(trace bool) (*verilator.Library, error) {
		r, err := pipeline.NewNIC(opt.Config)
		if err != nil {
			return nil, err
		}
		nic = r
		d, err := r.Design(opt.Stamp, opt.Mutate)
		if err != nil {
			return nil, err
		}
		return BuildModel(ctx, opt, d, r.Module(), trace)
	}, func(lib *verilator.Library, traceAt int64) (*Result, *Mismatch, error) {
		return runLoop(ctx, lib, nic, k, opt, traceAt)
	})
}

func runLoop(ctx context.Context, lib *verilator.Library, nic *pipeline.NIC, k loopKnobs, opt Options, traceAt int64) (*Result, *Mismatch, error) {
	m, err := newModel(lib, opt)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	pt, err := bindRxPorts(lib.Layout(), nic.Reset.Port)
	if err != nil {
		return nil, nil, fmt.Errorf("cosim: nic_top ports: %w", err)
	}
	c := opt.Config
	h := &loopHarness{opt: opt, k: k, rng: rand.New(rand.NewPCG(opt.Seed, 0x100b)), m: m, pt: pt,
		in: make([]uint32, lib.Layout().InWords()), out: make([]uint32, lib.Layout().OutWords()), nb: c.DatapathWidth / 8,
		pay: map[uint64][]byte{}, payDone: map[uint64]bool{}, rtlMem: placement.NewHostMemory(), frees: map[uint64]uint64{},
		cplAddr: map[[3]uint64]uint64{}, reposts: map[[2]int][]transport.SetupOp{}, released: map[[2]int]int{}, traceAt: traceAt, asyncLow: nic.Reset.AsyncLow,
		res: &Result{Block: "nic", Scenario: opt.Scenario, Seed: opt.Seed, ConfigHash: c.Hash(), Drops: map[string]int{},
			Counts: map[string]int{}, DeclaredLatency: map[string]int{}, MinLatency: map[string]int{}, MaxLatency: map[string]int{}}}
	h.watch = cycleWatch{ctx: ctx, m: m, opt: opt, traceAt: traceAt}
	if h.tp, err = bindTxPorts(lib.Layout(), nic.Tx); err != nil {
		return nil, nil, fmt.Errorf("cosim: nic_top ports: %w", err)
	}
	for _, p := range h.pairs() {
		p.onMismatch = h.mismatch
	}
	h.ctl.name, h.dma.name, h.cpl.name, h.drops.name = "control frames", "DMA writes", "completions", "drops"
	h.data.name, h.reads.name, h.eng.name = "data frames", "DMA reads", "send engine"
	h.eu = nic.Eng
	if h.ep, err = bindEnginePorts(lib.Layout(), nic.Eng, nic); err != nil {
		return nil, nil, fmt.Errorf("cosim: nic_top ports: %w", err)
	}
	h.sendMem = placement.NewHostMemory()

	if h.sim, h.net, err = loopFabric(c, k, opt.Seed); err != nil {
		return nil, nil, err
	}
	hosts := h.net.Hosts()
	ledger := traffic.NewLedger()
	tcfg := transport.ConfigFor(c)
	tcfg.RepostDelay = k.RepostDelay
	if h.tn, err = transport.New(h.net, ledger, tcfg); err != nil {
		return nil, nil, err
	}
	// Host 0's shadow decides its sends on the nanosecond clock the RTL counts (`now`).
	if err := h.tn.SenderClock(dut, fabric.Nanosecond); err != nil {
		return nil, nil, err
	}
	h.prm = h.tn.WireParams()
	h.gold = h.tn.NIC(dut)
	h.outQ = make([][]*fabric.Packet, h.net.Planes())
	h.dataPend = make([][]sender.Packet, h.net.Planes())
	h.rtlPend, h.rtlAnn = make([][]*sndPkt, h.net.Planes()), make([][]*sndPkt, h.net.Planes())
	h.dataECN = h.tn.DataECN()
	h.net.Attach(dut, (*loopEndpoint)(h))

	// Reset, wait for the table clears, program the peer table and replay the host's setup.
	if err := h.reset(); err != nil {
		return nil, nil, err
	}
	h.tn.SetTap(dut, (*loopTap)(h))
	h.tn.ObserveSender(dut, h.observe)
	if err := h.settle(); err != nil || h.mm != nil {
		return h.res, h.mm, err
	}

	// Traffic: every peer keeps Outstanding messages in flight toward host 0 until Packets
	// frames have reached it; then the run drains until every message is delivered.
	peers := hosts - 1
	posted := make([][]*traffic.Message, hosts)
	fromDut := make([][]*traffic.Message, hosts) // host 0's messages, per destination
	op := 0
	// keep tops up msgs (from src to dst, still being sent) to n messages.
	keep := func(now fabric.Time, msgs *[]*traffic.Message, src, dst, n int) {
		live := (*msgs)[:0]
		for _, msg := range *msgs {
			if msg.Sent == 0 {
				live = append(live, msg)
			}
		}
		*msgs = live
		for len(*msgs) < n {
			o := wire.OpWrite
			if op%2 == 1 {
				o = wire.OpSend
			}
			op++
			size := k.MinMsg + uint32(h.rng.IntN(int(k.MaxMsg-k.MinMsg+1)))
			msg := ledger.Post(now, src, dst, h.rng.IntN(c.StreamsPerConnection), o, min(size, h.tn.MaxMessage()))
			*msgs = append(*msgs, msg)
			h.tn.Hosts()[src].Submit(now, msg)
		}
	}
	var post func()
	post = func() {
		if h.mm != nil || h.res.Packets >= opt.Packets {
			return
		}
		now := h.sim.Now()
		for peer := 1; peer <= peers; peer++ {
			keep(now, &posted[peer], peer, dut, k.Outstanding)
			keep(now, &fromDut[peer], dut, peer, k.DutOutstanding) // host 0 sends to the peer too
		}
		h.sim.After(2*fabric.Microsecond, post)
	}
	h.sim.At(0, post)
	for step := 0; h.mm == nil && h.res.Packets < opt.Packets; step++ {
		h.sim.Run(h.sim.Now() + 20*fabric.Microsecond)
		if err := h.failed(); err != nil {
			return nil, nil, err
		}
		if step > 1_000_000 {
			return nil, nil, fmt.Errorf("cosim: closed loop made no progress (%d frames)", h.res.Packets)
		}
	}
	for d := 0; h.mm == nil && ledger.Totals.ReceiverCompleted < ledger.Totals.Messages && d < 2000; d++ {
		h.sim.Run(h.sim.Now() + 50*fabric.Microsecond)
		if err := h.failed(); err != nil {
			return nil, nil, err
		}
	}
	if h.mm != nil || h.watchOver {
		return h.res, h.mm, h.writePcap()
	}
	res, mm, err := h.finish(ledger)
	if mm != nil && err == nil {
		err = h.writePcap()
	}
	return res, mm, err
}

// pcapKeep is how many of the latest frames in and out of host 0 a mismatch report keeps.
const pcapKeep = 20000

type loggedFrame struct {
	ps   uint64
	data []byte
	note string
}

// logFrame remembers a frame for the mismatch pcap (the latest pcapKeep only).
func (h *loopHarness) logFrame(now fabric.Time, data []byte, note string) {
	if h.opt.Pcap == "" || h.traceAt >= 0 {
		return
	}
	if len(h.frameLog) == pcapKeep {
		copy(h.frameLog, h.frameLog[1:])
		h.frameLog = h.frameLog[:pcapKeep-1]
	}
	h.frameLog = append(h.frameLog, loggedFrame{ps: uint64(now), data: data, note: note})
}

// writePcap writes the remembered frames (on a mismatch; not on the VCD rerun).
func (h *loopHarness) writePcap() error {
	if h.opt.Pcap == "" || h.traceAt >= 0 || h.mm == nil {
		return nil
	}
	if err := makeParent(h.opt.Pcap); err != nil {
		return err
	}
	w, err := pcapout.Create(h.opt.Pcap, pcapout.Options{Sidecar: true})
	if err != nil {
		return fmt.Errorf("cosim: pcap: %w", err)
	}
	for _, f := range h.frameLog {
		if err := w.Write(pcapout.Frame{PS: f.ps, Data: f.data, Note: f.note}); err != nil {
			w.Close()
			return fmt.Errorf("cosim: pcap: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("cosim: pcap: %w", err)
	}
	h.mm.Pcap = h.opt.Pcap
	return nil
}

// errors from inside fabric callbacks are kept and returned by failed.
func (h *loopHarness) failed() error { return h.err }

func (h *loopHarness) mismatch(stream string, n int, input, diff string) {
	if h.mm == nil {
		h.mm = &Mismatch{Stream: stream, Transaction: n, Cycle: h.cycle, Input: fmt.Sprintf("at %d ns: %s", h.nowNS, input), Diff: diff}
	}
}

// finish checks that both sides ended in the same place.
func (h *loopHarness) finish(ledger *traffic.Ledger) (*Result, *Mismatch, error) {
	for _, p := range h.pairs() {
		if p.gold.len() != 0 || p.rtl.len() != 0 {
			h.mismatch(p.name, p.n, "end of run", fmt.Sprintf("golden has %d more, RTL %d more", p.gold.len(), p.rtl.len()))
			return h.res, h.mm, nil
		}
		h.res.Compared += p.n
	}
	// nic_tx built one frame per descriptor, every read of the length asked.
	if n, r := h.tp.txFrames.Get(h.out), h.tp.txReads.Get(h.out); n != uint64(h.data.n)&0xffffffff ||
		r != uint64(h.reads.n)&0xffffffff || h.tp.txErr.Get(h.out) != 0 {
		h.mismatch("data frames", h.data.n, "end of run", fmt.Sprintf("tx_cnt_frames %d for %d frames, tx_cnt_reads %d for %d reads, tx_err_len_count %d",
			n, h.data.n, r, h.reads.n, h.tp.txErr.Get(h.out)))
		return h.res, h.mm, nil
	}
	// The engine counted what golden's sender counted.
	gc := hdlsender.CounterValues(h.gold.SenderCounters())
	for i, c := range h.eu.Counters {
		if got := h.ep.cnt[i].Get(h.out); got != gc[i]&0xffffffff {
			h.mismatch("send engine counters", i, "end of run", fmt.Sprintf("eng_cnt_%s: golden %d, RTL %d", c.Name, gc[i], got))
			return h.res, h.mm, nil
		}
		h.res.Counts["engine_cnt_"+c.Name] = int(gc[i])
	}
	if d := h.gold.Memory().Diff(h.rtlMem); d != "" {
		h.mismatch("host memory", 0, "end of run", d)
		return h.res, h.mm, nil
	}
	t := ledger.Totals
	if t.VerifyFailures != 0 || t.ReceiverCompleted != t.Messages {
		return nil, nil, fmt.Errorf("cosim: closed loop: %d of %d messages delivered, %d failed verification", t.ReceiverCompleted, t.Messages, t.VerifyFailures)
	}
	h.res.Counts["messages_verified"] = int(t.ReceiverCompleted)
	h.res.Counts["bytes_verified"] = int(t.BytesDelivered)
	h.res.Counts["control_frames"] = h.ctl.n
	h.res.Counts["dma_writes"] = h.dma.n
	h.res.Counts["completions"] = h.cpl.n
	h.res.Counts["data_frames"] = h.data.n
	h.res.Counts["dma_reads"] = h.reads.n
	h.res.Counts["engine_answers"] = h.eng.n
	h.res.Counts["acks"] = int(h.pt.cntAcks.Get(h.out))
	h.res.Counts["naks"] = int(h.pt.cntNaks.Get(h.out))
	h.res.Counts["sim_us"] = int(h.sim.Now() / fabric.Microsecond)
	st := h.net.Stats()
	h.res.Counts["fabric_loss_drops"] = int(st.LossDrops)
	h.res.Counts["fabric_ce_marks"] = int(st.Marks)
	if sec := h.sim.Now().Seconds(); sec > 0 {
		h.res.Counts["goodput_mbps"] = int(float64(t.BytesDelivered*8) / sec / 1e6)
	}
	// The send engines' peak table occupancy (golden/sender Occupancy), host 0's twin and the
	// peers: the evidence behind the default memory sizes (docs/sender.md, "Memory sizing").
	peers, _ := transport.PeakOccupancy(h.tn.Hosts())
	for k, v := range h.gold.Occupancy().Max(peers).Named() {
		h.res.Counts["occupancy_"+k] = int(v)
	}
	for _, host := range h.tn.Hosts() {
		c := host.Counters()
		for _, k := range []string{"timeouts", "paths_suspect", "paths_failed", "paths_probed", "moved"} {
			if c[k] > 0 {
				h.res.Counts["peers_"+k] += int(c[k])
			}
		}
	}
	h.res.RTLCycles = h.cycle
	return h.res, nil, nil
}

// pairs are every compared stream.
func (h *loopHarness) pairs() []*pair {
	return []*pair{&h.ctl, &h.dma, &h.cpl, &h.drops, &h.data, &h.reads, &h.eng}
}
