package qor

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Path is one timing path of an OpenSTA report, its ends named as in the RTL.
type Path struct {
	Start     string  `json:"start"` // a register bit (u_rx.in_q_psn[3]), a macro (u_rx.u_rx_table (macro)) or an input port
	End       string  `json:"end"`
	StartKind string  `json:"start_kind"` // register | macro | input
	EndKind   string  `json:"end_kind"`   // register | macro | output
	ArrivalNS float64 `json:"arrival_ns"`
	RequireNS float64 `json:"required_ns"`
	SlackNS   float64 `json:"slack_ns"`
	// DelayNS is what the path needs of the clock: the period minus its slack (so an input's or
	// output's external delay is part of it).
	DelayNS float64  `json:"delay_ns"`
	Levels  int      `json:"levels"` // cells between its start and its end (buffers included)
	Cells   []string `json:"cells,omitempty"`
}

// staReport is what runSTA reads back.
type staReport struct {
	Paths []Path
	WNS   float64
	TNS   float64
}

var (
	startRE = regexp.MustCompile(`^Startpoint: (\S+) \((.*)\)`)
	endRE   = regexp.MustCompile(`^Endpoint: (\S+) \((.*)\)`)
	// bareEndRE: a long name makes OpenSTA wrap the point's kind onto the next line.
	bareEndRE = regexp.MustCompile(`^(Startpoint|Endpoint): \S+\s*$`)
	// A path row: delay, time, edge, pin, (cell type or in/out).
	rowRE   = regexp.MustCompile(`^\s*(-?[\d.]+)\s+(-?[\d.]+)\s+[v^]\s+(\S+)\s+\((\S+)\)\s*$`)
	arrRE   = regexp.MustCompile(`^\s*(-?[\d.]+)\s+data arrival time`)
	reqRE   = regexp.MustCompile(`^\s*(-?[\d.]+)\s+data required time`)
	slackRE = regexp.MustCompile(`^\s*(-?[\d.]+)\s+slack \((MET|VIOLATED)\)`)
	wnsRE   = regexp.MustCompile(`^wns (-?[\d.]+)`)
	tnsRE   = regexp.MustCompile(`^tns (-?[\d.]+)`)
)

// parseSTA reads report_checks (default fields), report_wns and report_tns output. names maps
// netlist instance names to RTL names (writeVerilog).
func parseSTA(out string, periodNS float64, names map[string]string) (*staReport, error) {
	rep := &staReport{}
	var cur *Path
	var rows []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	sawWNS := false
	complete := 0
	wrapped := "" // a Startpoint or Endpoint line whose "(kind)" OpenSTA put on the next line
	for sc.Scan() {
		line := sc.Text()
		if wrapped != "" {
			line = wrapped + " " + strings.TrimSpace(line)
			wrapped = ""
		} else if bareEndRE.MatchString(line) {
			wrapped = line
			continue
		}
		if m := startRE.FindStringSubmatch(line); m != nil {
			if cur != nil {
				return nil, fmt.Errorf("the OpenSTA report has a path without its slack (start %s)", cur.Start)
			}
			rep.Paths = append(rep.Paths, Path{})
			cur = &rep.Paths[len(rep.Paths)-1]
			cur.Start, cur.StartKind = endName(m[1], m[2], names, "input")
			rows = nil
			continue
		}
		if cur == nil {
			if m := wnsRE.FindStringSubmatch(line); m != nil {
				rep.WNS, _ = strconv.ParseFloat(m[1], 64)
				sawWNS = true
			}
			if m := tnsRE.FindStringSubmatch(line); m != nil {
				rep.TNS, _ = strconv.ParseFloat(m[1], 64)
			}
			continue
		}
		if m := endRE.FindStringSubmatch(line); m != nil {
			cur.End, cur.EndKind = endName(m[1], m[2], names, "output")
			continue
		}
		if m := rowRE.FindStringSubmatch(line); m != nil && cur.ArrivalNS == 0 {
			rows = append(rows, m[3]+" ("+m[4]+")")
			continue
		}
		if m := arrRE.FindStringSubmatch(line); m != nil && cur.ArrivalNS == 0 {
			cur.ArrivalNS, _ = strconv.ParseFloat(m[1], 64)
			// rows: [clock pin of a start register,] the start's output, the cells, the end pin.
			cells := rows
			if len(cells) > 0 && strings.Contains(cells[0], "/CLK ") || len(cells) > 0 && strings.Contains(cells[0], "/clk ") {
				cells = cells[1:]
			}
			if len(cells) >= 2 {
				cur.Levels = len(cells) - 2
				cur.Cells = cells
			}
			continue
		}
		if m := reqRE.FindStringSubmatch(line); m != nil {
			cur.RequireNS, _ = strconv.ParseFloat(m[1], 64)
			continue
		}
		if m := slackRE.FindStringSubmatch(line); m != nil {
			cur.SlackNS, _ = strconv.ParseFloat(m[1], 64)
			cur.DelayNS = periodNS - cur.SlackNS
			cur = nil
			complete++
			continue
		}
		if m := wnsRE.FindStringSubmatch(line); m != nil {
			rep.WNS, _ = strconv.ParseFloat(m[1], 64)
			sawWNS = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the OpenSTA report: %w", err)
	}
	if !sawWNS {
		return nil, fmt.Errorf("the OpenSTA report has no wns line")
	}
	if complete != len(rep.Paths) {
		return nil, fmt.Errorf("the OpenSTA report ends inside a path")
	}
	for _, p := range rep.Paths {
		if p.End == "" {
			return nil, fmt.Errorf("the OpenSTA report has a path without an endpoint (start %s)", p.Start)
		}
	}
	return rep, nil
}

// endName names a start or end point as in the RTL: a register bit, a macro, or a port.
func endName(inst, what string, names map[string]string, portKind string) (string, string) {
	if strings.Contains(what, "port") {
		return inst, portKind
	}
	rtl, ok := names[inst]
	if !ok {
		rtl = inst
	}
	if strings.HasPrefix(inst[strings.LastIndex(inst, "/")+1:], "mem_") {
		return rtl + " (macro)", "macro"
	}
	return rtl, "register"
}

// staScript is the OpenSTA script: the libraries, the netlist, the generated SDC, the three
// worst paths (one per endpoint), WNS and TNS.
func staScript(libs, netlists []string, top, sdc string) string {
	var b strings.Builder
	for _, l := range libs {
		fmt.Fprintf(&b, "read_liberty %s\n", tclQuote(l))
	}
	for _, n := range netlists {
		fmt.Fprintf(&b, "read_verilog %s\n", tclQuote(n))
	}
	fmt.Fprintf(&b, "link_design %s\nread_sdc %s\n", top, tclQuote(sdc))
	b.WriteString("report_checks -path_delay max -group_count 3 -digits 3\nreport_wns\nreport_tns\nexit\n")
	return b.String()
}

func tclQuote(s string) string { return "{" + s + "}" }
