package sender

// record is one data packet the sender keeps until it is acknowledged: the message and packet
// it carries, and its PSN on the path. It lives at slot PSN mod RecordDepth of its
// (connection, path) table.
type record struct {
	valid  bool
	gen    uint16 // counts the slot's allocations: a Ref to an earlier one is stale
	psn    uint32
	msg    msgRef
	idx    uint32 // packet index in the message
	sacked bool
	init   bool   // carries FlagPathInit
	retx   bool   // has been retransmitted
	queued bool   // waiting in the retransmit FIFO
	inNIC  bool   // a copy waits in a port queue (not on the wire yet)
	copied bool   // a copy went to other paths after a timeout of this one
	nakked bool   // refused by the receiver (NAK): its acknowledgement is not progress
	sentAt uint32 // when its latest copy left the NIC (ns mod 2^32)
}

// Ref names a packet record: what the retransmit FIFO holds and what Left is told. It is stale
// once the record is acknowledged, moved or forgotten (the slot's generation moved on).
type Ref struct {
	Conn, Path, Slot int
	Gen              uint16
}

// pathRecords is one (connection, path)'s record table of RecordDepth slots. The Go storage is
// paged, each page allocated when a record first lands in it (a NIC of thousands of mostly idle
// connections stays small); the table and its generations are the same as a flat one's.
type pathRecords struct {
	pages [][]record // RecordDepth/pageSize pages, nil until used
	page  int        // slots per page
	live  int        // valid records
}

// recordPage is the number of slots per storage page (at most RecordDepth).
const recordPage = 64

func newPathRecords(depth int) pathRecords {
	page := min(recordPage, depth)
	return pathRecords{pages: make([][]record, depth/page), page: page}
}

// slot is slot i, or nil when its page was never used (no record was ever there).
func (t *pathRecords) slot(i int) *record {
	pg := t.pages[i/t.page]
	if pg == nil {
		return nil
	}
	return &pg[i%t.page]
}

// recs is the record table of (conn, path) (allocated with the connection).
func (s *Sender) recs(cn *conn, path int) *pathRecords { return &cn.recs[path] }

// lookup is the live record of PSN p on the path, or nil.
func (t *pathRecords) lookup(p uint32) *record {
	r := t.slot(int(p) & (len(t.pages)*t.page - 1))
	if r == nil || !r.valid || r.psn != p {
		return nil
	}
	return r
}

// insert allocates the record of PSN p. The slot of a live record of another PSN is never
// asked for: a path's live PSNs span less than RecordDepth (package doc, "Tables").
func (t *pathRecords) insert(p uint32) (*record, int) {
	i := int(p) & (len(t.pages)*t.page - 1)
	if t.pages[i/t.page] == nil {
		t.pages[i/t.page] = make([]record, t.page)
	}
	r := t.slot(i)
	switch {
	case r.valid && r.psn != p:
		panic("sender: packet record table overflow (a path's live PSNs span RecordDepth or more)")
	case !r.valid:
		t.live++
	}
	*r = record{valid: true, gen: r.gen + 1, psn: p}
	return r, i
}

// remove frees a live record.
func (t *pathRecords) remove(r *record) {
	r.valid = false
	t.live--
}

// clear frees every record of the path.
func (t *pathRecords) clear() {
	for _, pg := range t.pages {
		for i := range pg {
			pg[i].valid = false
		}
	}
	t.live = 0
}

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
	return Ref{Conn: conn, Path: path, Slot: int(r.psn) & (s.recDepth - 1), Gen: r.gen}
}
