package window

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
)

func testParams(t testing.TB, mutate func(*config.Config)) Params {
	t.Helper()
	c := config.Default()
	if mutate != nil {
		mutate(&c)
	}
	require.NoError(t, c.Validate())
	return ParamsFrom(c)
}

func onePath(c *config.Config) { c.PathsPerConnection = 1 }

// settle makes every queued publication of conn visible and reclassifies its paths, as if the
// connection had been idle for PubLag operations: the tests of the arithmetic below check one
// rule at a time, and TestPublishedLag checks the lag itself.
func settle(tb *Table, conn int) {
	for range PubLag {
		tb.publish(conn)
		tb.seq[conn] = (tb.seq[conn] + 1) % PubLag
	}
	for path := 0; path < tb.p.Paths; path++ {
		tb.refreshClass(tb.p.index(conn, path))
	}
}

func TestParamsFromDefault(t *testing.T) {
	p := testParams(t, nil)
	want := Params{
		Conns: 4, Paths: 8, ConnBits: 2, PathBits: 3, IndexBits: 5, TableDepth: 32, PSNBits: 32,
		MinCwnd: 1 * One, InitCwnd: 16 * One, MaxCwnd: 256 * One,
		ConnInitCwnd: 128 * One, ConnMaxCwnd: 2048 * One,
		AIStep: 1 * One, ConnAIStep: 8 * One, MDShift: 1, ConnMDShift: 2, SRTTShift: 3, RTTVarShift: 2,
		RTOMin: 100_000, RTOInitial: 454_000, RTOMax: 1_350_000, ProbeInterval: 1_000_000,
		SuspectTimeouts: 2, FailedTimeouts: 4, RateCapMul: 13107, Seed: 1,
	}
	if d := cmp.Diff(want, p); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	i, err := p.Index(3, 7)
	require.NoError(t, err)
	require.Equal(t, 31, i)
	_, err = p.Index(4, 0)
	require.Error(t, err)
	_, err = p.Index(0, 8)
	require.Error(t, err)
}

func TestLFSR(t *testing.T) {
	// Hand-computed from 0xACE1 with toggle mask 0xB400.
	s := uint16(0xACE1)
	for _, want := range []uint16{0xE270, 0x7138, 0x389C, 0x1C4E, 0x0E27, 0xB313} {
		s = LFSRNext(s)
		require.Equal(t, want, s)
	}
	// Maximal length: period 65535, never 0.
	s = 1
	for n := 1; ; n++ {
		s = LFSRNext(s)
		require.NotZero(t, s)
		if s == 1 {
			require.Equal(t, 65535, n)
			break
		}
	}
	// Seeds: fold(1) = 1; index 0 → 1 ^ 0x9E37, index 1 → 1 ^ 0x3C6E.
	require.Equal(t, uint16(0x9E36), LFSRSeed(1, 0))
	require.Equal(t, uint16(0x3C6F), LFSRSeed(1, 1))
	require.Equal(t, uint16(0x9E37^0x1234^0x5678^0x9abc^0xdef0), LFSRSeed(0x123456789abcdef0, 0))
	require.Equal(t, uint16(0xACE1), LFSRSeed(0x9E37, 0), "a zero seed is replaced")
	require.Equal(t, uint16(0xDE36), EntropyOf(0x9E36))
	// Initial entropies of the first 16384 entries are distinct (seed 1 never hits the zero case there).
	seen := map[uint16]int{}
	for i := 0; i < 16384; i++ {
		e := EntropyOf(LFSRSeed(1, i))
		require.GreaterOrEqual(t, e, uint16(0xC000))
		prev, dup := seen[e]
		require.False(t, dup, "entries %d and %d share entropy %#x", prev, i, e)
		seen[e] = i
	}
}

func TestResetState(t *testing.T) {
	p := testParams(t, nil)
	tb := New(p)
	want := PathEntry{State: Active, Cwnd: 16 * One, RTO: 454_000, LFSR: 0x3C6F, Entropy: 0xFC6F}
	if d := cmp.Diff(want, tb.Path(0, 1)); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	require.Equal(t, ConnEntry{Cwnd: 128 * One, RateCap: 2048 * One}, tb.Conn(2))
}

