package cosim

import (
	"fmt"
	"sort"
	"strings"
)

// plKnobs shape the traffic of a placement-engine scenario. Probabilities are per event.
type plKnobs struct {
	Reorder   int     // packets of all messages and streams held and delivered in random order
	Dup       float64 // a delivered packet is delivered again later
	Violation float64 // a message breaks a rule: bad rkey index or tag, wrong connection, no
	// write access, out of bounds, too long, receive too small, segmentation, inconsistency
	Invalid    float64 // a descriptor the parser should have refused is injected
	BadCtl     float64 // a control operation golden refuses is injected
	PostLag    float64 // a due post is held back in a given cycle (receiver not ready)
	Ahead      int     // messages a sender may start beyond D past the stream's completion point
	Churn      float64 // a connection's writable region is deregistered and registered again
	MaxPackets int     // largest regular WRITE in packets (SENDs: at most 2)
	Streams    int     // active streams (0: all)
	InValid    float64 // an input is offered in a given cycle
	OutReady   float64 // an output is ready in a given cycle
	CplReady   float64 // m_cpl is ready in a given cycle (0: OutReady)
	ResetEvery int     // cycles between resets in the middle of traffic (0: never)
	MSNWrap    int     // > 0: after each reset every active stream's MSN is set to 2^32 − 1..MSNWrap
	Resequence float64 // an idle stream's MSN is set again (2^32 − 1..MSNWrap) when planning a post
	GenWrap    int     // > 0: after each reset every region entry's generation is restored to
	// 2^TagBits − 1..GenWrap, so that registrations wrap the rkey tag
}

// plScenarios are the named scenarios of `mrgen cosim --block placement`. "random" mixes every
// condition; the others are directed cases.
var plScenarios = map[string]plKnobs{
	"random": {Reorder: 24, Dup: 0.03, Violation: 0.03, Invalid: 0.002, BadCtl: 0.002, PostLag: 0.3, Ahead: 1,
		Churn: 0.0005, MaxPackets: 4, InValid: 0.9, OutReady: 0.8, ResetEvery: 300_000},
	"in-order":         {MaxPackets: 4, InValid: 1, OutReady: 1},
	"reorder":          {Reorder: 64, MaxPackets: 4, Ahead: 1, InValid: 1, OutReady: 1},
	"duplicates":       {Reorder: 8, Dup: 0.2, MaxPackets: 4, InValid: 1, OutReady: 1},
	"violations":       {Reorder: 8, Violation: 0.3, Invalid: 0.01, BadCtl: 0.01, Churn: 0.005, MaxPackets: 4, InValid: 1, OutReady: 1},
	"missing-receives": {Reorder: 8, PostLag: 0.95, Ahead: 4, MaxPackets: 3, InValid: 1, OutReady: 1},
	"back-to-back":     {Streams: 1, MaxPackets: 16, InValid: 1, OutReady: 1},
	"long-messages":    {Reorder: 16, MaxPackets: 64, Dup: 0.01, InValid: 1, OutReady: 1},
	"backpressure":     {Reorder: 8, Dup: 0.02, Violation: 0.02, PostLag: 0.3, MaxPackets: 3, InValid: 0.6, OutReady: 0.5},
	"reset":            {Reorder: 8, Dup: 0.02, Violation: 0.02, PostLag: 0.3, MaxPackets: 3, InValid: 0.95, OutReady: 0.9, ResetEvery: 5_000},
	// The wraps: MSNs across 2^32 (set near it after every reset and again on idle streams, with
	// reordering, duplicates and stale packets around the wrap) and rkey tags across 2^TagBits
	// (generations restored near it, regions churned so that they are registered many times).
	"msn-wrap": {Reorder: 16, Dup: 0.03, Violation: 0.02, PostLag: 0.3, Ahead: 1, MaxPackets: 4, InValid: 0.95,
		OutReady: 0.7, ResetEvery: 40_000, MSNWrap: 300, Resequence: 0.02},
	// m_cpl alone is slow: the walker falls behind and in_q waits for it (cpl_hold).
	"cpl-backpressure": {Reorder: 16, Dup: 0.02, MaxPackets: 2, InValid: 1, OutReady: 1, CplReady: 0.15},
	"tag-wrap": {Reorder: 8, Dup: 0.02, Violation: 0.1, Churn: 0.05, MaxPackets: 3, InValid: 1, OutReady: 1,
		ResetEvery: 100_000, GenWrap: 4},
}

// PlacementScenarios lists the scenario names, sorted.
func PlacementScenarios() []string {
	out := make([]string, 0, len(plScenarios))
	for n := range plScenarios {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func plScenario(name string) (plKnobs, error) {
	k, ok := plScenarios[name]
	if !ok {
		return plKnobs{}, fmt.Errorf("unknown placement scenario %q; scenarios: %s", name, strings.Join(PlacementScenarios(), ", "))
	}
	return k, nil
}
