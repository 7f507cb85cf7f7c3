package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure files, in FigDir.
const (
	FigAccuracy = "accuracy.png" // Fig. 10
	FigSize     = "size.png"     // Fig. 11
	FigSlowdown = "slowdown.png" // Figs 12–14
	FigSummary  = "summary.png"  // Fig. 15
	FigPprof    = "pprof.png"    // Figs 16–17
)

// Figures lists every figure the report embeds.
var Figures = []string{FigAccuracy, FigSize, FigSlowdown, FigSummary, FigPprof}

var black = color.Gray{Y: 0}

// colour returns the i-th of plotutil's dark colours, which read better on
// white than its default soft ones.
func colour(i int) color.Color {
	return plotutil.DarkColors[i%len(plotutil.DarkColors)]
}

// legendAbove makes room over the lines for the legend in the upper right
// corner.
func legendAbove(p *plot.Plot, lines int) {
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.08 * float64(lines)
	p.Legend.Top, p.Legend.Left = true, false
}

// legendBelow makes room under the lines of an overlap plot (values up to
// 100) for the legend in its lower right corner.
func legendBelow(p *plot.Plot, lines int) {
	lo := p.Y.Min
	p.Y.Max = 100.5
	p.Y.Min = lo - (100-lo)*0.09*float64(lines)
	p.Legend.Top, p.Legend.Left = false, false
}

