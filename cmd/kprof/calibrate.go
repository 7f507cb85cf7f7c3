package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/kprof/kprof/cost"
	"github.com/kprof/kprof/cost/calibrate"
)

const calibrateHelp = `Fits a table of the cost metric (kprof build -metric cost) on this
machine: it builds and times micro-benchmarks, one per class of go/ssa
instructions (about 15 s with 5 rounds), counts the instructions of each
class they run, and fits a weight per class in picoseconds (non-negative
least squares on relative errors, pulled weakly towards the prior table;
classes no benchmark runs keep the prior's weights). It prints every
benchmark's measured and predicted time and the median and largest
error, and writes the table to -o. Time the benchmarks on an idle
machine: the fit is only as good as the measurements, and a table
predicts programs less well than it fits the benchmarks (see package
cost/calibrate for the method and what it does not capture).

Use it with: kprof build -metric cost -costtable FILE ...`

func calibrateCommand() *cli.Command {
	return &cli.Command{
		Name:        "calibrate",
		Usage:       "fit a cost table (-metric cost) on this machine",
		Description: calibrateHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the table to `FILE` (default: only print the fit)"},
			&cli.StringFlag{Name: "name", Usage: "the table's `NAME` in profiles (default GOOS-GOARCH-HOSTNAME)"},
			&cli.IntFlag{Name: "rounds", Value: 5, Usage: "time each benchmark `N` times, keep the median"},
			&cli.StringFlag{Name: "prior", Usage: "the prior table `FILE` (default: the shipped table)"},
		},
		OnUsageError: onUsageError,
		Action:       runCalibrate,
	}
}

func runCalibrate(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("calibrate: unexpected arguments %q", c.Args().Slice())}
	}
	rounds := c.Int("rounds")
	if rounds < 1 {
		return usageError{fmt.Errorf("calibrate: --rounds %d: want at least 1", rounds)}
	}
	name := c.String("name")
	if name == "" {
		host, _ := os.Hostname()
		name = runtime.GOOS + "-" + runtime.GOARCH + "-" + host
	}
	if strings.ContainsAny(name, " \t\n#") {
		return usageError{fmt.Errorf("calibrate: --name %q: no spaces or #", name)}
	}
	prior := cost.Default()
	if f := c.String("prior"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return usageError{fmt.Errorf("calibrate: --prior: %v", err)}
		}
		if prior, err = cost.Parse(data); err != nil {
			return usageError{fmt.Errorf("calibrate: --prior %s: %v", f, err)}
		}
	}
	counts, err := calibrate.Count()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kprof: timing %d micro-benchmarks, %d rounds each\n", len(counts), rounds)
	ps, err := calibrate.Measure(c.Context, rounds)
	if err != nil {
		return err
	}
	fit, err := calibrate.FitTable(name, ps, counts, prior)
	if err != nil {
		return err
	}
	printFit(fit)
	if out := c.String("o"); out != "" {
		data := append([]byte(fmt.Sprintf("# kprof calibrate on %s/%s: median error %.1f%%, largest %.1f%% over %d micro-benchmarks.\n", runtime.GOOS, runtime.GOARCH, 100*fit.MedianError, 100*fit.MaxError, len(fit.Kernels))), fit.Table.Format()...)
		if err := os.WriteFile(out, data, 0o666); err != nil {
			return err
		}
		fmt.Printf("table %s written to %s\n", fit.Table.Ident(), out)
	}
	return nil
}

func printFit(fit *calibrate.Fit) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "benchmark\tmeasured ps/iter\tpredicted\terror\t\n")
	for _, k := range fit.Kernels {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%+.1f%%\t\n", k.Name, k.PS, k.Predicted, 100*(k.Predicted-k.PS)/k.PS)
	}
	tw.Flush()
	fmt.Printf("median error %.1f%%, largest %.1f%%; scale %d ps per instruction\n", 100*fit.MedianError, 100*fit.MaxError, fit.Table.Scale)
	prior := append([]string(nil), fit.Prior...)
	sort.Strings(prior)
	fmt.Printf("classes no benchmark runs (prior weights): %s\n", strings.Join(prior, " "))
}
