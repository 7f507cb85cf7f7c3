package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kprof/kprof/reports"
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
			&cli.IntFlag{Name: "top", Value: reports.DefaultGateTop, Usage: "list the `N` calling contexts that changed most per regression (0: none)"},
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
		if err := checkBaselineName(name); name != "" && err != nil {
			return usage("%v", err)
		}
	}
	var threshold *reports.Percent
	if c.IsSet("threshold") {
		p, err := reports.ParsePercent(c.String("threshold"))
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
	store := baselineStore{dir: filepath.Join(root, ".kprof", "baselines")}
	switch {
	case c.IsSet("baseline-dir"):
		store.dir = c.String("baseline-dir")
	case cfg.BaselineDir != "":
		store.dir = filepath.Join(cfgDir, cfg.BaselineDir)
	}

	// The inputs: old from a file or a baseline, new from a file.
	var old, cur gateInput
	oldProfiles, newProfiles := c.String("old-profiles"), c.String("new-profiles")
	switch {
	case baseline != "":
		data, profiles, err := store.load(baseline)
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
	newBench, err := reports.ReadBenchmarks(bytes.NewReader(cur.data), cur.name)
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
	oldBench, err := reports.ReadBenchmarks(bytes.NewReader(old.data), old.name)
	if err != nil {
		return fail("%v", err)
	}
	r, err := reports.Gate(oldBench, newBench, reports.GateOptions{
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
	if v := r.Verdict(); v != reports.GatePass {
		// The table says it all; stderr gets the verdict in one line
		// also when stdout goes to a file.
		fmt.Fprintln(os.Stderr, "kprof:", r.Summary())
		return exitStatus(v)
	}
	return nil
}

// checkBaseline reports whether bs can serve as a baseline: whether the
// gate can compare it with itself, every benchmark checked.
func checkBaseline(bs *reports.Benchmarks, cfg *reports.GateConfig) error {
	r, err := reports.Gate(bs, bs, reports.GateOptions{Config: cfg, Top: -1})
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
	name, data, err := reports.ReadInput(path)
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
func loadGateConfig(path, root string) (*reports.GateConfig, string, error) {
	if path == "" {
		path = filepath.Join(root, ".kprof", "gate.json")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return &reports.GateConfig{}, filepath.Dir(path), nil
		}
	}
	cfg, err := reports.LoadGateConfig(path)
	return cfg, filepath.Dir(path), err
}

// baselineStore keeps named baselines in a directory: NAME/benchmarks.txt
// is the benchmark output as it was given, NAME/profiles/ its
// per-benchmark profiles, if any were saved.
type baselineStore struct {
	dir string
}

const (
	baselineBenchmarks = "benchmarks.txt"
	baselineProfiles   = "profiles"
)

var baselineNameSyntax = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func checkBaselineName(name string) error {
	if !baselineNameSyntax.MatchString(name) {
		return fmt.Errorf("baseline name %q: use letters, digits, '.', '_' and '-' (such as main or v1.2)", name)
	}
	return nil
}

// load returns the saved benchmark output of baseline name, and its
// profile directory ("" when it has none).
func (s baselineStore) load(name string) (data []byte, profiles string, err error) {
	dir := filepath.Join(s.dir, name)
	data, err = os.ReadFile(filepath.Join(dir, baselineBenchmarks))
	if errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("no baseline %q in %s", name, s.dir)
		if names := s.names(); len(names) > 0 {
			msg += " (saved: " + strings.Join(names, ", ") + ")"
		}
		return nil, "", fmt.Errorf("%s: save one with kprof gate --save-baseline %s FILE", msg, name)
	}
	if err != nil {
		return nil, "", fmt.Errorf("baseline %q: %v", name, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, baselineProfiles)); err == nil && fi.IsDir() {
		profiles = filepath.Join(dir, baselineProfiles)
	}
	return data, profiles, nil
}

// names returns the names of the saved baselines, sorted.
func (s baselineStore) names() []string {
	entries, _ := os.ReadDir(s.dir)
	var names []string
	for _, e := range entries {
		if e.IsDir() && checkBaselineName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// save stores in as baseline name, with the profiles (*.kprof) of the
// directory profiles unless it is "". An existing baseline is replaced
// only when force is set, and then only once the new one is complete:
// the baseline is assembled in a temporary directory and renamed into
// place.
func (s baselineStore) save(name string, in gateInput, profiles string, force bool) (err error) {
	final := filepath.Join(s.dir, name)
	_, statErr := os.Stat(final)
	exists := statErr == nil
	if exists && !force {
		return fmt.Errorf("baseline %q already exists in %s: --force replaces it", name, s.dir)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	tmp, err := os.MkdirTemp(s.dir, "."+name+".tmp*")
	if err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.WriteFile(filepath.Join(tmp, baselineBenchmarks), in.data, 0o644); err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	if profiles != "" {
		if err := copyProfiles(profiles, filepath.Join(tmp, baselineProfiles)); err != nil {
			return fmt.Errorf("baseline %q: %v", name, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	if !exists {
		if err := os.Rename(tmp, final); err != nil {
			return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
		}
		return nil
	}
	// Move the old baseline aside, the new one in, then drop the old.
	aside, err := os.MkdirTemp(s.dir, "."+name+".old*")
	if err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	aside = filepath.Join(aside, name)
	if err := os.Rename(final, aside); err != nil {
		os.Remove(filepath.Dir(aside))
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Rename(aside, final)
		os.Remove(filepath.Dir(aside))
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	os.RemoveAll(filepath.Dir(aside))
	return nil
}

// copyProfiles copies the profiles (*.kprof) of directory from into the
// new directory to, checking that each one reads as a profile.
func copyProfiles(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return fmt.Errorf("%s: %v", from, unwrapPath(err))
	}
	if err := os.Mkdir(to, 0o755); err != nil {
		return unwrapPath(err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".kprof") {
			continue
		}
		src := filepath.Join(from, e.Name())
		p, err := loadProfile(src)
		if err != nil {
			return err
		}
		if err := p.WriteFile(filepath.Join(to, e.Name())); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s has no profiles (*.kprof): was it written by kprof test -bench --profile?", from)
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

// saveBaseline saves the baseline and says so on stderr.
func saveBaseline(store baselineStore, name string, in gateInput, profiles string, n int, force bool) error {
	if err := store.save(name, in, profiles, force); err != nil {
		return fail("%v", err)
	}
	what := fmt.Sprintf("%d %s", n, map[bool]string{true: "benchmark", false: "benchmarks"}[n == 1])
	if profiles != "" {
		what += " and their profiles"
	}
	fmt.Fprintf(os.Stderr, "kprof: saved baseline %q (%s from %s) in %s\n", name, what, in.name, store.dir)
	return nil
}
