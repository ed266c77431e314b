// Package pcapout records simulated Ethernet frames in a pcap file that Wireshark and tshark
// open directly: nanosecond-resolution classic pcap (magic 0xa1b23c4d), link type Ethernet,
// frames as mrgen handles them on AXI-Stream (destination MAC first, no preamble, no FCS).
//
// Simulation time is in picoseconds (golden/fabric's unit; a cycle count times the clock
// period for a block co-simulation). It maps to pcap time as Epoch + floor(ps/1000) ns, so with
// the default epoch (the Unix epoch) Wireshark's "seconds since epoch" column is the simulation
// time itself. The sub-nanosecond remainder, which pcap cannot carry, is kept in the notes.
//
// Notes: a frame may carry a free-text note (the scenario's verdict, a drop reason, the cycle).
// Classic pcap has no per-frame comment, so notes never go into the pcap: they go, one JSON
// object a line, into an optional sidecar (Notes, or NotesPath(pcap) with Create), keyed by
// Wireshark's frame number (1-based), so a reader joins the two on frame.number.
package pcapout

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// SnapLen is the snapshot length written in the file header: Wireshark's own maximum, above
// the longest MetaRoCE frame of any configuration (wire.MaxMTU + 106 bytes). Longer frames are
// recorded truncated, with their original length.
const SnapLen = 262144

// PSPerNS is the number of picoseconds in a nanosecond, the pcap file's resolution.
const PSPerNS = 1000

// Frame is one recorded frame.
type Frame struct {
	PS   uint64 // simulation time in picoseconds
	Data []byte // the Ethernet frame, destination MAC first, no FCS
	Note string // optional; written to the notes sidecar, never into the pcap
}

// Note is one line of the notes sidecar.
type Note struct {
	Frame  int    `json:"frame"`   // Wireshark's frame.number, from 1
	TimePS uint64 `json:"time_ps"` // the exact simulation time of the frame
	Note   string `json:"note"`
}

// Options configure a Writer.
type Options struct {
	// Epoch is the wall-clock time of simulation time 0; the zero value means the Unix epoch.
	Epoch time.Time
	// Notes, when not nil, receives the notes sidecar (JSON lines). New only: Create opens
	// NotesPath(path) itself when Sidecar is set.
	Notes io.Writer
	// Sidecar makes Create write the notes to NotesPath(path).
	Sidecar bool
}

// Writer records frames. It is not safe for concurrent use.
type Writer struct {
	pw     *pcapgo.Writer
	epoch  time.Time
	maxNS  uint64 // the last simulation time (ns) whose pcap seconds still fit 32 bits
	notes  *json.Encoder
	frames int
	// Set by Create: the buffered files to flush and close.
	buf, nbuf *bufio.Writer
	closers   []io.Closer
	err       error // the first write error; later writes return it
}

// ErrTime marks a frame time the pcap file cannot represent.
var ErrTime = errors.New("pcapout: time out of range")

// New writes the pcap file header to w and returns a Writer that records frames there. w is
// written through as is: wrap it in a bufio.Writer for speed (Create does).
func New(w io.Writer, opt Options) (*Writer, error) {
	epoch := opt.Epoch
	if epoch.IsZero() {
		epoch = time.Unix(0, 0)
	}
	if epoch.Unix() < 0 || epoch.Unix() > math.MaxUint32 {
		return nil, fmt.Errorf("%w: epoch %v is outside 1970..2106, which pcap's 32-bit seconds cover", ErrTime, epoch)
	}
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(SnapLen, layers.LinkTypeEthernet); err != nil {
		return nil, fmt.Errorf("pcapout: file header: %w", err)
	}
	// The last representable instant, at most 136 years after the epoch: fits a Duration.
	end := time.Unix(math.MaxUint32, 999_999_999)
	wr := &Writer{pw: pw, epoch: epoch, maxNS: uint64(end.Sub(epoch).Nanoseconds())}
	if opt.Notes != nil {
		wr.notes = json.NewEncoder(opt.Notes)
	}
	return wr, nil
}

// NotesPath is the sidecar Create writes beside a pcap file.
func NotesPath(pcapPath string) string { return pcapPath + ".notes.jsonl" }

// Create creates (or truncates) the pcap file at path, and with opt.Sidecar the notes file
// NotesPath(path), both buffered. Close flushes and closes them.
func Create(path string, opt Options) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("pcapout: %w", err)
	}
	buf := bufio.NewWriterSize(f, 1<<16)
	closers := []io.Closer{f}
	var nbuf *bufio.Writer
	if opt.Sidecar {
		nf, err := os.Create(NotesPath(path))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("pcapout: notes: %w", err)
		}
		nbuf = bufio.NewWriter(nf)
		closers = append(closers, nf)
		opt.Notes = nbuf
	}
	w, err := New(buf, opt)
	if err != nil {
		for _, c := range closers {
			c.Close()
		}
		return nil, err
	}
	w.buf, w.nbuf, w.closers = buf, nbuf, closers
	return w, nil
}

// Time maps a simulation time in picoseconds to the pcap timestamp it is recorded with.
func (w *Writer) Time(ps uint64) (time.Time, error) {
	if ps/PSPerNS > w.maxNS {
		return time.Time{}, fmt.Errorf("%w: %d ps after the epoch %v is past 2106", ErrTime, ps, w.epoch)
	}
	return w.epoch.Add(time.Duration(ps / PSPerNS)), nil
}

// Write records one frame. After an error the Writer is unusable and returns that error.
func (w *Writer) Write(f Frame) error {
	if w.err != nil {
		return w.err
	}
	t, err := w.Time(f.PS)
	if err != nil {
		return err
	}
	data := f.Data
	if len(data) > SnapLen {
		data = data[:SnapLen]
	}
	ci := gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(data), Length: len(f.Data)}
	if err := w.pw.WritePacket(ci, data); err != nil {
		w.err = fmt.Errorf("pcapout: frame %d: %w", w.frames+1, err)
		return w.err
	}
	w.frames++
	if f.Note != "" && w.notes != nil {
		if err := w.notes.Encode(Note{Frame: w.frames, TimePS: f.PS, Note: f.Note}); err != nil {
			w.err = fmt.Errorf("pcapout: note of frame %d: %w", w.frames, err)
			return w.err
		}
	}
	return nil
}

// Frames is the number of frames written.
func (w *Writer) Frames() int { return w.frames }

// Flush writes buffered data of a Writer made by Create to its files (New's writer is the
// caller's to flush).
func (w *Writer) Flush() error {
	for _, b := range []*bufio.Writer{w.buf, w.nbuf} {
		if b != nil {
			if err := b.Flush(); err != nil {
				return fmt.Errorf("pcapout: flush: %w", err)
			}
		}
	}
	return nil
}

// Close flushes and closes the files of a Writer made by Create; for New it does nothing but
// report an earlier write error.
func (w *Writer) Close() error {
	err := w.Flush()
	for _, c := range w.closers {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("pcapout: close: %w", cerr)
		}
	}
	w.closers = nil
	if err == nil {
		err = w.err
	}
	return err
}

// ReadNotes reads a notes sidecar.
func ReadNotes(r io.Reader) ([]Note, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var out []Note
	for {
		var n Note
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("pcapout: notes line %d: %w", len(out)+1, err)
		}
		if n.Frame < 1 {
			return nil, fmt.Errorf("pcapout: notes line %d: frame %d, want ≥ 1", len(out)+1, n.Frame)
		}
		out = append(out, n)
	}
}
