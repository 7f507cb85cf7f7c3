// Command kprof builds Go programs that count the go/ssa instructions each
// goroutine executes and sample their calling contexts every N of them, and
// reads, compares and gates the profiles they write.
//
//	kprof build [build flags] [packages]   instrumented go build
//	kprof test  [test flags] [packages]    instrumented go test
//	kprof report PROFILE                   text, pprof and HTML reports
//	kprof compare A B                      overlap percentage, δb, differing contexts
//	kprof merge -o OUT PROFILE...          add up profiles (a run's interval files)
//	kprof calibrate [-o FILE]              fit a cost table (-metric cost) on this machine
//	kprof version
//
// See README.md for the whole tour.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kprof/kprof/agent"
	"github.com/kprof/kprof/toolchain"
	"github.com/kprof/kprof/toolexec"
)

// exitStatus is an error that only carries the status to exit with (the
// go command already printed why).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

const buildHelp = `Flags are those of go build, plus kprof's own:

   -pkgs PATTERNS   instrument only packages matching these patterns
                    (comma or space separated, "..." wildcards); the rest runs
                    uninstrumented, like native code
   -maxpath N       at most N instructions on any path without a check (default 50)
   -smallleaf N     loop-free leaf functions of at most N instructions get no
                    check, so they stay inlinable (default 50)
   -metric M        what a count measures: instructions (the default) or cost,
                    each instruction weighted by its estimated time in
                    picoseconds (a table of weights per instruction class)
   -costtable FILE  with -metric cost: the table of weights (kprof calibrate
                    writes one; default: the table shipped for linux/amd64)
   -agent PATH      link the agent package PATH instead of kprof's own
   -nondeterministic
                    keep Go's own randomness: map seeds and iteration order,
                    select's choice, sync.Pool per P and emptied by the GC
                    (by default kprof builds fix them, so that profiles
                    repeat; see README "Reproducible across runs and machines")
   -kprof.v         report what could not be instrumented exactly
   -kprof.stockcompiler
                    compile with the stock compiler instead of kprof's copy whose
                    inliner ignores the inserted code (inlining then changes)

The program writes its profile when main returns, on os.Exit and on
SIGINT/SIGTERM. Run-time settings (no rebuild needed):
   KPROF_MODE=sample|exact|off  KPROF_GRAN=10000  KPROF_JITTER=100
   KPROF_SEED=1  KPROF_OUT=<program>.kprof  KPROF_MAX_CONTEXTS=4194304`

const benchHelp = `Benchmarks (-bench) report an extra metric, instructions/op: the exact
number of instructions executed per operation by all goroutines while the
benchmark timer runs (the body of a b.Loop loop; for a b.N loop, the
difference between its b.N run and its first run of one iteration, which
leaves out the code around the loop). The header line
"Unit instructions/op assume=exact" tells benchstat the metric has no noise.
Without -benchtime, kprof test runs every benchmark a fixed ` + DefaultBenchtime + `
iterations, so that the figure is the same on every run even when a
benchmark's work per operation depends on b.N; for a benchmark whose work
per operation does not change, any -benchtime gives the same figure. The
package testing itself is not instrumented.

   --profile DIR    write DIR/<BenchmarkName>.kprof for every benchmark ("/" in
                    names as "_"): the exact profile of its last timed run
                    (runs the tests in exact mode), for kprof gate's
                    --old-profiles/--new-profiles or kprof report`

// runGoOrHelp runs "go verb" with kprof's wrapper, or shows the command's
// help for -h, -help or --help alone (the go command's flags are not
// parsed here, so cli does not see them).
func runGoOrHelp(c *cli.Context, verb string) error {
	args := c.Args().Slice()
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return cli.ShowCommandHelp(c.Lineage()[1], verb)
	}
	return runGo(verb, args)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "toolexec" {
		cfg, err := toolexec.ReadConfig()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(toolexec.Toolexec(cfg, os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "goshim" {
		exit(runGoShim(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "goexec" {
		exit(runGoExec(os.Args[2:]))
	}
	app := &cli.App{
		Name:    "kprof",
		Usage:   "deterministic instruction-counting profiler for Go",
		Version: agent.Version,
		Commands: []*cli.Command{
			{
				Name:            "build",
				Usage:           "compile packages with instruction counting (go build flags accepted)",
				ArgsUsage:       "[build flags] [packages]",
				Description:     buildHelp,
				SkipFlagParsing: true,
				Action:          func(c *cli.Context) error { return runGoOrHelp(c, "build") },
			},
			{
				Name:            "test",
				Usage:           "test packages with instruction counting (go test flags accepted)",
				ArgsUsage:       "[test flags] [packages]",
				Description:     buildHelp + "\n\nEach test binary writes <package>.test.kprof in the current directory (packages of one name: <import path, / as _>.test.kprof); with KPROF_OUT set, kprof test merges them all into that file.\n\n" + benchHelp,
				SkipFlagParsing: true,
				Action:          func(c *cli.Context) error { return runGoOrHelp(c, "test") },
			},
			reportCommand(),
			compareCommand(),
			mergeCommand(),
			gateCommand(),
			calibrateCommand(),
			cleanCommand(),
			{
				Name:  "version",
				Usage: "print kprof's version and the Go versions it supports",
				Action: func(c *cli.Context) error {
					fmt.Printf("kprof %s (instruction metric %d; supports %s)\n", agent.Version, metricVersion, toolchain.Supported())
					return nil
				},
			},
		},
	}
	exit(app.Run(os.Args))
}

// exit ends kprof with err's status: 0 for nil, an exitStatus's own, 2 for
// a usage error, 1 for any other (printed).
func exit(err error) {
	var st exitStatus
	var ue usageError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &st):
		os.Exit(int(st))
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "kprof:", ue.err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "kprof:", err)
		os.Exit(1)
	}
}
