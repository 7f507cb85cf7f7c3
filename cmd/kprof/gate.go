package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kprof/kprof/gate"
	"github.com/urfave/cli/v2"
)

const gateHelp = `Compares two runs of kprof test -bench, benchmark by benchmark, and fails
when one got worse by more than its threshold:

   kprof gate old.txt new.txt                       table, exit status 1 on a regression
   kprof gate --threshold 0.5% old.txt new.txt
   kprof gate --markdown old.txt new.txt > gate.md  for a pull-request comment
   kprof gate --save-baseline main new.txt          store new.txt as baseline "main"
   kprof gate --baseline main new.txt               compare new.txt with it

OLD and NEW are the output of kprof test -bench (the go test -bench format,
read as benchstat reads it; "-" is the standard input). The gate compares
instructions/op, which is exact: a single run per side decides, and with
-count the runs of a benchmark must agree. --unit ns/op (or B/op, …) gates
on another metric of the output, plain go test's too, by its median; time
is noisy and needs a larger threshold.

A benchmark regresses when its new value is worse than the old one by more
than its threshold percentage (default 1%), or beyond an absolute limit.
Benchmarks are matched by package and name, without the -GOMAXPROCS suffix;
one that is on only one side is an error unless --allow-missing is given.

With --old-profiles and --new-profiles (directories written by kprof test
-bench --profile DIR, one BenchmarkName.kprof per benchmark), each regression
lists the calling contexts whose instructions per op changed most.

Configuration, kept in the repository: --config FILE, or .kprof/gate.json
in the module's root directory (the nearest directory up from here with a
go.mod) when it exists. JSON; every field optional:

   {
     "threshold": "1%",
     "unit": "instructions/op",
     "allow_missing": false,
     "baseline_dir": "baselines",
     "benchmarks": [
       {"match": "^BenchmarkParse", "threshold": "0.1%"},
       {"match": "^BenchmarkEncode/size=large$", "max": 250000}
     ]
   }

"match" is a regular expression (unanchored, as for go test -bench) on the
benchmark's name; for each benchmark, threshold, max and min come from the
first matching rule that sets them. --threshold, --unit and --allow-missing
override the file.

Baselines are saved in .kprof/baselines/NAME/ in the module's root (or in
the configuration's baseline_dir, relative to the file, or --baseline-dir):
benchmarks.txt, the input as given, and profiles/ with --new-profiles.
--baseline NAME also takes the baseline's profiles as the old ones. Saving
never replaces an existing baseline unless --force is given.

Exit status: 0 when every benchmark is within its limits, 1 on a
regression, 2 on an error: an input or profile that cannot be read, a
benchmark on one side only, runs of an exact metric that differ, a wrong
command line. An error wins over a regression.`

func gateCommand() *cli.Command {
	return &cli.Command{
		Name:        "gate",
		Usage:       "fail on benchmark regressions: compare instructions/op of two kprof test -bench runs",
		ArgsUsage:   "OLD NEW | --baseline NAME NEW | --save-baseline NAME NEW",
		Description: gateHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "threshold", Usage: "a benchmark regresses when it is worse by more than `P` percent, such as 1% or 0.5% (default: the configuration's, or 1%)"},
			&cli.StringFlag{Name: "config", Usage: "read thresholds and limits from the JSON `FILE` (default: .kprof/gate.json in the module root, if present)"},
			&cli.StringFlag{Name: "unit", Usage: "compare the metric `UNIT` of the benchmark lines (default: instructions/op)"},
			&cli.BoolFlag{Name: "allow-missing", Usage: "accept benchmarks that are only in OLD or only in NEW"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "markdown", Usage: "print the result as Markdown, for a pull-request comment"},
			&cli.StringFlag{Name: "old-profiles", Usage: "the per-benchmark profiles of OLD are in `DIR`"},
			&cli.StringFlag{Name: "new-profiles", Usage: "the per-benchmark profiles of NEW are in `DIR`"},
			&cli.IntFlag{Name: "top", Value: gate.DefaultTop, Usage: "list the `N` calling contexts that changed most per regression (0: none)"},
			&cli.StringFlag{Name: "baseline", Usage: "compare NEW with the saved baseline `NAME` (and its profiles)"},
			&cli.StringFlag{Name: "save-baseline", Usage: "save NEW (and --new-profiles) as the baseline `NAME`"},
			&cli.BoolFlag{Name: "force", Usage: "with --save-baseline, replace an existing baseline"},
			&cli.StringFlag{Name: "baseline-dir", Usage: "keep baselines in `DIR` (default: .kprof/baselines in the module root)"},
		},
		OnUsageError: onUsageError,
		Action:       runGate,
	}
}

// gateInput is one side of the gate as read: its bytes, kept for saving.
type gateInput struct {
	name string // for messages and tables
	data []byte
}

