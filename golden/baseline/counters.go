package baseline

import "github.com/mrgen/mrgen/golden/traffic"

// Counters are one NIC's protocol counters.
type Counters struct {
	DataPackets     uint64 // data packets sent, first copies and retransmissions
	Retransmissions uint64 // data packets sent again (go-back-N)
	Timeouts        uint64 // local ACK timeouts that rewound a QP (or failed it)
	NAKsSent        uint64 // sequence-error NAKs sent by the responder
	NAKsReceived    uint64
	ACKsSent        uint64
	ACKsReceived    uint64
	StaleAcks       uint64 // ACKs/NAKs behind una or beyond anything sent, ignored
	CNPsSent        uint64 // by the notification point
	CNPsReceived    uint64 // by the reaction point
	RateDecreases   uint64
	RateIncreases   uint64 // timer and byte-counter steps
	RetryExceeded   uint64 // QPs moved to the error state
	MessagesFlushed uint64 // messages lost to a QP in error
	OOODropped      uint64 // data packets ahead of the expected PSN, dropped
	Duplicates      uint64 // data packets behind the expected PSN, re-ACKed
	Rejected        uint64 // Submit calls that could not be posted
	VerifyFailures  uint64 // completions the ledger rejected
	OpcodeErrors    uint64 // in-order packets out of the FIRST/MIDDLE/LAST sequence
	LengthErrors    uint64 // Writes whose placed length differs from the RETH length
	UnknownPackets  uint64 // frames of no QP or of no known kind
}

// Map is the counters by name.
func (c Counters) Map() map[string]uint64 {
	return map[string]uint64{
		"data_packets": c.DataPackets, "retransmissions": c.Retransmissions, "timeouts": c.Timeouts,
		"naks_sent": c.NAKsSent, "naks_received": c.NAKsReceived, "acks_sent": c.ACKsSent,
		"acks_received": c.ACKsReceived, "stale_acks": c.StaleAcks, "cnps_sent": c.CNPsSent,
		"cnps_received": c.CNPsReceived, "rate_decreases": c.RateDecreases,
		"rate_increases": c.RateIncreases, "retry_exceeded": c.RetryExceeded,
		"messages_flushed": c.MessagesFlushed, "ooo_dropped": c.OOODropped,
		"duplicates": c.Duplicates, "rejected": c.Rejected, "verify_failures": c.VerifyFailures,
		"opcode_errors": c.OpcodeErrors, "length_errors": c.LengthErrors,
		"unknown_packets": c.UnknownPackets,
	}
}

// Counters is the NIC's counters by name (traffic.Host).
func (n *NIC) Counters() map[string]uint64 { return n.cnt.Map() }

// Stats is the NIC's counters.
func (n *NIC) Stats() Counters { return n.cnt }

// Sum adds up the counters of hosts by name.
func Sum(hosts []traffic.Host) map[string]uint64 {
	out := map[string]uint64{}
	for _, h := range hosts {
		for k, v := range h.Counters() {
			out[k] += v
		}
	}
	return out
}