func TestRTTEstimator(t *testing.T) {
	type step struct {
		now, ts      uint32
		valid        bool
		srtt, rttvar uint32
		rto          uint32
	}
	tests := []struct {
		name  string
		mut   func(*config.Config)
		steps []step
	}{
		{"rfc6298 gains", nil, []step{
			{now: 10_000, ts: 0, valid: true, srtt: 10_000, rttvar: 5_000, rto: 100_000},
			{now: 28_000, ts: 10_000, valid: true, srtt: 11_000, rttvar: 5_750, rto: 100_000}, // d=8000
			{now: 33_000, ts: 30_000, valid: true, srtt: 10_000, rttvar: 6_312, rto: 100_000}, // d=-8000
			{now: 50_000, ts: 40_001, valid: true, srtt: 9_999, rttvar: 4_734, rto: 100_000},  // d=-1 floors
		}},
		{"rto from the estimate and its cap", nil, []step{
			{now: 200_000, ts: 0, valid: true, srtt: 200_000, rttvar: 100_000, rto: 600_000},
			{now: 2_000_000, ts: 0, valid: true, srtt: 425_000, rttvar: 525_000, rto: 1_350_000},
		}},
		{"timestamp wraps", nil, []step{
			{now: 5, ts: 0xFFFF_FFF0, valid: true, srtt: 21, rttvar: 10, rto: 100_000},
			{now: 0x8000_0010, ts: 0x8000_0000, valid: true, srtt: 20, rttvar: 8, rto: 100_000}, // d=-5: -5>>2 = -2,
		}},
		{"future echo discarded", nil, []step{
			{now: 0, ts: 10, valid: false, srtt: 0, rttvar: 0, rto: 454_000},
			{now: 100, ts: 0, valid: true, srtt: 100, rttvar: 50, rto: 100_000},
			{now: 0x8000_0064, ts: 100, valid: false, srtt: 100, rttvar: 50, rto: 100_000}, // exactly 2^31
		}},
		{"other gains", func(c *config.Config) { c.Window.SRTTShift, c.Window.RTTVarShift = 1, 1 }, []step{
			{now: 1000, ts: 0, valid: true, srtt: 1000, rttvar: 500, rto: 100_000},
			{now: 4000, ts: 1000, valid: true, srtt: 2000, rttvar: 1250, rto: 100_000},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := New(testParams(t, tc.mut))
			for i, s := range tc.steps {
				r := tb.AckUpdate(1, 2, Ack{TimestampEcho: s.ts}, s.now)
				require.Equal(t, s.valid, r.SampleValid, "step %d", i)
				e := tb.Path(1, 2)
				require.Equal(t, []uint32{s.srtt, s.rttvar, s.rto}, []uint32{e.SRTT, e.RTTVar, e.RTO}, "step %d", i)
			}
		})
	}
}

// sendN sends n packets on a one-path connection 0 at time now.
func sendN(t *testing.T, tb *Table, n int, now uint32) {
	t.Helper()
	for i := 0; i < n; i++ {
		d := tb.SendDecision(0, now)
		require.True(t, d.OK, "send %d: %v", i, d.Reason)
	}
}

