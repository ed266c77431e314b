// Package psn is serial-number arithmetic (RFC 1982) on packet sequence numbers of a configured
// width (8..32 bits). Every PSN comparison in golden/ and in the generated RTL follows these
// rules, so wraparound behaves identically in both: a is "before" b when the forward distance
// from a to b is in 1..2^(bits-1)-1.
package psn

import "fmt"

// Space is the PSN space of one configuration.
type Space struct {
	bits uint
	mask uint32
}

// NewSpace returns the PSN space of the given width.
func NewSpace(bits int) (Space, error) {
	if bits < 2 || bits > 32 {
		return Space{}, fmt.Errorf("psn: width %d out of range 2..32", bits)
	}
	return Space{bits: uint(bits), mask: uint32((uint64(1) << bits) - 1)}, nil
}

// MustSpace is NewSpace for widths already validated by the configuration.
func MustSpace(bits int) Space {
	s, err := NewSpace(bits)
	if err != nil {
		panic(err)
	}
	return s
}

// Bits is the width of the space.
func (s Space) Bits() int { return int(s.bits) }

// Mask is 2^bits - 1.
func (s Space) Mask() uint32 { return s.mask }

// Wrap reduces x into the space.
func (s Space) Wrap(x uint32) uint32 { return x & s.mask }

// Add returns a+n in the space.
func (s Space) Add(a, n uint32) uint32 { return (a + n) & s.mask }

// Dist is the forward distance from a to b: (b - a) mod 2^bits.
func (s Space) Dist(a, b uint32) uint32 { return (b - a) & s.mask }

// Negative reports whether a distance is "backwards", i.e. its top bit is set.
func (s Space) Negative(d uint32) bool { return d>>(s.bits-1)&1 == 1 }

// Before reports a < b in serial order.
func (s Space) Before(a, b uint32) bool {
	d := s.Dist(a, b)
	return d != 0 && !s.Negative(d)
}
