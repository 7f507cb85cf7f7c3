package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/gonum/stat"
)

// plain is the variant that every other is compared with: go test
// without kprof.
const plain = "plain"

// A sample is one benchmark line of one run.
type sample struct {
	Pkg     string  `json:"pkg"`
	Bench   string  `json:"bench"` // without "Benchmark" and the -GOMAXPROCS suffix
	Variant string  `json:"variant"`
	Round   int     `json:"round"`
	NsPerOp float64 `json:"ns_per_op"`
	Iters   int     `json:"iters"`
	// InstrPerOp is kprof's instructions/op (0 for plain).
	InstrPerOp float64 `json:"instructions_per_op,omitempty"`
}

// A run is one execution of one package's test binary.
type run struct {
	Pkg      string  `json:"pkg"`
	Variant  string  `json:"variant"`
	Round    int     `json:"round"`
	Seconds  float64 `json:"seconds"`
	MaxRSSKB int64   `json:"max_rss_kb"`
	Results  int     `json:"results"`
	Err      string  `json:"error,omitempty"` // exit status and the first lines of output
}

// parseBench reads go test -bench output with benchfmt and returns its
// benchmark lines as samples of pkg, variant and round.
func parseBench(pkg, variant string, round int, out []byte) ([]sample, error) {
	var samples []sample
	r := benchfmt.NewReader(bytes.NewReader(out), pkg+"."+variant)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue // unit metadata; syntax errors are lines that are not benchmarks (PASS, logs)
		}
		s := sample{Pkg: pkg, Bench: benchName(res.Name), Variant: variant, Round: round, Iters: res.Iters}
		found := false
		for _, v := range res.Values {
			// benchfmt tidies ns/op into sec/op, keeping the original.
			switch {
			case v.OrigUnit == "ns/op":
				s.NsPerOp, found = v.OrigValue, true
			case v.Unit == "ns/op":
				s.NsPerOp, found = v.Value, true
			case v.Unit == "instructions/op" || v.OrigUnit == "instructions/op":
				s.InstrPerOp = v.Value
			}
		}
		if found {
			samples = append(samples, s)
		}
	}
	return samples, r.Err()
}

// benchName is a benchmark's full name without the GOMAXPROCS suffix
// (benchfmt already leaves out "Benchmark").
func benchName(n benchfmt.Name) string {
	base, parts := n.Parts()
	var b strings.Builder
	b.Write(base)
	for _, p := range parts {
		if len(p) > 0 && p[0] == '-' {
			continue
		}
		b.Write(p)
	}
	return b.String()
}

// A benchRatio is one benchmark's median ns/op in each variant and the
// ratios of the kprof modes' to plain's.
type benchRatio struct {
	Pkg     string             `json:"pkg"`
	Bench   string             `json:"bench"`
	NsPerOp map[string]float64 `json:"median_ns_per_op"` // variant → median over rounds
	Ratio   map[string]float64 `json:"ratio"`            // mode → median ns/op ÷ plain's
	// MinRatio is the same from each variant's fastest round: the
	// machine's other load only ever slows a run down.
	MinRatio map[string]float64 `json:"min_ratio"`
	// Spread is plain's (max−min)/median over rounds: the noise next to
	// which the ratios stand.
	Spread float64 `json:"plain_spread"`
}

