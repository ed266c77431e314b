package progress

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock steps by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestPlainLinesAtStartEveryIntervalAndEnd(t *testing.T) {
	var b bytes.Buffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	r := NewMode(Plain, &b, "cosim sack/random", "packets", 100)
	r.now, r.start, r.last = clk.now, clk.t, clk.t
	r.Update(0, 100)  // the first count starts the report
	r.Update(10, 100) // before the interval: no line
	clk.t = clk.t.Add(Interval)
	r.Update(50, 100)
	clk.t = clk.t.Add(Interval / 2)
	r.Update(60, 100) // half an interval later: no line
	clk.t = clk.t.Add(Interval / 2)
	r.Add(40)
	r.Finish()
	r.Finish() // once only
	r.Update(1, 1)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Equal(t, []string{
		"cosim sack/random: 0/100 packets",
		"cosim sack/random: 50/100 packets (50%), 10 packets/s, 5 s elapsed, ETA 5 s",
		"cosim sack/random: 100/100 packets (100%), 10 packets/s, 10 s elapsed, ETA 0 s",
		"cosim sack/random: 100/100 packets done in 10.0 s (10 packets/s)",
	}, lines)
}

// Without updates, a plain report still prints a line every interval, and none after Finish.
func TestPlainHeartbeatWithoutUpdates(t *testing.T) {
	defer func(old time.Duration) { Interval = old }(Interval)
	Interval = 20 * time.Millisecond
	var b syncBuffer
	r := NewMode(Plain, &b, "synth", "modules", 3)
	r.Update(1, 3)
	require.Eventually(t, func() bool { return strings.Count(b.String(), "synth: 1/3 modules (33%)") >= 2 },
		2*time.Second, 5*time.Millisecond, "heartbeat lines")
	r.Finish()
	n := len(b.String())
	time.Sleep(5 * Interval)
	require.Len(t, b.String(), n, "nothing after Finish")
	require.Contains(t, b.String(), "synth: 1/3 modules done in")
}

// A command that fails before its first count prints nothing; one that fails later prints no
// final line.
func TestNothingBeforeTheFirstCountAndNoFinishLineOnStop(t *testing.T) {
	for _, m := range []Mode{Plain, Bar} {
		var b bytes.Buffer
		NewMode(m, &b, "handoff", "steps", 0).Finish()
		require.Empty(t, b.String(), "mode %d", m)
		NewMode(m, &b, "handoff", "steps", 0).End(errors.New("the folder exists"))
		require.Empty(t, b.String(), "mode %d", m)
	}
	var b bytes.Buffer
	r := NewMode(Plain, &b, "sim loss", "runs", 0)
	r.Update(0, 60)
	r.Update(3, 60)
	r.End(errors.New("seed 2: failed"))
	r.Finish()
	require.Equal(t, "sim loss: 0/60 runs\n", b.String())
}

func TestNilAndOffReportsDoNothing(t *testing.T) {
	var r *Report
	r.Update(1, 2)
	r.Add(1)
	r.Finish()
	require.Nil(t, New(nil, "x", "runs", 1))
	var b bytes.Buffer
	off := NewMode(Off, &b, "x", "runs", 1)
	off.Update(0, 1)
	off.Add(1)
	off.Finish()
	require.Empty(t, b.String(), "no progress in mode Off")
	fmt.Fprintf(off, "regress: job 0/1 ...\n")
	require.Equal(t, "regress: job 0/1 ...\n", b.String(), "a command's own lines still pass through")
}

func TestModeFor(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want Mode
	}{{"", Plain}, {"plain", Plain}, {"bar", Bar}, {"off", Off}} {
		t.Run("MRGEN_PROGRESS="+tc.env, func(t *testing.T) {
			t.Setenv("MRGEN_PROGRESS", tc.env)
			require.Equal(t, tc.want, ModeFor(&bytes.Buffer{}), "a buffer is not a terminal")
		})
	}
	require.Equal(t, Off, ModeFor(nil))
}

func TestBarDrawsCountAndRate(t *testing.T) {
	var b bytes.Buffer
	r := NewMode(Bar, &b, "qor", "jobs", 4)
	for i := 1; i <= 4; i++ {
		r.Add(1)
		time.Sleep(120 * time.Millisecond) // past the bar's redraw throttle
	}
	r.Finish()
	out := b.String()
	require.Contains(t, out, "qor")
	require.Contains(t, out, "4/4")
	require.Contains(t, out, "jobs/s")
}

func TestConcurrentUpdates(t *testing.T) {
	var b syncBuffer
	r := NewMode(Plain, &b, "sim", "runs", 800)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				r.Add(1)
			}
		}()
	}
	wg.Wait()
	r.Finish()
	require.Contains(t, b.String(), "sim: 800/800 runs done")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
