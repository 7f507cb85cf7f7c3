package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
)

// The -bench mode: per module, kprof test -run '^$' -bench . -benchtime
// 20x -count C in P processes one after the other, and whether each
// benchmark's instructions/op is the same in all runs (issue 23). With
// P > 1, a benchmark that differs between the -count runs of a process but
// gives the same sequence in every process is told apart from one that
// differs between processes: the first is one-time work (a cache filled
// in the first run) or per-run state, the same on every run of the
// command; the second is what a gate that compares two commands sees.

// metricUnit is the unit kprof test adds to every benchmark line.
const metricUnit = "instructions/op"

// Benchmark verdicts.
const (
	benchIdentical  = "identical"
	benchWithin     = "same in every process, differs between -count runs"
	benchDiffers    = "differs"
	benchNoMetric   = "no instructions/op"
	benchIncomplete = "incomplete" // fewer lines than -count (a timeout, a failure)
)

// A BenchStat is one benchmark's lines in the kprof test runs of a
// module.
type BenchStat struct {
	Pkg    string    // pkg: of its lines
	Name   string    // full name, with the -GOMAXPROCS suffix
	Lines  int       // result lines seen
	Values []float64 // instructions/op of the lines that have it, in order, process after process
}

// Key is the package and name, as a report lists it.
func (s *BenchStat) Key() string {
	if s.Pkg == "" {
		return "Benchmark" + s.Name
	}
	return s.Pkg + " Benchmark" + s.Name
}

// Verdict compares the benchmark's values over procs processes of count
// runs each.
func (s *BenchStat) Verdict(count, procs int) string {
	switch {
	case len(s.Values) == 0:
		return benchNoMetric
	case len(s.Values) < count*procs || s.Lines < count*procs:
		return benchIncomplete
	}
	if !slices.ContainsFunc(s.Values, func(v float64) bool { return v != s.Values[0] }) {
		return benchIdentical
	}
	if procs == 1 {
		return benchDiffers
	}
	first := s.Values[:count]
	for p := 1; p < procs; p++ {
		if !slices.Equal(s.Values[p*count:(p+1)*count], first) {
			return benchDiffers
		}
	}
	return benchWithin
}

// Values formats the values, comma-separated.
func (s *BenchStat) values() string {
	var f []string
	for _, v := range s.Values {
		f = append(f, strconv.FormatFloat(v, 'f', -1, 64))
	}
	return strings.Join(f, ", ")
}

// parseBench reads the go test -bench outputs of one or more processes
// with benchfmt and gathers each benchmark's lines, in the order
// benchmarks first appear.
func parseBench(outs ...[]byte) ([]*BenchStat, error) {
	var stats []*BenchStat
	byKey := map[string]*BenchStat{}
	r := benchfmt.NewReader(io.MultiReader(), "output")
	for i, out := range outs {
		r.Reset(bytes.NewReader(out), fmt.Sprintf("output %d", i+1))
		if err := scanBench(r, &stats, byKey); err != nil {
			return stats, err
		}
	}
	return stats, nil
}

// scanBench adds the results r reads to stats and byKey.
func scanBench(r *benchfmt.Reader, stats *[]*BenchStat, byKey map[string]*BenchStat) error {
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue // unit metadata, or a line that is not a result
		}
		pkg := ""
		if i, ok := res.ConfigIndex("pkg"); ok {
			pkg = string(res.Config[i].Value)
		}
		s := &BenchStat{Pkg: pkg, Name: string(res.Name.Full())}
		if old := byKey[s.Key()]; old != nil {
			s = old
		} else {
			byKey[s.Key()] = s
			*stats = append(*stats, s)
		}
		s.Lines++
		for _, v := range res.Values {
			if v.Unit == metricUnit {
				s.Values = append(s.Values, v.Value)
				break
			}
		}
	}
	return r.Err()
}

