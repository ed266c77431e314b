package wire

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMutations applies random mutations (bit flips, byte overwrites, truncations, extensions,
// insertions and deletions, one to four at a time) to valid frames of every configuration and
// checks that Decode never panics, that every rejection carries a defined reason other than
// none, and that every frame it accepts re-encodes to the same bytes. Half the mutated frames
// are resealed (IPv4 checksum and ICRC recomputed) so that the checks behind the ICRC are
// exercised too, and a quarter get their IP and UDP lengths fitted to the frame first, so that
// truncations and extensions reach the transport-length checks. 1,000,000 mutations (about 4 s);
// 100,000 with -short.
func TestMutations(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	rng := rand.New(rand.NewPCG(2024, 11))
	type base struct {
		frame []byte
		prm   Params
	}
	var pool []base
	for _, tp := range testParams() {
		for range 64 {
			p := RandomPacket(rng, tp.prm)
			frame, err := Encode(p, tp.prm)
			require.NoError(t, err)
			pool = append(pool, base{frame, tp.prm})
		}
	}
	start := time.Now()
	counts := map[DropReason]int{}
	buf := make([]byte, 0, 20_000)
	for i := 0; i < n; i++ {
		b := pool[rng.IntN(len(pool))]
		f := append(buf[:0], b.frame...)
		for range 1 + rng.IntN(4) {
			f = mutate(rng, f)
		}
		if rng.IntN(4) == 0 {
			fitLengths(f)
		}
		if rng.IntN(2) == 0 {
			_ = Reseal(f)
		}
		p, reason := decodeNoPanic(t, f, b.prm)
		counts[reason]++
		switch {
		case !reason.Valid():
			t.Fatalf("mutation %d: undefined drop reason %d for frame %x", i, reason, f)
		case reason == DropNone:
			enc, err := Encode(p, b.prm)
			require.NoError(t, err, "mutation %d: accepted frame does not re-encode", i)
			if !bytes.Equal(enc, f) {
				t.Fatalf("mutation %d: accepted frame re-encodes differently\nframe %x\nenc   %x", i, f, enc)
			}
		case p != nil:
			t.Fatalf("mutation %d: dropped as %s but returned a packet", i, reason)
		}
	}
	t.Logf("%d mutations in %v", n, time.Since(start))
	for _, r := range AllDropReasons() {
		t.Logf("%-26s %d", r, counts[r])
	}
	// The mutations reach far into the check order: most reasons occur.
	require.GreaterOrEqual(t, len(counts), 32, "distinct reasons seen: %v", counts)
}

// decodeNoPanic reports a panic of Decode as a test failure naming the frame.
func decodeNoPanic(t *testing.T, f []byte, prm Params) (p *Packet, r DropReason) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Fatalf("Decode panicked: %v\nframe %x", e, f)
		}
	}()
	return Decode(f, prm)
}

// mutate applies one random mutation to f and returns the result (which may share f's array).
func mutate(rng *rand.Rand, f []byte) []byte {
	// Mutations aim at the headers most of the time: that is where the checks are.
	pos := func() int {
		if len(f) == 0 {
			return 0
		}
		if rng.IntN(4) != 0 {
			return rng.IntN(min(len(f), 110))
		}
		return rng.IntN(len(f))
	}
	switch rng.IntN(7) {
	case 0, 1: // flip one bit
		if len(f) > 0 {
			f[pos()] ^= 1 << rng.IntN(8)
		}
	case 2: // overwrite a byte
		if len(f) > 0 {
			f[pos()] = byte(rng.Uint32())
		}
	case 3: // truncate
		if len(f) > 0 {
			f = f[:rng.IntN(len(f))]
		}
	case 4: // extend
		for range 1 + rng.IntN(16) {
			f = append(f, byte(rng.Uint32()))
		}
	case 5: // insert bytes
		at, k := pos(), 1+rng.IntN(8)
		f = append(f[:at], append(make([]byte, k), f[at:]...)...)
		for i := range k {
			f[at+i] = byte(rng.Uint32())
		}
	case 6: // delete bytes
		if len(f) > 0 {
			at := pos()
			f = append(f[:at], f[min(len(f), at+1+rng.IntN(8)):]...)
		}
	}
	return f
}

// fitLengths sets the IP length and the UDP length of f to match the frame's length, where f has
// the structure for it.
func fitLengths(f []byte) {
	if len(f) < EthHeaderLen+VLANTagLen+IPv6HeaderLen+UDPHeaderLen {
		return
	}
	o := layout{l3: EthHeaderLen}
	et := binary.BigEndian.Uint16(f[EthTypeOff:])
	if et == EtherTypeVLAN {
		o.l3 += VLANTagLen
		et = binary.BigEndian.Uint16(f[EthTypeOff+VLANTagLen:])
	}
	switch et {
	case EtherTypeIPv4:
		o.udp = o.l3 + IPv4HeaderLen
	case EtherTypeIPv6:
		o.v6, o.udp = true, o.l3+IPv6HeaderLen
	default:
		return
	}
	setDatagramLen(f, o, len(f)-o.l3)
}