// A summary is the ratio statistics of one mode over a set of benchmarks.
type summary struct {
	N       int     `json:"n"`
	GeoMean float64 `json:"geomean"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	Max     float64 `json:"max"`
}

// A pkgReport is one package's figures.
type pkgReport struct {
	Pkg       string             `json:"pkg"`
	Benchmark int                `json:"benchmarks"`
	Modes     map[string]summary `json:"modes"`
	MaxRSSKB  map[string]int64   `json:"max_rss_kb"`  // variant → max over rounds
	Seconds   map[string]float64 `json:"run_seconds"` // variant → total over rounds
}

// A report is everything the markdown and JSON outputs show.
type report struct {
	Header  map[string]string  `json:"header"` // date, machine, command, kprof commit, settings
	Modes   []string           `json:"modes"`
	Overall map[string]summary `json:"overall"`
	// OverallMin is Overall from the fastest rounds (benchRatio.MinRatio).
	OverallMin map[string]summary      `json:"overall_fastest_round"`
	Packages   []pkgReport             `json:"packages"`
	Worst      map[string][]benchRatio `json:"worst"` // mode → the worst benchmarks, worst first
	Benchmarks []benchRatio            `json:"benchmarks"`
	MaxRSSKB   map[string]int64        `json:"max_rss_kb"` // variant → max over all runs
	// Incomplete lists benchmarks left out because some variant has no
	// result for them.
	Incomplete []string   `json:"incomplete,omitempty"`
	Failures   []run      `json:"failures,omitempty"`
	Runs       []run      `json:"runs"`
	Skipped    []skipNote `json:"skipped"`
	Partial    string     `json:"partial,omitempty"` // why the run stopped early, if it did
}

// A skipNote says which benchmarks of a package the corpus leaves out
// and why.
type skipNote struct {
	Pkg  string `json:"pkg"`
	What string `json:"what"`
	Why  string `json:"why"`
}

// worstN is how many of the worst benchmarks the report lists per mode.
const worstN = 20

// buildReport computes the figures from the samples and runs. pkgs gives
// the packages' order; modes the kprof modes measured.
func buildReport(pkgs, modes []string, samples []sample, runs []run) *report {
	rep := &report{Modes: modes, Overall: map[string]summary{}, OverallMin: map[string]summary{}, Worst: map[string][]benchRatio{}, MaxRSSKB: map[string]int64{}}
	type key struct{ pkg, bench string }
	vals := map[key]map[string][]float64{}
	var order []key
	for _, s := range samples {
		k := key{s.Pkg, s.Bench}
		if vals[k] == nil {
			vals[k] = map[string][]float64{}
			order = append(order, k)
		}
		vals[k][s.Variant] = append(vals[k][s.Variant], s.NsPerOp)
	}
	pkgIndex := map[string]int{}
	for i, p := range pkgs {
		pkgIndex[p] = i
	}
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(pkgIndex[a.pkg], pkgIndex[b.pkg]), cmp.Compare(a.pkg, b.pkg))
	})
	variants := append([]string{plain}, modes...)
	byPkg := map[string][]benchRatio{}
	for _, k := range order {
		v := vals[k]
		br := benchRatio{Pkg: k.pkg, Bench: k.bench, NsPerOp: map[string]float64{}, Ratio: map[string]float64{}, MinRatio: map[string]float64{}}
		complete := true
		for _, va := range variants {
			if len(v[va]) == 0 || median(v[va]) <= 0 {
				complete = false
				break
			}
			br.NsPerOp[va] = median(v[va])
		}
		if !complete {
			rep.Incomplete = append(rep.Incomplete, k.pkg+" "+k.bench)
			continue
		}
		for _, m := range modes {
			br.Ratio[m] = br.NsPerOp[m] / br.NsPerOp[plain]
			br.MinRatio[m] = slices.Min(v[m]) / slices.Min(v[plain])
		}
		p := v[plain]
		br.Spread = (slices.Max(p) - slices.Min(p)) / br.NsPerOp[plain]
		rep.Benchmarks = append(rep.Benchmarks, br)
		byPkg[k.pkg] = append(byPkg[k.pkg], br)
	}
	for _, m := range modes {
		rep.Overall[m] = summarize(rep.Benchmarks, m, false)
		rep.OverallMin[m] = summarize(rep.Benchmarks, m, true)
		w := slices.Clone(rep.Benchmarks)
		slices.SortStableFunc(w, func(a, b benchRatio) int { return cmp.Compare(b.Ratio[m], a.Ratio[m]) })
		rep.Worst[m] = w[:min(worstN, len(w))]
	}
	for _, p := range pkgs {
		pr := pkgReport{Pkg: p, Benchmark: len(byPkg[p]), Modes: map[string]summary{}, MaxRSSKB: map[string]int64{}, Seconds: map[string]float64{}}
		for _, m := range modes {
			pr.Modes[m] = summarize(byPkg[p], m, false)
		}
		for _, r := range runs {
			if r.Pkg != p {
				continue
			}
			pr.MaxRSSKB[r.Variant] = max(pr.MaxRSSKB[r.Variant], r.MaxRSSKB)
			pr.Seconds[r.Variant] += r.Seconds
			rep.MaxRSSKB[r.Variant] = max(rep.MaxRSSKB[r.Variant], r.MaxRSSKB)
		}
		rep.Packages = append(rep.Packages, pr)
	}
	rep.Runs = runs
	for _, r := range runs {
		if r.Err != "" {
			rep.Failures = append(rep.Failures, r)
		}
	}
	return rep
}

// summarize gives mode's ratio statistics over brs.
func summarize(brs []benchRatio, mode string, fastest bool) summary {
	if len(brs) == 0 {
		return summary{}
	}
	rs := make([]float64, len(brs))
	for i, b := range brs {
		rs[i] = b.Ratio[mode]
		if fastest {
			rs[i] = b.MinRatio[mode]
		}
	}
	slices.Sort(rs)
	return summary{
		N:       len(rs),
		GeoMean: stat.GeometricMean(rs, nil),
		P50:     quantile(rs, 0.5),
		P90:     quantile(rs, 0.9),
		Max:     rs[len(rs)-1],
	}
}

// quantile is the p-quantile of sorted xs, interpolated linearly between
// the order statistics at (n−1)p (R's and numpy's default).
func quantile(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-lo)*(xs[i+1]-xs[i])
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return quantile(s, 0.5)
}

// modeName is how the report heads a mode's column (the paper's names).
func modeName(m string) string {
	switch m {
	case "off":
		return "off (No Prof.)"
	case "sample":
		return "sample"
	case "exact":
		return "exact"
	}
	return m
}

// headerKeys are the header lines of the markdown report, in order.
var headerKeys = []string{"date", "machine", "load", "go", "kprof", "command", "settings", "duration"}

// writeMarkdown writes the report as markdown.
func (rep *report) writeMarkdown(w io.Writer) error {
	var b bytes.Buffer
	title := "kprof on the standard library's benchmarks"
	if rep.Partial != "" {
		title += " (PARTIAL)"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if rep.Partial != "" {
		fmt.Fprintf(&b, "**Partial run:** %s\n\n", rep.Partial)
	}
	for _, k := range headerKeys {
		if v, ok := rep.Header[k]; ok {
			fmt.Fprintf(&b, "- %s: %s\n", k, v)
		}
	}
	fmt.Fprintf(&b, "\nRatios are a benchmark's median ns/op over the rounds under `kprof test` in a mode, "+
		"divided by its median under plain `go test`; the variants run interleaved (every round runs each "+
		"package's four test binaries one after the other). Peak memory is the largest max RSS of a "+
		"package's test binary over the rounds.\n\n")

	fmt.Fprintf(&b, "## Overall (%d benchmarks, %d packages)\n\n", len(rep.Benchmarks), len(rep.Packages))
	b.WriteString("| mode | geo. mean | p50 | p90 | max |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, m := range rep.Modes {
		s := rep.Overall[m]
		fmt.Fprintf(&b, "| %s | **%s** | %s | %s | %s |\n", modeName(m), x(s.GeoMean), x(s.P50), x(s.P90), x(s.Max))
	}
	if rep.rounds() > 1 {
		b.WriteString("\nThe same from each benchmark's fastest round in each variant (the machine's other load only ever slows a run down):\n\n")
		b.WriteString("| mode | geo. mean | p50 | p90 | max |\n| --- | ---: | ---: | ---: | ---: |\n")
		for _, m := range rep.Modes {
			s := rep.OverallMin[m]
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", modeName(m), x(s.GeoMean), x(s.P50), x(s.P90), x(s.Max))
		}
	}
	b.WriteString("\n| peak memory (max RSS) | " + strings.Join(rep.variantNames(), " | ") + " |\n|---" + strings.Repeat(" | ---:", len(rep.Modes)+1) + " |\n| all packages")
	for _, va := range rep.variants() {
		fmt.Fprintf(&b, " | %s", mib(rep.MaxRSSKB[va]))
	}
	b.WriteString(" |\n| geo. mean over packages, ratio to plain | 1.00×")
	for _, m := range rep.Modes {
		var rs []float64
		for _, p := range rep.Packages {
			if p.MaxRSSKB[plain] > 0 && p.MaxRSSKB[m] > 0 {
				rs = append(rs, float64(p.MaxRSSKB[m])/float64(p.MaxRSSKB[plain]))
			}
		}
		g := 0.0
		if len(rs) > 0 {
			g = stat.GeometricMean(rs, nil)
		}
		fmt.Fprintf(&b, " | %s", x(g))
	}
	b.WriteString(" |\n")
	if len(rep.Benchmarks) > 0 && rep.rounds() > 1 {
		spreads := make([]float64, len(rep.Benchmarks))
		for i, br := range rep.Benchmarks {
			spreads[i] = br.Spread
		}
		slices.Sort(spreads)
		fmt.Fprintf(&b, "\nNoise: plain's own spread over the rounds, (max − min) / median, is %.1f%% at the median benchmark and %.1f%% at p90.\n",
			100*quantile(spreads, 0.5), 100*quantile(spreads, 0.9))
	}

	b.WriteString("\n## Per package\n\n| package | benchmarks |")
	for _, m := range rep.Modes {
		fmt.Fprintf(&b, " %s geo. mean | p90 |", m)
	}
	b.WriteString(" max RSS " + strings.Join(rep.variants(), " / ") + " |\n| --- | ---: |")
	b.WriteString(strings.Repeat(" ---: | ---: |", len(rep.Modes)) + " ---: |\n")
	for _, p := range rep.Packages {
		fmt.Fprintf(&b, "| %s | %d |", p.Pkg, p.Benchmark)
		for _, m := range rep.Modes {
			s := p.Modes[m]
			fmt.Fprintf(&b, " %s | %s |", x(s.GeoMean), x(s.P90))
		}
		var rss []string
		for _, va := range rep.variants() {
			rss = append(rss, mib(p.MaxRSSKB[va]))
		}
		fmt.Fprintf(&b, " %s |\n", strings.Join(rss, " / "))
	}

	for _, m := range rep.Modes {
		fmt.Fprintf(&b, "\n## Worst %d benchmarks, %s\n\n| package | benchmark | plain ns/op | %s ns/op | ratio | plain spread |\n| --- | --- | ---: | ---: | ---: | ---: |\n",
			len(rep.Worst[m]), modeName(m), m)
		for _, br := range rep.Worst[m] {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** | %.0f%% |\n", br.Pkg, escapeCell(br.Bench),
				ns(br.NsPerOp[plain]), ns(br.NsPerOp[m]), x(br.Ratio[m]), 100*br.Spread)
		}
	}

	if len(rep.Skipped) > 0 {
		b.WriteString("\n## Left out\n\n| package | benchmarks | why |\n| --- | --- | --- |\n")
		for _, s := range rep.Skipped {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", s.Pkg, escapeCell(s.What), s.Why)
		}
	}
	if len(rep.Incomplete) > 0 {
		fmt.Fprintf(&b, "\n## Incomplete (%d benchmarks missing in some variant, left out of the figures)\n\n", len(rep.Incomplete))
		for _, s := range rep.Incomplete {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	if len(rep.Failures) > 0 {
		fmt.Fprintf(&b, "\n## Failed runs (%d)\n\n", len(rep.Failures))
		for _, f := range rep.Failures {
			fmt.Fprintf(&b, "- %s, %s, round %d: %s\n", f.Pkg, f.Variant, f.Round, strings.ReplaceAll(strings.TrimSpace(f.Err), "\n", " ⏎ "))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func jsonEncoder(w io.Writer) *json.Encoder {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e
}

// rounds is the number of rounds the samples come from.
func (rep *report) rounds() int {
	n := 0
	for _, r := range rep.Runs {
		n = max(n, r.Round)
	}
	return n
}

func (rep *report) variants() []string { return append([]string{plain}, rep.Modes...) }

func (rep *report) variantNames() []string {
	var ns []string
	for _, v := range rep.variants() {
		ns = append(ns, modeName(v))
	}
	return ns
}

// x formats a ratio.
func x(r float64) string {
	if r == 0 || math.IsNaN(r) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", r)
}

func mib(kb int64) string {
	if kb == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
}

func ns(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3g s", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3g ms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3g µs", v/1e3)
	}
	return fmt.Sprintf("%.3g ns", v)
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