func TestAdditiveIncrease(t *testing.T) {
	tb := New(testParams(t, onePath)) // path 16 packets, connection 16, conn AI 1 packet
	sendN(t, tb, 16, 0)
	require.Equal(t, ReasonConnWindow, tb.SendDecision(0, 0).Reason)
	for i := 1; i <= 16; i++ {
		r := tb.AckUpdate(0, 0, Ack{CumAdvance: 1, TimestampEcho: 0}, 10_000)
		require.Equal(t, i == 16, r.Increased, "ack %d", i)
		require.Equal(t, i == 16, r.ConnIncreased, "ack %d", i)
	}
	e := tb.Path(0, 0)
	require.Equal(t, uint32(17*One), e.Cwnd)
	require.Equal(t, uint32(0), e.Accum)
	require.Equal(t, uint32(0), e.Inflight)
	require.False(t, e.Armed, "nothing in flight: timer disarmed")
	require.Equal(t, uint32(17*One), tb.Conn(0).Cwnd)
	// A big ACK gives one increase and carries the rest: 17 in flight, 17 acked at once. (The
	// sends classify the path with the window of its last classification, 16 before settle.)
	settle(tb, 0)
	sendN(t, tb, 17, 10_000)
	r := tb.AckUpdate(0, 0, Ack{CumAdvance: 10, NewlySacked: 30, TimestampEcho: 10_000}, 20_000)
	require.Equal(t, uint32(17), r.Acked, "acked is capped at in flight")
	e = tb.Path(0, 0)
	require.Equal(t, uint32(18*One), e.Cwnd)
	require.Equal(t, uint32(0), e.Accum)
	// The maximum caps the window.
	require.Equal(t, uint32(20*One), func() uint32 { c, _, _ := additive(20*One, 5, 30, One, 20*One, accumMax); return c }())
	// The accumulator saturates.
	c, a, inc := additive(10*One, accumMax-5, 100, One, 1024*One, accumMax)
	require.Equal(t, []any{uint32(11 * One), uint32(accumMax), true}, []any{c, a, inc})
	// Fractional windows: the integer part counts.
	c, a, inc = additive(3*One+200, 2, 1, One, 1024*One, accumMax)
	require.Equal(t, []any{uint32(4*One + 200), uint32(0), true}, []any{c, a, inc})
}

func TestECNDecreaseOncePerRTT(t *testing.T) {
	tb := New(testParams(t, onePath))
	sendN(t, tb, 16, 0)
	mark := func(now uint32, n uint16) AckResult {
		return tb.AckUpdate(0, 0, Ack{ECNEcho: n, TimestampEcho: now - 10_000}, now) // RTT 10 µs
	}
	type step struct {
		now       uint32
		decreased bool
		cwnd      uint32
		marks     uint32
		connCwnd  uint32
	}
	steps := []step{
		{10_000, true, 8 * One, 1, 12 * One},    // first mark: decrease at once
		{15_000, false, 8 * One, 2, 12 * One},   // 5 µs later: same epoch
		{19_999, false, 8 * One, 3, 12 * One},   // 1 ns short of an RTT
		{20_000, true, 4 * One, 1, 9 * One},     // one RTT after the last decrease
		{30_000, true, 2 * One, 1, 6*One + 192}, // 9·3/4 = 6.75
		{40_000, true, 1 * One, 1, 5*One + 16},
		{50_000, true, 1 * One, 1, 3*One + 204}, // floor at min_cwnd for the path
	}
	for i, s := range steps {
		r := mark(s.now, 1)
		e := tb.Path(0, 0)
		require.Equal(t, s.decreased, r.Decreased, "step %d", i)
		require.Equal(t, s.decreased, r.ConnDecreased, "step %d", i)
		require.False(t, r.Increased, "step %d", i)
		require.Equal(t, []uint32{s.cwnd, s.marks, s.connCwnd}, []uint32{e.Cwnd, e.Marks, tb.Conn(0).Cwnd}, "step %d", i)
		require.True(t, e.Marked)
		require.Zero(t, e.Accum)
	}
	// Marks saturate within an epoch.
	mark(55_000, 0xFFFF)
	mark(56_000, 0xFFFF)
	require.Equal(t, uint32(marksMax), tb.Path(0, 0).Marks)
	// An unmarked ACK clears Marked.
	tb.AckUpdate(0, 0, Ack{TimestampEcho: 50_000}, 60_000)
	require.False(t, tb.Path(0, 0).Marked)
}

func TestECNEpochAcrossTimeWrap(t *testing.T) {
	tb := New(testParams(t, onePath))
	sendN(t, tb, 16, 0)
	base := uint32(0xFFFF_F000)
	require.True(t, tb.AckUpdate(0, 0, Ack{ECNEcho: 1, TimestampEcho: base - 10_000}, base).Decreased)
	// 0x1000 + 0x1000 = 8192 ns later, across the wrap: less than the 10 µs RTT.
	require.False(t, tb.AckUpdate(0, 0, Ack{ECNEcho: 1, TimestampEcho: base + 0x2000 - 10_000}, 0x1000).Decreased)
	// 10_000 ns after base, wrapped.
	now := base + 10_000
	require.Less(t, now, base)
	require.True(t, tb.AckUpdate(0, 0, Ack{ECNEcho: 1, TimestampEcho: now - 10_000}, now).Decreased)
}

