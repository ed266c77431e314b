package sim

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/fabric"
)

func show(f Figures) {
	f.Timeline = nil
	b, _ := json.Marshal(f)
	fmt.Println(string(b))
}

func TestTmpFailure(t *testing.T) {
	o := Options{Scenario: "failure", NIC: config.Default(), Seed: 1, MsgBytes: 64 << 10, Outstanding: 1}
	flows, _ := pattern("all-to-all", 16)
	dur := o.duration(1500)
	s := o.base(leafSpine(16, 1, 1), flows, dur)
	s.warmup = 0
	s.binWidth = 25 * fabric.Microsecond
	s.setup = func(n *fabric.Network) error { return n.FailSwitch("p0.spine1", dur/3) }
	f, err := run(MetaRoCE, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range f.Timeline {
		fmt.Printf("%.0f:%.0f ", x.TimeUs, x.Gbps)
	}
	fmt.Println()
	v, ok := recovery(f.Timeline, dur/3)
	fmt.Println("recovery", v, ok)
	show(f)
}

func TestTmpIncast(t *testing.T) {
	for _, n := range []int{8, 64} {
		for _, hints := range []bool{true, false} {
			o := Options{Scenario: "incast", NIC: config.Default(), Seed: 1, Outstanding: 2}
			o.NIC.Window.InitCwnd = 4
			topo := leafSpine(n+1, 1, 1)
			topo.HostsPerLeaf = 16
			var flows [][2]int
			for s := 1; s <= n; s++ {
				flows = append(flows, [2]int{s, 0})
			}
			o.MsgBytes = 256 << 10
			spec := o.base(topo, flows, o.duration(400))
			spec.warmup = 0
			spec.hints = hints
			f, err := run(MetaRoCE, spec)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Println(n, hints)
			show(f)
		}
	}
}

func TestTmpLoss(t *testing.T) {
	for _, loss := range []float64{0, 0.01, 0.05, 0.1} {
		o := Options{Scenario: "loss", NIC: config.Default(), Seed: 1, MsgBytes: 64 << 10, Outstanding: 2, Loss: loss}
		o.NIC.Window.InitCwnd = 4
		flows, _ := pattern("all-to-all", 16)
		s := o.base(leafSpine(16, 1, 1), flows, o.duration(300))
		f, err := run(MetaRoCE, s)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(loss)
		show(f)
	}
}
