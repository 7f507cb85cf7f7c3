package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Run statuses.
const (
	statusPass    = "pass"
	statusFail    = "fail"
	statusTimeout = "timeout"
	statusBuild   = "build failed" // the warm-up build failed; no test ran
	statusMemory  = "over RSS limit"
)

func (o outcome) status() string {
	switch {
	case o.err == nil:
		return statusPass
	case o.timeout:
		return statusTimeout
	case o.overRSS:
		return statusMemory
	}
	return statusFail
}

// A Run is one go test or kprof test of a module's packages.
type Run struct {
	Status  string
	Wall    time.Duration
	TestRSS int64    // KiB, largest test binary
	TreeRSS int64    // KiB, largest process of the whole command
	Errors  []string // first lines of a failure
}

// A Result is everything measured on one module.
type Result struct {
	Module Module
	GoLine string // go.mod's go version, noGoMod or noGoLine
	// Setup is why the module could not be prepared, if it could not.
	Setup string
	// Build is the warm-up build ("plain", "kprof"): go test -run '^$'.
	Build map[string]time.Duration
	// Runs are keyed by "plain" and by kprof mode.
	Runs map[string]*Run
}

// A Report is a corpus run: its setting and its results.
type Report struct {
	Header
	Modes   []string
	Results []Result
}

// Header is what a report says of the run that made it.
type Header struct {
	Date      time.Time
	Nproc     int
	GoVersion string // go version under the run's GOTOOLCHAIN
	Toolchain string // GOTOOLCHAIN of the run, "" for the default
	Command   string
	Commit    string // kprof commit
	Total     int    // modules planned: the report is partial below that
}