func TestRateHintCap(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.Window.InitCwnd = 32 })
	require.Equal(t, uint32(31249), p.rateCap(4000, 10_000), "400 Gb/s × 10 µs = 122 packets of 4 KiB")
	require.Equal(t, p.MinCwnd, p.rateCap(1, 10), "floor")
	require.Equal(t, p.ConnMaxCwnd, p.rateCap(0xFFFF, 0xFFFF_FFFF), "cap")
	require.Equal(t, p.rateCap(100, 1<<RTTCapBits-1), p.rateCap(100, 0x7FFF_FFFF), "RTT clamped to 24 bits")

	tb := New(p) // connection window 256, 8 paths × 32
	// A hint before any RTT sample is stored but sets no cap.
	tb.AckUpdate(0, 0, Ack{RateHint: 4000, TimestampEcho: 5}, 0)
	require.Equal(t, p.ConnMaxCwnd, tb.Conn(0).RateCap)
	require.Equal(t, uint16(4000), tb.Conn(0).RateHint)
	r := tb.AckUpdate(0, 0, Ack{RateHint: 4000, TimestampEcho: 0}, 6_667)
	require.True(t, r.SampleValid)
	require.Equal(t, uint32(31249), tb.Conn(0).RateCap, "1.5 × the 6.667 µs base RTT = 10 µs")
	require.Equal(t, uint16(4000), tb.Path(0, 0).RateHint)
	settle(tb, 0)
	for i := 0; i < 123; i++ { // ⌈31249/256⌉ = ⌈122.07⌉
		require.True(t, tb.SendDecision(0, 10_000).OK, "send %d", i)
	}
	require.Equal(t, Decision{Reason: ReasonRateCap}, tb.SendDecision(0, 10_000))
	// A queue that triples the RTT does not grow the cap: it follows the base RTT.
	r = tb.AckUpdate(0, 0, Ack{RateHint: 4000, TimestampEcho: 10_000}, 30_000)
	require.Equal(t, uint32(20_000), r.Sample)
	require.Equal(t, uint32(6_667), tb.Conn(0).MinRTT)
	require.Equal(t, uint32(31249), tb.Conn(0).RateCap)
	require.Greater(t, tb.Path(0, 0).SRTT, uint32(6_667))
	r = tb.AckUpdate(0, 3, Ack{RateHint: 4000, TimestampEcho: 40_000}, 46_000)
	require.Equal(t, uint32(6_000), tb.Conn(0).MinRTT, "a lower sample on any path lowers the base")
	require.Equal(t, p.rateCap(4000, 9_000), tb.Conn(0).RateCap)
	// Hint 0 lifts the cap.
	tb.AckUpdate(0, 1, Ack{RateHint: 0, TimestampEcho: 0}, 10_000)
	require.Equal(t, p.ConnMaxCwnd, tb.Conn(0).RateCap)
	require.Equal(t, ReasonRateCap, tb.SendDecision(0, 10_000).Reason, "not published yet")
	settle(tb, 0)
	require.True(t, tb.SendDecision(0, 10_000).OK)
}

