package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/reports"
)

const metricVersion = profile.MetricVersion

const reportHelp = `Reads a profile written by a program built with kprof build (or several,
which are merged as kprof merge does: a run's KPROF_INTERVAL files add up
to its end-of-run profile) and prints the functions with the most instructions
(--top, the default), the calling-context tree (--tree), or both; --pprof
and --html write files instead of or besides them:

   kprof report prog.kprof                     top 20 functions
   kprof report --tree --cutoff 2 prog.kprof   contexts with at least 2%
   kprof report --pprof prog.pb.gz prog.kprof  then: go tool pprof -http=: prog.pb.gz
   kprof report --html prog.html prog.kprof    a flame graph in one HTML file

Flags may also follow the profile. Exit status 2 means a file could not be
read or written, or the command line is wrong.`

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:        "report",
		Usage:       "show a profile: top functions, calling-context tree, pprof and HTML",
		ArgsUsage:   "PROFILE...",
		Description: reportHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "top", Usage: "list the functions with the most instructions (the default when no other output is asked for)"},
			&cli.BoolFlag{Name: "tree", Usage: "print the calling-context tree"},
			&cli.IntFlag{Name: "nodecount", Value: 20, Usage: "list at most `N` functions with --top (0: all)"},
			&cli.Float64Flag{Name: "cutoff", Value: 0.5, Usage: "with --tree, hide contexts below `PCT` percent of the instructions"},
			&cli.StringFlag{Name: "pprof", Usage: "write a gzip-compressed pprof profile to `FILE`, for go tool pprof"},
			&cli.StringFlag{Name: "html", Usage: "write an interactive flame graph to `FILE`, a self-contained HTML page"},
		},
		OnUsageError: onUsageError,
		Action:       runReport,
	}
}

func runReport(c *cli.Context) error {
	files, err := positional(c)
	if err != nil || files == nil {
		return err
	}
	if len(files) == 0 {
		return usageError{errors.New("report: no profile given (kprof report PROFILE)")}
	}
	nodecount, cutoff := c.Int("nodecount"), c.Float64("cutoff")
	pprofOut, htmlOut := c.String("pprof"), c.String("html")
	switch {
	case nodecount < 0:
		return usageError{fmt.Errorf("report: --nodecount %d is negative", nodecount)}
	case !(cutoff >= 0 && cutoff <= 100):
		return usageError{fmt.Errorf("report: --cutoff %v is not a percentage between 0 and 100", cutoff)}
	case pprofOut != "" && pprofOut == htmlOut:
		return usageError{fmt.Errorf("report: --pprof and --html both write %s", pprofOut)}
	}
	top, tree := c.Bool("top"), c.Bool("tree")
	if !tree && pprofOut == "" && htmlOut == "" {
		top = true
	}

	large := isLarge(files)
	p, err := loadProfiles(files, large)
	if err != nil {
		return err
	}
	if large {
		large = overlap.Size(p) >= largeContexts
	}

	// Text goes to a buffer first, so that a failure part-way leaves no
	// half report on stdout.
	var text bytes.Buffer
	if top {
		err := step(large, "kprof: listing the functions", func() error {
			return reports.Top(&text, p, reports.TopOptions{NodeCount: nodecount})
		})
		if err != nil {
			return fail("%v", err)
		}
	}
	if tree {
		if top {
			text.WriteString("\n")
		}
		err := step(large, "kprof: building the tree", func() error {
			return reports.Tree(&text, p, reports.TreeOptions{Cutoff: cutoff})
		})
		if err != nil {
			return fail("%v", err)
		}
	}
	if _, err := os.Stdout.Write(text.Bytes()); err != nil {
		return fail("writing the report: %v", err)
	}
	if pprofOut != "" {
		err := step(large, "kprof: writing "+pprofOut, func() error {
			pp, err := reports.Pprof(p)
			if err != nil {
				return err
			}
			return writeFile(pprofOut, pp.Write)
		})
		if err != nil {
			return fail("%s: %v", pprofOut, err)
		}
	}
	if htmlOut != "" {
		err := step(large, "kprof: writing "+htmlOut, func() error {
			return writeFile(htmlOut, func(w io.Writer) error { return reports.HTML(w, p) })
		})
		if err != nil {
			return fail("%s: %v", htmlOut, err)
		}
	}
	return nil
}

// Profiles this large take a moment to read and render: only then, and
// only when stderr is a terminal, does kprof show progress.
const (
	largeFile     = 32 << 20 // bytes of profile files
	largeContexts = 1 << 20  // calling contexts
)

func isLarge(files []string) bool {
	if !isTerminal(os.Stderr) {
		return false
	}
	var size int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	return size >= largeFile
}