func runGate(c *cli.Context) error {
	files, err := positional(c)
	if err != nil || files == nil {
		return err
	}
	usage := func(format string, args ...any) error {
		return usageError{fmt.Errorf("gate: "+format+" (see kprof gate --help)", args...)}
	}
	top := c.Int("top")
	baseline, save := c.String("baseline"), c.String("save-baseline")
	switch {
	case c.Bool("json") && c.Bool("markdown"):
		return usage("--json and --markdown both choose the output")
	case top < 0:
		return usage("--top %d is negative", top)
	case top == 0:
		top = -1 // reports: none
	case c.Bool("force") && save == "":
		return usage("--force without --save-baseline")
	case baseline != "" && len(files) != 1:
		return usage("with --baseline, give one file, the new benchmark output; got %d", len(files))
	case baseline == "" && save != "" && len(files) != 1 && len(files) != 2:
		return usage("want the benchmark output to save (or OLD NEW to compare and save NEW); got %d", len(files))
	case baseline == "" && save == "" && len(files) != 2:
		return usage("want two benchmark outputs, OLD and NEW; got %d", len(files))
	}
	for _, name := range []string{baseline, save} {
		if err := gate.CheckBaselineName(name); name != "" && err != nil {
			return usage("%v", err)
		}
	}
	var threshold *gate.Percent
	if c.IsSet("threshold") {
		p, err := gate.ParsePercent(c.String("threshold"))
		if err != nil {
			return usage("--threshold: %v", err)
		}
		threshold = &p
	}

	wd, err := os.Getwd()
	if err != nil {
		return fail("gate: %v", err)
	}
	root := moduleRoot(wd)
	cfg, cfgDir, err := loadGateConfig(c.String("config"), root)
	if err != nil {
		return fail("%v", err)
	}
	if threshold != nil {
		cfg.Threshold = threshold
	}
	if c.IsSet("unit") {
		cfg.Unit = c.String("unit")
	}
	if c.Bool("allow-missing") {
		cfg.AllowMissing = true
	}
	store := gate.BaselineStore{Dir: filepath.Join(root, ".kprof", "baselines")}
	switch {
	case c.IsSet("baseline-dir"):
		store.Dir = c.String("baseline-dir")
	case cfg.BaselineDir != "":
		store.Dir = filepath.Join(cfgDir, cfg.BaselineDir)
	}

	// The inputs: old from a file or a baseline, new from a file.
	var old, cur gateInput
	oldProfiles, newProfiles := c.String("old-profiles"), c.String("new-profiles")
	switch {
	case baseline != "":
		data, profiles, err := store.Load(baseline)
		if err != nil {
			return fail("%v", err)
		}
		old = gateInput{"baseline " + baseline, data}
		if oldProfiles == "" {
			oldProfiles = profiles
		}
	case len(files) == 2:
		if old, err = readGateInput(files[0]); err != nil {
			return fail("%v", err)
		}
	}
	if cur, err = readGateInput(files[len(files)-1]); err != nil {
		return fail("%v", err)
	}
	newBench, err := gate.ReadBenchmarks(bytes.NewReader(cur.data), cur.name)
	if err != nil {
		return fail("%v", err)
	}

	if save != "" {
		if err := checkBaseline(newBench, cfg); err != nil {
			return fail("%s: not saved as baseline %q: %v", cur.name, save, err)
		}
	}
	if old.data == nil { // save only
		return saveBaseline(store, save, cur, newProfiles, len(newBench.List), c.Bool("force"))
	}
	oldBench, err := gate.ReadBenchmarks(bytes.NewReader(old.data), old.name)
	if err != nil {
		return fail("%v", err)
	}
	r, err := gate.Compare(oldBench, newBench, gate.Options{
		Config: cfg, OldProfiles: oldProfiles, NewProfiles: newProfiles, Top: top,
	})
	if err != nil {
		return fail("%v", err)
	}
	var out bytes.Buffer
	switch {
	case c.Bool("json"):
		err = r.WriteJSON(&out)
	case c.Bool("markdown"):
		err = r.WriteMarkdown(&out)
	default:
		err = r.WriteText(&out)
	}
	if err == nil {
		_, err = os.Stdout.Write(out.Bytes())
	}
	if err != nil {
		return fail("gate: writing the result: %v", err)
	}
	if save != "" {
		if err := saveBaseline(store, save, cur, newProfiles, len(newBench.List), c.Bool("force")); err != nil {
			return err
		}
	}
	if v := r.Verdict(); v != gate.Pass {
		// The table says it all; stderr gets the verdict in one line
		// also when stdout goes to a file.
		fmt.Fprintln(os.Stderr, "kprof:", r.Summary())
		return exitStatus(v)
	}
	return nil
}

// checkBaseline reports whether bs can serve as a baseline: whether the
// gate can compare it with itself, every benchmark checked.
func checkBaseline(bs *gate.Benchmarks, cfg *gate.Config) error {
	r, err := gate.Compare(bs, bs, gate.Options{Config: cfg, Top: -1})
	if err != nil {
		return err
	}
	for _, row := range r.Rows {
		if len(row.Problems) > 0 {
			return fmt.Errorf("%s: %s", row.Name, row.Problems[0])
		}
	}
	return nil
}

// readGateInput reads a benchmark output file; "-" is the standard input.
func readGateInput(path string) (gateInput, error) {
	name, data, err := gate.ReadInput(path)
	return gateInput{name, data}, err
}

// moduleRoot returns the nearest directory from dir up that holds a
// go.mod, or dir itself when none does.
func moduleRoot(dir string) string {
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !fi.IsDir() {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// loadGateConfig reads the configuration: the named file, or the
// module's .kprof/gate.json when there is one. It returns the directory
// relative paths in the configuration start from.
func loadGateConfig(path, root string) (*gate.Config, string, error) {
	if path == "" {
		path = filepath.Join(root, ".kprof", "gate.json")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return &gate.Config{}, filepath.Dir(path), nil
		}
	}
	cfg, err := gate.LoadConfig(path)
	return cfg, filepath.Dir(path), err
}

// saveBaseline saves the baseline and says so on stderr.
func saveBaseline(store gate.BaselineStore, name string, in gateInput, profiles string, n int, force bool) error {
	if err := store.Save(name, in.data, profiles, force); err != nil {
		return fail("%v", err)
	}
	what := fmt.Sprintf("%d %s", n, map[bool]string{true: "benchmark", false: "benchmarks"}[n == 1])
	if profiles != "" {
		what += " and their profiles"
	}
	fmt.Fprintf(os.Stderr, "kprof: saved baseline %q (%s from %s) in %s\n", name, what, in.name, store.Dir)
	return nil
}