// TestPublishedLag checks the lag itself: an ACK's windows, RTO and rate cap are published by
// the PubLag-th operation on the same connection after it (for the decisions of the next one),
// and operations on other connections do not count.
func TestPublishedLag(t *testing.T) {
	p := testParams(t, nil)
	tb := New(p)
	sendN(t, tb, 1, 0) // op 0 on connection 0: path 0
	// op 1: an ECN-marked ACK halves path 0 and cuts the connection window; its RTT sample sets
	// the RTO to rto_min.
	r := tb.AckUpdate(0, 0, Ack{ECNEcho: 1, TimestampEcho: 0}, 5_000)
	require.True(t, r.Decreased && r.ConnDecreased)
	e, c := tb.Path(0, 0), tb.Conn(0)
	require.Equal(t, uint32(8*One), e.Cwnd)
	require.Equal(t, p.RTOMin, e.RTO)
	initial := Published{Cwnd: p.InitCwnd, RTO: p.RTOInitial, ConnCwnd: p.ConnInitCwnd, RateCap: p.ConnMaxCwnd}
	require.Equal(t, initial, tb.Published(0, 0), "the ACK's own result is not published")
	// Operations on another connection do not move connection 0's publications.
	for range 2 * PubLag {
		tb.SendDecision(1, 5_000)
	}
	require.Equal(t, initial, tb.Published(0, 0))
	// Six more operations on connection 0 (ops 2..7): the ring still holds op 1's state.
	for k := 0; k < PubLag-2; k++ {
		tb.Expire(0, 3, 5_000)
		require.Equal(t, initial, tb.Published(0, 0), "op %d", k+2)
	}
	// Op 8 ends by publishing op 0's state (a send: the initial state); op 9 publishes op 1's.
	tb.Expire(0, 3, 5_000)
	require.Equal(t, initial, tb.Published(0, 0))
	tb.Expire(0, 3, 5_000)
	require.Equal(t, Published{Cwnd: e.Cwnd, RTO: e.RTO, ConnCwnd: c.Cwnd, RateCap: c.RateCap}, tb.Published(0, 0))
	// The path's class follows its published window at its next operation: 1 in flight of 8
	// is still class 3 but a NAK on it reclassifies from the published window.
	require.Equal(t, 1, tb.Classes(0)[0], "marked: class 1")
	// The timer now restarts at the published RTO.
	tb.Heard(0, 0, 6_000)
	require.Equal(t, uint32(6_000)+p.RTOMin, tb.Path(0, 0).Deadline)
}

