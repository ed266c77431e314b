package sim

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var (
	metaColor = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	baseColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	offColor  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
)

// Plot draws a result's figure to path (.svg or .png): goodput against loss, spurious
// retransmissions, incast convergence, throughput against planes, or throughput over time
// through a failure, MetaRoCE beside the RoCEv2 baseline.
func Plot(r *Result, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("sim: plot %s: the file must end in .svg or .png", path)
	}
	p := plot.New()
	p.Legend.Top = true
	var err error
	switch r.Scenario {
	case "loss":
		err = plotLoss(p, r)
	case "reorder":
		err = plotBars(p, "spurious retransmissions (no loss, sprayed)", []string{"MetaRoCE", "RoCEv2"},
			[]float64{float64(r.SpuriousRetransmissions), float64(baseOf(r).SpuriousRetransmissions)})
	case "incast":
		err = plotIncast(p, r)
	case "planes":
		err = plotPlanes(p, r)
	case "failure":
		err = plotFailure(p, r)
	default:
		err = fmt.Errorf("sim: no plot for scenario %q", r.Scenario)
	}
	if err != nil {
		return err
	}
	if err := p.Save(7*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("sim: save plot: %w", err)
	}
	return nil
}

func baseOf(r *Result) Figures {
	if r.Baseline == nil {
		return Figures{}
	}
	return *r.Baseline
}

func line(p *plot.Plot, name string, c color.Color, xy plotter.XYs) error {
	l, pts, err := plotter.NewLinePoints(xy)
	if err != nil {
		return fmt.Errorf("sim: plot %s: %w", name, err)
	}
	l.Color, pts.Color = c, c
	pts.Shape = draw.CircleGlyph{}
	p.Add(l, pts)
	p.Legend.Add(name, l, pts)
	return nil
}

func plotLoss(p *plot.Plot, r *Result) error {
	pts := r.Points
	if len(pts) == 0 {
		pts = []Result{*r}
	}
	type series struct{ m, b plotter.XYs }
	byPattern := map[string]*series{}
	var order []string
	for _, q := range pts {
		pat := fmt.Sprint(q.Params["pattern"])
		s := byPattern[pat]
		if s == nil {
			s = &series{}
			byPattern[pat] = s
			order = append(order, pat)
		}
		loss := q.Params["loss"].(float64) * 100
		s.m = append(s.m, plotter.XY{X: loss, Y: q.GoodputFraction})
		s.b = append(s.b, plotter.XY{X: loss, Y: baseOf(&q).GoodputFraction})
	}
	p.Title.Text = fmt.Sprintf("Goodput under random loss (%v hosts)", pts[0].Params["hosts"])
	p.X.Label.Text = "loss (%)"
	p.Y.Label.Text = "goodput / line rate"
	p.Y.Min, p.Y.Max = 0, 1
	shade := func(c color.RGBA, i int) color.RGBA {
		if i > 0 {
			c.R, c.G, c.B = c.R/2, c.G/2, c.B/2
		}
		return c
	}
	for i, pat := range order {
		s := byPattern[pat]
		if err := line(p, "MetaRoCE, "+pat, shade(metaColor, i), s.m); err != nil {
			return err
		}
		if err := line(p, "RoCEv2, "+pat, shade(baseColor, i), s.b); err != nil {
			return err
		}
	}
	return nil
}

func plotBars(p *plot.Plot, title string, names []string, vals []float64) error {
	bars, err := plotter.NewBarChart(plotter.Values(vals), vg.Points(40))
	if err != nil {
		return fmt.Errorf("sim: plot bars: %w", err)
	}
	bars.Color = metaColor
	p.Add(bars)
	p.NominalX(names...)
	p.Title.Text = title
	return nil
}

func plotIncast(p *plot.Plot, r *Result) error {
	pts := r.Points
	if len(pts) == 0 {
		pts = []Result{*r}
	}
	var names []string
	var on, off []float64
	for _, q := range pts {
		names = append(names, fmt.Sprintf("%v:1", q.Params["senders"]))
		on = append(on, orZero(q.ConvergenceRTTs))
		if q.Contrast != nil {
			off = append(off, orZero(q.Contrast.ConvergenceRTTs))
		}
	}
	w := vg.Points(20)
	b1, err := plotter.NewBarChart(plotter.Values(on), w)
	if err != nil {
		return err
	}
	b1.Color, b1.Offset = metaColor, -w/2
	p.Add(b1)
	p.Legend.Add("hints on", b1)
	if len(off) == len(on) {
		b2, err := plotter.NewBarChart(plotter.Values(off), w)
		if err != nil {
			return err
		}
		b2.Color, b2.Offset = offColor, w/2
		p.Add(b2)
		p.Legend.Add("hints off (0: not within the run)", b2)
	}
	p.NominalX(names...)
	p.Title.Text = "Incast: RTTs until every sender is within 10% of its fair share"
	p.Y.Label.Text = "base RTTs"
	return nil
}

func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func plotPlanes(p *plot.Plot, r *Result) error {
	var m, b plotter.XYs
	for _, q := range r.Points {
		k := float64(q.Params["planes"].(int))
		m = append(m, plotter.XY{X: k, Y: q.GoodputGbps / 1000})
		b = append(b, plotter.XY{X: k, Y: baseOf(&q).GoodputGbps / 1000})
	}
	p.Title.Text = fmt.Sprintf("Aggregate goodput against planes (%v hosts, %v connections)", r.Params["hosts"], r.Params["connections"])
	p.X.Label.Text = "planes"
	p.Y.Label.Text = "goodput (Tb/s)"
	if err := line(p, "MetaRoCE", metaColor, m); err != nil {
		return err
	}
	return line(p, "RoCEv2", baseColor, b)
}

func plotFailure(p *plot.Plot, r *Result) error {
	conv := func(tl []Sample) plotter.XYs {
		xy := make(plotter.XYs, len(tl))
		for i, s := range tl {
			xy[i] = plotter.XY{X: s.TimeUs, Y: s.Gbps}
		}
		return xy
	}
	p.Title.Text = fmt.Sprintf("Throughput through a %v failure at %.0f us", r.Params["fail"], r.Params["fail_at_us"])
	p.X.Label.Text = "time (us)"
	p.Y.Label.Text = "goodput (Gb/s)"
	if err := line(p, "MetaRoCE", metaColor, conv(r.Timeline)); err != nil {
		return err
	}
	return line(p, "RoCEv2", baseColor, conv(baseOf(r).Timeline))
}
