package pcapout

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/golden/wire"
)

// readBack is one frame as pcapgo reads it.
type readBack struct {
	Time   time.Time
	Length int
	Data   []byte
}

func readPcap(t *testing.T, r io.Reader) []readBack {
	t.Helper()
	all, err := io.ReadAll(r)
	require.NoError(t, err)
	// The nanosecond magic, little-endian. (pcapgo v1.1.19's Reader.Resolution has the two
	// resolutions swapped, so the magic is checked here instead.)
	require.Equal(t, []byte{0x4d, 0x3c, 0xb2, 0xa1}, all[:4], "nanosecond pcap magic")
	pr, err := pcapgo.NewReader(bytes.NewReader(all))
	require.NoError(t, err)
	require.Equal(t, layers.LinkTypeEthernet, pr.LinkType())
	require.Equal(t, uint32(SnapLen), pr.Snaplen())
	var out []readBack
	for {
		data, ci, err := pr.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, readBack{Time: ci.Timestamp.UTC(), Length: ci.Length, Data: data})
	}
}

// randomFrames encodes n random MetaRoCE frames at increasing picosecond times.
func randomFrames(t *testing.T, n int, seed uint64) []Frame {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	prm := wire.DefaultParams()
	var ps uint64
	out := make([]Frame, n)
	for i := range out {
		b, err := wire.Encode(wire.RandomPacket(rng, prm), prm)
		require.NoError(t, err)
		ps += 1 + rng.Uint64N(10_000_000)
		out[i] = Frame{PS: ps, Data: b}
		if i%3 == 0 {
			out[i].Note = "frame " + strings.Repeat("x", i%5)
		}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	epoch2024 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		epoch time.Time
		want  time.Time // pcap time of simulation time 0
	}{
		{"unix epoch by default", time.Time{}, time.Unix(0, 0).UTC()},
		{"explicit epoch", epoch2024, epoch2024},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frames := randomFrames(t, 50, 7)
			var pc, notes bytes.Buffer
			w, err := New(&pc, Options{Epoch: tc.epoch, Notes: &notes})
			require.NoError(t, err)
			var want []readBack
			var wantNotes []Note
			for i, f := range frames {
				require.NoError(t, w.Write(f))
				want = append(want, readBack{Time: tc.want.Add(time.Duration(f.PS / 1000)), Length: len(f.Data), Data: f.Data})
				if f.Note != "" {
					wantNotes = append(wantNotes, Note{Frame: i + 1, TimePS: f.PS, Note: f.Note})
				}
			}
			require.NoError(t, w.Close())
			require.Equal(t, len(frames), w.Frames())
			if d := cmp.Diff(want, readPcap(t, &pc)); d != "" {
				t.Fatalf("pcap read back (-want +got):\n%s", d)
			}
			got, err := ReadNotes(&notes)
			require.NoError(t, err)
			if d := cmp.Diff(wantNotes, got); d != "" {
				t.Fatalf("notes (-want +got):\n%s", d)
			}
		})
	}
}

func TestTimeMapping(t *testing.T) {
	w, err := New(io.Discard, Options{})
	require.NoError(t, err)
	tests := []struct {
		ps   uint64
		want time.Time
	}{
		{0, time.Unix(0, 0)},
		{999, time.Unix(0, 0)}, // below a nanosecond: truncated
		{1000, time.Unix(0, 1)},
		{10_000, time.Unix(0, 10)}, // one 100 MHz cycle
		{1_500_000_000_999, time.Unix(1, 500_000_000)},
	}
	for _, tc := range tests {
		got, err := w.Time(tc.ps)
		require.NoError(t, err)
		require.True(t, tc.want.Equal(got), "%d ps: got %v want %v", tc.ps, got, tc.want)
	}
	// The last representable second is 2^32-1 after 1970: an epoch a few seconds before it
	// leaves only those seconds.
	late, err := New(io.Discard, Options{Epoch: time.Unix(1<<32-3, 0)})
	require.NoError(t, err)
	_, err = late.Time(2_999_999_999_999)
	require.NoError(t, err)
	_, err = late.Time(4_000_000_000_000)
	require.ErrorIs(t, err, ErrTime)
	require.ErrorIs(t, late.Write(Frame{PS: 4_000_000_000_000, Data: []byte{1}}), ErrTime)
}

func TestBadEpoch(t *testing.T) {
	for _, e := range []time.Time{time.Unix(-1, 0), time.Unix(1<<32, 0)} {
		_, err := New(io.Discard, Options{Epoch: e})
		require.ErrorIs(t, err, ErrTime, "%v", e)
	}
}

func TestCreateWithSidecar(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pcap")
	w, err := Create(path, Options{Sidecar: true})
	require.NoError(t, err)
	frames := randomFrames(t, 10, 3)
	for _, f := range frames {
		require.NoError(t, w.Write(f))
	}
	require.NoError(t, w.Close())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	got := readPcap(t, f)
	require.Len(t, got, len(frames))
	for i := range frames {
		require.Equal(t, frames[i].Data, got[i].Data)
	}
	nf, err := os.Open(NotesPath(path))
	require.NoError(t, err)
	defer nf.Close()
	notes, err := ReadNotes(nf)
	require.NoError(t, err)
	require.Len(t, notes, 4) // frames 1, 4, 7, 10
	require.Equal(t, 10, notes[3].Frame)
}

func TestCreateErrors(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "missing", "x.pcap"), Options{})
	require.Error(t, err)
}

func TestOversizedFrameTruncated(t *testing.T) {
	var pc bytes.Buffer
	w, err := New(&pc, Options{})
	require.NoError(t, err)
	big := bytes.Repeat([]byte{0xab}, SnapLen+10)
	require.NoError(t, w.Write(Frame{PS: 5000, Data: big}))
	got := readPcap(t, &pc)
	want := []readBack{{Time: time.Unix(0, 5).UTC(), Length: SnapLen + 10, Data: big[:SnapLen]}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

func TestWriteErrorSticks(t *testing.T) {
	w, err := New(&failWriter{after: 1}, Options{}) // header only
	require.NoError(t, err)
	err = w.Write(Frame{Data: []byte{1, 2, 3}})
	require.ErrorContains(t, err, "disk full")
	require.Equal(t, err, w.Write(Frame{Data: []byte{1}}))
	require.Equal(t, err, w.Close())
	_, err = New(&failWriter{}, Options{})
	require.ErrorContains(t, err, "file header")
}

func TestReadNotesErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"garbage", "{", "notes line 1"},
		{"unknown field", `{"frame":1,"what":2}`, "unknown field"},
		{"frame zero", `{"frame":0,"time_ps":1,"note":"x"}`, "want ≥ 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNotes(strings.NewReader(tc.in))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func FuzzReadNotes(f *testing.F) {
	f.Add([]byte(`{"frame":1,"time_ps":1000,"note":"ok"}` + "\n"))
	f.Add([]byte(`{"frame":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		notes, err := ReadNotes(bytes.NewReader(b))
		if err == nil {
			for _, n := range notes {
				require.GreaterOrEqual(t, n.Frame, 1)
			}
		}
	})
}