func TestTimerStateMachine(t *testing.T) {
	tb := New(testParams(t, func(c *config.Config) { c.PathsPerConnection = 2 }))
	e0 := tb.Path(0, 0).Entropy
	// Pin path 0 by filling path 1 first? Simpler: send one packet, it goes to path 0 (RR = 0).
	d := tb.SendDecision(0, 0)
	require.Equal(t, Decision{OK: true, Path: 0, Entropy: e0, PSN: 0}, d)
	require.Equal(t, uint32(454_000), tb.Path(0, 0).Deadline)

	type step struct {
		now      uint32
		want     Expiry
		state    State
		rto      uint32
		deadline uint32
		armed    bool
	}
	// The LFSR of entry 0 under seed 1 starts at 0x9E36: one step gives 0x4F1B, two 0x938D.
	steps := []step{
		{453_999, Expiry{Entropy: e0}, Active, 454_000, 454_000, true},
		{454_000, Expiry{Event: EventTimeout, Outstanding: 1, Timeouts: 1, Entropy: e0}, Active, 908_000, 1_362_000, true},
		{1_362_000, Expiry{Event: EventSuspect, Outstanding: 1, Timeouts: 2, Entropy: e0}, Suspect, 1_350_000, 2_712_000, true},
		{2_712_000, Expiry{Event: EventTimeout, Outstanding: 1, Timeouts: 3, Entropy: e0}, Suspect, 1_350_000, 4_062_000, true},
		{4_062_000, Expiry{Event: EventFailed, Moved: 1, Timeouts: 4, Entropy: 0xCF1B}, Failed, 454_000, 5_062_000, true},
		{5_061_999, Expiry{Timeouts: 4, Entropy: 0xCF1B}, Failed, 454_000, 5_062_000, true},
		{5_062_000, Expiry{Event: EventProbe, Timeouts: 3, Entropy: 0xCF1B}, Suspect, 454_000, 5_062_000, false},
	}
	for i, s := range steps {
		settle(tb, 0) // each backoff doubles the RTO the previous timeout left
		x := tb.Expire(0, 0, s.now)
		if diff := cmp.Diff(s.want, x); diff != "" {
			t.Fatalf("step %d (-want +got):\n%s", i, diff)
		}
		e := tb.Path(0, 0)
		require.Equal(t, s.state, e.State, "step %d", i)
		require.Equal(t, []any{s.rto, s.deadline, s.armed}, []any{e.RTO, e.Deadline, e.Armed}, "step %d", i)
		if x.Event != EventNone {
			require.Equal(t, p1(tb).MinCwnd, e.Cwnd, "step %d: timer events set the window to min", i)
		}
		if s.state == Failed {
			require.Zero(t, e.Inflight)
			require.Zero(t, tb.Conn(0).Inflight)
			// A failed path is never chosen; the other path takes everything.
			for k := 0; k < 3; k++ {
				d := tb.SendDecision(0, s.now)
				require.True(t, d.OK)
				require.Equal(t, 1, d.Path)
			}
			tb.AckUpdate(0, 1, Ack{CumAdvance: 3, TimestampEcho: s.now}, s.now)
			// A late ACK on the failed path is ignored.
			require.True(t, tb.AckUpdate(0, 0, Ack{CumAdvance: 1, TimestampEcho: s.now}, s.now).Ignored)
		}
	}
	// The probe: the suspect path (class 1) gets a packet only when the active path has no
	// window, so fill path 1 (16 packets) first.
	for k := 0; k < 16; k++ {
		require.Equal(t, 1, tb.SendDecision(0, 5_100_000).Path)
	}
	d = tb.SendDecision(0, 5_100_000)
	require.Equal(t, Decision{OK: true, Path: 0, Entropy: 0xCF1B, PSN: 1}, d)
	require.Equal(t, ReasonNoPath, tb.SendDecision(0, 5_100_000).Reason, "the suspect path has a one-packet window")
	// The probe times out: failed again, another entropy.
	x := tb.Expire(0, 0, 5_100_000+454_000)
	require.Equal(t, Expiry{Event: EventFailed, Moved: 1, Timeouts: 4, Entropy: 0xD38D}, x)
	// The next probe is answered: Active again, timeouts cleared.
	require.Equal(t, EventProbe, tb.Expire(0, 0, 5_554_000+1_000_000).Event)
	tb.AckUpdate(0, 1, Ack{CumAdvance: 16, TimestampEcho: 6_000_000}, 6_000_000)
	d = tb.SendDecision(0, 6_600_000)
	require.Equal(t, 1, d.Path, "active path first")
	for d.Path != 0 {
		d = tb.SendDecision(0, 6_600_000)
		require.True(t, d.OK)
	}
	r := tb.AckUpdate(0, 0, Ack{CumAdvance: 1, TimestampEcho: 6_600_000}, 6_610_000)
	require.True(t, r.Reactivated)
	e := tb.Path(0, 0)
	require.Equal(t, Active, e.State)
	require.Zero(t, e.Timeouts)
	require.Equal(t, uint32(100_000), e.RTO, "a fresh RTT sample after the failure")
}

func p1(tb *Table) Params { return tb.Params() }

func TestMarkedTimeoutIsNotCounted(t *testing.T) {
	tb := New(testParams(t, onePath))
	sendN(t, tb, 2, 0)
	tb.AckUpdate(0, 0, Ack{CumAdvance: 1, ECNEcho: 1, TimestampEcho: 0}, 10_000)
	dl := tb.Path(0, 0).Deadline
	require.Equal(t, uint32(464_000), dl, "the timer restarts at the published RTO, rto_initial before this sample")
	settle(tb, 0)
	x := tb.Expire(0, 0, dl)
	require.Equal(t, EventTimeout, x.Event)
	require.Zero(t, x.Timeouts, "congestion explains the first timeout after a mark")
	require.False(t, tb.Path(0, 0).Marked)
	x = tb.Expire(0, 0, tb.Path(0, 0).Deadline)
	require.Equal(t, uint8(1), x.Timeouts)
}

