package sender

import "github.com/mrgen/mrgen/golden/window"

// Counters count the sender's decisions.
type Counters struct {
	DataSent, MovedSent, Retransmissions uint64 // packets: first copies and moved copies (DataSent counts both), retransmissions
	Blocked                              [window.ReasonNoPath + 1]uint64
	Announces                            uint64
	Acks, AcksOnFailedPath, ECNEchoes    uint64
	SackLosses, TimeLosses, TailProbes   uint64
	Timeouts, PathsSuspect, PathsFailed  uint64
	PathsProbed, RTORetransmissions      uint64
	RTOCopies, Moved                     uint64
	Naks, MessagesFailed                 uint64
	RNRRetries                           uint64 // RNR retries that queued their packet for retransmission
	QueueFull                            uint64 // PostWork refusals (a full work-request ring; host backpressure, not reported by Named)
	RetxOverflows, MovedOverflows        uint64 // requests dropped by a full FIFO
	RetryOverflows                       uint64
	StaleDropped                         uint64 // copies of packets whose message slot was reposted
	BlockedRecords                       uint64 // connections blocked by a path's full record table
}

// Named lists the non-zero counters under the names golden/transport reports.
func (c Counters) Named() map[string]uint64 {
	out := map[string]uint64{}
	add := func(name string, v uint64) {
		if v != 0 {
			out[name] = v
		}
	}
	add("data_sent", c.DataSent)
	add("moved_sent", c.MovedSent)
	add("retransmissions", c.Retransmissions)
	for r, v := range c.Blocked {
		add("blocked_"+window.Reason(r).String(), v)
	}
	add("announces_sent", c.Announces)
	add("acks_received", c.Acks)
	add("acks_on_failed_path", c.AcksOnFailedPath)
	add("ecn_echoes", c.ECNEchoes)
	add("sack_losses", c.SackLosses)
	add("time_losses", c.TimeLosses)
	add("tail_probes", c.TailProbes)
	add("timeouts", c.Timeouts)
	add("paths_suspect", c.PathsSuspect)
	add("paths_failed", c.PathsFailed)
	add("paths_probed", c.PathsProbed)
	add("rto_retransmissions", c.RTORetransmissions)
	add("rto_copies", c.RTOCopies)
	add("moved", c.Moved)
	add("naks_received", c.Naks)
	add("messages_failed", c.MessagesFailed)
	add("rnr_retries", c.RNRRetries)
	add("retx_overflows", c.RetxOverflows)
	add("moved_overflows", c.MovedOverflows)
	add("retry_overflows", c.RetryOverflows)
	add("stale_dropped", c.StaleDropped)
	add("blocked_records", c.BlockedRecords)
	return out
}
