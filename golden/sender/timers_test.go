package sender

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/window"
	"github.com/mrgen/mrgen/golden/wire"
)

// TestTailProbe: a path's oldest packet is resent once when the path has been silent for the
// probe timeout since it left: FirstProbeNS before the first answer, max(2·SRTT, SRTT +
// 4·RTTVar) + AckDelayNS (at least TailProbeMinNS) with an RTT sample, never on a path of a
// connection that has heard but has no sample there.
func TestTailProbe(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(r *rig) // leaves one packet, PSN psn, sent at r.now
		psn     uint32
		timeout uint64 // 0: no probe
	}{
		{name: "first packet", setup: func(r *rig) {
			r.now = 1000
			r.post(0, 0, wire.OpWrite, testMTU, 1)
			r.drain()
		}, timeout: DefaultFirstProbeNS},
		{name: "with an RTT sample", setup: func(r *rig) {
			r.post(0, 0, wire.OpWrite, testMTU, 1)
			r.drain()
			r.now = 10_000
			r.ack(0, 0, 1, nil, 0, 0) // SRTT 10 µs, RTTVar 5 µs
			r.now = 20_000
			r.post(0, 0, wire.OpWrite, testMTU, 2)
			r.drain()
		}, psn: 1, timeout: 30_000 + 2000},
		{name: "heard, no sample", setup: func(r *rig) {
			r.ack(0, 0, 0, nil, 5, 0) // an echo from the future: no sample
			r.post(0, 0, wire.OpWrite, testMTU, 1)
			r.drain()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, nil)
			tc.setup(r)
			sent := r.now
			if tc.timeout == 0 {
				r.now = sent + 400_000 // before the RTO
				r.s.Scan(r.now)
				require.Empty(t, r.drain())
				require.Zero(t, r.s.Counters.TailProbes)
				return
			}
			r.now = sent + tc.timeout
			r.s.Scan(r.now)
			require.Empty(t, r.drain(), "silent for exactly the timeout: not yet")
			r.now++
			r.s.Scan(r.now)
			pks := r.drain()
			require.Len(t, pks, 1)
			require.Equal(t, KindRetx, pks[0].Kind)
			require.Equal(t, tc.psn, pks[0].PSN)
			r.now += tc.timeout // still before the RTO
			r.s.Scan(r.now)
			require.Empty(t, r.drain(), "one probe per ACK")
			require.Equal(t, uint64(1), r.s.Counters.TailProbes)
		})
	}
}

// TestTimeoutsToFailureAndProbe: a silent path's RTO resends its oldest packet and copies every
// packet to the other path once; repeated timeouts make it suspect, then failed (its records
// are forgotten); after the probe interval it restarts its PSN sequence with PathInit.
func TestTimeoutsToFailureAndProbe(t *testing.T) {
	r := newRig(t, 2, nil)
	r.ack(0, 0, 0, nil, 5, 0) // heard, no RTT sample: RTOs stay at rto_initial
	r.post(0, 0, wire.OpWrite, 4*testMTU, 1)
	sent := r.drain()
	require.Empty(t, cmp.Diff([]brief{
		{KindNew, 0, 0, 0, 0, wire.FlagFirst},
		{KindNew, 1, 0, 0, 1, 0},
		{KindNew, 0, 1, 0, 2, 0},
		{KindNew, 1, 1, 0, 3, wire.FlagLast | wire.FlagAckReq},
	}, briefs(sent)))
	// Path 1 delivers, heard at the instant path 0's timer started, so that path 0's silence is
	// not yet evidence against it (TestSilentPathFailsWhileSiblingsHeard): it counts timeouts.
	r.ack(0, 1, 2, nil, 5, 0)
	wp := r.s.Params().Window
	steps := []struct {
		at    uint64
		state window.State
		want  []brief
		cnt   Counters
	}{
		{at: uint64(wp.RTOInitial), state: window.Active, want: []brief{
			{KindRetx, 0, 0, 0, 0, wire.FlagFirst | wire.FlagRetx | wire.FlagAckReq},
			{KindMoved, 1, 2, 0, 0, wire.FlagFirst},
			{KindMoved, 1, 3, 0, 2, 0},
		}, cnt: Counters{Retransmissions: 1, Timeouts: 1, RTORetransmissions: 1, RTOCopies: 2}},
		{at: 3 * uint64(wp.RTOInitial), state: window.Suspect, want: []brief{
			{KindRetx, 0, 0, 0, 0, wire.FlagFirst | wire.FlagRetx | wire.FlagAckReq},
		}, cnt: Counters{Retransmissions: 2, Timeouts: 2, PathsSuspect: 1, RTORetransmissions: 2, RTOCopies: 2}},
		{at: 3*uint64(wp.RTOInitial) + uint64(wp.RTOMax), state: window.Suspect, want: []brief{
			{KindRetx, 0, 0, 0, 0, wire.FlagFirst | wire.FlagRetx | wire.FlagAckReq},
		}, cnt: Counters{Retransmissions: 3, Timeouts: 3, PathsSuspect: 1, RTORetransmissions: 3, RTOCopies: 2}},
		{at: 3*uint64(wp.RTOInitial) + 2*uint64(wp.RTOMax), state: window.Failed,
			cnt: Counters{Retransmissions: 3, Timeouts: 4, PathsSuspect: 1, PathsFailed: 1, RTORetransmissions: 3, RTOCopies: 2}},
		{at: 3*uint64(wp.RTOInitial) + 2*uint64(wp.RTOMax) + uint64(wp.ProbeInterval), state: window.Suspect,
			cnt: Counters{Retransmissions: 3, Timeouts: 4, PathsSuspect: 1, PathsFailed: 1, PathsProbed: 1, RTORetransmissions: 3, RTOCopies: 2}},
	}
	for i, st := range steps {
		r.now = st.at
		r.s.Scan(r.now)
		require.Equal(t, st.state, r.s.Window().Path(0, 0).State, "step %d", i)
		require.Empty(t, cmp.Diff(st.want, briefs(r.drain())), "step %d", i)
		got := r.s.Counters
		got.DataSent, got.MovedSent, got.Acks = 0, 0, 0
		require.Empty(t, cmp.Diff(st.cnt, got), "step %d", i)
		if i == 0 {
			r.ack(0, 1, 4, nil, 5, 0) // the copies are acknowledged
		}
	}
	// Failed, then probed: path 0's records are gone and its sequence restarts at NextPSN.
	require.Zero(t, r.s.conns[0].recs[0].live)
	require.True(t, r.s.conns[0].needInit[0])
	require.Equal(t, uint32(2), r.s.stx.Una(r.s.index(0, 0)))
	rearm, ok := r.s.Rearm()
	require.True(t, ok, "a path not Active keeps the scan running")
	require.Equal(t, uint64(r.s.p.ScanTicks), rearm, "ScanTicks after the last run (the rig never armed it)")
}

