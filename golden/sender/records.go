package sender

// record is one data packet the sender keeps until it is acknowledged: the message and packet
// it carries, and its PSN on the path. It lives at slot PSN mod RecordDepth of its
// (connection, path) table.
type record struct {
	valid   bool
	gen     uint16 // counts the slot's allocations: a Ref to an earlier one is stale
	psn     uint32
	msg     msgRef
	idx     uint32 // packet index in the message
	sacked  bool
	init    bool   // carries FlagPathInit
	retx    bool   // has been retransmitted
	queued  bool   // waiting in the retransmit FIFO
	inNIC   bool   // a copy waits in a port queue (not on the wire yet)
	copied  bool   // a copy went to other paths after a timeout of this one
	nakked  bool   // refused by the receiver (NAK): its acknowledgement is not progress
	waiting bool   // refused receiver-not-ready: queued, its RNR retry not yet due
	sentAt  uint32 // when its latest copy left the NIC (ns mod 2^32)
}

// Ref names a packet record: what the retransmit FIFO holds and what Left is told. It is stale
// once the record is acknowledged, moved or forgotten (the slot's generation moved on).
type Ref struct {
	Conn, Path, Slot int
	Gen              uint16
}

// pathRecords is one (connection, path)'s record table of RecordDepth slots. The Go storage is
// paged: a page is allocated when a record lands in it and dropped when its last record is
// freed, so that a NIC of thousands of connections holds about what it has in flight; the
// slots' generations are kept apart, for every slot, so the table behaves as a flat one.
type pathRecords struct {
	gens     []uint16   // per slot (allocated with the first record)
	pages    [][]record // RecordDepth/page pages, nil while no record is in them
	pageLive []int      // valid records per page
	spare    []record   // an emptied page kept for the next one needed (no records valid in it)
	page     int        // slots per page
	live     int        // valid records
	peak     int        // the most valid records it has held (Occupancy)
}

// recordPage is the number of slots per storage page (at most RecordDepth).
const recordPage = 64

func newPathRecords(depth int) pathRecords {
	page := min(recordPage, depth)
	return pathRecords{pages: make([][]record, depth/page), pageLive: make([]int, depth/page), page: page}
}

func (t *pathRecords) mask() int { return len(t.pages)*t.page - 1 }

// slot is slot i, or nil when its page holds no record.
func (t *pathRecords) slot(i int) *record {
	pg := t.pages[i/t.page]
	if pg == nil {
		return nil
	}
	return &pg[i%t.page]
}

// lookup is the live record of PSN p on the path, or nil.
func (t *pathRecords) lookup(p uint32) *record {
	r := t.slot(int(p) & t.mask())
	if r == nil || !r.valid || r.psn != p {
		return nil
	}
	return r
}

// insert allocates the record of PSN p. The slot of a live record of another PSN is never
// asked for: a path's live PSNs span less than RecordDepth (package doc, "Tables").
func (t *pathRecords) insert(p uint32) *record {
	i := int(p) & t.mask()
	if t.gens == nil {
		t.gens = make([]uint16, t.mask()+1)
	}
	pg := i / t.page
	if t.pages[pg] == nil {
		t.pages[pg], t.spare = t.spare, nil
		if t.pages[pg] == nil {
			t.pages[pg] = make([]record, t.page)
		}
	}
	r := t.slot(i)
	switch {
	case r.valid && r.psn != p:
		panic("sender: packet record table overflow (a path's live PSNs span RecordDepth or more)")
	case !r.valid:
		t.live++
		t.pageLive[pg]++
		t.peak = max(t.peak, t.live)
	}
	t.gens[i]++
	*r = record{valid: true, gen: t.gens[i], psn: p}
	return r
}

// remove frees a live record (r stays readable until the caller is done with it).
func (t *pathRecords) remove(r *record) {
	r.valid = false
	t.live--
	pg := int(r.psn) & t.mask() / t.page
	if t.pageLive[pg]--; t.pageLive[pg] == 0 {
		t.drop(pg)
	}
}

// clear frees every record of the path.
func (t *pathRecords) clear() {
	for pg := range t.pages {
		if t.pages[pg] != nil {
			for i := range t.pages[pg] {
				t.pages[pg][i].valid = false
			}
			t.drop(pg)
		}
		t.pageLive[pg] = 0
	}
	t.live = 0
}

// drop releases page pg, which holds no valid record, keeping it as the spare.
func (t *pathRecords) drop(pg int) {
	if t.spare == nil {
		t.spare = t.pages[pg]
	}
	t.pages[pg] = nil
}

// recordsFull reports whether one of cn's paths holds RecordDepth live records: its next PSN's
// slot may be taken, so the connection sends no new or moved packet (whichever path the window
// would pick). A path's live records are exactly the PSNs of [una, nxt) while it is not Failed,
// and none once it is, so the gate keeps every path's span below RecordDepth.
func recordsFull(cn *conn) bool {
	for k := range cn.recs {
		if cn.recs[k].full() {
			return true
		}
	}
	return false
}

// full reports whether every slot of the table holds a live record.
func (t *pathRecords) full() bool { return t.live > t.mask() }

// resolve is the record ref names, or nil when it is stale.
func (s *Sender) resolve(ref Ref) *record {
	cn := &s.conns[ref.Conn]
	if cn.recs == nil {
		return nil
	}
	r := cn.recs[ref.Path].slot(ref.Slot)
	if r == nil || !r.valid || r.gen != ref.Gen {
		return nil
	}
	return r
}

// refOf is the Ref of a live record of (conn, path).
func (s *Sender) refOf(conn, path int, r *record) Ref {
	return Ref{Conn: conn, Path: path, Slot: int(r.psn) & s.conns[conn].recs[path].mask(), Gen: r.gen}
}
