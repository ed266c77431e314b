// Package progress reports how far a long command has come, on stderr, in the form the reader
// can see: on a terminal a bar with rate and ETA (github.com/schollz/progressbar), elsewhere (CI
// and Kubernetes logs, a file, a pipe) a plain line when the run starts, every Interval and when
// it ends. It never writes to stdout, so a --json run's one object stays alone there.
//
// MRGEN_PROGRESS overrides the choice: "bar", "plain" or "off".
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Interval is how often a plain report prints a line while the run goes on.
var Interval = 5 * time.Second

// Mode is how a report is drawn.
type Mode int

// Modes.
const (
	Off   Mode = iota // no progress (lines written to the report still pass through)
	Plain             // a line at start, every Interval and at the end
	Bar               // a redrawn bar (terminals)
)

// ModeFor picks the mode for w: MRGEN_PROGRESS when set, else Bar on a terminal and Plain
// elsewhere; Off for a nil writer.
func ModeFor(w io.Writer) Mode {
	if w == nil {
		return Off
	}
	switch os.Getenv("MRGEN_PROGRESS") {
	case "off":
		return Off
	case "plain":
		return Plain
	case "bar":
		return Bar
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return Bar
	}
	return Plain
}

// Report is one long task's progress: done of total units. Its methods are safe for concurrent
// use, and a nil *Report does nothing, so callers need no checks.
type Report struct {
	mu          sync.Mutex
	w           io.Writer
	label, unit string
	done, total int
	start, last time.Time
	off         bool // mode Off: counts are ignored, Write passes through
	started     bool // the first count has come (nothing is printed before it)
	finished    bool
	stop        chan struct{} // closed by Finish or Stop: ends the plain report's heartbeat
	bar         *progressbar.ProgressBar
	now         func() time.Time
}

// New starts a report of total units (packets, jobs, runs) on w, drawn as ModeFor(w) says. In
// mode Off it draws nothing but still passes what is written to it (a command's -v lines) to w;
// it returns nil only for a nil w.
func New(w io.Writer, label, unit string, total int) *Report {
	return NewMode(ModeFor(w), w, label, unit, total)
}

// NewMode starts a report in the given mode.
func NewMode(m Mode, w io.Writer, label, unit string, total int) *Report {
	if w == nil {
		return nil
	}
	r := &Report{w: w, label: label, unit: unit, total: total, now: time.Now, off: m == Off}
	if r.off {
		return r
	}
	if m == Bar {
		r.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString(unit),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		return r
	}
	r.stop = make(chan struct{})
	return r
}

// heartbeat prints the plain line every interval in which no update printed one, so that a
// long step (one synthesis, one recording) still shows the run is alive, until Finish.
func (r *Report) heartbeat(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if now := r.now(); !r.finished && now.Sub(r.last) >= every {
				r.last = now
				r.line(now)
			}
			r.mu.Unlock()
		}
	}
}

// Update sets the count done and the total (a total that grows, such as a sweep that adds
// runs, is allowed); it is the callback form func(done, total int).
func (r *Report) Update(done, total int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.set(done, total)
}

// set records the count and draws; r.mu is held. The first count starts the report: a command
// that fails before its work begins (a bad argument, an existing folder) prints nothing.
func (r *Report) set(done, total int) {
	if r.finished || r.off {
		return
	}
	r.done, r.total = done, total
	if !r.started {
		// Elapsed time and rate count from here, not from New: a model build or a job list
		// before the first count is not the work counted.
		r.started = true
		r.start = r.now()
		if r.bar == nil {
			r.last = r.now()
			if done == 0 {
				fmt.Fprintf(r.w, "%s: 0/%d %s\n", r.label, total, r.unit)
			} else {
				r.line(r.last)
			}
			go r.heartbeat(Interval)
			return
		}
	}
	if r.bar != nil {
		if r.bar.GetMax() != total {
			r.bar.ChangeMax(total)
		}
		_ = r.bar.Set(done)
		return
	}
	if t := r.now(); t.Sub(r.last) >= Interval {
		r.last = t
		r.line(t)
	}
}

// Add counts n more units done.
func (r *Report) Add(n int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.set(r.done+n, r.total)
}

// line prints the plain progress line; r.mu is held.
func (r *Report) line(t time.Time) {
	el := t.Sub(r.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(r.done) / el
	}
	pct := 0.0
	if r.total > 0 {
		pct = 100 * float64(r.done) / float64(r.total)
	}
	eta := "?"
	if rate > 0 && r.total >= r.done {
		eta = fmt.Sprintf("%.0f s", float64(r.total-r.done)/rate)
	}
	fmt.Fprintf(r.w, "%s: %d/%d %s (%.0f%%), %s %s/s, %.0f s elapsed, ETA %s\n",
		r.label, r.done, r.total, r.unit, pct, rateString(rate), r.unit, el, eta)
}

// End is Finish when err is nil and Stop otherwise.
func (r *Report) End(err error) {
	if err != nil {
		r.Stop()
		return
	}
	r.Finish()
}

// Stop ends the report without a final line (the command failed; its error says why).
func (r *Report) Stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.end() && r.bar != nil && r.started {
		_ = r.bar.Exit()
		fmt.Fprintln(r.w)
	}
}

// end marks the report finished and stops its heartbeat; false if it already was. r.mu is held.
func (r *Report) end() bool {
	if r.finished {
		return false
	}
	r.finished = true
	if r.stop != nil {
		close(r.stop)
	}
	return true
}

// Finish ends the report with its final count, elapsed time and rate (nothing if no count
// ever came).
func (r *Report) Finish() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.end() || !r.started {
		return
	}
	if r.bar != nil {
		_ = r.bar.Finish()
		return
	}
	el := r.now().Sub(r.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(r.done) / el
	}
	fmt.Fprintf(r.w, "%s: %d/%d %s done in %.1f s (%s %s/s)\n", r.label, r.done, r.total, r.unit, el, rateString(rate), r.unit)
}

func rateString(r float64) string {
	if r >= 10 || r == 0 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// Write prints p (whole lines) to the report's writer, above the bar on a terminal, so that a
// command's own result lines and its progress share stderr. A nil report discards p.
func (r *Report) Write(p []byte) (int, error) {
	if r == nil {
		return len(p), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar == nil || r.finished || !r.started {
		return r.w.Write(p)
	}
	_ = r.bar.Clear()
	n, err := r.w.Write(p)
	_ = r.bar.RenderBlank()
	return n, err
}
