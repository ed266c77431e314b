package wire

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// fuzzParams picks one of testParams by a fuzzed byte.
func fuzzParams(sel uint8) Params {
	tp := testParams()
	return tp[int(sel)%len(tp)].prm
}

// addSeeds seeds a fuzz target with valid frames of every configuration (random packets and the
// golden vectors) and with the frames of the drop-reason tests.
func addSeeds(f *testing.F) {
	for i, tp := range testParams() {
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		for range 24 {
			p := RandomPacket(rng, tp.prm)
			if len(p.Payload) > 512 { // keep the corpus small; the fuzzer grows frames itself
				p = RandomPacket(rng, tp.prm)
			}
			frame, err := Encode(p, tp.prm)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(frame, uint8(i))
		}
	}
	for _, v := range goldenVectors() {
		frame := readHex(f, filepath.Join("testdata/vectors", v.file))
		for i, tp := range testParams() {
			if tp.prm == v.prm {
				f.Add(frame, uint8(i))
			}
		}
	}
	for _, c := range dropCases() {
		frame, err := Encode(c.base, basePrm(c))
		if err != nil {
			f.Fatal(err)
		}
		if len(frame) > 1024 {
			continue
		}
		frame = c.edit(f, frame, layoutOf(c.base))
		for i, tp := range testParams() {
			if tp.prm == c.prm {
				f.Add(frame, uint8(i))
			}
		}
	}
}

// checkDecode is the contract of Decode on any input: a defined reason, a packet exactly when
// accepted, and for an accepted frame Encode gives back the very same bytes (no valid frame is
// short enough to carry padding, so there is nothing to strip).
func checkDecode(t *testing.T, frame []byte, prm Params) (*Packet, DropReason) {
	t.Helper()
	p, reason := Decode(frame, prm)
	if !reason.Valid() {
		t.Fatalf("undefined drop reason %d", reason)
	}
	if (p == nil) != (reason != DropNone) {
		t.Fatalf("reason %s with packet %v", reason, p != nil)
	}
	if reason != DropNone {
		return nil, reason
	}
	enc, err := Encode(p, prm)
	if err != nil {
		t.Fatalf("Encode refuses a packet Decode accepted: %v\nframe %x", err, frame)
	}
	if !bytes.Equal(enc, frame) {
		t.Fatalf("Encode(Decode(frame)) differs from frame\nframe %x\nenc   %x", frame, enc)
	}
	return p, reason
}

// FuzzDecode feeds arbitrary bytes to Decode under each test configuration.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte, sel uint8) {
		checkDecode(t, frame, fuzzParams(sel))
	})
}

// FuzzRoundTrip reseals arbitrary bytes (valid IPv4 checksum and ICRC, where the frame has the
// structure for them) so that the fuzzer reaches the checks behind the ICRC, decodes, and for an
// accepted frame re-encodes and decodes again to the same fields.
func FuzzRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte, sel uint8) {
		prm := fuzzParams(sel)
		frame = bytes.Clone(frame) // the fuzzer's input must not be modified
		_ = Reseal(frame)          // a frame without the structure stays as it is
		p, reason := checkDecode(t, frame, prm)
		if reason != DropNone {
			return
		}
		enc, err := Encode(p, prm)
		if err != nil {
			t.Fatal(err)
		}
		again, reason := Decode(enc, prm)
		if reason != DropNone {
			t.Fatalf("re-encoded frame dropped as %s", reason)
		}
		requireSamePacket(t, p, again, "decode(encode(decode(frame)))")
	})
}

// FuzzEncode drives RandomPacket with fuzzed seeds: every packet it makes must encode, decode to
// itself, and stay valid under Reseal (which must change nothing).
func FuzzEncode(f *testing.F) {
	for i := range 16 {
		f.Add(uint64(i), uint64(i*7919), uint8(i))
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64, sel uint8) {
		prm := fuzzParams(sel)
		p := RandomPacket(rand.New(rand.NewPCG(s1, s2)), prm)
		frame, err := Encode(p, prm)
		if err != nil {
			t.Fatalf("Encode(RandomPacket): %v", err)
		}
		got, _ := checkDecode(t, frame, prm)
		requireSamePacket(t, p, got, "decode(encode(p))")
		sealed := bytes.Clone(frame)
		if err := Reseal(sealed); err != nil || !bytes.Equal(sealed, frame) {
			t.Fatalf("Reseal changed a valid frame (err %v)", err)
		}
	})
}
