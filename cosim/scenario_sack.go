package cosim

import (
	"fmt"
	"sort"
	"strings"
)

// sackKnobs shape the traffic of a SACK-unit scenario. Probabilities are per event.
type sackKnobs struct {
	Loss      float64 // a data packet is lost before the receiver
	BurstLoss float64 // a burst of 2..16 consecutive packets of one path is lost
	Reorder   int     // packets held back and released in random order (0: in order)
	Dup       float64 // a delivered packet is delivered twice
	Beyond    float64 // a PSN beyond the receive window is injected
	Old       float64 // a PSN below the cumulative point is injected
	Edge      float64 // PSNs exactly at the last in-window slot and one past it are injected
	Hot       float64 // the next packet goes to the same (connection, path) as the last
	OneEntry  bool    // all traffic on one (connection, path)
	// LineRate offers receive-side operations at the configuration's line rate: one per port
	// per minimum-frame time (hdl.MinFrameBeats of the datapath width), each port's all to one
	// (connection, path), the ports' in turn. The block must take every one the cycle it is
	// offered (RunSack counts the cycles it does not: Counts["rx_stall_cycles"]).
	LineRate   bool
	ports      int     // LineRate: the ports (configuration's ports), one entry each
	interval   int     // LineRate: cycles per minimum frame
	AckReq     float64 // a packet carries the ACK-request flag
	AckLoss    float64 // an ACK is lost before the send side
	AckDelay   float64 // an ACK is delayed behind later ones (it arrives stale or duplicate)
	AckDup     float64 // an ACK is delivered twice
	AckInvalid float64 // a corrupt ACK (beyond nxt, bit 0 set, or claiming unsent PSNs) is injected
	InValid    float64 // an input is offered in a given cycle (1: every cycle)
	OutReady   float64 // the output is ready in a given cycle (1: always)
	ResetEvery int     // cycles between resets in the middle of traffic (0: never)
	NearWrap   bool    // paths start a few hundred PSNs before the PSN space wraps
	PathInit   float64 // the path restarts its PSN sequence with a packet flagged path-init
	StaleInit  float64 // a stale path-init copy (a PSN behind cum with the flag) is injected
	Peek       float64 // a data packet is peeked (s_pkt_peek) right before it is offered
	Refuse     float64 // after a peek, the packet is not offered (refused: lost to the path)
}

// sackScenarios are the named scenarios of `mrgen cosim --block sack`. "random" mixes every
// condition; the others are the directed cases of the verification plan.
var sackScenarios = map[string]sackKnobs{
	"random": {Loss: 0.02, BurstLoss: 0.003, Reorder: 4, Dup: 0.02, Beyond: 0.004, Old: 0.004, Edge: 0.002,
		Hot: 0.3, AckReq: 0.05, AckLoss: 0.1, AckDelay: 0.05, AckDup: 0.03, AckInvalid: 0.004,
		InValid: 0.9, OutReady: 0.8, ResetEvery: 100_000, NearWrap: true, PathInit: 0.002, StaleInit: 0.002,
		Peek: 0.2, Refuse: 0.05},
	"in-order":    {InValid: 1, OutReady: 1},
	"single-loss": {Loss: 0.01, InValid: 1, OutReady: 1},
	"burst-loss":  {BurstLoss: 0.01, InValid: 1, OutReady: 1},
	"reorder":     {Reorder: 16, InValid: 1, OutReady: 1},
	"duplicates":  {Dup: 0.1, InValid: 1, OutReady: 1},
	"window-edge": {Edge: 0.05, Beyond: 0.02, Old: 0.02, Loss: 0.01, InValid: 1, OutReady: 1},
	"wraparound":  {NearWrap: true, Loss: 0.02, Reorder: 4, InValid: 1, OutReady: 1},
	"back-to-back": {OneEntry: true, Loss: 0.005, Dup: 0.005, AckDelay: 0.05, AckDup: 0.05, AckInvalid: 0.005,
		InValid: 1, OutReady: 1},
	"line-rate":    {LineRate: true, Loss: 0.005, InValid: 1, OutReady: 1},
	"all-paths":    {Loss: 0.01, Reorder: 2, InValid: 1, OutReady: 1},
	"reset":        {Loss: 0.02, Reorder: 4, ResetEvery: 5_000, InValid: 0.95, OutReady: 0.9, NearWrap: true},
	"ack-loss":     {Loss: 0.02, AckLoss: 0.5, AckDelay: 0.1, AckDup: 0.1, AckInvalid: 0.01, InValid: 1, OutReady: 1},
	"backpressure": {Loss: 0.02, Reorder: 4, Dup: 0.02, InValid: 0.6, OutReady: 0.5},
	// Paths restart their sequences all the time: fresh inits (in sequence, ahead, beyond the
	// window, at cum), stale copies, resent INIT packets, most of them back to back on one
	// entry (hot paths, no reordering), with loss, duplicates and a little backpressure.
	// nic_rx's order: every packet is peeked, then committed, back to back on the entry (hot
	// paths), and some are refused after the peek (placement's receiver-not-ready).
	"peek": {Peek: 1, Refuse: 0.03, Loss: 0.01, Dup: 0.02, Reorder: 2, Hot: 0.6, PathInit: 0.01, StaleInit: 0.005,
		AckReq: 0.05, InValid: 1, OutReady: 0.95, NearWrap: true},
	"path-init": {PathInit: 0.03, StaleInit: 0.02, Loss: 0.02, Dup: 0.02, Hot: 0.6, AckReq: 0.05, AckLoss: 0.1,
		InValid: 1, OutReady: 0.95, NearWrap: true},
}

// SackScenarios lists the scenario names, sorted.
func SackScenarios() []string {
	out := make([]string, 0, len(sackScenarios))
	for n := range sackScenarios {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func sackScenario(name string) (sackKnobs, error) {
	k, ok := sackScenarios[name]
	if !ok {
		return sackKnobs{}, fmt.Errorf("unknown sack scenario %q; scenarios: %s", name, strings.Join(SackScenarios(), ", "))
	}
	return k, nil
}

// offers reports whether the receive side may be offered a new operation in this cycle: always,
// but at line rate only as many as the ports' minimum frames that have begun by then
// (ports per interval cycles, evenly spread).
func (k sackKnobs) offers(cycle uint64) bool {
	if !k.LineRate {
		return true
	}
	p, n := uint64(k.ports), uint64(k.interval)
	return (cycle+1)*p/n > cycle*p/n
}
