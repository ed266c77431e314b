package placement

// Free forgets every page that lies entirely inside [addr, addr+n): they read as 0 again. Long
// simulations free a buffer once its message has been verified, so memory stays bounded.
func (m *HostMemory) Free(addr uint64, n uint64) {
	first := (addr + PageSize - 1) / PageSize
	end := (addr + n) / PageSize
	for pg := first; pg < end; pg++ {
		delete(m.pages, pg)
	}
}
