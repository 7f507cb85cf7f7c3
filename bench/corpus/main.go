// Command corpus measures kprof on a corpus of real third-party Go
// modules: for each module, pinned to a version, it runs the module's own
// tests with go test -short and with kprof test -short in each KPROF_MODE,
// and writes a Markdown report of pass or fail, time ratio to plain go
// test and peak memory. It owns the corpus (modules.go) and the report's
// format; the results it writes go to bench/results/corpus-*.md.
//
//	go run ./bench/corpus [-quick] [-modules a,b] [-modes off,sample,exact]
//	    [-go go1.27.3] [-kprof PATH] [-timeout 10m] [-o REPORT.md]
//	go run ./bench/corpus -bench [-benchtime 20x] [-count 5] [-procs 1] [-benchtimeout 4m] [-modules a,b] [-o REPORT.md]
//
// Run it from the repository root. Without -kprof it builds cmd/kprof
// from the repository's HEAD commit. Modules and their dependencies come
// from the Go module proxy; the tests themselves need no network.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	if os.Getenv(rssEnv) != "" {
		os.Exit(wrapExec(os.Args[1:]))
	}
	modulesFlag := flag.String("modules", "", "comma-separated module paths to run (default: the whole corpus)")
	modesFlag := flag.String("modes", "off,sample,exact", "comma-separated KPROF_MODEs to run kprof test in (empty: plain go test only)")
	quickFlag := flag.Bool("quick", false, "run the fixed fast subset of five modules (for CI)")
	timeout := flag.Duration("timeout", 10*time.Minute, "limit of one go test or kprof test command")
	maxRSS := flag.Int64("maxrss", 8192, "limit of one test binary's resident set, MB (it is killed above)")
	kprofFlag := flag.String("kprof", "", "kprof binary (default: build cmd/kprof from the repository's HEAD)")
	goFlag := flag.String("go", "", "GOTOOLCHAIN for every go and kprof command, e.g. go1.27.3 (default: the go command's own)")
	out := flag.String("o", "", "write the Markdown report to this file (rewritten after each module)")
	work := flag.String("work", "", "scratch directory, kept (default: a temporary one, removed)")
	list := flag.Bool("list", false, "print the corpus and exit")
	benchFlag := flag.Bool("bench", false, "benchmark determinism: run each module's benchmarks with kprof test -count times and compare instructions/op")
	benchtime := flag.String("benchtime", "20x", "-bench mode: -benchtime of kprof test")
	count := flag.Int("count", 5, "-bench mode: -count of kprof test")
	procs := flag.Int("procs", 1, "-bench mode: kprof test processes per module, one after the other (their runs are compared position by position)")
	benchTimeout := flag.Duration("benchtimeout", 4*time.Minute, "-bench mode: limit of one module's kprof test -bench (its build is under -timeout)")
	strict := flag.Bool("strict", false, "exit 1 if kprof test fails, in any mode, on a module whose plain go test passes")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/corpus [flags]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *list {
		for _, m := range corpus {
			fmt.Printf("%s\t%s\t%s\n", m.Name(), strings.Join(m.Pkgs, " "), m.Traits)
		}
		return
	}
	modules, err := selectModules(*modulesFlag, *quickFlag)
	if err != nil {
		fatalf("%v", err)
	}
	modes, err := parseModes(*modesFlag)
	if err != nil {
		fatalf("%v", err)
	}

	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "kprof-corpus-")
		if err != nil {
			fatalf("%v", err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if dir, err = filepath.Abs(dir); err != nil {
		fatalf("%v", err)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	repo, err := gitOutput("rev-parse", "--show-toplevel")
	if err != nil {
		fatalf("run corpus inside the kprof repository: %v", err)
	}
	commit, _ := gitOutput("rev-parse", "--short", "HEAD")
	kprof := *kprofFlag
	if kprof == "" && (len(modes) > 0 || *benchFlag) {
		progressf("building kprof from %s at %s", repo, commit)
		if kprof, err = buildKprof(repo, filepath.Join(dir, "kprof")); err != nil {
			fatalf("%v", err)
		}
	} else if kprof != "" {
		if kprof, err = filepath.Abs(kprof); err != nil {
			fatalf("%v", err)
		}
		commit += " (the HEAD of the repository; -kprof " + *kprofFlag + " may differ)"
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
	}

	env := os.Environ()
	if *goFlag != "" {
		env = append(env, "GOTOOLCHAIN="+*goFlag)
	}
	r := &runner{kprof: kprof, self: self, work: dir, env: env, timeout: *timeout, maxRSS: *maxRSS * 1024}
	if *benchFlag {
		runBench(r, modules, commit, *goFlag, *benchtime, *count, *procs, *benchTimeout, *out)
		return
	}
	rep := &Report{Header: newHeader(r, *goFlag, commit, len(modules)), Modes: modes}
	start := time.Now()
	for i, m := range modules {
		progressf("[%d/%d] %s (elapsed %s)", i+1, len(modules), m.Name(), time.Since(start).Round(time.Second))
		rep.Results = append(rep.Results, measure(r, m, modes, start))
		if *out != "" {
			if err := writeMarkdown(*out, rep); err != nil {
				fatalf("%v", err)
			}
		}
	}
	if *out == "" {
		rep.Markdown(os.Stdout)
	}
	for _, mode := range modes {
		s := rep.summarize(mode)
		progressf("%s: passes %d of %d; time ratio median %.2f×, worst %.2f×", mode, s.pass, s.of, s.median, s.worst)
	}
	progressf("done in %s", time.Since(start).Round(time.Second))
	if *strict {
		for _, mode := range modes {
			if s := rep.summarize(mode); s.pass < s.of {
				fatalf("-strict: kprof test fails in mode %s on %d of %d modules that pass plain go test", mode, s.of-s.pass, s.of)
			}
		}
	}
}

// runBench is the -bench mode: each module's benchmarks, instructions/op
// compared across count runs.
func runBench(r *runner, modules []Module, commit, toolchain, benchtime string, count, procs int, benchTimeout time.Duration, out string) {
	rep := &BenchReport{
		Header:    newHeader(r, toolchain, commit, len(modules)),
		Benchtime: benchtime,
		Count:     count,
		Procs:     max(procs, 1),
		Timeout:   benchTimeout,
	}
	start := time.Now()
	for i, m := range modules {
		progressf("[%d/%d] %s (elapsed %s)", i+1, len(modules), m.Name(), time.Since(start).Round(time.Second))
		rep.Results = append(rep.Results, measureBench(r, m, benchtime, count, max(procs, 1), benchTimeout, start))
		if out != "" {
			if err := writeMarkdown(out, rep); err != nil {
				fatalf("%v", err)
			}
		}
	}
	if out == "" {
		rep.Markdown(os.Stdout)
	}
	progressf("%s; done in %s", rep.Summary(), time.Since(start).Round(time.Second))
}

// measure prepares m and runs its tests, plain and with kprof in each
// mode, one right after the other.
func measure(r *runner, m Module, modes []string, start time.Time) Result {
	res := Result{Module: m, Build: map[string]time.Duration{}, Runs: map[string]*Run{}}
	dir, goLine, err := r.prepare(m)
	res.GoLine = goLine
	if err != nil {
		res.Setup = err.Error()
		progressf("  setup failed: %s", firstLines([]byte(res.Setup), 3))
		return res
	}
	step := func(label string, o outcome) {
		status := o.status()
		progressf("  %-12s %-7s %6.1f s  test RSS %s (elapsed %s)", label, status, o.wall.Seconds(), mb(o.testRSS), time.Since(start).Round(time.Second))
	}
	warmPlain := r.goTest(m, dir, false, "", true)
	step("build plain", warmPlain)
	res.Build["plain"] = warmPlain.wall
	var warmKprof outcome
	if len(modes) > 0 {
		warmKprof = r.goTest(m, dir, true, "off", true)
		step("build kprof", warmKprof)
		res.Build["kprof"] = warmKprof.wall
	}
	for _, mode := range append([]string{"plain"}, modes...) {
		if mode != "plain" && warmKprof.err != nil {
			res.Runs[mode] = &Run{Status: statusBuild, Errors: failureLines(warmKprof.output, 8), TreeRSS: warmKprof.treeRSS}
			continue
		}
		o := r.goTest(m, dir, mode != "plain", mode, false)
		step(mode, o)
		run := &Run{Status: o.status(), Wall: o.wall, TestRSS: o.testRSS, TreeRSS: o.treeRSS}
		if run.Status != statusPass {
			run.Errors = failureLines(o.output, 8)
		}
		res.Runs[mode] = run
	}
	return res
}

func selectModules(names string, quickOnly bool) ([]Module, error) {
	var want []string
	switch {
	case quickOnly && names != "":
		return nil, fmt.Errorf("-quick and -modules cannot be combined")
	case quickOnly:
		want = quick
	case names == "":
		return corpus, nil
	default:
		want = strings.Split(names, ",")
	}
	var ms []Module
	for _, name := range want {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(corpus, func(m Module) bool { return m.Path == name || m.Name() == name })
		if i < 0 {
			return nil, fmt.Errorf("%s: not in the corpus (-list lists it)", name)
		}
		ms = append(ms, corpus[i])
	}
	return ms, nil
}

func parseModes(s string) ([]string, error) {
	var modes []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		switch m {
		case "":
		case "off", "sample", "exact":
			if !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		default:
			return nil, fmt.Errorf("-modes: %q is not a KPROF_MODE (off, sample, exact)", m)
		}
	}
	return modes, nil
}

func goVersion(r *runner) string {
	o := r.run(r.work, nil, "go", "version")
	if o.err != nil {
		return "go version failed: " + firstLines(o.output, 1)
	}
	return strings.TrimSpace(string(o.output))
}

func gitOutput(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// commandLine is how this run was started, as go run would be typed.
func commandLine() string {
	return strings.Join(append([]string{"go run ./bench/corpus"}, os.Args[1:]...), " ")
}

func progressf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "corpus: "+format+"\n", args...)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "corpus: "+format+"\n", args...)
	os.Exit(1)
}

// newHeader describes this run of total modules.
func newHeader(r *runner, toolchain, commit string, total int) Header {
	return Header{
		Date:      time.Now(),
		Nproc:     runtime.NumCPU(),
		GoVersion: goVersion(r),
		Toolchain: toolchain,
		Command:   commandLine(),
		Commit:    commit,
		Total:     total,
	}
}
