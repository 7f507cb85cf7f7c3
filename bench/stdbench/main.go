// Command stdbench measures kprof's overhead on the Go standard library's
// own benchmarks: the broad performance corpus of issue 25. It owns the
// corpus (which packages and benchmarks, with what it leaves out and why:
// corpus.go), running it and the report; kprof itself is built from this
// repository or given.
//
// For every package of the corpus it builds two test binaries once, plain
// (go test -c) and instrumented (kprof test -c; KPROF_MODE picks the mode
// at run time), then runs them interleaved: each round runs, package by
// package, the plain binary and the instrumented one in every mode one
// after the other (the order rotating from round to round), all with the
// same fixed -benchtime. It reports, per package and overall, the
// geometric mean, p50, p90 and maximum of each mode's ratio of median
// ns/op to plain's, the worst benchmarks of each mode and the test
// binaries' peak memory (max RSS).
//
//	go run ./bench/stdbench [-rounds 3] [-benchtime 150ms] [-modes off,sample,exact]
//	    [-pkgs strings,bytes] [-quick] [-kprof PATH | -rev REV] [-o report.md] [-json report.json]
//
// Progress goes to stderr, one line per build and per run. SIGINT or -stop
// (a wall-clock budget) ends the run early with a report marked partial,
// over the rounds that finished and the packages of the cut round that ran
// in every variant. -from re-renders the report of an earlier run's -json
// output; -list prints the corpus.
//
// A full run on 2 cores takes about 15 minutes of builds from a cold cache
// and 20 to 30 minutes per round (1100 benchmarks in 4 variants); -quick
// takes seconds with a warm build cache.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kprof/kprof/toolchain"
)

type options struct {
	pkgs      []string
	rounds    int
	benchtime string
	modes     []string
	quick     bool
	kprof     string
	rev       string
	out       string
	jsonOut   string
	work      string
	timeout   time.Duration
	stop      time.Duration
}

func main() {
	var o options
	pkgs := flag.String("pkgs", "", "comma-separated subset of the corpus's packages (default: all; see -list)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds: each runs every package in every variant once")
	flag.StringVar(&o.benchtime, "benchtime", "150ms", "-benchtime of every run (a duration keeps runs equally long in every mode)")
	modes := flag.String("modes", "off,sample,exact", "kprof modes to measure against plain go test")
	flag.BoolVar(&o.quick, "quick", false, "tiny slice for CI: 2 packages, a handful of benchmarks, 1 round, 20ms")
	flag.StringVar(&o.kprof, "kprof", "", "kprof binary to use (default: build ./cmd/kprof of the working tree)")
	flag.StringVar(&o.rev, "rev", "", "build kprof from this git revision (git archive) instead of the working tree")
	flag.StringVar(&o.out, "o", "", "markdown report file (default: standard output)")
	flag.StringVar(&o.jsonOut, "json", "", "also write the figures and every sample as JSON to this file")
	flag.StringVar(&o.work, "work", "", "directory for the test binaries and raw outputs (default: a temporary one, removed)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "timeout of one test binary run")
	flag.DurationVar(&o.stop, "stop", 0, "wall-clock budget: start no round after it and stop runs at it; the report says partial")
	from := flag.String("from", "", "write the report (-o, -json) of an earlier run's -json output instead of running")
	list := flag.Bool("list", false, "list the corpus's packages, benchmark patterns and what they leave out, and exit")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/stdbench [flags]   (from the repository root)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 || o.rounds < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *list {
		for _, p := range corpus {
			for _, pat := range p.patterns() {
				fmt.Printf("%-20s -bench %q -skip %q %s\n", p.Path, pat.Bench, pat.Skip, p.Tags)
			}
			if p.Why != "" {
				fmt.Printf("%20s %s\n", "", p.Why)
			}
		}
		return
	}
	for m := range strings.SplitSeq(*modes, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		if m != "off" && m != "sample" && m != "exact" {
			fatalf("-modes: %q is not off, sample or exact", m)
		}
		o.modes = append(o.modes, m)
	}
	if *pkgs != "" {
		o.pkgs = strings.Split(*pkgs, ",")
	}
	if *from != "" {
		if err := rerender(*from, o); err != nil {
			fatalf("%v", err)
		}
		return
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if o.stop > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, o.stop)
		defer c2()
	}
	if err := stdbench(ctx, o, os.Args); err != nil {
		fatalf("%v", err)
	}
}