func TestRTOBackoffCapAndAckReset(t *testing.T) {
	tb := New(testParams(t, func(c *config.Config) {
		c.PathsPerConnection = 1
		c.Window.SuspectTimeouts, c.Window.FailedTimeouts = 14, 15
		c.Window.RTOMinNS, c.Window.RTOInitialNS, c.Window.RTOMaxNS = 1000, 1000, 5000
	}))
	sendN(t, tb, 1, 0)
	now := uint32(0)
	for _, want := range []uint32{2000, 4000, 5000, 5000} {
		now = tb.Path(0, 0).Deadline
		require.Equal(t, EventTimeout, tb.Expire(0, 0, now).Event)
		require.Equal(t, want, tb.Path(0, 0).RTO)
	}
	tb.AckUpdate(0, 0, Ack{TimestampEcho: now - 100}, now)
	e := tb.Path(0, 0)
	require.Equal(t, uint32(1000), e.RTO, "an ACK ends the backoff (clamped to rto_min)")
	require.Zero(t, e.Timeouts)
	require.True(t, e.Armed)
}

func TestTimerWrapsAt32Bits(t *testing.T) {
	tb := New(testParams(t, onePath))
	start := uint32(0xFFFF_FF00)
	sendN(t, tb, 1, start)
	dl := tb.Path(0, 0).Deadline
	require.Equal(t, start+454_000, dl)
	require.Less(t, dl, start)
	require.Equal(t, EventNone, tb.Expire(0, 0, 0xFFFF_FFFF).Event)
	require.Equal(t, EventNone, tb.Expire(0, 0, dl-1).Event)
	require.Equal(t, EventTimeout, tb.Expire(0, 0, dl).Event)
	// A check up to 2^31-1 ns late still sees the expiry.
	tb2 := New(testParams(t, onePath))
	sendN(t, tb2, 1, 0)
	require.Equal(t, EventTimeout, tb2.Expire(0, 0, 454_000+0x7FFF_FFFF).Event)
}

func TestNextPSNWraps(t *testing.T) {
	tb := New(testParams(t, func(c *config.Config) { c.PathsPerConnection = 1; c.PSNWidth = 10; c.SackWidth = 64 }))
	tb.SetNextPSN(0, 0, 1022)
	var got []uint32
	for i := 0; i < 3; i++ {
		got = append(got, tb.SendDecision(0, 0).PSN)
	}
	require.Equal(t, []uint32{1022, 1023, 0}, got)
}

func TestTickScansEveryEntry(t *testing.T) {
	p := testParams(t, func(c *config.Config) { c.Connections = 3; c.PathsPerConnection = 3 })
	require.Equal(t, 16, p.TableDepth)
	tb := New(p)
	for c := 0; c < 3; c++ {
		tb.SendDecision(c, 0)
	}
	var expired [][2]int
	for i := 0; i < 2*p.TableDepth; i++ {
		c, path, x := tb.Tick(1_000_000)
		require.Equal(t, i%16, c<<2|path)
		if x.Event != EventNone {
			expired = append(expired, [2]int{c, path})
		}
	}
	require.Equal(t, [][2]int{{0, 0}, {1, 0}, {2, 0}}, expired, "once each: the deadline moved on")
}

func TestEncodingsAndNames(t *testing.T) {
	require.Equal(t, []string{"active", "suspect", "failed", "unknown"},
		[]string{Active.String(), Suspect.String(), Failed.String(), State(3).String()})
	require.Equal(t, []string{"ok", "conn_window", "rate_cap", "no_path", "unknown"},
		[]string{ReasonOK.String(), ReasonConnWindow.String(), ReasonRateCap.String(), ReasonNoPath.String(), Reason(9).String()})
	require.Equal(t, []string{"none", "timeout", "suspect", "failed", "probe", "unknown"},
		[]string{EventNone.String(), EventTimeout.String(), EventSuspect.String(), EventFailed.String(), EventProbe.String(), Event(9).String()})
	require.Panics(t, func() { New(testParams(t, nil)).Path(4, 0) })
}

