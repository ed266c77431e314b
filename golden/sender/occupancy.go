package sender

// Occupancy is the most each bounded table has held since the unit was made: what a memory
// sizing rule must cover (docs/sender.md, "Memory sizing"). It is an observation of the model,
// not state: no rule reads it.
type Occupancy struct {
	RecordsPerPath int // live packet records of one (connection, path); the table holds RecordDepth
	RetxFIFO       int // the retransmit FIFO; it holds RetxDepth
	RetryFIFO      int // the RNR retry FIFO; it holds RetryDepth
	MovedFIFO      int // one connection's moved FIFO; each holds MovedDepth
	// RingAge is the most messages posted on a stream since (and including) one that a packet
	// resent, moved or acknowledged still referred to: its slot must not have been reposted, so
	// a ring of WorkDepth ≥ RingAge resolves every reference.
	RingAge int
}

// Occupancy reports the peaks of the unit's bounded tables.
func (s *Sender) Occupancy() Occupancy {
	o := Occupancy{RetxFIFO: s.retx.peak, RetryFIFO: s.retries.peak}
	for c := range s.conns {
		cn := &s.conns[c]
		o.MovedFIFO = max(o.MovedFIFO, cn.moved.peak)
		o.RingAge = max(o.RingAge, int(cn.agePeak))
		for p := range cn.recs {
			o.RecordsPerPath = max(o.RecordsPerPath, cn.recs[p].peak)
		}
	}
	return o
}

// Max is the larger of o and b, table by table (the peaks over several units).
func (o Occupancy) Max(b Occupancy) Occupancy {
	return Occupancy{RecordsPerPath: max(o.RecordsPerPath, b.RecordsPerPath), RetxFIFO: max(o.RetxFIFO, b.RetxFIFO),
		RetryFIFO: max(o.RetryFIFO, b.RetryFIFO), MovedFIFO: max(o.MovedFIFO, b.MovedFIFO), RingAge: max(o.RingAge, b.RingAge)}
}

// Named is the occupancy as named figures (mrgen sim's "occupancy" object).
func (o Occupancy) Named() map[string]uint64 {
	return map[string]uint64{
		"records_per_path": uint64(o.RecordsPerPath), "retx_fifo": uint64(o.RetxFIFO),
		"rnr_retry_fifo": uint64(o.RetryFIFO), "moved_fifo": uint64(o.MovedFIFO), "ring_age": uint64(o.RingAge),
	}
}