// step runs fn, with a progress line on the terminal if large.
func step(large bool, msg string, fn func() error) error {
	if !large {
		return fn()
	}
	pr := newProgress(msg)
	defer pr.done()
	return fn()
}

// loadProfiles reads the files and merges them into one profile, one
// file at a time: the memory it takes is that of the merged tree and of
// the largest file, not of all of them (a test run's 125 profiles,
// 0.9 GB, took 24 GB held at once). An error has been printed when it
// returns one.
func loadProfiles(files []string, large bool) (*profile.Profile, error) {
	var merged *profile.Profile
	for i, f := range files {
		var p *profile.Profile
		err := step(large, "kprof: reading "+f, func() error {
			var err error
			p, err = loadProfile(f)
			return err
		})
		if err != nil {
			return nil, fail("%v", err)
		}
		if i == 0 {
			merged = p
			continue
		}
		if err := profile.SameMetric(&p.Meta, &merged.Meta); err != nil {
			return nil, fail("%s and %s: %v; they cannot be merged (profile both with the same kprof and -metric)", f, files[0], err)
		}
		if err := merged.Add(p); err != nil {
			return nil, fail("%s: %v", f, err)
		}
		// The labels that still describe the merge: those every
		// profile has.
		merged.Meta.Labels = slices.DeleteFunc(merged.Meta.Labels, func(l profile.Label) bool {
			return !slices.Contains(p.Meta.Labels, l)
		})
		if fi, err := os.Stat(f); err == nil && fi.Size() >= largeFile {
			// The tree just added is garbage: collected now, before
			// the next file's is read, the heap peaks at the merge and
			// one file, not two (4 profiles of 8.4 million contexts
			// each peaked at 3.5 GB, 1.8 GB now).
			p = nil
			runtime.GC()
		}
	}
	if len(files) > 1 {
		// Each count of the merge fits in an int64 (Add checks them),
		// but their sums over the tree may not: such a merge is no
		// profile (Merge checks the same).
		if err := merged.CheckValid(); err != nil {
			return nil, fail("the merge of %s: %v", strings.Join(files, ", "), err)
		}
	}
	return merged, nil
}

// loadProfile reads the profile in the named file. Its error says, in one
// line that starts with the file's name, what is wrong.
func loadProfile(path string) (*profile.Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			return nil, fmt.Errorf("%s: not a kprof profile but gzip-compressed data (a pprof profile? read those with go tool pprof)", path)
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return p, nil
}

// writeFile writes the named file with write, removing it if that fails
// and it is a regular file (not /dev/null or a pipe).
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if fi, serr := os.Lstat(path); serr == nil && fi.Mode().IsRegular() {
			os.Remove(path)
		}
	}
	return err
}

// fail prints "kprof: " and the message, on one line, to stderr and returns
// exit status 2.
func fail(format string, args ...any) error {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	fmt.Fprintln(os.Stderr, "kprof:", msg)
	return exitStatus(2)
}

// onUsageError makes a bad flag a usage error: exit status 2.
func onUsageError(c *cli.Context, err error, _ bool) error {
	return usageError{fmt.Errorf("%s: %v (see kprof %s --help)", c.Command.Name, err, c.Command.Name)}
}

// positional returns the command's arguments that are not flags. The cli
// package stops parsing flags at the first argument; positional parses the
// flags that follow it, so "kprof report prof.kprof --tree" works as
// "kprof report --tree prof.kprof". "--" ends the flags. It returns nil
// and no error when it showed the help.
func positional(c *cli.Context) ([]string, error) {
	set := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range c.Command.Flags {
		if err := f.Apply(set); err != nil {
			return nil, err
		}
	}
	args := c.Args().Slice()
	pos := []string{}
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			pos = append(pos, args[1:]...)
			args = nil
		case len(a) < 2 || a[0] != '-':
			pos = append(pos, a)
			args = args[1:]
		default:
			if err := set.Parse(args); err != nil {
				return nil, usageError{fmt.Errorf("%s: %v (see kprof %s --help)", c.Command.Name, err, c.Command.Name)}
			}
			args = set.Args()
		}
	}
	var err error
	help := false
	set.Visit(func(f *flag.Flag) {
		if slices.Contains(cli.HelpFlag.Names(), f.Name) {
			help = true // the cli package adds the help flag to every command's
			return
		}
		if e := c.Set(f.Name, f.Value.String()); e != nil && err == nil {
			err = usageError{fmt.Errorf("%s: -%s: %v", c.Command.Name, f.Name, e)}
		}
	})
	if help && err == nil {
		return nil, cli.ShowCommandHelp(c.Lineage()[1], c.Command.Name)
	}
	return pos, err
}
