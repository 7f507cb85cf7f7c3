// Command harness is kprof's evaluation suite: it reproduces section 7 of
// the Komorium paper (Binder 2006) for Go on the workloads of
// bench/workloads, and writes a markdown report with PNG figures.
//
// Usage, from anywhere in the kprof module:
//
//	go run ./bench/harness [-quick] [-out DIR] [-workloads a,b] [-runs 5] [-exactruns N] [-pprofruns 20] [-n N]
//	go run ./bench/harness -render DIR     (report and figures again from DIR/results/raw.json)
//
// It builds kprof, then every workload twice (go build, and kprof build) and
// measures, for the granularities 500, 1000, 5000, 10000, 50000, 100000,
// 500000 and 1000000, constant (KPROF_JITTER=0) and randomised (R = 100):
//
//   - accuracy: the overlap percentage on calling contexts
//     ([overlap.Contexts]) of each sampled profile with the workload's
//     exact-mode profile (paper Fig. 10), also on flat functions;
//   - δb (Table I): the instructions the sampled profile attributes to its
//     contexts (the paper's b_approx, [profile.Profile.SumInstructions])
//     against the exact total; and δb of the totals the agent counts;
//   - the relative profile size (Fig. 11): calling contexts ([overlap.Size])
//     as a percentage of the exact profile's;
//   - slowdown against the plain build (Figs 12–14): "No Prof."
//     (KPROF_MODE=off), every randomised granularity, exact mode, and Go's
//     runtime/pprof CPU profiler at 100 and 1000 Hz. Each is the median of
//     -runs wall-clock runs (exact mode: -exactruns, in the first rounds,
//     since each costs about 13 plain runs), taken round-robin: every round runs every
//     workload in every configuration once, so a change in the machine's
//     load falls on all of them;
//   - runtime/pprof as the paper's 'hprof' baseline (Figs 16–17): the
//     overlap between its timed runs (run to run) and of each timed run with
//     the merge of all the other runs of the same program (-pprofruns in
//     all, the timed ones included). The pprof
//     profiles become calling-context trees by the rules of pprofconv.Convert, so
//     the same overlap measure applies;
//   - geometric means across workloads of every overlap, size and slowdown.
//
// Profiles are deterministic, so one run per setting serves for accuracy:
// the randomised profiles are those of the first timed run, the exact one
// that of exact mode's first timed run, and the constant-granularity ones
// come from one untimed run each. The harness checks that every run of
// every build prints the plain build's checksum line, compares two timed
// runs of each kprof setting, and lists the runs that exited normally but
// wrote no profile (their settings are left out of the means).
//
// It prints progress on stderr and writes DIR/RESULTS.md, the figures and
// the raw measurements (results/raw.json) under DIR/results. -quick runs
// every part on tiny inputs (-n 1, granularities 1000 and 10000, 2 runs,
// 3 pprof runs, 3 workloads) in a few minutes with a warm build cache; the
// package's test runs it and checks the report's structure.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
)

func main() {
	var cfg Config
	var workloads, render string
	flag.BoolVar(&cfg.Quick, "quick", false, "tiny inputs: -n 1, 2 granularities, 2 runs, 3 pprof runs, 3 workloads")
	flag.StringVar(&cfg.Out, "out", "", "write RESULTS.md and results/ to this `dir` (default: a new temporary directory)")
	flag.StringVar(&workloads, "workloads", "", "comma-separated `names` of workloads (default: all; with -quick: "+strings.Join(quickWorkloads, ",")+")")
	flag.IntVar(&cfg.Runs, "runs", 0, "timed runs per configuration (default 5; with -quick 2)")
	flag.IntVar(&cfg.PprofRuns, "pprofruns", 0, "runs per pprof rate, the timed ones included, for the merged references (default 20; with -quick 3)")
	flag.IntVar(&cfg.ExactRuns, "exactruns", 0, "timed exact-mode runs, in the first rounds (default: -runs)")
	flag.StringVar(&cfg.N, "n", "", "problem size passed to every workload as -n (default: each workload's own; with -quick 1)")
	flag.StringVar(&cfg.Work, "work", "", "keep binaries and profiles in this `dir` (default: a temporary directory, removed at the end)")
	flag.StringVar(&render, "render", "", "only write the report and figures again from `dir`/results/raw.json")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "harness: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if workloads != "" {
		cfg.Workloads = strings.Split(workloads, ",")
	}
	cfg.Command = "go run ./bench/harness " + strings.Join(os.Args[1:], " ")
	cfg.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if render != "" {
		err = Render(render)
	} else {
		if cfg.Out == "" {
			if cfg.Out, err = os.MkdirTemp("", "kprof-eval-"); err != nil {
				fmt.Fprintln(os.Stderr, "harness:", err)
				os.Exit(1)
			}
		}
		err = Run(ctx, &cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
	if render == "" {
		fmt.Fprintln(os.Stderr, "harness: report in", filepath.Join(cfg.Out, ReportName))
	}
}
