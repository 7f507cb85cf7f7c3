package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/reports"
)

const compareHelp = `Compares two profiles as paper §7 does. The first line is always

   overlap: NN.NN%

the overlap percentage on calling contexts: the share of the instructions,
weighted by context, that both profiles agree on (100% for identical
distributions). Then follow the overlap on flat functions, the totals,
sizes and δb of both, and the calling contexts whose shares differ most.

δb compares the instruction totals, (approx − exact) / exact: the profile
of an exact-mode run is taken as exact, otherwise the second one (B).
Profiles counted with different instruction metrics are not compared.

Exit status: 0, or 1 when --min-overlap is given and the overlap is below
it, or 2 when a profile cannot be read or the profiles cannot be compared.`

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:        "compare",
		Usage:       "compare two profiles: overlap percentage, δb and the contexts that differ",
		ArgsUsage:   "A B",
		Description: compareHelp,
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "min-overlap", Usage: "exit with status 1 if the overlap is below `P` percent"},
			&cli.BoolFlag{Name: "json", Usage: "print the comparison as JSON"},
			&cli.IntFlag{Name: "top", Value: reports.DefaultCompareTop, Usage: "list the `N` calling contexts whose shares differ most (0: none)"},
		},
		OnUsageError: onUsageError,
		Action:       runCompare,
	}
}

func runCompare(c *cli.Context) error {
	files, err := positional(c)
	if err != nil || files == nil {
		return err
	}
	if len(files) != 2 {
		return usageError{fmt.Errorf("compare: want two profiles, got %d (kprof compare A B)", len(files))}
	}
	minOverlap, top := c.Float64("min-overlap"), c.Int("top")
	switch {
	case !(minOverlap >= 0 && minOverlap <= 100):
		return usageError{fmt.Errorf("compare: --min-overlap %v is not a percentage between 0 and 100", minOverlap)}
	case top < 0:
		return usageError{fmt.Errorf("compare: --top %d is negative", top)}
	case top == 0:
		top = -1 // reports: none
	}

	large := isLarge(files)
	var ps [2]*profile.Profile
	for i, f := range files {
		err := step(large, "kprof: reading "+f, func() error {
			var err error
			ps[i], err = loadProfile(f)
			return err
		})
		if err != nil {
			return fail("%v", err)
		}
	}
	opts := reports.CompareOptions{Top: top, JSON: c.Bool("json"), NameA: files[0], NameB: files[1]}
	var r reports.Result
	err = step(large, "kprof: comparing", func() error {
		var err error
		r, err = reports.Compare(os.Stdout, ps[0], ps[1], opts)
		return err
	})
	if err != nil {
		return fail("%v", err)
	}
	if opts.JSON {
		for _, w := range r.Warnings { // the text report has them already
			fmt.Fprintln(os.Stderr, "kprof: warning:", w)
		}
	}
	if c.IsSet("min-overlap") && r.Overlap < minOverlap {
		// %v, not %.2f: 99.999% must not print as 100.00% below 100%.
		fmt.Fprintf(os.Stderr, "kprof: overlap %v%% is below --min-overlap %v%%\n", r.Overlap, minOverlap)
		return exitStatus(1)
	}
	return nil
}