// writeFigures draws every figure into dir.
func writeFigures(dir string, res *Results) error {
	for _, f := range []struct {
		name string
		draw func(*Results) ([][]*plot.Plot, error)
		w, h vg.Length
	}{
		{FigAccuracy, accuracyPlots, 26 * vg.Centimeter, 11 * vg.Centimeter},
		{FigSize, sizePlots, 26 * vg.Centimeter, 11 * vg.Centimeter},
		{FigSlowdown, slowdownPlots, 16 * vg.Centimeter, 12 * vg.Centimeter},
		{FigSummary, summaryPlots, 16 * vg.Centimeter, 24 * vg.Centimeter},
		{FigPprof, pprofPlots, 26 * vg.Centimeter, 12 * vg.Centimeter},
	} {
		plots, err := f.draw(res)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if err := savePlots(filepath.Join(dir, f.name), plots, f.w, f.h); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// savePlots writes a grid of plots (rows of columns) as one PNG.
func savePlots(path string, plots [][]*plot.Plot, w, h vg.Length) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{
		Rows: len(plots), Cols: len(plots[0]),
		PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3,
	}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			p.Draw(canvases[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = false
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

func logX(p *plot.Plot) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
}

// addLine adds a line with points; i picks the colour and glyph, i < 0
// draws the geometric mean (thick, black). NaN points are left out.
func addLine(p *plot.Plot, name string, i int, xs, ys []float64, dashed bool) error {
	var xy plotter.XYs
	for k := range xs {
		if ys[k] == ys[k] { // not NaN
			xy = append(xy, plotter.XY{X: xs[k], Y: ys[k]})
		}
	}
	if len(xy) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	if i < 0 {
		l.Color, s.Color = black, black
		l.Width = vg.Points(2.5)
		s.Shape = draw.BoxGlyph{}
	} else {
		l.Color, s.Color = colour(i), colour(i)
		s.Shape = plotutil.Shape(i)
	}
	if dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(l, s)
	p.Legend.Add(name, l, s)
	return nil
}

// hline adds a horizontal reference line across xs.
func hline(p *plot.Plot, name string, y float64, xs []float64, c color.Color) error {
	l, err := plotter.NewLine(plotter.XYs{{X: xs[0], Y: y}, {X: xs[len(xs)-1], Y: y}})
	if err != nil {
		return err
	}
	l.Color = c
	l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

func granularities(res *Results) []float64 {
	xs := make([]float64, len(res.Granularities))
	for i, g := range res.Granularities {
		xs[i] = float64(g)
	}
	return xs
}

// perGranularity plots field of each workload's accuracies and their
// geometric mean.
func perGranularity(res *Results, overlapAxis bool, title, ylabel string, pick func(*Workload) []Accuracy, field func(Accuracy) float64) (*plot.Plot, error) {
	p := newPlot(title, "sampling granularity (instructions)", ylabel)
	logX(p)
	xs := granularities(res)
	for i, w := range res.Workloads {
		ys := make([]float64, len(xs))
		for k, a := range pick(w) {
			ys[k] = field(a)
			if a.Failed {
				ys[k] = math.NaN()
			}
		}
		if err := addLine(p, w.Name, i, xs, ys, false); err != nil {
			return nil, err
		}
	}
	if err := addLine(p, "geo. mean", -1, xs, geomeanAcross(res, pick, field), false); err != nil {
		return nil, err
	}
	if overlapAxis {
		legendBelow(p, len(res.Workloads)+1)
	} else {
		legendAbove(p, len(res.Workloads)+1)
	}
	return p, nil
}

func geomeanAcross(res *Results, pick func(*Workload) []Accuracy, field func(Accuracy) float64) []float64 {
	ys := make([]float64, len(res.Granularities))
	for k := range ys {
		var col []float64
		for _, w := range res.Workloads {
			if a := pick(w)[k]; !a.Failed {
				col = append(col, field(a))
			}
		}
		ys[k] = geomean(col)
	}
	return ys
}

func constant(w *Workload) []Accuracy   { return w.Constant }
func randomised(w *Workload) []Accuracy { return w.Randomised }

func accuracyPlots(res *Results) ([][]*plot.Plot, error) {
	ov := func(a Accuracy) float64 { return a.Overlap }
	a, err := perGranularity(res, true, "(a) constant granularity", "overlap with exact profile (%)", constant, ov)
	if err != nil {
		return nil, err
	}
	b, err := perGranularity(res, true, fmt.Sprintf("(b) randomised, r in [0, %d)", res.Jitter), "overlap with exact profile (%)", randomised, ov)
	if err != nil {
		return nil, err
	}
	return [][]*plot.Plot{{a, b}}, nil
}

func sizePlots(res *Results) ([][]*plot.Plot, error) {
	sz := func(a Accuracy) float64 { return a.RelSize }
	a, err := perGranularity(res, false, "(a) constant granularity", "calling contexts, % of exact profile", constant, sz)
	if err != nil {
		return nil, err
	}
	b, err := perGranularity(res, false, fmt.Sprintf("(b) randomised, r in [0, %d)", res.Jitter), "calling contexts, % of exact profile", randomised, sz)
	if err != nil {
		return nil, err
	}
	return [][]*plot.Plot{{a, b}}, nil
}

// slowdownSeries returns the slowdown of each randomised granularity.
func slowdownSeries(res *Results, w *Workload) []float64 {
	ys := make([]float64, len(res.Granularities))
	for k, g := range res.Granularities {
		ys[k] = w.Slowdown(cfgSample(g), false)
	}
	return ys
}

func geomeanSlowdowns(res *Results, config string) float64 {
	var xs []float64
	for _, w := range res.Workloads {
		xs = append(xs, w.Slowdown(config, false))
	}
	return geomean(xs)
}

func slowdownPlots(res *Results) ([][]*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("slowdown against go build (median of %d runs)", res.Runs), "sampling granularity (instructions), randomised", "wall time / plain build's")
	logX(p)
	xs := granularities(res)
	for i, w := range res.Workloads {
		if err := addLine(p, w.Name, i, xs, slowdownSeries(res, w), false); err != nil {
			return nil, err
		}
	}
	gm := make([]float64, len(xs))
	for k, g := range res.Granularities {
		gm[k] = geomeanSlowdowns(res, cfgSample(g))
	}
	if err := addLine(p, "geo. mean", -1, xs, gm, false); err != nil {
		return nil, err
	}
	if err := hline(p, "No Prof. (geo. mean)", geomeanSlowdowns(res, cfgOff), xs, black); err != nil {
		return nil, err
	}
	p.Y.Min = min(p.Y.Min, 1) // the plain build
	legendAbove(p, len(res.Workloads)+2)
	return [][]*plot.Plot{{p}}, nil
}

func summaryPlots(res *Results) ([][]*plot.Plot, error) {
	xs := granularities(res)
	ov := func(a Accuracy) float64 { return a.Overlap }
	sz := func(a Accuracy) float64 { return a.RelSize }

	acc := newPlot("geo. mean accuracy", "sampling granularity (instructions)", "overlap with exact (%)")
	logX(acc)
	if err := addLine(acc, "constant", 0, xs, geomeanAcross(res, constant, ov), false); err != nil {
		return nil, err
	}
	if err := addLine(acc, "randomised", 1, xs, geomeanAcross(res, randomised, ov), false); err != nil {
		return nil, err
	}
	if err := hline(acc, "target 97 %", 97, xs, colour(2)); err != nil {
		return nil, err
	}
	legendBelow(acc, 3)

	size := newPlot("geo. mean relative profile size", "sampling granularity (instructions)", "contexts, % of exact")
	logX(size)
	if err := addLine(size, "constant", 0, xs, geomeanAcross(res, constant, sz), false); err != nil {
		return nil, err
	}
	if err := addLine(size, "randomised", 1, xs, geomeanAcross(res, randomised, sz), false); err != nil {
		return nil, err
	}

	slow := newPlot("geo. mean slowdown", "sampling granularity (instructions), randomised", "wall time / plain build's")
	logX(slow)
	gm := make([]float64, len(xs))
	for k, g := range res.Granularities {
		gm[k] = geomeanSlowdowns(res, cfgSample(g))
	}
	if err := addLine(slow, "sampling", 1, xs, gm, false); err != nil {
		return nil, err
	}
	if err := hline(slow, "No Prof.", geomeanSlowdowns(res, cfgOff), xs, black); err != nil {
		return nil, err
	}
	if err := hline(slow, "target at g=10000: 1.25", 1.25, xs, colour(2)); err != nil {
		return nil, err
	}
	slow.Y.Min = min(slow.Y.Min, 1)
	legendAbove(slow, 3)
	legendAbove(size, 2)
	return [][]*plot.Plot{{acc}, {size}, {slow}}, nil
}

// groupedBars adds one bar series per entry of values (each a value per
// workload), side by side.
func groupedBars(p *plot.Plot, names []string, values [][]float64) error {
	width := vg.Points(7)
	n := len(values)
	for i, vs := range values {
		v := make(plotter.Values, len(vs))
		for k, x := range vs {
			if x == x {
				v[k] = x
			}
		}
		b, err := plotter.NewBarChart(v, width)
		if err != nil {
			return err
		}
		b.LineStyle.Width = 0
		b.Color = colour(i)
		b.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		p.Add(b)
		p.Legend.Add(names[i], b)
	}
	return nil
}

func pprofPlots(res *Results) ([][]*plot.Plot, error) {
	var labels []string
	for _, w := range res.Workloads {
		labels = append(labels, w.Name)
	}
	labels = append(labels, "geo. mean")
	withMean := func(f func(*Workload) float64) []float64 {
		var xs []float64
		for _, w := range res.Workloads {
			xs = append(xs, f(w))
		}
		return append(xs, geomean(xs))
	}
	g := kprofReference(res)

	acc := newPlot("(a) accuracy", "", "overlap (%)")
	var names []string
	var vals [][]float64
	for k, hz := range res.Rates {
		names = append(names, fmt.Sprintf("pprof %d Hz vs merged other %d runs", hz, res.PprofRuns-1), fmt.Sprintf("pprof %d Hz run to run", hz))
		vals = append(vals,
			withMean(func(w *Workload) float64 { return w.Pprof[k].VsMerged }),
			withMean(func(w *Workload) float64 { return w.Pprof[k].RunToRun }))
	}
	names = append(names, fmt.Sprintf("kprof g=%d vs exact", g))
	vals = append(vals, withMean(func(w *Workload) float64 { return w.randomisedAt(g).Overlap }))
	if err := groupedBars(acc, names, vals); err != nil {
		return nil, err
	}
	acc.NominalX(labels...)
	acc.Y.Max = 125
	acc.Legend.Top = true
	acc.X.Tick.Label.Rotation = 0.6
	acc.X.Tick.Label.XAlign = draw.XRight

	slow := newPlot("(b) slowdown", "", "wall time / plain build's")
	names, vals = nil, nil
	for _, hz := range res.Rates {
		names = append(names, fmt.Sprintf("pprof %d Hz", hz))
		vals = append(vals, withMean(func(w *Workload) float64 { return w.Slowdown(cfgPprof(hz), false) }))
	}
	names = append(names, fmt.Sprintf("kprof g=%d", g))
	vals = append(vals, withMean(func(w *Workload) float64 { return w.Slowdown(cfgSample(g), false) }))
	if err := groupedBars(slow, names, vals); err != nil {
		return nil, err
	}
	slow.NominalX(labels...)
	legendAbove(slow, 3)
	slow.X.Tick.Label.Rotation = 0.6
	slow.X.Tick.Label.XAlign = draw.XRight
	return [][]*plot.Plot{{acc, slow}}, nil
}