// A BenchResult is the -bench mode's measure of one module.
type BenchResult struct {
	Module Module
	Setup  string // why the module could not be prepared
	Status string // of the kprof test -bench command
	Wall   time.Duration
	Errors []string // first lines of a failure
	Stats  []*BenchStat
}

// count is how many of r's benchmarks have each verdict.
func (r *BenchResult) count(runs, procs int) map[string]int {
	n := map[string]int{}
	for _, s := range r.Stats {
		n[s.Verdict(runs, procs)]++
	}
	return n
}

// A BenchReport is a -bench corpus run.
type BenchReport struct {
	Header
	Benchtime string
	Count     int
	Procs     int           // kprof test processes per module
	Timeout   time.Duration // of one module's kprof test -bench
	Results   []BenchResult
}

// benchArgs is kprof test's arguments for m's benchmarks. m.Flags'
// -skip, which names tests, gives way to m.BenchSkip.
func benchArgs(m Module, benchtime string, count int, timeout time.Duration) []string {
	args := []string{"test", "-run", "^$", "-bench", ".", "-benchtime=" + benchtime,
		"-count=" + strconv.Itoa(count), "-timeout", timeout.String()}
	return append(args, benchTargets(m)...)
}

// benchTargets is m's flags for its benchmarks and its packages.
func benchTargets(m Module) []string {
	var args []string
	for i := 0; i < len(m.Flags); i++ {
		if m.Flags[i] == "-skip" {
			i++
			continue
		}
		args = append(args, m.Flags[i])
	}
	if m.BenchSkip != "" {
		args = append(args, "-skip", m.BenchSkip)
	}
	return append(args, m.Pkgs...)
}

// measureBench prepares m, builds its instrumented test binaries (under
// the general -timeout) and runs its benchmarks under benchTimeout.
func measureBench(r *runner, m Module, benchtime string, count, procs int, benchTimeout time.Duration, start time.Time) BenchResult {
	res := BenchResult{Module: m}
	dir, _, err := r.prepare(m)
	if err != nil {
		res.Setup = err.Error()
		progressf("  setup failed: %s", firstLines([]byte(res.Setup), 3))
		return res
	}
	// KPROF_MODE is left unset: sample mode, kprof test's default.
	build := r.run(dir, nil, r.kprof, append([]string{"test", "-run", "^$", "-exec", r.self}, benchTargets(m)...)...)
	progressf("  build        %-7s %6.1f s (elapsed %s)", build.status(), build.wall.Seconds(), time.Since(start).Round(time.Second))
	if build.err != nil {
		res.Status, res.Wall, res.Errors = statusBuild, build.wall, failureLines(build.output, 8)
		return res
	}
	testTimeout := benchTimeout - benchTimeout/10
	br := *r
	br.timeout = benchTimeout
	args := benchArgs(m, benchtime, count, testTimeout)
	args = append(args[:1], append([]string{"-exec", r.self}, args[1:]...)...)
	res.Status = statusPass
	var outs [][]byte
	for p := range procs {
		o := br.run(dir, nil, r.kprof, args...)
		res.Wall += o.wall
		outs = append(outs, o.output)
		progressf("  bench %d/%d    %-7s %6.1f s (elapsed %s)", p+1, procs, o.status(), o.wall.Seconds(), time.Since(start).Round(time.Second))
		if o.err != nil {
			res.Status, res.Errors = o.status(), failureLines(o.output, 8)
			break
		}
	}
	res.Stats, err = parseBench(outs...)
	if err != nil {
		res.Errors = append(res.Errors, "parse: "+err.Error())
	}
	n := res.count(count, procs)
	progressf("  bench        %-7s %d benchmarks, %d identical, %d differ between -count runs only, %d differ",
		res.Status, len(res.Stats), n[benchIdentical], n[benchWithin], n[benchDiffers])
	return res
}