// TestHeardIsLivenessOnly: a NAK clears the timeouts, reactivates a Suspect path and restarts
// its timer at the backed-off RTO, and changes nothing else; a Failed path ignores it.
func TestHeardIsLivenessOnly(t *testing.T) {
	tb := New(testParams(t, onePath))
	sendN(t, tb, 2, 0)
	tb.AckUpdate(0, 0, Ack{CumAdvance: 1, ECNEcho: 1, RateHint: 40, TimestampEcho: 0}, 10_000)
	for range 3 {
		tb.Expire(0, 0, tb.Path(0, 0).Deadline)
	}
	settle(tb, 0)
	before, beforeConn := tb.Path(0, 0), tb.Conn(0)
	require.Equal(t, Suspect, before.State)
	now := before.Deadline - 1
	r := tb.Heard(0, 0, now)
	require.Equal(t, AckResult{Reactivated: true}, r)
	want := before
	want.State, want.Timeouts, want.Deadline, want.ArmedAt, want.Floored = Active, 0, now+before.RTO, now, false
	require.Empty(t, cmp.Diff(want, tb.Path(0, 0)), "only the liveness fields change")
	wantConn := beforeConn
	wantConn.LastHeard, wantConn.HeardValid = now, true
	require.Empty(t, cmp.Diff(wantConn, tb.Conn(0)), "the connection entry: only when it last heard")
	require.Equal(t, AckResult{}, tb.Heard(0, 0, now+1), "already Active: nothing to report")

	tb.AckUpdate(0, 0, Ack{CumAdvance: 1, TimestampEcho: now}, now+10)
	require.False(t, tb.Heard(0, 0, now+20).Reactivated)
	require.False(t, tb.Path(0, 0).Armed, "nothing in flight: the timer is disarmed")

	sendN(t, tb, 1, now)
	for tb.Path(0, 0).State != Failed {
		tb.Expire(0, 0, tb.Path(0, 0).Deadline)
	}
	failed := tb.Path(0, 0)
	require.Equal(t, AckResult{Ignored: true}, tb.Heard(0, 0, failed.Deadline-1))
	require.Empty(t, cmp.Diff(failed, tb.Path(0, 0)))
}

// TestTimeoutWhileSiblingsHeard: a path whose timer expires after its connection heard an ACK
// or a NAK on another path since the timer started fails at that timeout (its packets move, its
// share of the connection's window is released); a heard at the instant the timer started is
// not after it, an ECN mark excuses the silence, and with no sibling heard the timeouts count.
func TestTimeoutWhileSiblingsHeard(t *testing.T) {
	twoPaths := func(c *config.Config) { c.PathsPerConnection = 2 }
	cases := []struct {
		name   string
		heard  func(tb *Table) // what path 1 does after path 0 sent at time 0
		marked bool            // path 0's last ACK carried an ECN echo
		want   Event
	}{
		{"ACK on a sibling after the timer started", func(tb *Table) {
			tb.AckUpdate(0, 1, Ack{CumAdvance: 1, TimestampEcho: 0}, 5_000)
		}, false, EventFailed},
		{"NAK on a sibling after the timer started", func(tb *Table) { tb.Heard(0, 1, 5_000) }, false, EventFailed},
		{"sibling heard at the instant the timer started", func(tb *Table) { tb.Heard(0, 1, 0) }, false, EventTimeout},
		{"nothing heard", func(*Table) {}, false, EventTimeout},
		{"marked: congestion, not failure", func(tb *Table) { tb.Heard(0, 1, 5_000) }, true, EventTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := New(testParams(t, twoPaths))
			if tc.marked {
				// Path 0's ACK with an echo restarts its timer at 0 and marks it.
				tb.SendDecision(0, 0)
				tb.AckUpdate(0, 0, Ack{ECNEcho: 1, TimestampEcho: 0}, 0)
			}
			sendN(t, tb, 2, 0) // PSN on path 0, then path 1
			require.Equal(t, uint32(1), tb.Path(0, 0).Inflight)
			require.Equal(t, tc.marked, tb.Path(0, 0).Marked)
			tc.heard(tb)
			before := tb.Conn(0).Inflight
			x := tb.Expire(0, 0, tb.Path(0, 0).Deadline)
			require.Equal(t, tc.want, x.Event)
			if tc.want == EventFailed {
				require.Equal(t, uint32(1), x.Moved)
				require.Equal(t, uint8(1), x.Timeouts)
				require.Equal(t, Failed, tb.Path(0, 0).State)
				require.Equal(t, before-1, tb.Conn(0).Inflight, "the path's packet left the connection window")
			}
		})
	}
}