// selected returns the corpus entries a run measures.
func selected(o options) ([]pkgSpec, error) {
	if o.quick {
		return quickCorpus, nil
	}
	if len(o.pkgs) == 0 {
		return corpus, nil
	}
	var ps []pkgSpec
	for _, name := range o.pkgs {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(corpus, func(p pkgSpec) bool { return p.Path == name })
		if i < 0 {
			// Not in the corpus: all its benchmarks.
			ps = append(ps, pkgSpec{Path: name})
			continue
		}
		ps = append(ps, corpus[i])
	}
	return ps, nil
}

func stdbench(ctx context.Context, o options, argv []string) error {
	start := time.Now()
	loadStart := loadAvg()
	if o.quick {
		o.rounds = 1
		if !flagSet("benchtime") {
			o.benchtime = "20ms"
		}
	}
	ps, err := selected(o)
	if err != nil {
		return err
	}
	dir := o.work
	if dir == "" {
		d, err := os.MkdirTemp("", "kprof-stdbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	kprof, kprofDesc, err := kprofBinary(o, dir)
	if err != nil {
		return err
	}
	progress("kprof: %s", kprofDesc)

	type built struct {
		spec            pkgSpec
		src, plain, ins string
	}
	var bs []built
	var failures []run
	for i, p := range ps {
		if ctx.Err() != nil {
			break
		}
		t := time.Now()
		src, err := exec.Command("go", "list", "-f", "{{.Dir}}", p.Path).Output()
		if err != nil {
			return fmt.Errorf("go list %s: %v", p.Path, err)
		}
		pb, kb, err := binaries(ctx, kprof, dir, p)
		if err != nil {
			progress("[%s] build %d/%d %s: FAILED: %s", elapsed(start), i+1, len(ps), p.Path, firstLines([]byte(err.Error()), 1))
			failures = append(failures, run{Pkg: p.Path, Variant: "build", Err: err.Error()})
			continue
		}
		progress("[%s] build %d/%d %s: %.0fs", elapsed(start), i+1, len(ps), p.Path, time.Since(t).Seconds())
		bs = append(bs, built{p, strings.TrimSpace(string(src)), pb, kb})
	}

	variants := append([]string{plain}, o.modes...)
	var samples []sample
	runs := failures
	raw, err := os.Create(filepath.Join(dir, "raw.txt"))
	if err != nil {
		return err
	}
	defer raw.Close()
	partial := ""
	roundsDone := 0
rounds:
	for round := 1; round <= o.rounds; round++ {
		for i, b := range bs {
			// Rotate the variants' order from round to round (and package
			// to package), so that none always runs first after another
			// package's runs.
			for j := range variants {
				v := variants[(j+round+i)%len(variants)]
				if ctx.Err() != nil {
					partial = fmt.Sprintf("stopped (%v) in round %d of %d", context.Cause(ctx), round, o.rounds)
					break rounds
				}
				bin := b.plain
				if v != plain {
					bin = b.ins
				}
				out, r := runBinary(ctx, bin, b.src, filepath.Join(dir, "profile.kprof"), b.spec, v, o.benchtime, o.timeout)
				r.Round = round
				fmt.Fprintf(raw, "# %s %s round %d\n%s\n", b.spec.Path, v, round, out)
				ss, perr := parseBench(b.spec.Path, v, round, out)
				if perr != nil && r.Err == "" {
					r.Err = perr.Error()
				}
				r.Results = len(ss)
				if ctx.Err() != nil {
					// Cut short: leave the run out.
					continue
				}
				samples = append(samples, ss...)
				runs = append(runs, r)
				status := ""
				if r.Err != "" {
					status = "  FAILED: " + firstLines([]byte(r.Err), 1)
				}
				progress("[%s] round %d/%d  pkg %d/%d %-16s %-6s %4d results %6.1fs  max RSS %s%s",
					elapsed(start), round, o.rounds, i+1, len(bs), b.spec.Path, v, r.Results, r.Seconds, mib(r.MaxRSSKB), status)
			}
		}
		roundsDone = round
	}
	if partial != "" {
		var n int
		samples, runs, n = completeRounds(samples, runs, len(variants), roundsDone)
		partial += fmt.Sprintf("; the figures are over the %d rounds that finished and, of round %d, the %d packages that ran in every variant", roundsDone, roundsDone+1, n)
	}

	var names []string
	for _, b := range bs {
		names = append(names, b.spec.Path)
	}
	rep := buildReport(names, o.modes, samples, runs)
	rep.Partial = partial
	rep.Header = header(o, argv, kprofDesc, time.Since(start))
	rep.Header["load"] = fmt.Sprintf("load average (1, 5, 15 min) %s at the start, %s at the end (the machine's other work slows every variant; the interleaving spreads it over them)", loadStart, loadAvg())
	for _, b := range bs {
		if b.spec.Why == "" {
			continue
		}
		var what []string
		for _, p := range b.spec.patterns() {
			s := "-bench `" + p.Bench + "`"
			if p.Skip != "" {
				s += " -skip `" + p.Skip + "`"
			}
			what = append(what, s)
		}
		rep.Skipped = append(rep.Skipped, skipNote{Pkg: b.spec.Path, What: strings.Join(what, "; "), Why: b.spec.Why})
	}
	if err := writeReports(rep, samples, o); err != nil {
		return err
	}
	s := rep.Overall
	var figs []string
	for _, m := range o.modes {
		figs = append(figs, fmt.Sprintf("%s %s (p90 %s)", m, x(s[m].GeoMean), x(s[m].P90)))
	}
	progress("[%s] done: %d benchmarks, %d packages: %s", elapsed(start), len(rep.Benchmarks), len(rep.Packages), strings.Join(figs, ", "))
	return nil
}

// jsonReport is the -json output: the report and the samples it was
// computed from.
type jsonReport struct {
	*report
	Samples []sample `json:"samples"`
}

// completeRounds keeps, of the rounds after done, only the packages that
// ran in all nvariants variants in that round (a round cut short leaves
// the others with fewer samples in some variant than in another), and
// returns how many packages it kept of round done+1.
func completeRounds(samples []sample, runs []run, nvariants, done int) ([]sample, []run, int) {
	type pr struct {
		pkg   string
		round int
	}
	count := map[pr]int{}
	for _, r := range runs {
		count[pr{r.Pkg, r.Round}]++
	}
	keep := func(pkg string, round int) bool { return round <= done || count[pr{pkg, round}] == nvariants }
	samples = slices.DeleteFunc(samples, func(s sample) bool { return !keep(s.Pkg, s.Round) })
	runs = slices.DeleteFunc(runs, func(r run) bool { return !keep(r.Pkg, r.Round) })
	n := 0
	for k, c := range count {
		if k.round == done+1 && c == nvariants {
			n++
		}
	}
	return samples, runs, n
}

// rerender recomputes the report of an earlier run from its -json output
// (the samples and runs; header, left-out notes and partial note as they
// were) and writes it as o says.
func rerender(file string, o options) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var old struct {
		report
		Samples []sample `json:"samples"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	var pkgs []string
	for _, p := range old.Packages {
		pkgs = append(pkgs, p.Pkg)
	}
	rep := buildReport(pkgs, old.Modes, old.Samples, old.Runs)
	rep.Header, rep.Skipped, rep.Partial = old.Header, old.Skipped, old.Partial
	return writeReports(rep, old.Samples, o)
}

// writeReports writes the markdown report to o.out (standard output if
// empty) and the JSON one to o.jsonOut if set.
func writeReports(rep *report, samples []sample, o options) error {
	w := os.Stdout
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := rep.writeMarkdown(w); err != nil {
		return err
	}
	if o.jsonOut != "" {
		f, err := os.Create(o.jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := jsonEncoder(f).Encode(&jsonReport{rep, samples}); err != nil {
			return err
		}
	}
	return nil
}

// kprofBinary returns the kprof binary to use and how the report names it.
func kprofBinary(o options, dir string) (path, desc string, err error) {
	if o.kprof != "" {
		abs, err := filepath.Abs(o.kprof)
		if err != nil {
			return "", "", err
		}
		return abs, fmt.Sprintf("%s (given; %s)", abs, kprofVersion(abs)), nil
	}
	path = filepath.Join(dir, "kprof")
	src := "."
	rev := o.rev
	if rev != "" {
		// A clean tree of the revision: git archive, untarred.
		src = filepath.Join(dir, "kprof-src")
		if err := os.MkdirAll(src, 0o777); err != nil {
			return "", "", err
		}
		cmd := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", rev, src)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("git archive %s: %v\n%s", rev, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "cmd", "kprof")); err != nil {
		return "", "", fmt.Errorf("no cmd/kprof here: run stdbench from the repository root or give -kprof")
	}
	progress("building kprof from %s", orWorkingTree(rev))
	// The same revision gives the same binary wherever it was unpacked
	// (toolchain.KprofCommand), so the go command's cache of instrumented
	// packages (keyed on the toolexec binary) stays warm from one run to
	// the next.
	if err := toolchain.BuildKprof(src, path); err != nil {
		return "", "", err
	}
	commit := gitOut("rev-parse", "HEAD")
	if rev != "" {
		commit = gitOut("rev-parse", rev+"^{commit}")
		return path, fmt.Sprintf("commit %s (clean tree of -rev %s; %s)", commit, rev, kprofVersion(path)), nil
	}
	desc = fmt.Sprintf("commit %s (working tree; %s)", commit, kprofVersion(path))
	if dirty := gitOut("status", "--porcelain", "--untracked-files=no"); dirty != "" {
		var files []string
		for l := range strings.SplitSeq(dirty, "\n") {
			files = append(files, strings.TrimSpace(l[min(2, len(l)):]))
		}
		desc += ", with uncommitted changes to " + strings.Join(files, ", ")
	}
	return path, desc, nil
}

func orWorkingTree(rev string) string {
	if rev != "" {
		return "revision " + rev
	}
	return "the working tree"
}

func kprofVersion(bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return "kprof version failed: " + err.Error()
	}
	return strings.TrimSpace(string(out))
}

func gitOut(args ...string) string {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "unknown (git " + args[0] + ": " + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

// header gives the report's date, machine, command, kprof and settings.
func header(o options, argv []string, kprofDesc string, d time.Duration) map[string]string {
	host, _ := os.Hostname()
	gover, _ := exec.Command("go", "version").Output()
	args := append([]string{"go run ./bench/stdbench"}, argv[1:]...)
	return map[string]string{
		"date":     time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		"machine":  fmt.Sprintf("%s, %d CPUs (%s), %s/%s, %s RAM, host %s", cpuModel(), runtime.NumCPU(), "GOMAXPROCS "+fmt.Sprint(runtime.GOMAXPROCS(0)), runtime.GOOS, runtime.GOARCH, memTotal(), host),
		"go":       strings.TrimSpace(string(gover)),
		"kprof":    kprofDesc,
		"command":  "`" + strings.Join(args, " ") + "`",
		"settings": fmt.Sprintf("-benchtime %s, %d rounds, modes %s, KPROF_GRAN %s", o.benchtime, o.rounds, strings.Join(o.modes, ","), orDefault(os.Getenv("KPROF_GRAN"), "10000 (default)")),
		"duration": d.Round(time.Second).String(),
	}
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for l := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for l := range strings.SplitSeq(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(l, "MemTotal: %d kB", &kb); err == nil {
			return fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func elapsed(start time.Time) string {
	d := time.Since(start).Round(time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "stdbench: "+format+"\n", args...)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "stdbench: "+format+"\n", args...)
	os.Exit(1)
}