// Summary is the report's summary line.
func (rep *BenchReport) Summary() string {
	ident, within, total := 0, 0, 0
	for _, r := range rep.Results {
		n := r.count(rep.Count, rep.Procs)
		ident += n[benchIdentical]
		within += n[benchWithin]
		total += len(r.Stats)
	}
	s := fmt.Sprintf("%d of %d benchmarks identical across %d runs", ident, total, rep.Count*rep.Procs)
	if rep.Procs > 1 {
		s += fmt.Sprintf(" (%d processes of %d); %d more the same in every process but not between its -count runs", rep.Procs, rep.Count, within)
	}
	return s
}

// Markdown writes the -bench report.
func (rep *BenchReport) Markdown(w io.Writer) error {
	var b bytes.Buffer
	rep.header(&b, "kprof: instructions/op across runs on the corpus' benchmarks", len(rep.Results))
	fmt.Fprintf(&b, "- Per module: `kprof test -run '^$' -bench . -benchtime=%s -count=%d` on its packages, %d time(s) one after the other, KPROF_MODE unset (sample), each limited to %s\n\n",
		rep.Benchtime, rep.Count, rep.Procs, rep.Timeout)
	fmt.Fprintf(&b, "**%s.**", rep.Summary())
	var noMetric, incomplete, noBench int
	for _, r := range rep.Results {
		n := r.count(rep.Count, rep.Procs)
		noMetric += n[benchNoMetric]
		incomplete += n[benchIncomplete]
		if r.Setup == "" && r.Status != statusBuild && len(r.Stats) == 0 {
			noBench++
		}
	}
	fmt.Fprintf(&b, " Without instructions/op: %d; with fewer than %d lines: %d; modules without benchmarks: %d.\n\n",
		noMetric, rep.Count*rep.Procs, incomplete, noBench)

	b.WriteString("| module | packages | status | time | benchmarks | identical | same per process | differ | no instructions/op | incomplete |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rep.Results {
		m := r.Module
		pkgs := "`" + strings.Join(m.Pkgs, " ") + "`"
		if m.BenchSkip != "" {
			pkgs += " `-skip " + m.BenchSkip + "`"
		}
		status := r.Status
		switch {
		case r.Setup != "":
			status = "**setup failed**"
		case len(r.Stats) == 0 && r.Status == statusPass:
			status = "pass, no benchmarks"
		case r.Status != statusPass:
			status = "**" + r.Status + "**"
		}
		n := r.count(rep.Count, rep.Procs)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %d | %d | %d |\n", m.Name(), pkgs, status, secs(r.Wall),
			len(r.Stats), n[benchIdentical], n[benchWithin], n[benchDiffers], n[benchNoMetric], n[benchIncomplete])
	}

	for _, verdict := range []string{benchDiffers, benchWithin, benchIncomplete, benchNoMetric} {
		var lines []string
		for _, r := range rep.Results {
			for _, s := range r.Stats {
				if s.Verdict(rep.Count, rep.Procs) == verdict {
					lines = append(lines, fmt.Sprintf("- `%s` (%s): %d lines; instructions/op %s", s.Key(), r.Module.Name(), s.Lines, s.values()))
				}
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n## Benchmarks: %s\n\n%s\n", verdict, strings.Join(lines, "\n"))
		}
	}

	var fails []string
	for _, r := range rep.Results {
		switch {
		case r.Setup != "":
			fails = append(fails, fmt.Sprintf("### %s: setup\n\n```\n%s\n```\n", r.Module.Name(), firstLines([]byte(r.Setup), 8)))
		case r.Status != statusPass:
			fails = append(fails, fmt.Sprintf("### %s: %s\n\n```\n%s\n```\n", r.Module.Name(), r.Status, strings.Join(r.Errors, "\n")))
		}
	}
	if len(fails) > 0 {
		fmt.Fprintf(&b, "\n## Failures\n\n%s", strings.Join(fails, "\n"))
	}
	_, err := w.Write(b.Bytes())
	return err
}
