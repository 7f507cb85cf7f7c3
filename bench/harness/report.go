package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Targets of issue 5, at g = 10000 randomised.
const (
	targetOverlap  = 97.0 // geometric-mean overlap, %
	targetSlowdown = 1.25
	targetNoProf   = 1.15
	targetExact    = 3.0
	targetDeltaB   = 1e-4 // |δb| everywhere
	refGranularity = 10000
)

// Report section titles; the test checks they are present.
var Sections = []string{
	"## Summary: targets",
	"## Accuracy (Fig. 10)",
	"## δb (Table I)",
	"## Profile size (Fig. 11)",
	"## Slowdown (Figs 12–15)",
	"## Go's pprof as the baseline (Figs 16–17)",
	"## How pprof profiles are compared",
	"## Method and caveats",
}

// kprofReference is the granularity the summary and the pprof comparison
// use: 10000 when measured, else the largest measured.
func kprofReference(res *Results) int64 {
	if slices.Contains(res.Granularities, refGranularity) {
		return refGranularity
	}
	return res.Granularities[len(res.Granularities)-1]
}

func (w *Workload) randomisedAt(g int64) Accuracy {
	for _, a := range w.Randomised {
		if a.Granularity == g && !a.Failed {
			return a
		}
	}
	nan := math.NaN()
	return Accuracy{Granularity: g, Failed: true, Overlap: nan, Repeat: nan, FlatOverlap: nan, RelSize: nan}
}

type report struct {
	bytes.Buffer
	res *Results
}

func (r *report) p(format string, args ...any) { fmt.Fprintf(r, format, args...) }

// row writes one markdown table row.
func (r *report) row(cells ...string) {
	r.p("| %s |\n", strings.Join(cells, " | "))
}

// header writes a table header; the first column is left-aligned, the
// others right-aligned.
func (r *report) header(cells ...string) {
	r.row(cells...)
	align := make([]string, len(cells))
	for i := range align {
		align[i] = "---:"
	}
	align[0] = "---"
	r.row(align...)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x)
}

func times(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", x)
}

