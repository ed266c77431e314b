package qor

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Metrics a budget can hold.
const (
	MetricCriticalNS = "critical_ns" // asic
	MetricLUTLevels  = "lut_levels"  // xcup
	MetricLUTs       = "luts"        // xcup
	MetricMemoryBits = "memory_bits" // target rtl: the unit's memory, from memories.json
)

// RTL is the budgets' target of figures of the RTL itself (memory bits), not of a flow.
const RTL Target = "rtl"

// Budget is the committed ceiling of one figure of one unit at one configuration.
type Budget struct {
	Unit   string  `json:"unit"`
	Config string  `json:"config"`
	Target Target  `json:"target"`
	Metric string  `json:"metric"`
	Max    float64 `json:"max"`
	// Why says where the figure came from; a commit that raises a budget says why here.
	Why string `json:"why,omitempty"`
}

// Budgets is budgets.json.
type Budgets struct {
	// TolerancePct is how far a figure may exceed its budget before the gate fails.
	TolerancePct float64  `json:"tolerance_pct"`
	Budgets      []Budget `json:"budgets"`
}

// LoadBudgets reads a budgets file.
func LoadBudgets(path string) (*Budgets, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("qor: budgets: %w", err)
	}
	var b Budgets
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("qor: budgets %s: %w", path, err)
	}
	for i, x := range b.Budgets {
		if x.Unit == "" || x.Config == "" || x.Metric == "" || x.Max <= 0 {
			return nil, fmt.Errorf("qor: budgets %s: entry %d (%s %s %s) needs unit, config, metric and max > 0",
				path, i, x.Unit, x.Config, x.Metric)
		}
	}
	return &b, nil
}

// Value is the report's figure for a metric of a unit (false when not measured).
func (u *UnitReport) Value(t Target, metric string) (float64, bool) {
	switch {
	case metric == MetricMemoryBits:
		return float64(u.MemoryBits), true
	case t == ASIC && metric == MetricCriticalNS && u.ASIC != nil:
		return u.ASIC.CriticalNS, true
	case t == XCUP && metric == MetricLUTLevels && u.XCUP != nil:
		return float64(u.XCUP.LUTLevels), true
	case t == XCUP && metric == MetricLUTs && u.XCUP != nil && u.XCUP.LUTs > 0:
		return float64(u.XCUP.LUTs), true
	}
	return 0, false
}

// Violation is one figure above its budget by more than the tolerance.
type Violation struct {
	Budget Budget
	Value  float64
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s %s at %s: %g, budget %g (+%.1f%%)", v.Budget.Unit, v.Budget.Target, v.Budget.Metric,
		v.Budget.Config, v.Value, v.Budget.Max, 100*(v.Value/v.Budget.Max-1))
}

// Check compares the report with the budgets of its configuration. It returns the violations
// and the budgets that had no figure in the report (not measured).
func (b *Budgets) Check(rep *Report) (viol []Violation, unmeasured []Budget) {
	for _, x := range b.Budgets {
		if x.Config != rep.Config {
			continue
		}
		u, ok := rep.Unit(x.Unit)
		if !ok {
			unmeasured = append(unmeasured, x)
			continue
		}
		v, ok := u.Value(x.Target, x.Metric)
		if !ok {
			unmeasured = append(unmeasured, x)
			continue
		}
		if v > x.Max*(1+b.TolerancePct/100) {
			viol = append(viol, Violation{Budget: x, Value: v})
		}
	}
	return viol, unmeasured
}

// Update sets the budgets of the report's configuration to its figures: new entries are added,
// lower figures lower their budget, and a higher figure raises it only with a reason (why).
func (b *Budgets) Update(rep *Report, why string) error {
	idx := map[string]int{}
	key := func(x Budget) string {
		return strings.Join([]string{x.Unit, x.Config, string(x.Target), x.Metric}, "|")
	}
	for i, x := range b.Budgets {
		idx[key(x)] = i
	}
	var raised []string
	for _, u := range rep.Units {
		for _, m := range []struct {
			t Target
			k string
		}{{ASIC, MetricCriticalNS}, {XCUP, MetricLUTLevels}, {XCUP, MetricLUTs}, {RTL, MetricMemoryBits}} {
			v, ok := u.Value(m.t, m.k)
			if !ok || v <= 0 {
				continue
			}
			nb := Budget{Unit: u.Unit, Config: rep.Config, Target: m.t, Metric: m.k, Max: v, Why: "measured by mrgen qor"}
			i, ok := idx[key(nb)]
			if !ok {
				b.Budgets = append(b.Budgets, nb)
				idx[key(nb)] = len(b.Budgets) - 1
				continue
			}
			old := b.Budgets[i]
			if v > old.Max {
				if why == "" {
					raised = append(raised, fmt.Sprintf("%s %s %s %g -> %g", u.Unit, m.t, m.k, old.Max, v))
					continue
				}
				nb.Why = "raised: " + why
			}
			b.Budgets[i] = nb
		}
	}
	if len(raised) > 0 {
		return fmt.Errorf("qor: raising a budget needs a reason (--why): %s", strings.Join(raised, "; "))
	}
	sort.SliceStable(b.Budgets, func(i, j int) bool { return key(b.Budgets[i]) < key(b.Budgets[j]) })
	return nil
}

// Write writes the budgets file.
func (b *Budgets) Write(path string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("qor: budgets: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("qor: budgets: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("qor: budgets: %w", err)
	}
	return nil
}
