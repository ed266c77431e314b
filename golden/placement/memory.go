package placement

import (
	"fmt"
	"slices"
)

// PageSize is the granule of HostMemory's sparse storage.
const PageSize = 4096

// HostMemory is a sparse byte-addressed model of host memory: 2^64 bytes, all 0 until written.
// Cosim applies the RTL's DMA commands to one and the golden engine's to another and compares
// them byte for byte with Diff.
type HostMemory struct {
	pages map[uint64]*[PageSize]byte // key: address / PageSize
}

// NewHostMemory returns an all-zero memory.
func NewHostMemory() *HostMemory {
	return &HostMemory{pages: make(map[uint64]*[PageSize]byte)}
}

// Write stores data at addr. Bytes past 2^64 − 1 wrap to address 0 (placement never issues
// such a write).
func (m *HostMemory) Write(addr uint64, data []byte) {
	for len(data) > 0 {
		pg, off := addr/PageSize, addr%PageSize
		p := m.pages[pg]
		if p == nil {
			p = new([PageSize]byte)
			m.pages[pg] = p
		}
		c := copy(p[off:], data)
		data = data[c:]
		addr += uint64(c)
	}
}

// Apply performs one DMA command; nil does nothing.
func (m *HostMemory) Apply(w *DMAWrite) {
	if w != nil {
		m.Write(w.Addr, w.Data)
	}
}

// Read returns n bytes from addr (never-written bytes read 0).
func (m *HostMemory) Read(addr uint64, n int) []byte {
	out := make([]byte, n)
	for i := 0; i < n; {
		pg, off := addr/PageSize, addr%PageSize
		c := min(n-i, int(PageSize-off))
		if p := m.pages[pg]; p != nil {
			copy(out[i:i+c], p[off:])
		}
		i += c
		addr += uint64(c)
	}
	return out
}

// Pages lists the page numbers (address / PageSize) that have been written, in order.
func (m *HostMemory) Pages() []uint64 {
	ks := make([]uint64, 0, len(m.pages))
	for k := range m.pages {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Diff compares two memories byte for byte (an unwritten page equals an all-zero one) and
// returns "" when equal, else the lowest differing address and the two bytes there.
func (m *HostMemory) Diff(o *HostMemory) string {
	var zero [PageSize]byte
	keys := append(m.Pages(), o.Pages()...)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		a, b := m.pages[k], o.pages[k]
		if a == nil {
			a = &zero
		}
		if b == nil {
			b = &zero
		}
		if *a == *b {
			continue
		}
		for i := range a {
			if a[i] != b[i] {
				return fmt.Sprintf("address 0x%016x: 0x%02x vs 0x%02x", k*PageSize+uint64(i), a[i], b[i])
			}
		}
	}
	return ""
}