// header writes a report's title and the run's lines; ran is the number
// of modules that ran.
func (r *Header) header(b *bytes.Buffer, title string, ran int) {
	fmt.Fprintf(b, "# %s\n\n", title)
	if ran < r.Total {
		fmt.Fprintf(b, "**PARTIAL: %d of %d modules ran.**\n\n", ran, r.Total)
	}
	toolchain := r.Toolchain
	if toolchain == "" {
		toolchain = "default"
	}
	fmt.Fprintf(b, "- Date: %s\n", r.Date.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(b, "- Machine: %d CPUs (nproc), %s (GOTOOLCHAIN %s)\n", r.Nproc, r.GoVersion, toolchain)
	fmt.Fprintf(b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(b, "- kprof: commit %s\n", r.Commit)
}

// writeMarkdown writes a report to the file path.
func writeMarkdown(path string, rep interface{ Markdown(io.Writer) error }) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.Markdown(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ratio is kprof's wall time over plain go test's for a mode, or 0 when
// either did not pass.
func (r *Result) ratio(mode string) float64 {
	p, k := r.Runs["plain"], r.Runs[mode]
	if p == nil || k == nil || p.Status != statusPass || k.Status != statusPass || p.Wall <= 0 {
		return 0
	}
	return k.Wall.Seconds() / p.Wall.Seconds()
}

func (r *Result) passed(mode string) bool {
	run := r.Runs[mode]
	return run != nil && run.Status == statusPass
}

// Summary figures of one kprof mode.
type modeSummary struct {
	mode          string
	pass, of      int // kprof passes, among modules whose plain run passed
	median, worst float64
	worstModule   string
}

func (rep *Report) summarize(mode string) modeSummary {
	s := modeSummary{mode: mode}
	var ratios []float64
	for i := range rep.Results {
		r := &rep.Results[i]
		if !r.passed("plain") {
			continue
		}
		s.of++
		if r.passed(mode) {
			s.pass++
		}
		if x := r.ratio(mode); x > 0 {
			ratios = append(ratios, x)
			if x > s.worst {
				s.worst, s.worstModule = x, r.Module.Name()
			}
		}
	}
	s.median = median(ratios)
	return s
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// outlier says why a module's sample-mode run is out of line — peak RSS
// above 2× plain + 64 MB, or time above 3× plain — or "" if it is not.
func (r *Result) outlier(mode string) string {
	p, k := r.Runs["plain"], r.Runs[mode]
	if !r.passed("plain") || k == nil || k.Status != statusPass {
		return ""
	}
	var why []string
	if k.TestRSS > 2*p.TestRSS+64*1024 {
		why = append(why, fmt.Sprintf("RSS %s vs %s plain", mb(k.TestRSS), mb(p.TestRSS)))
	}
	if x := r.ratio(mode); x > 3 {
		why = append(why, fmt.Sprintf("time %.2f×", x))
	}
	return strings.Join(why, ", ")
}

func mb(kib int64) string {
	if kib <= 0 {
		return "–"
	}
	return fmt.Sprintf("%d MB", (kib+512)/1024)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// cell is a kprof mode's table cell: ratio and status.
func (r *Result) cell(mode string) string {
	run := r.Runs[mode]
	switch {
	case run == nil:
		return "–"
	case run.Status != statusPass:
		return "**" + run.Status + "**"
	case r.ratio(mode) > 0:
		return fmt.Sprintf("%.2f× pass", r.ratio(mode))
	default:
		return secs(run.Wall) + " pass"
	}
}

func (r *Result) rss(mode string) string {
	if run := r.Runs[mode]; run != nil {
		return mb(run.TestRSS)
	}
	return "–"
}

// packages is the tested packages and extra flags, for the table.
func (m Module) packages() string {
	s := "`" + strings.Join(m.Pkgs, " ") + "`"
	if len(m.Flags) > 0 {
		s += " `" + strings.Join(m.Flags, " ") + "`"
	}
	return s
}

// Markdown writes the report.
func (rep *Report) Markdown(w io.Writer) error {
	var b bytes.Buffer
	modes := rep.Modes
	rep.header(&b, "kprof on a corpus of real modules", len(rep.Results))
	fmt.Fprintf(&b, "- Modes: KPROF_MODE=%s\n\n", strings.Join(modes, ", "))

	b.WriteString(`Each module's source is copied from the module cache to a directory ending
in its module path and tested there with its own go.mod (a module without one
gets a bare ` + "`module`" + ` line, which means go1.16). Per module, in this order:
a warm-up build of each (` + "`go test -run '^$'`" + ` and ` + "`kprof test -run '^$'`" + `,
"build" below), then ` + "`go test -short -count=1`" + ` and ` + "`kprof test -short -count=1`" + `
once per KPROF_MODE, one right after the other so that load on the shared
machine falls on them alike. Times are wall times of the whole command with a
warm build cache (link and test run, mostly); a ratio is kprof's over plain
go test's. RSS is the peak resident set of the largest test binary, measured
by this command acting as go test's ` + "`-exec`" + ` wrapper (wait4's rusage of the
binary); "tree" RSS is the largest process of the whole command — go, compile,
link, kprof's toolexec or a test binary — from the rusage of the command.
The wrapper kills a test binary whose resident set passes -maxrss ("over RSS
limit"), and a command that passes -timeout is killed too.

`)
	b.WriteString("| module | go.mod | packages | plain |")
	for _, m := range modes {
		fmt.Fprintf(&b, " %s |", m)
	}
	b.WriteString(" RSS plain |")
	for _, m := range modes {
		fmt.Fprintf(&b, " RSS %s |", m)
	}
	b.WriteString("\n|" + strings.Repeat(" --- |", 5+2*len(modes)) + "\n")
	for i := range rep.Results {
		r := &rep.Results[i]
		fmt.Fprintf(&b, "| %s | %s | %s | ", r.Module.Name(), r.GoLine, r.Module.packages())
		if r.Setup != "" {
			b.WriteString("**setup failed** |" + strings.Repeat(" – |", 2*len(modes)+1) + "\n")
			continue
		}
		if p := r.Runs["plain"]; p != nil && p.Status == statusPass {
			b.WriteString(secs(p.Wall) + " pass |")
		} else {
			b.WriteString(r.cell("plain") + " |")
		}
		for _, m := range modes {
			fmt.Fprintf(&b, " %s |", r.cell(m))
		}
		fmt.Fprintf(&b, " %s |", r.rss("plain"))
		for _, m := range modes {
			fmt.Fprintf(&b, " %s |", r.rss(m))
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## Summary\n\n")
	plainPass := 0
	for i := range rep.Results {
		if rep.Results[i].passed("plain") {
			plainPass++
		}
	}
	fmt.Fprintf(&b, "- plain go test: %d of %d modules pass\n", plainPass, len(rep.Results))
	for _, m := range modes {
		s := rep.summarize(m)
		fmt.Fprintf(&b, "- %s: passes %d of %d (%s)", m, s.pass, s.of, percent(s.pass, s.of))
		if s.worst > 0 {
			fmt.Fprintf(&b, "; time ratio median %.2f×, worst %.2f× (%s)", s.median, s.worst, s.worstModule)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nOut of line in sample mode (RSS > 2× plain + 64 MB, or time > 3× plain):")
	n := 0
	for i := range rep.Results {
		r := &rep.Results[i]
		if why := r.outlier("sample"); why != "" {
			fmt.Fprintf(&b, "\n- %s: %s", r.Module.Name(), why)
			n++
		}
	}
	if n == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")

	b.WriteString("\n## Builds\n\nWarm-up build times and the tree RSS (largest over the module's commands of that tool).\n\n")
	b.WriteString("| module | traits | build plain | build kprof | tree RSS plain | tree RSS kprof |\n| --- | --- | --- | --- | --- | --- |\n")
	for i := range rep.Results {
		r := &rep.Results[i]
		var plainTree, kprofTree int64
		for mode, run := range r.Runs {
			if mode == "plain" {
				plainTree = max(plainTree, run.TreeRSS)
			} else {
				kprofTree = max(kprofTree, run.TreeRSS)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.Module.Name(), r.Module.Traits,
			buildTime(r.Build, "plain"), buildTime(r.Build, "kprof"), mb(plainTree), mb(kprofTree))
	}

	var fails bytes.Buffer
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Setup != "" {
			fmt.Fprintf(&fails, "\n### %s: setup\n\n```\n%s\n```\n", r.Module.Name(), r.Setup)
			continue
		}
		for _, m := range append([]string{"plain"}, modes...) {
			run := r.Runs[m]
			if run == nil || run.Status == statusPass {
				continue
			}
			fmt.Fprintf(&fails, "\n### %s: %s, %s\n\n```\n%s\n```\n", r.Module.Name(), m, run.Status, strings.Join(run.Errors, "\n"))
		}
	}
	if fails.Len() > 0 {
		b.WriteString("\n## Failures\n\nThe first lines of each failure.\n")
		b.Write(fails.Bytes())
	}
	_, err := w.Write(b.Bytes())
	return err
}

func buildTime(build map[string]time.Duration, tool string) string {
	if d, ok := build[tool]; ok {
		return secs(d)
	}
	return "–"
}

func percent(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}

// failureLines picks the first lines of a failed command's output that
// say what went wrong: from the first line that looks like a failure,
// or the last lines if none does.
func failureLines(out []byte, n int) []string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	start := -1
	for i, l := range lines {
		if failureLine(l) {
			start = i
			break
		}
	}
	if start < 0 {
		start = max(0, len(lines)-n)
	}
	var picked []string
	for _, l := range lines[start:] {
		if len(picked) == n {
			break
		}
		if strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- PASS") || strings.TrimSpace(l) == "" {
			continue
		}
		if len(l) > 240 {
			l = l[:240] + "…"
		}
		picked = append(picked, l)
	}
	return picked
}

func failureLine(l string) bool {
	for _, p := range []string{"--- FAIL", "panic:", "fatal error:", "# ", "FAIL", "kprof", "go: ", "signal: ", "corpus: "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return strings.Contains(l, "error") || strings.Contains(l, ".go:")
}

// firstLines is at most n lines of out.
func firstLines(out []byte, n int) string {
	lines := strings.SplitN(string(out), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
