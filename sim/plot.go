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
// through a failure, MetaRoCE beside the RoCEv2 baseline. Every value is the mean over the
// point's seeds with its 95% confidence interval: error bars, or a band around a time series.
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
		err = plotReorder(p, r)
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

func baseOf(r *Result) *Figures {
	if r.Baseline == nil {
		return &Figures{}
	}
	return r.Baseline
}

// meanXYs are plotted mean with its 95% interval: it implements plotter's XYer and
// YErrorer, the errors below and above the mean.
type meanXYs []struct{ x, y, lo, hi float64 }

func (m meanXYs) Len() int                        { return len(m) }
func (m meanXYs) XY(i int) (float64, float64)     { return m[i].x, m[i].y }
func (m meanXYs) YError(i int) (float64, float64) { return m[i].y - m[i].lo, m[i].hi - m[i].y }
func (m *meanXYs) add(x float64, s Summary, scale float64) {
	*m = append(*m, struct{ x, y, lo, hi float64 }{x, s.Mean * scale, s.Lo * scale, s.Hi * scale})
}

// figure is a key figure of f over the seeds (Run gives every Figures its spread).
func figure(f *Figures, name string) Summary { return f.Spread[name] }

func errorBars(p *plot.Plot, c color.Color, m meanXYs) error {
	eb, err := plotter.NewYErrorBars(m)
	if err != nil {
		return fmt.Errorf("sim: plot error bars: %w", err)
	}
	eb.Color = c
	p.Add(eb)
	return nil
}

// line draws means joined by a line, with their error bars.
func line(p *plot.Plot, name string, c color.Color, m meanXYs) error {
	l, pts, err := plotter.NewLinePoints(m)
	if err != nil {
		return fmt.Errorf("sim: plot %s: %w", name, err)
	}
	l.Color, pts.Color = c, c
	pts.Shape = draw.CircleGlyph{}
	p.Add(l, pts)
	p.Legend.Add(name, l, pts)
	return errorBars(p, c, m)
}

// bars draws one bar per category at x = i + shift (in category units), with error bars.
func bars(p *plot.Plot, name string, c color.Color, shift float64, vals []Summary) error {
	means := make(plotter.Values, len(vals))
	var m meanXYs
	for i, v := range vals {
		means[i] = v.Mean
		m.add(float64(i)+shift, v, 1)
	}
	b, err := plotter.NewBarChart(means, vg.Points(24))
	if err != nil {
		return fmt.Errorf("sim: plot bars %s: %w", name, err)
	}
	b.Color, b.XMin = c, shift
	b.LineStyle.Width = 0
	p.Add(b)
	p.Legend.Add(name, b)
	return errorBars(p, color.Black, m)
}

func seedsNote(r *Result) string {
	pts := r.Points
	if len(pts) == 0 {
		pts = []Result{*r}
	}
	if s, ok := pts[0].Params["seeds"].([]uint64); ok && len(s) > 1 {
		return fmt.Sprintf(" (mean and 95%% CI of %d seeds)", len(s))
	}
	return ""
}

func plotLoss(p *plot.Plot, r *Result) error {
	pts := r.Points
	if len(pts) == 0 {
		pts = []Result{*r}
	}
	type series struct{ m, b meanXYs }
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
		s.m.add(loss, figure(&q.Figures, "goodput_fraction"), 1)
		s.b.add(loss, figure(baseOf(&q), "goodput_fraction"), 1)
	}
	p.Title.Text = fmt.Sprintf("Goodput under random loss (%v hosts)%s", pts[0].Params["hosts"], seedsNote(r))
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

func plotReorder(p *plot.Plot, r *Result) error {
	p.Title.Text = "Reordering without loss: retransmissions" + seedsNote(r)
	p.Legend.Left = true
	p.Y.Label.Text = "packets"
	names := []string{"MetaRoCE", "RoCEv2"}
	figs := []*Figures{&r.Figures, baseOf(r)}
	for _, k := range []struct {
		name, label string
		c           color.Color
		shift       float64
	}{{"retransmissions", "all", metaColor, -0.15}, {"spurious_retransmissions", "spurious", offColor, 0.15}} {
		vals := make([]Summary, len(figs))
		for j, f := range figs {
			vals[j] = figure(f, k.name)
		}
		if err := bars(p, k.label+" retransmissions", k.c, k.shift, vals); err != nil {
			return err
		}
	}
	categories(p, names)
	return nil
}

