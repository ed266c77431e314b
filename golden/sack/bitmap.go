package sack

import (
	"fmt"
	"math/bits"
	"strings"
)

// Bitmap is a fixed-width bit vector, bit 0 first. It is the golden model's form of a SACK
// bitmap: bit i stands for PSN base+i of whatever base the bitmap is aligned to.
type Bitmap struct {
	n int
	w []uint64
}

// NewBitmap returns an all-zero bitmap of n bits.
func NewBitmap(n int) Bitmap { return Bitmap{n: n, w: make([]uint64, (n+63)/64)} }

// Len is the width in bits.
func (b Bitmap) Len() int { return b.n }

// Clone returns an independent copy.
func (b Bitmap) Clone() Bitmap {
	c := Bitmap{n: b.n, w: make([]uint64, len(b.w))}
	copy(c.w, b.w)
	return c
}

// Get returns bit i.
func (b Bitmap) Get(i int) bool { return b.w[i>>6]>>(uint(i)&63)&1 == 1 }

// Set sets bit i.
func (b Bitmap) Set(i int) { b.w[i>>6] |= 1 << (uint(i) & 63) }

// Clear zeroes every bit.
func (b Bitmap) Clear() {
	for i := range b.w {
		b.w[i] = 0
	}
}

// IsZero reports whether no bit is set.
func (b Bitmap) IsZero() bool {
	for _, x := range b.w {
		if x != 0 {
			return false
		}
	}
	return true
}

// Count is the number of set bits.
func (b Bitmap) Count() int {
	c := 0
	for _, x := range b.w {
		c += bits.OnesCount64(x)
	}
	return c
}

// ShiftDown shifts every bit k places toward bit 0 (bit i+k becomes bit i); zeroes enter at the
// top. k ≥ Len() clears the bitmap.
func (b Bitmap) ShiftDown(k int) {
	if k <= 0 {
		return
	}
	if k >= b.n {
		b.Clear()
		return
	}
	ws, bs := k>>6, uint(k&63)
	for i := range b.w {
		var v uint64
		if i+ws < len(b.w) {
			v = b.w[i+ws] >> bs
			if bs != 0 && i+ws+1 < len(b.w) {
				v |= b.w[i+ws+1] << (64 - bs)
			}
		}
		b.w[i] = v
	}
}

// TrailingOnes is the number of consecutive set bits from bit 0 (Len() when all are set).
func (b Bitmap) TrailingOnes() int {
	n := 0
	for _, x := range b.w {
		t := bits.TrailingZeros64(^x)
		n += t
		if t < 64 {
			break
		}
	}
	if n > b.n {
		n = b.n
	}
	return n
}

// Highest is the index of the highest set bit, or -1.
func (b Bitmap) Highest() int {
	for i := len(b.w) - 1; i >= 0; i-- {
		if b.w[i] != 0 {
			return i*64 + 63 - bits.LeadingZeros64(b.w[i])
		}
	}
	return -1
}

// Or sets every bit that is set in o (same width).
func (b Bitmap) Or(o Bitmap) {
	for i := range b.w {
		b.w[i] |= o.w[i]
	}
}

// AndNot clears every bit that is set in o (same width).
func (b Bitmap) AndNot(o Bitmap) {
	for i := range b.w {
		b.w[i] &^= o.w[i]
	}
}

// ClearFrom clears bits i ≥ k.
func (b Bitmap) ClearFrom(k int) { b.clearRange(k, b.n) }

// ClearBelow clears bits i < k.
func (b Bitmap) ClearBelow(k int) { b.clearRange(0, k) }

// clearRange clears bits lo ≤ i < hi (clipped to the bitmap).
func (b Bitmap) clearRange(lo, hi int) {
	lo, hi = max(lo, 0), min(hi, b.n)
	for i := lo; i < hi; {
		w, bit := i>>6, uint(i&63)
		n := min(64-int(bit), hi-i)
		mask := ^uint64(0) >> (64 - uint(n)) << bit
		b.w[w] &^= mask
		i += n
	}
}

// Invert flips every bit of the bitmap (bits above Len() stay clear).
func (b Bitmap) Invert() {
	for i := range b.w {
		b.w[i] = ^b.w[i]
	}
	if r := b.n % 64; r != 0 {
		b.w[len(b.w)-1] &= 1<<uint(r) - 1
	}
}

// Equal reports bit-for-bit equality.
func (b Bitmap) Equal(o Bitmap) bool {
	if b.n != o.n {
		return false
	}
	for i := range b.w {
		if b.w[i] != o.w[i] {
			return false
		}
	}
	return true
}

// Words32 returns the bitmap as little-endian 32-bit words (word 0 = bits 31..0), the packing
// of the Verilated model's ports.
func (b Bitmap) Words32() []uint32 {
	out := make([]uint32, (b.n+31)/32)
	b.PutWords32(out)
	return out
}

// PutWords32 writes the bitmap into dst as Words32 would, without allocating.
func (b Bitmap) PutWords32(dst []uint32) {
	for i := range dst {
		if i/2 < len(b.w) {
			dst[i] = uint32(b.w[i/2] >> (32 * uint(i%2)))
		} else {
			dst[i] = 0
		}
	}
}

// EqualWords32 reports whether the bitmap equals a Words32 vector, without allocating.
func (b Bitmap) EqualWords32(words []uint32) bool {
	for i, x := range words {
		var want uint32
		if i/2 < len(b.w) {
			want = uint32(b.w[i/2] >> (32 * uint(i%2)))
		}
		if x != want {
			return false
		}
	}
	return true
}

// BitmapFromWords32 is the inverse of Words32.
func BitmapFromWords32(n int, words []uint32) Bitmap {
	b := NewBitmap(n)
	for i, x := range words {
		if i/2 < len(b.w) {
			b.w[i/2] |= uint64(x) << (32 * uint(i%2))
		}
	}
	if n%64 != 0 {
		b.w[len(b.w)-1] &= (1 << (uint(n) % 64)) - 1
	}
	return b
}

// String renders the bitmap as hex, most significant digit first, so diffs read like RTL.
func (b Bitmap) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d'h", b.n)
	for i := len(b.w) - 1; i >= 0; i-- {
		digits := 16
		if i == len(b.w)-1 && b.n%64 != 0 {
			digits = (b.n%64 + 3) / 4
		}
		fmt.Fprintf(&sb, "%0*x", digits, b.w[i])
		if i > 0 {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}