func sci(x float64) string {
	switch {
	case x == 0:
		return "0"
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	}
	return fmt.Sprintf("%.1e", x)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func writeReport(dir string, res *Results) error {
	figs := filepath.Join(dir, FigDir)
	if err := os.MkdirAll(figs, 0o777); err != nil {
		return err
	}
	if err := writeFigures(figs, res); err != nil {
		return err
	}
	r := &report{res: res}
	r.write()
	return os.WriteFile(filepath.Join(dir, ReportName), r.Bytes(), 0o666)
}

func (r *report) write() {
	res := r.res
	g := kprofReference(res)
	title := "# kprof evaluation: accuracy, size and overhead (paper §7)"
	if res.Quick {
		title += " — quick mode"
	}
	r.p("%s\n\n", title)
	size := "each workload's default size (1–3 s uninstrumented)"
	if res.N != "" {
		size = "-n " + res.N
	}
	r.p("Measured on %s by `bench/harness` at commit %s, in %s.\n\n", res.Date, res.Commit, res.Elapsed)
	r.p("- machine: %d cores, %s, %s/%s; %s\n", res.Machine.Cores, res.Machine.CPU, res.Machine.OS, res.Machine.Arch, res.GoVersion)
	r.p("- reproduce: `%s` (from the repository root)\n", strings.TrimSpace(res.Command))
	r.p("- workloads: %d at %s; timings are medians of %d interleaved runs (exact mode: %d); %d runs per pprof rate (the timed ones included) for the merged references\n",
		len(res.Workloads), size, res.Runs, res.ExactRuns, res.PprofRuns)
	r.p("- figures: [accuracy](%[1]s/%[2]s), [size](%[1]s/%[3]s), [slowdown](%[1]s/%[4]s), [summary](%[1]s/%[5]s), [pprof](%[1]s/%[6]s); raw data: [%[7]s](%[1]s/%[7]s) (`go run ./bench/harness -render DIR` redraws them)\n\n",
		FigDir, FigAccuracy, FigSize, FigSlowdown, FigSummary, FigPprof, RawName)
	if res.Quick {
		r.p("Quick mode checks that every part runs; its inputs are too small for its numbers to mean anything.\n\n")
	}

	r.summary(g)
	r.accuracy()
	r.deltaB()
	r.size()
	r.slowdown(g)
	r.pprof(g)
	r.conversion()
	r.method()
}

// maxDeltaB returns the largest |δb| over every workload, granularity and
// both kinds, of contexts (b_approx) or of the totals.
func maxDeltaB(res *Results, total bool) (float64, string) {
	best, where := 0.0, "everywhere 0"
	for _, w := range res.Workloads {
		for k, as := range [][]Accuracy{w.Constant, w.Randomised} {
			kind := [...]string{"constant", "randomised"}[k]
			for _, a := range as {
				if a.Failed {
					continue
				}
				d := a.DeltaB
				if total {
					d = a.DeltaBTotal
				}
				if math.Abs(d) > best || math.IsNaN(d) {
					best, where = math.Abs(d), fmt.Sprintf("%s, g=%d %s", w.Name, a.Granularity, kind)
				}
			}
		}
	}
	return best, where
}

func (r *report) geomeanOverlap(g int64) float64 {
	var xs []float64
	for _, w := range r.res.Workloads {
		if a := w.randomisedAt(g); !a.Failed {
			xs = append(xs, a.Overlap)
		}
	}
	return geomean(xs)
}

func (r *report) summary(g int64) {
	res := r.res
	r.p("%s\n\n", Sections[0])
	r.p("Issue 5's targets at g = %d, randomised (R = %d), against the measured geometric means over the %d workloads. The paper's figures are for Java (SPEC JVM98) in 2006.\n\n", g, res.Jitter, len(res.Workloads))
	r.header("measure", "target", "paper", "measured", "")
	ov := r.geomeanOverlap(g)
	r.row("overlap with exact profile (geo. mean)", fmt.Sprintf("≥ %.0f %%", targetOverlap), "> 90 %", pct(ov)+" %", verdict(ov >= targetOverlap))
	sd := geomeanSlowdowns(res, cfgSample(g))
	r.row(fmt.Sprintf("slowdown, sampling at g = %d", g), fmt.Sprintf("≤ %.2f×", targetSlowdown), "1.47–1.56×", times(sd), verdict(sd <= targetSlowdown))
	off := geomeanSlowdowns(res, cfgOff)
	r.row("slowdown, No Prof. (KPROF_MODE=off)", fmt.Sprintf("≤ %.2f×", targetNoProf), "1.37–1.47×", times(off), verdict(off <= targetNoProf))
	ex := geomeanSlowdowns(res, cfgExact)
	r.row("slowdown, exact mode", fmt.Sprintf("≤ %.0f×", targetExact), "—", times(ex), verdict(ex <= targetExact))
	db, where := maxDeltaB(res, false)
	r.row(`max \|δb\| of b_approx, all settings`, "≤ 1e-4", "< 1e-2", sci(db)+" ("+where+")", verdict(db <= targetDeltaB))
	dt, whereT := maxDeltaB(res, true)
	r.row(`max \|δb\| of the agent's total, all settings`, "≤ 1e-4", "—", sci(dt)+" ("+whereT+")", verdict(dt <= targetDeltaB))
	r.p("\n")
	var missed []string
	if ov < targetOverlap {
		missed = append(missed, fmt.Sprintf("accuracy (%.2f %% < %.0f %%)", ov, targetOverlap))
	}
	if sd > targetSlowdown {
		missed = append(missed, fmt.Sprintf("sampling slowdown (%.2f× > %.2f×)", sd, targetSlowdown))
	}
	if off > targetNoProf {
		missed = append(missed, fmt.Sprintf("No Prof. slowdown (%.2f× > %.2f×)", off, targetNoProf))
	}
	if ex > targetExact {
		missed = append(missed, fmt.Sprintf("exact-mode slowdown (%.1f× > %.0f×)", ex, targetExact))
	}
	if db > targetDeltaB || dt > targetDeltaB {
		missed = append(missed, "δb")
	}
	if len(res.Failures) > 0 {
		missed = append(missed, fmt.Sprintf("%d runs exited normally but wrote no profile (listed below; their settings are left out of the means)", len(res.Failures)))
	}
	if len(missed) == 0 {
		r.p("Every target is met.\n\n")
	} else {
		r.p("Missed: %s.\n\n", strings.Join(missed, "; "))
	}
	if len(res.Failures) > 0 {
		r.p("Runs that wrote no profile:\n\n")
		for _, f := range res.Failures {
			r.p("- %s\n", f)
		}
		r.p("\n")
	}
}

func (r *report) granularityHeader(first string, extra ...string) {
	cells := []string{first}
	cells = append(cells, extra...)
	for _, g := range r.res.Granularities {
		cells = append(cells, fmt.Sprintf("%d", g))
	}
	r.header(cells...)
}

// accuracyTable writes one row per workload of field over the
// granularities, and the geometric mean.
func (r *report) accuracyTable(pick func(*Workload) []Accuracy, field func(Accuracy) float64, format func(float64) string, extra func(*Workload) string, extraName string) {
	if extra != nil {
		r.granularityHeader("workload", extraName)
	} else {
		r.granularityHeader("workload")
	}
	for _, w := range r.res.Workloads {
		cells := []string{w.Name}
		if extra != nil {
			cells = append(cells, extra(w))
		}
		for _, a := range pick(w) {
			if a.Failed {
				cells = append(cells, "failed")
				continue
			}
			cells = append(cells, format(field(a)))
		}
		r.row(cells...)
	}
	cells := []string{"**geo. mean**"}
	if extra != nil {
		cells = append(cells, "—")
	}
	for _, y := range geomeanAcross(r.res, pick, field) {
		cells = append(cells, "**"+format(y)+"**")
	}
	r.row(cells...)
	r.p("\n")
}

func (r *report) accuracy() {
	res := r.res
	r.p("%s\n\n", Sections[1])
	r.p("Overlap percentage (paper §7.1, `overlap.Contexts`) of each sampled profile with the workload's exact-mode profile: Σ over the calling contexts present in both of min(share in A, share in B), a context's share being its instructions (self, estimated from samples in sample mode) over the sum over all contexts. 100 = identical distributions. Figure: [%s](%s/%s).\n\n", FigAccuracy, FigDir, FigAccuracy)
	ov := func(a Accuracy) float64 { return a.Overlap }
	// The exact column compares the exact profile with itself: 100 by
	// construction, a check of the measure and of the table.
	self := func(w *Workload) string { return pct(w.ExactSelf) }
	r.p("Constant granularity (KPROF_JITTER=0), overlap %% (column exact: the exact profile with itself):\n\n")
	r.accuracyTable(constant, ov, pct, self, "exact")
	r.p("Randomised granularity (g + r, r uniform in [0, %d)), overlap %%:\n\n", res.Jitter)
	r.accuracyTable(randomised, ov, pct, self, "exact")
	r.p("On flat functions (`overlap.Functions`, callers ignored), randomised, overlap %%:\n\n")
	r.accuracyTable(randomised, func(a Accuracy) float64 { return a.FlatOverlap }, pct, self, "exact")
	r.p("![accuracy](%s/%s)\n\n", FigDir, FigAccuracy)
}

func (r *report) deltaBTable(pick func(*Workload) []Accuracy, total bool) {
	cells := []string{"granularity"}
	for _, w := range r.res.Workloads {
		cells = append(cells, w.Name)
	}
	r.header(cells...)
	for k, g := range r.res.Granularities {
		cells := []string{fmt.Sprintf("%d", g)}
		for _, w := range r.res.Workloads {
			a := pick(w)[k]
			if a.Failed {
				cells = append(cells, "failed")
				continue
			}
			d := a.DeltaB
			if total {
				d = a.DeltaBTotal
			}
			cells = append(cells, sci(d))
		}
		r.row(cells...)
	}
	r.p("\n")
}

func (r *report) deltaB() {
	r.p("%s\n\n", Sections[2])
	r.p("δb = (b_approx − b_exact) / b_exact (paper §7.2), b_exact being the exact profile's total instructions and b_approx the instructions the sampled profile attributes to its calling contexts (what an agent would multiply shares by). Negative: underestimate.\n\n")
	r.p("Randomised granularity:\n\n")
	r.deltaBTable(randomised, false)
	r.p("Constant granularity:\n\n")
	r.deltaBTable(constant, false)
	dt, where := maxDeltaB(r.res, true)
	r.p("The agent's own total (TotalInstructions, which `kprof compare` prints δb of) against the exact run's: max |δb| %s (%s).\n\n", sci(dt), where)
	var ctx []string
	for _, w := range r.res.Workloads {
		if w.ExactContexts != w.ExactTotal {
			ctx = append(ctx, fmt.Sprintf("%s %s", w.Name, sci(float64(w.ExactContexts-w.ExactTotal)/float64(max(w.ExactTotal, 1)))))
		}
	}
	if len(ctx) > 0 {
		r.p("In exact mode the contexts hold a different count from the total for: %s (relative difference).\n\n", strings.Join(ctx, ", "))
	} else {
		r.p("In exact mode the contexts hold exactly the total on every workload.\n\n")
	}
}

func (r *report) size() {
	r.p("%s\n\n", Sections[3])
	r.p("Calling contexts of each sampled profile (`overlap.Size`) as a percentage of the exact profile's (paper Fig. 11 measured bytes of a canonical representation; contexts are what that size grows with). Figure: [%s](%s/%s).\n\n", FigSize, FigDir, FigSize)
	sz := func(a Accuracy) float64 { return a.RelSize }
	exact := func(w *Workload) string { return fmt.Sprintf("%d", w.ExactSize) }
	r.p("Constant granularity, %% of the exact profile's contexts:\n\n")
	r.accuracyTable(constant, sz, pct, exact, "exact contexts")
	r.p("Randomised granularity, %% of the exact profile's contexts:\n\n")
	r.accuracyTable(randomised, sz, pct, exact, "exact contexts")
	r.p("![profile size](%s/%s)\n\n", FigDir, FigSize)
}

func (r *report) slowdown(g int64) {
	res := r.res
	r.p("%s\n\n", Sections[4])
	r.p("Wall-clock time over the plain `go build` binary's, median of %d runs each. The runs are interleaved: each round runs every workload in every configuration once. Sampling is randomised (R = %d); No Prof. is KPROF_MODE=off (counting, no agent); exact is KPROF_MODE=exact. Figures: [%s](%s/%s), [%s](%s/%s) (Fig. 15).\n\n",
		res.Runs, res.Jitter, FigSlowdown, FigDir, FigSlowdown, FigSummary, FigDir, FigSummary)
	configs := []string{cfgOff}
	names := []string{"No Prof."}
	for _, g := range res.Granularities {
		configs = append(configs, cfgSample(g))
		names = append(names, fmt.Sprintf("%d", g))
	}
	configs = append(configs, cfgExact)
	names = append(names, "exact")
	r.header(append([]string{"workload", "plain (s)"}, names...)...)
	for _, w := range res.Workloads {
		cells := []string{w.Name, fmt.Sprintf("%.2f", w.medianTime(cfgPlain, false))}
		for _, c := range configs {
			cells = append(cells, times(w.Slowdown(c, false)))
		}
		r.row(cells...)
	}
	for _, cpu := range []bool{false, true} {
		label := "**geo. mean**"
		if cpu {
			label = "geo. mean of CPU time (user+sys)"
		}
		cells := []string{label, "—"}
		for _, c := range configs {
			var xs []float64
			for _, w := range res.Workloads {
				xs = append(xs, w.Slowdown(c, cpu))
			}
			s := times(geomean(xs))
			if !cpu {
				s = "**" + s + "**"
			}
			cells = append(cells, s)
		}
		r.row(cells...)
	}
	r.p("\n![slowdown](%s/%s)\n\n![summary](%s/%s)\n\n", FigDir, FigSlowdown, FigDir, FigSummary)
	r.memory(g)
}

// memory writes the table of peak resident sets: what a profile costs in
// memory, besides time.
func (r *report) memory(g int64) {
	res := r.res
	configs := []string{cfgPlain, cfgOff, cfgSample(g), cfgExact}
	measured := false
	for _, w := range res.Workloads {
		for _, c := range configs {
			measured = measured || w.medianRSS(c) > 0
		}
	}
	if !measured {
		return // (results from before peak RSS was recorded)
	}
	r.p("Peak resident set (maximum RSS of the process, from its rusage), MB, median of the same runs:\n\n")
	r.header("workload", "plain", "No Prof.", fmt.Sprintf("%d", g), "exact")
	for _, w := range res.Workloads {
		cells := []string{w.Name}
		for _, c := range configs {
			if m := w.medianRSS(c); m > 0 {
				cells = append(cells, fmt.Sprintf("%.1f", m/(1<<20)))
			} else {
				cells = append(cells, "—")
			}
		}
		r.row(cells...)
	}
	r.p("\n")
}

func (r *report) pprof(g int64) {
	res := r.res
	r.p("%s\n\n", Sections[5])
	r.p("Go's timer-based CPU profiler (`runtime/pprof`, workloads' `-cpuprofile -cpuhz`) plays the paper's 'hprof'. There is no exact CPU-time profile to compare it with (hprof's cpu=times had one), so its accuracy is measured two ways: **run to run**, the mean overlap over all pairs of its %d timed runs; and **vs merged**, the mean overlap of each timed run with the merge of the other %d runs of the same binary (%d runs per rate in all, the timed ones included). kprof's columns are sampling at g = %d randomised against its exact profile, and two runs of each kprof mode against each other. Samples/s is samples over the median wall time. Figure: [%s](%s/%s).\n\n",
		res.Runs, res.PprofRuns-1, res.PprofRuns, g, FigPprof, FigDir, FigPprof)
	cells := []string{"workload"}
	for _, hz := range res.Rates {
		cells = append(cells, fmt.Sprintf("%d Hz slowdown", hz), fmt.Sprintf("%d Hz samples/s", hz),
			fmt.Sprintf("%d Hz run to run %%", hz), fmt.Sprintf("%d Hz vs merged %%", hz))
	}
	cells = append(cells, fmt.Sprintf("kprof g=%d samples/s", g), fmt.Sprintf("kprof g=%d vs exact %%", g),
		fmt.Sprintf("kprof g=%d run to run %%", g), "exact run to run %")
	r.header(cells...)
	cols := make([][]float64, len(cells)-1)
	for _, w := range res.Workloads {
		var vals []float64
		for k, hz := range res.Rates {
			pr := w.Pprof[k]
			vals = append(vals, w.Slowdown(cfgPprof(hz), false), pr.Samples/w.medianTime(cfgPprof(hz), false), pr.RunToRun, pr.VsMerged)
		}
		a := w.randomisedAt(g)
		vals = append(vals, float64(a.Samples)/w.medianTime(cfgSample(g), false), a.Overlap, a.Repeat, w.ExactRepeat)
		cells := []string{w.Name}
		for i, v := range vals {
			cols[i] = append(cols[i], v)
			cells = append(cells, r.pprofCell(i, v))
		}
		r.row(cells...)
	}
	cells = []string{"**geo. mean**"}
	for i, col := range cols {
		cells = append(cells, "**"+r.pprofCell(i, geomean(col))+"**")
	}
	r.row(cells...)
	r.p("\n")
	var dropped []string
	for _, w := range res.Workloads {
		for _, pr := range w.Pprof {
			if pr.Samples > 0 && pr.Dropped/pr.Samples > 0.05 {
				dropped = append(dropped, fmt.Sprintf("%s %d Hz %.0f %%", w.Name, pr.Hz, 100*pr.Dropped/pr.Samples))
			}
		}
	}
	if len(dropped) > 0 {
		r.p("Samples with no instrumented frame (garbage collector, scheduler; dropped, see below) were more than 5 %% of a profile for: %s.\n\n", strings.Join(dropped, ", "))
	}
	identical := true
	for _, w := range res.Workloads {
		for _, a := range w.Randomised {
			identical = identical && a.Identical
		}
	}
	if identical {
		r.p("Every pair of kprof sampling runs compared wrote byte-identical profiles.\n\n")
	} else {
		var diff []string
		lowest, where := 100.0, ""
		for _, w := range res.Workloads {
			for _, a := range w.Randomised {
				if !a.Identical && !a.Failed {
					diff = append(diff, fmt.Sprintf("%s g=%d (overlap %.2f %%)", w.Name, a.Granularity, a.Repeat))
					if a.Repeat < lowest {
						lowest, where = a.Repeat, fmt.Sprintf("%s at g=%d", w.Name, a.Granularity)
					}
				}
			}
		}
		r.p("Two timed runs of the same kprof setting wrote different profiles for: %s. Go's own nondeterminism reaches counted code (the README's \"Not yet\"): a sync.Pool that the garbage collector emptied makes Get take its slow path, and GC timing differs from run to run, also in single-goroutine programs; select's random choice and map seeds do the rest. The lowest run-to-run overlap is %.2f %% (%s): there, one run per setting is a sample of one, not the profile, and the accuracy figures carry that noise.\n\n", strings.Join(diff, ", "), lowest, where)
	}
	r.p("![pprof](%s/%s)\n\n", FigDir, FigPprof)
}

// pprofCell formats column i of the pprof table: per rate, slowdown,
// samples/s, two overlaps; then kprof's samples/s and three overlaps.
func (r *report) pprofCell(i int, v float64) string {
	nRates := len(r.res.Rates)
	if i < 4*nRates {
		switch i % 4 {
		case 0:
			return times(v)
		case 1:
			return fmt.Sprintf("%.0f", v)
		}
		return pct(v)
	}
	if i == 4*nRates {
		return fmt.Sprintf("%.0f", v)
	}
	return pct(v)
}

func (r *report) conversion() {
	r.p("%s\n\n", Sections[6])
	r.p(`A runtime/pprof CPU profile becomes a calling-context tree (` + "`profile.Profile`" + `) so that the same overlap measure applies (bench/internal/pprofconv):

- a sample's stack runs from its outermost location to the leaf, and each location's inlined functions are expanded into frames (pprof lists them innermost first): kprof's reified stack is kept at source level, so an inlined call is a frame there too;
- frames are kept only for functions kprof would instrument: the functions of packages that ` + "`toolexec.Config.Instrumented`" + ` accepts, given the packages ` + "`go list -deps runtime`" + ` prints (kprof build asks the same), minus assembly (a .s file), compiler-generated wrappers and equality functions (` + "`<autogenerated>`" + `, ` + "`type:.eq.…`" + `) and package initializers. So runtime.main, runtime.goexit, the allocator, memmove and the scheduler never appear, as they never appear on kprof's stack;
- a sample counts for the context its kept frames spell: time spent in an uninstrumented callee (the allocator, assembly) goes to its nearest instrumented caller, as native methods' time went to their Java caller under hprof. A sample with no kept frame (a GC worker, the scheduler) is dropped;
- a function is named as kprof names it: name, file, declaration line; a context's weight is its number of samples (each stands for one period of CPU time), where kprof's is its instructions.

The overlap then compares distributions over the same kind of contexts, but of a different metric: CPU time, not instructions; so pprof is compared only with pprof here, as the paper compared hprof only with hprof. runtime/pprof keeps at most 64 frames of a stack; deeper contexts are cut, the same way in every pprof profile. Functions kprof skips by directive (` + "`//go:nosplit`" + ` and the like) cannot be told from a pprof profile and keep their frames.

`)
}

func (r *report) method() {
	res := r.res
	r.p("%s\n\n", Sections[7])
	r.p("- Builds: `go build` and `kprof build` with default options (MaxPath 50, small-leaf 50); the kprof binary is built from the same tree first.\n")
	r.p("- Accuracy, δb and size take one run per setting, kprof's profiles being deterministic up to Go's own nondeterminism (measured above as run-to-run overlap): the randomised profiles are those of the first timed run, the exact profile that of exact mode's first timed run, the constant-granularity profiles come from one extra untimed run each. The harness checks that every run of every build prints the plain build's checksum line, and compares two runs of each timed kprof setting (tables above).\n")
	r.p("- Slowdown is wall-clock time, which includes writing the profile at exit. The machine is shared with other engineers' builds and tests: timings are noisy, more so for the two workloads that use both cores (mtrt, pipeline) and for any run that met another job. The CPU-time row is less sensitive to that load. Accuracy, δb and size do not depend on the load.\n")
	r.p("- Overlap means across workloads are geometric, as in the paper; slowdowns too.\n")
	r.p("- Sample counts per second are not comparable across machines for pprof (time-based) but are for kprof only through the workload's speed: kprof samples every g instructions.\n")
	if res.Quick {
		r.p("- Quick mode: -n %s, granularities %v, %d runs, %d pprof runs, workloads %s.\n", res.N, res.Granularities, res.Runs, res.PprofRuns, workloadNames(res))
	}
	r.p("\n")
}

func workloadNames(res *Results) string {
	var names []string
	for _, w := range res.Workloads {
		names = append(names, w.Name)
	}
	return strings.Join(names, ", ")
}