// categories labels the x axis with one name per bar group and leaves room for the groups'
// two bars (at ±0.15).
func categories(p *plot.Plot, names []string) {
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
}

func plotIncast(p *plot.Plot, r *Result) error {
	pts := r.Points
	if len(pts) == 0 {
		pts = []Result{*r}
	}
	var names []string
	var on, off []Summary
	for _, q := range pts {
		names = append(names, fmt.Sprintf("%v:1", q.Params["senders"]))
		on = append(on, figure(&q.Figures, "convergence_rtts"))
		if q.Contrast != nil {
			off = append(off, figure(q.Contrast, "convergence_rtts"))
		}
	}
	if err := bars(p, "hints on", metaColor, -0.15, on); err != nil {
		return err
	}
	if len(off) == len(on) {
		if err := bars(p, "hints off (0: not within the run)", offColor, 0.15, off); err != nil {
			return err
		}
	}
	categories(p, names)
	p.Title.Text = "Incast: RTTs until every sender is within 10% of its fair share" + seedsNote(r)
	p.Y.Label.Text = "base RTTs"
	return nil
}

func plotPlanes(p *plot.Plot, r *Result) error {
	var m, b meanXYs
	for _, q := range r.Points {
		k := float64(q.Params["planes"].(int))
		m.add(k, figure(&q.Figures, "goodput_gbps"), 1e-3)
		b.add(k, figure(baseOf(&q), "goodput_gbps"), 1e-3)
	}
	p.Title.Text = fmt.Sprintf("Aggregate goodput against planes (%v hosts, %v connections)%s", r.Params["hosts"], r.Params["connections"], seedsNote(r))
	p.X.Label.Text = "planes"
	p.Y.Label.Text = "goodput (Tb/s)"
	if err := line(p, "MetaRoCE", metaColor, m); err != nil {
		return err
	}
	return line(p, "RoCEv2", baseColor, b)
}

// timeline is a throughput time series: the seeds' mean with its 95% interval as a band.
func timeline(p *plot.Plot, name string, c color.RGBA, f *Figures) error {
	band := make(plotter.XYs, 0, 2*len(f.TimelineMean))
	mean := make(plotter.XYs, len(f.TimelineMean))
	for i, s := range f.TimelineMean {
		band = append(band, plotter.XY{X: s.TimeUs, Y: s.Hi})
		mean[i] = plotter.XY{X: s.TimeUs, Y: s.Mean}
	}
	for i := len(f.TimelineMean) - 1; i >= 0; i-- {
		s := f.TimelineMean[i]
		band = append(band, plotter.XY{X: s.TimeUs, Y: s.Lo})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return fmt.Errorf("sim: plot %s band: %w", name, err)
	}
	light := color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x50}
	poly.Color, poly.LineStyle.Width = light, 0
	l, err := plotter.NewLine(mean)
	if err != nil {
		return fmt.Errorf("sim: plot %s: %w", name, err)
	}
	l.Color = c
	p.Add(poly, l)
	p.Legend.Add(name+" (band: 95% CI)", l)
	return nil
}

func plotFailure(p *plot.Plot, r *Result) error {
	p.Title.Text = fmt.Sprintf("Throughput through a %v failure at %.0f us%s", r.Params["fail"], r.Params["fail_at_us"], seedsNote(r))
	p.X.Label.Text = "time (us)"
	p.Y.Label.Text = "goodput (Gb/s)"
	p.Legend.Top, p.Legend.Left = false, true
	if err := timeline(p, "MetaRoCE", metaColor, &r.Figures); err != nil {
		return err
	}
	return timeline(p, "RoCEv2", baseColor, baseOf(r))
}
