package config

import (
	"fmt"
	"math/bits"
	"strings"
)

// FieldError is one invalid configuration value: the field (its YAML path), the value found and
// what is allowed.
type FieldError struct {
	Field   string
	Value   string
	Allowed string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("config: field %s: value %s is invalid; allowed: %s", e.Field, e.Value, e.Allowed)
}

// Validate checks every field and every cross-field rule and returns the first violation as a
// *FieldError (fields in document order, then cross-field rules).
func (c Config) Validate() error {
	checks := []func() error{
		func() error {
			if c.Name == "" || len(c.Name) > 64 || strings.ContainsAny(c.Name, " \t\n\"'") {
				return &FieldError{"name", quote(c.Name), "1..64 characters without spaces or quotes"}
			}
			return nil
		},
		func() error { return oneOf("datapath_width", c.DatapathWidth, 64, 128, 256, 512) },
		func() error { return inRange("connections", c.Connections, 1, 4096) },
		func() error { return inRange("paths_per_connection", c.PathsPerConnection, 1, 256) },
		func() error {
			if err := inRange("sack_width", c.SackWidth, 64, 1024); err != nil {
				return err
			}
			if !isPow2(c.SackWidth) {
				return &FieldError{"sack_width", fmt.Sprint(c.SackWidth), "a power of two in 64..1024 (64, 128, 256, 512, 1024)"}
			}
			return nil
		},
		func() error { return inRange("psn_width", c.PSNWidth, 8, 32) },
		func() error { return inRange("streams_per_connection", c.StreamsPerConnection, 1, 256) },
		func() error { return inRange("memory_regions", c.MemoryRegions, 1, 65536) },
		func() error { return inRange("posted_receives_per_stream", c.PostedReceivesPerStream, 1, 1024) },
		func() error {
			if err := inRange("mtu", c.MTU, 256, 9000); err != nil {
				return err
			}
			if c.MTU%8 != 0 {
				return &FieldError{"mtu", fmt.Sprint(c.MTU), "a multiple of 8 in 256..9000"}
			}
			return nil
		},
		func() error {
			if c.UDPDestPort == 4791 {
				return &FieldError{"udp_dest_port", "4791", "1024..65535 except 4791 (RoCEv2's port)"}
			}
			return inRange("udp_dest_port", c.UDPDestPort, 1024, 65535)
		},
		func() error { return inRange("ports", c.Ports, 1, 8) },
		func() error {
			return oneOfString("reset_style", c.ResetStyle, ResetSyncHigh, ResetAsyncLow)
		},
		func() error { return inRange("target_clock_mhz", c.TargetClockMHz, 1, 1000) },
		func() error { return inRange("timing.asic_clock_mhz", c.Timing.ASICClockMHz, 1, 5000) },
		func() error { return inRange("timing.input_delay_pct", c.Timing.InputDelayPct, 0, 80) },
		func() error { return inRange("timing.output_delay_pct", c.Timing.OutputDelayPct, 0, 80) },
		func() error {
			// Both budgets together must leave the block some of the cycle for a port-to-port path.
			return inRange("timing.output_delay_pct", c.Timing.OutputDelayPct, 0, 90-c.Timing.InputDelayPct)
		},
		func() error {
			return oneOfString("ack_policy.mode", c.AckPolicy.Mode, AckEveryPacket, AckEveryN, AckOnGap)
		},
		func() error { return inRange("ack_policy.every_n", c.AckPolicy.EveryN, 1, 255) },
		func() error { return inRange("ack_policy.delay_ns", c.AckPolicy.DelayNS, 100, 1_000_000) },
		func() error { return inRange("ack_policy.gather_ns", c.AckPolicy.GatherNS, 100, 1_000_000) },
		func() error {
			return inRange("ack_policy.max_gather_ns", c.AckPolicy.MaxGatherNS, c.AckPolicy.GatherNS, 1_000_000)
		},
		func() error { return inRange("rate_hint.link_gbps", c.RateHint.LinkGbps, 1, 1600) },
		func() error { return inRange("rate_hint.window_ns", c.RateHint.WindowNS, 1000, 100_000_000) },
		func() error { return inRange("rate_hint.scan_ns", c.RateHint.ScanNS, 100, 100_000_000) },
		func() error {
			// An announced sender is counted before its data arrives: it must stay counted at
			// least until its answer leaves (the gather close, at most max_gather_ns later).
			if c.RateHint.Announce {
				return inRange("rate_hint.window_ns", c.RateHint.WindowNS, max(1000, c.AckPolicy.MaxGatherNS), 100_000_000)
			}
			return nil
		},
		func() error {
			return inRange("pipeline.tree_register_every", c.Pipeline.TreeRegisterEvery, 0, 10)
		},
		func() error { return depth("sender.retx_depth", c.Sender.RetxDepth) },
		func() error { return depth("sender.moved_depth", c.Sender.MovedDepth) },
		func() error { return depth("sender.rnr_retry_depth", c.Sender.RNRRetryDepth) },
		func() error { return recordsPerPath(c) },
		func() error { return inRange("window.init_cwnd", c.Window.InitCwnd, 1, 1024) },
		func() error { return inRange("window.min_cwnd", c.Window.MinCwnd, 1, 1024) },
		func() error { return inRange("window.max_cwnd", c.Window.MaxCwnd, 0, 1024) },
		func() error { return inRange("window.conn_max_cwnd", c.Window.ConnMaxCwnd, 0, 262144) },
		func() error { return inRange("window.ai_step", c.Window.AIStep, 1, 64) },
		func() error { return inRange("window.md_shift", c.Window.MDShift, 1, 8) },
		func() error { return inRange("window.conn_md_shift", c.Window.ConnMDShift, 1, 8) },
		func() error { return inRange("window.srtt_shift", c.Window.SRTTShift, 1, 8) },
		func() error { return inRange("window.rttvar_shift", c.Window.RTTVarShift, 1, 8) },
		func() error { return inRange("window.rto_min_ns", c.Window.RTOMinNS, 1000, 1_000_000_000) },
		func() error { return inRange("window.rto_initial_ns", c.Window.RTOInitialNS, 1000, 1_000_000_000) },
		func() error { return inRange("window.rto_max_ns", c.Window.RTOMaxNS, 1000, 1_000_000_000) },
		func() error { return inRange("window.suspect_timeouts", c.Window.SuspectTimeouts, 1, 14) },
		func() error { return inRange("window.failed_timeouts", c.Window.FailedTimeouts, 2, 15) },
		func() error {
			return inRange("window.probe_interval_ns", c.Window.ProbeIntervalNS, 1000, 1_000_000_000)
		},
		c.crossFieldRules,
		c.windowRules,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// crossFieldRules checks the rules that tie fields together.
func (c Config) crossFieldRules() error {
	d := c.Derived()
	// Serial-number arithmetic (RFC 1982) needs the window to be less than half the PSN space,
	// and one more bit so "beyond window" is distinguishable from "old".
	if c.SackWidth*2 > 1<<(c.PSNWidth-1) {
		return &FieldError{"psn_width", fmt.Sprint(c.PSNWidth),
			fmt.Sprintf("at least %d for sack_width %d (window must be under a quarter of the PSN space)",
				bits.Len(uint(c.SackWidth))+1, c.SackWidth)}
	}
	if d.PathTableDepth > 65536 {
		return &FieldError{"connections", fmt.Sprint(c.Connections),
			fmt.Sprintf("connections × paths_per_connection ≤ 65536 (path-table index is 16 bits); with %d paths at most %d",
				c.PathsPerConnection, 65536/c.PathsPerConnection)}
	}
	if d.PostedReceiveDepth > 1<<20 {
		return &FieldError{"posted_receives_per_stream", fmt.Sprint(c.PostedReceivesPerStream),
			"connections × streams_per_connection × posted_receives_per_stream ≤ 1048576"}
	}
	return nil
}

// windowRules checks the cross-field rules of the window section.
func (c Config) windowRules() error {
	w := c.Window
	if w.MaxCwnd > c.SackWidth {
		// More packets in flight on a path than the receiver's bitmap covers would land beyond
		// its window and be dropped.
		return &FieldError{"window.max_cwnd", fmt.Sprint(w.MaxCwnd),
			fmt.Sprintf("0 (= sack_width) or 1..%d (at most sack_width)", c.SackWidth)}
	}
	maxC := c.WindowMaxCwnd()
	if w.MinCwnd > maxC {
		return &FieldError{"window.min_cwnd", fmt.Sprint(w.MinCwnd), fmt.Sprintf("1..%d (at most max_cwnd)", maxC)}
	}
	if w.InitCwnd < w.MinCwnd || w.InitCwnd > maxC {
		return &FieldError{"window.init_cwnd", fmt.Sprint(w.InitCwnd),
			fmt.Sprintf("%d..%d (min_cwnd..max_cwnd)", w.MinCwnd, maxC)}
	}
	if w.ConnMaxCwnd != 0 && w.ConnMaxCwnd < w.MinCwnd {
		return &FieldError{"window.conn_max_cwnd", fmt.Sprint(w.ConnMaxCwnd),
			fmt.Sprintf("0 (= max_cwnd × paths_per_connection) or %d..262144 (at least min_cwnd)", w.MinCwnd)}
	}
	if w.RTOInitialNS < w.RTOMinNS || w.RTOInitialNS > w.RTOMaxNS {
		return &FieldError{"window.rto_initial_ns", fmt.Sprint(w.RTOInitialNS),
			fmt.Sprintf("%d..%d (rto_min_ns..rto_max_ns)", w.RTOMinNS, w.RTOMaxNS)}
	}
	if w.RTOMaxNS < w.RTOMinNS {
		return &FieldError{"window.rto_max_ns", fmt.Sprint(w.RTOMaxNS), fmt.Sprintf("%d..1000000000 (at least rto_min_ns)", w.RTOMinNS)}
	}
	if w.FailedTimeouts <= w.SuspectTimeouts {
		return &FieldError{"window.failed_timeouts", fmt.Sprint(w.FailedTimeouts),
			fmt.Sprintf("%d..15 (more than suspect_timeouts)", w.SuspectTimeouts+1)}
	}
	return nil
}

// Derived holds the values computed from a configuration.
type Derived struct {
	KeepWidth          int     `json:"keep_width"`            // datapath_width / 8
	ConnIDWidth        int     `json:"conn_id_width"`         // bits to index a connection (≥1)
	PathIDWidth        int     `json:"path_id_width"`         // bits to index a path within a connection (≥1)
	PathTableDepth     int     `json:"path_table_depth"`      // connections × paths, rounded to a power of two
	PathTableAddrWidth int     `json:"path_table_addr_width"` // log2(path_table_depth)
	SackIndexWidth     int     `json:"sack_index_width"`      // bits to index a bit of the SACK bitmap
	SackTreeLevels     int     `json:"sack_tree_levels"`      // levels of the find-first-zero tree
	StreamIDWidth      int     `json:"stream_id_width"`
	RegionIndexWidth   int     `json:"region_index_width"`
	PostedReceiveDepth int     `json:"posted_receive_depth"` // total posted-receive slots
	ClockPeriodNS      float64 `json:"clock_period_ns"`
}

// Derived computes the derived widths and sizes. It assumes Validate passed.
func (c Config) Derived() Derived {
	connW := clog2(c.Connections)
	pathW := clog2(c.PathsPerConnection)
	return Derived{
		KeepWidth:          c.DatapathWidth / 8,
		ConnIDWidth:        connW,
		PathIDWidth:        pathW,
		PathTableDepth:     1 << (connW + pathW),
		PathTableAddrWidth: connW + pathW,
		SackIndexWidth:     clog2(c.SackWidth),
		SackTreeLevels:     clog2(c.SackWidth),
		StreamIDWidth:      clog2(c.StreamsPerConnection),
		RegionIndexWidth:   clog2(c.MemoryRegions),
		PostedReceiveDepth: c.Connections * c.StreamsPerConnection * c.PostedReceivesPerStream,
		ClockPeriodNS:      1000.0 / float64(c.TargetClockMHz),
	}
}

// PathTable is the layout every per-(connection, path) table shares, in golden models and RTL
// alike: the entry of (conn, path) is {conn, path}, the connection id in the high bits.
type PathTable struct {
	Connections, Paths int // entries in use: conn < Connections, path < Paths
	PathBits           int // path_id_width
}

// PathTable returns the configuration's per-path table layout.
func (c Config) PathTable() PathTable {
	return PathTable{Connections: c.Connections, Paths: c.PathsPerConnection, PathBits: c.Derived().PathIDWidth}
}

// Index is the table index of (conn, path).
func (t PathTable) Index(conn, path int) (int, error) {
	if conn < 0 || path < 0 || conn >= t.Connections || path >= t.Paths {
		return 0, fmt.Errorf("connection %d path %d outside %d connections × %d paths", conn, path, t.Connections, t.Paths)
	}
	return conn<<t.PathBits | path, nil
}

// Split is the inverse of Index.
func (t PathTable) Split(index int) (conn, path int) {
	return index >> t.PathBits, index & (1<<t.PathBits - 1)
}

// clog2 is the number of bits needed to index n items, at least 1.
func clog2(n int) int {
	if n <= 2 {
		return 1
	}
	return bits.Len(uint(n - 1))
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// recordsPerPath checks sender.records_per_path: 0, or a power of two from 2 to the PSN space
// (at most 2^16).
func recordsPerPath(c Config) error {
	v, hi := c.Sender.RecordsPerPath, 1<<min(c.PSNWidth, 16)
	if v != 0 && (v < 2 || v > hi || !isPow2(v)) {
		return &FieldError{"sender.records_per_path", fmt.Sprint(v), fmt.Sprintf("0 or a power of two 2..%d", hi)}
	}
	return nil
}

// depth checks a FIFO depth: 0 (the default) or 2..2^20 entries.
func depth(field string, v int) error {
	if v != 0 && (v < 2 || v > 1<<20) {
		return &FieldError{field, fmt.Sprint(v), "0 (the default) or 2..1048576"}
	}
	return nil
}

func inRange(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return &FieldError{field, fmt.Sprint(v), fmt.Sprintf("%d..%d", lo, hi)}
	}
	return nil
}

func oneOf(field string, v int, allowed ...int) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	s := make([]string, len(allowed))
	for i, a := range allowed {
		s[i] = fmt.Sprint(a)
	}
	return &FieldError{field, fmt.Sprint(v), "one of " + strings.Join(s, ", ")}
}

func oneOfString(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return &FieldError{field, quote(v), "one of " + strings.Join(allowed, ", ")}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