// TestSilentPathFailsWhileSiblingsHeard: a path that times out after its connection heard
// another path since its timer started is failing, not congested: it fails at that first
// timeout, its packets move to the other path and its share of the window is released.
func TestSilentPathFailsWhileSiblingsHeard(t *testing.T) {
	r := newRig(t, 2, nil)
	r.ack(0, 0, 0, nil, 5, 0)
	r.post(0, 0, wire.OpWrite, 4*testMTU, 1)
	require.Len(t, r.drain(), 4)
	r.now = 1000
	r.ack(0, 1, 2, nil, 5, 0) // path 1 delivers after path 0's timer started; path 0 is silent
	require.Equal(t, uint32(2), r.s.Window().Conn(0).Inflight, "path 0's two packets")
	r.now = uint64(r.s.Params().Window.RTOInitial)
	r.s.Scan(r.now)
	require.Equal(t, window.Failed, r.s.Window().Path(0, 0).State)
	require.Equal(t, uint8(1), r.s.Window().Path(0, 0).Timeouts, "one timeout, not failed_timeouts")
	require.Zero(t, r.s.Window().Conn(0).Inflight, "path 0's packets left the connection window")
	require.Empty(t, cmp.Diff([]brief{
		{KindMoved, 1, 2, 0, 0, wire.FlagFirst},
		{KindMoved, 1, 3, 0, 2, 0},
	}, briefs(r.drain())))
	got := r.s.Counters
	got.DataSent, got.MovedSent, got.Acks = 0, 0, 0
	require.Empty(t, cmp.Diff(Counters{Timeouts: 1, PathsFailed: 1, Moved: 2}, got))
}

// TestFailedPathRecordsMove: a record queued for retransmission on a path that fails before it
// is resent is moved instead, and a path that fails with packets not yet copied moves them.
func TestFailedPathRecordsMove(t *testing.T) {
	r := newRig(t, 2, func(p *Params) { p.Window.FailedTimeouts, p.Window.SuspectTimeouts = 1, 1 })
	r.ack(0, 0, 0, nil, 5, 0)
	r.post(0, 0, wire.OpSend, 2*testMTU, 1)
	require.Len(t, r.drain(), 2) // PSN 0 on path 0, PSN 0 on path 1
	r.now = 100
	r.ack(0, 1, 1, nil, 5, 0)
	r.now = uint64(r.s.Params().Window.RTOInitial)
	r.s.Scan(r.now) // path 0 fails at its first timeout
	require.Equal(t, window.Failed, r.s.Window().Path(0, 0).State)
	require.Equal(t, uint64(1), r.s.Counters.Moved)
	require.Empty(t, cmp.Diff([]brief{{KindMoved, 1, 1, 0, 0, wire.FlagFirst}}, briefs(r.drain())))
}

// TestArmAndNextTimer: the scan is armed once; NextTimer is the earliest of the scan, the
// oldest RNR retry and the pacing wake-up; an idle scan stops.
func TestArmAndNextTimer(t *testing.T) {
	r := newRig(t, 1, nil)
	_, ok := r.s.NextTimer()
	require.False(t, ok)
	at, ok := r.s.Arm(100)
	require.True(t, ok)
	require.Equal(t, uint64(5100), at)
	_, ok = r.s.Arm(200)
	require.False(t, ok, "already armed")
	next, _ := r.s.NextTimer()
	require.Equal(t, uint64(5100), next)
	r.s.Scan(5100)
	_, ok = r.s.Rearm()
	require.False(t, ok, "nothing to watch: the scan stops")
	at, ok = r.s.Arm(6000)
	require.True(t, ok)
	require.Equal(t, uint64(11_000), at)
}
