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

// pathRecords is one (connection, path)'s record table.
type pathRecords struct {
	slots []record
	live  int // valid records
}

// recs is the record table of (conn, path) (allocated with the connection).
func (s *Sender) recs(cn *conn, path int) *pathRecords { return &cn.recs[path] }

// lookup is the live record of PSN p on the path, or nil.
func (t *pathRecords) lookup(p uint32) *record {
	r := &t.slots[int(p)&(len(t.slots)-1)]
	if !r.valid || r.psn != p {
		return nil
	}
	return r
}

// insert allocates the record of PSN p. The slot of a live record of another PSN is never
// asked for: a path's live PSNs span less than RecordDepth (package doc, "Tables").
func (t *pathRecords) insert(p uint32) (*record, int) {
	i := int(p) & (len(t.slots) - 1)
	r := &t.slots[i]
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
	for i := range t.slots {
		t.slots[i].valid = false
	}
	t.live = 0
}

// resolve is the record ref names, or nil when it is stale.
func (s *Sender) resolve(ref Ref) *record {
	cn := &s.conns[ref.Conn]
	if cn.recs == nil {
		return nil
	}
	r := &cn.recs[ref.Path].slots[ref.Slot]
	if !r.valid || r.gen != ref.Gen {
		return nil
	}
	return r
}

// refOf is the Ref of a live record of (conn, path).
func (s *Sender) refOf(conn, path int, r *record) Ref {
	return Ref{Conn: conn, Path: path, Slot: int(r.psn) & (s.recDepth - 1), Gen: r.gen}
}
