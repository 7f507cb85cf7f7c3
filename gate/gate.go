package gate

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/kprof/kprof/profile"
)

// The gate: kprof gate compares two runs of go test -bench (the output of
// kprof test -bench, or any go test -bench output with --unit) benchmark
// by benchmark and says whether the new run is within the limits of a
// Config. Reading the input is golang.org/x/perf/benchfmt's job, so
// the gate reads what benchstat reads; this file matches the benchmarks,
// applies the limits and attributes regressions to calling contexts. The
// renderings are in output.go, the configuration in config.go, the
// baselines in baseline.go.

// UnitInstructions is the exact metric kprof test -bench adds to every
// benchmark line, and the unit the gate compares by default.
const UnitInstructions = "instructions/op"

// Benchmarks is one input of the gate: the results of a go test -bench
// run.
type Benchmarks struct {
	// Name is the input's name in messages and table headers: a file
	// name, or "baseline NAME".
	Name string
	// List holds the benchmarks in the order of their first result.
	List  []*Benchmark
	units benchfmt.UnitMetadataMap
}

// Benchmark is one benchmark's results in one input.
type Benchmark struct {
	// Package is the import path of the "pkg:" line in force, "" when
	// the input has none.
	Package string
	// Name is the benchmark's full name ("BenchmarkFoo/size=10") without
	// the -GOMAXPROCS suffix, so that runs on machines with different
	// numbers of CPUs match. The suffix stays when one input has the
	// same benchmark at several GOMAXPROCS (go test -cpu).
	Name string
	// Runs are the benchmark's result lines (more than one with
	// go test -count), in input order.
	Runs []BenchRun
}

// BenchRun is one result line.
type BenchRun struct {
	Line   int // line number in the input
	Iters  int
	Values []benchfmt.Value
}

// Value returns the values of unit in b's runs, one per run that has it.
// unit is matched as written in the input ("ns/op"), or as benchfmt
// tidies it ("sec/op").
func (b *Benchmark) Value(unit string) []float64 {
	var vs []float64
	for _, r := range b.Runs {
		if v, ok := r.value(unit); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

func (r *BenchRun) value(unit string) (float64, bool) {
	for _, v := range r.Values {
		switch {
		case v.OrigUnit == unit:
			return v.OrigValue, true
		case v.Unit == unit:
			return v.Value, true
		}
	}
	return 0, false
}

// Exact reports whether the input declares unit exact (a "Unit UNIT
// assume=exact" line, as kprof test -bench prints for instructions/op).
// instructions/op is exact whether declared or not.
func (bs *Benchmarks) Exact(unit string) bool {
	if unit == UnitInstructions {
		return true
	}
	m := bs.units.Get(unit, "assume")
	return m != nil && m.Value == "exact"
}

// better returns +1 when higher values of unit are better, else -1
// (lower is better for kprof's instructions/op, time, allocations, and
// units the input says nothing about).
func (bs *Benchmarks) better(unit string) int {
	if bs.units.GetBetter(unit) > 0 {
		return 1
	}
	return -1
}

// ReadBenchmarks reads go test -bench output (the Go benchmark format,
// with golang.org/x/perf/benchfmt) from r; name names the input in
// errors and tables. It fails on a malformed benchmark line, naming its
// line, and on input with no benchmark result at all.
func ReadBenchmarks(r io.Reader, name string) (*Benchmarks, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return parseBenchmarks(data, name)
}

// ReadBenchmarksFile reads the named file as ReadBenchmarks does; "-" is
// the standard input. Errors start with the file's name.
func ReadBenchmarksFile(path string) (*Benchmarks, error) {
	name, data, err := ReadInput(path)
	if err != nil {
		return nil, err
	}
	return parseBenchmarks(data, name)
}

// ReadInput reads the named file ("-": the standard input) and returns
// the name to show for it in messages and tables, and its contents
// (never nil). Its errors start with that name.
func ReadInput(path string) (name string, data []byte, err error) {
	name = path
	if path == "-" {
		name = "standard input"
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return name, nil, fmt.Errorf("%s: %v", name, err)
	}
	if data == nil {
		data = []byte{}
	}
	return name, data, nil
}

func parseBenchmarks(data []byte, name string) (*Benchmarks, error) {
	if bytes.HasPrefix(data, []byte("KPROF")) {
		return nil, fmt.Errorf("%s: a kprof profile, not benchmark output: give kprof gate the output of kprof test -bench, and profiles with --old-profiles and --new-profiles", name)
	}
	type entry struct {
		pkg, name, procs string
		run              BenchRun
	}
	var entries []entry
	br := benchfmt.NewReader(bytes.NewReader(data), name)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, fmt.Errorf("%s:%d: %s", name, rec.Line, rec.Msg)
		case *benchfmt.Result:
			base, parts := rec.Name.Parts()
			var procs string
			if n := len(parts); n > 0 && bytes.HasPrefix(parts[n-1], []byte("-")) {
				procs, parts = string(parts[n-1]), parts[:n-1]
			}
			full := "Benchmark" + string(base) + string(bytes.Join(parts, nil))
			_, line := rec.Pos()
			entries = append(entries, entry{
				pkg: rec.GetConfig("pkg"), name: full, procs: procs,
				run: BenchRun{Line: line, Iters: rec.Iters, Values: slices.Clone(rec.Values)},
			})
		}
	}
	if err := br.Err(); err != nil {
		return nil, err // benchfmt's error starts with name:line
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results (lines like %q): is it the output of kprof test -bench?",
			name, "BenchmarkFoo-2  1000  52310 instructions/op")
	}

	// A benchmark keeps its -GOMAXPROCS suffix only when the input has
	// it at several.
	type key struct{ pkg, name string }
	procs := map[key]map[string]bool{}
	for _, e := range entries {
		k := key{e.pkg, e.name}
		if procs[k] == nil {
			procs[k] = map[string]bool{}
		}
		procs[k][e.procs] = true
	}
	bs := &Benchmarks{Name: name, units: map[benchfmt.UnitMetadataKey]*benchfmt.UnitMetadata{}}
	index := map[key]*Benchmark{}
	for _, e := range entries {
		k := key{e.pkg, e.name}
		if len(procs[k]) > 1 {
			k.name += e.procs
		}
		b := index[k]
		if b == nil {
			b = &Benchmark{Package: k.pkg, Name: k.name}
			index[k] = b
			bs.List = append(bs.List, b)
		}
		b.Runs = append(b.Runs, e.run)
	}
	for k, v := range br.Units() {
		bs.units[k] = v
	}
	return bs, nil
}

// DefaultTop is the number of calling contexts the gate lists for a
// regression when Options.Top is 0.
const DefaultTop = 10

// Options configures [Compare].
type Options struct {
	// Config holds the thresholds, absolute limits and unit; nil means
	// the defaults of an empty configuration.
	Config *Config
	// OldProfiles and NewProfiles are directories holding one profile per
	// benchmark, written by kprof test -bench --profile DIR and named
	// after the benchmark with "/" replaced by "_":
	// BenchmarkFoo_size=10.kprof. With both, each regression lists the
	// calling contexts whose instructions per op changed most.
	OldProfiles, NewProfiles string
	// Top is the number of calling contexts listed per regression: 0
	// means DefaultTop, a negative number none.
	Top int
}

// Row statuses of a gate: how a benchmark's new value compares with its
// old one.
const (
	Unchanged   = "unchanged"
	Improved    = "improved"
	Worse       = "worse"      // worse, within the threshold
	Regression  = "regression" // beyond the threshold or an absolute limit
	Added       = "added"      // only in the new input, allowed
	Removed     = "removed"    // only in the old input, allowed
	NotCompared = "error"      // a value is missing or unusable: see Problems
)

// Row is one benchmark's line of a gate.
type Row struct {
	Package string `json:"package,omitempty"`
	Name    string `json:"name"`
	// Old and New are the benchmark's values in the gate's unit; nil
	// where the input lacks the benchmark or its value is unusable.
	Old *float64 `json:"old"`
	New *float64 `json:"new"`
	// Delta is (new − old) / old in percent; nil when either is missing
	// or old is 0.
	Delta  *float64 `json:"delta_percent"`
	Status string   `json:"status"`
	// Threshold, Max and Min are the limits that applied.
	Threshold Percent  `json:"threshold"`
	Max       *float64 `json:"max,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	// Reasons say why a regression is one: the threshold, a limit, or
	// both.
	Reasons []string `json:"reasons,omitempty"`
	// Problems are the errors that kept the gate from checking the
	// benchmark fully (it is missing on one side, its runs differ, a
	// profile cannot be read). Any problem fails the gate with an error.
	Problems []string `json:"problems,omitempty"`
	// Notes are things worth knowing that do not fail the gate, such as
	// a regression without profiles to attribute it.
	Notes []string `json:"notes,omitempty"`
	// Contexts are, for a regression with profiles on both sides, the
	// calling contexts whose instructions per op changed most.
	Contexts []Context `json:"contexts,omitempty"`
}

// Context is a calling context whose instructions per op changed
// between the old and the new profile of a benchmark.
type Context struct {
	Stack []profile.Func `json:"-"` // outermost function first
	// Old and New are the context's instructions per op (see [Compare]),
	// Delta is New − Old.
	Old   float64 `json:"old"`
	New   float64 `json:"new"`
	Delta float64 `json:"delta"`
}

// Verdicts, the exit statuses of kprof gate.
const (
	Pass = 0 // every benchmark within its limits
	Fail = 1 // a regression
	Err  = 2 // a benchmark could not be checked
)

// Result is what [Compare] found.
type Result struct {
	Unit string `json:"unit"`
	// Exact reports whether both inputs' values of Unit are exact
	// (instructions/op, or declared with assume=exact): their runs must
	// then agree.
	Exact bool   `json:"exact"`
	Old   string `json:"old"` // names of the inputs
	New   string `json:"new"`
	// Threshold is the default threshold; rows say which one applied.
	Threshold Percent `json:"threshold"`
	Rows      []Row   `json:"benchmarks"`
	// Warnings do not fail the gate, such as configuration rules that
	// match no benchmark.
	Warnings []string `json:"warnings"`
	// Regressions, Improvements and Errors count the rows of each kind
	// (a row with problems counts as an error, whatever its status).
	Regressions  int `json:"regressions"`
	Improvements int `json:"improvements"`
	Errors       int `json:"errors"`

	missing bool // a benchmark is on one side only, and that is an error
}

// Verdict returns Pass, Fail or Err. An error wins over a
// regression: the gate could not check everything it was asked to.
func (r *Result) Verdict() int {
	switch {
	case r.Errors > 0:
		return Err
	case r.Regressions > 0:
		return Fail
	}
	return Pass
}

// Compare compares the benchmarks of after with those of before in the
// configured unit (default instructions/op) and checks each against its
// limits:
//
//   - a relative threshold: a benchmark regresses when its value got worse
//     by more than the threshold percentage of the old value (for units
//     where lower is better, new > old·(1 + threshold/100)), compared
//     exactly; the default is DefaultThreshold, rules of the
//     configuration override it by benchmark name;
//   - absolute limits (Rule.Max, Rule.Min) on the new value.
//
// Benchmarks are matched by package and name. One that is in only one of
// the inputs is an error unless the configuration allows it
// (AllowMissing). With go test -count, a benchmark has several runs: an
// exact unit must give the same value in every run (anything else is an
// error that names the values), another unit is compared by its median.
//
// For each regression, when both profile directories are given, Compare
// lists the calling contexts whose instructions per op changed most. A
// profile's counts cover however many ops the benchmark ran; Compare scales
// them to one op by the benchmark's instructions/op over the profile's
// TotalInstructions, so the contexts' changes are in the units of the
// gate's table (when the input has no instructions/op, it divides by the
// iteration count of the benchmark's first run).
//
// Compare returns an error, and no result, only when a whole input is
// unusable (no benchmark of it reports the unit) or the configuration is
// invalid.
func Compare(before, after *Benchmarks, opts Options) (*Result, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = &Config{}
	}
	if err := cfg.compile(); err != nil {
		return nil, err
	}
	unit := cfg.unit()
	for _, bs := range []*Benchmarks{before, after} {
		if !hasUnit(bs, unit) {
			hint := ""
			if unit == UnitInstructions {
				hint = ": is it the output of plain go test rather than kprof test -bench? (--unit ns/op gates on time instead)"
			}
			return nil, fmt.Errorf("%s: no benchmark reports %s%s", bs.Name, unit, hint)
		}
	}
	r := &Result{
		Unit: unit, Exact: before.Exact(unit) && after.Exact(unit),
		Old: before.Name, New: after.Name, Threshold: cfg.threshold(),
		Warnings: []string{},
	}
	better := after.better(unit)

	type key struct{ pkg, name string }
	olds := map[key]*Benchmark{}
	for _, b := range before.List {
		olds[key{b.Package, b.Name}] = b
	}
	news := map[key]*Benchmark{}
	for _, b := range after.List {
		news[key{b.Package, b.Name}] = b
	}
	// Before's order, then what only after has: the table reads like the
	// benchmark output.
	var order []key
	for _, b := range before.List {
		order = append(order, key{b.Package, b.Name})
	}
	for _, b := range after.List {
		if k := (key{b.Package, b.Name}); olds[k] == nil {
			order = append(order, k)
		}
	}
	// Rows of one package stay together, in the order packages appear.
	pkgRank := map[string]int{}
	for _, k := range order {
		if _, ok := pkgRank[k.pkg]; !ok {
			pkgRank[k.pkg] = len(pkgRank)
		}
	}
	slices.SortStableFunc(order, func(a, b key) int { return cmp.Compare(pkgRank[a.pkg], pkgRank[b.pkg]) })

	used := make([]bool, len(cfg.Benchmarks))
	for _, k := range order {
		ob, nb := olds[k], news[k]
		row := Row{Package: k.pkg, Name: k.name}
		lim := cfg.limits(k.name, used)
		row.Threshold, row.Max, row.Min = lim.threshold, lim.max, lim.min
		ov, oerr := gateValue(ob, before, unit, r.Exact)
		nv, nerr := gateValue(nb, after, unit, r.Exact)
		row.Old, row.New = ov, nv
		switch {
		case ob == nil && cfg.AllowMissing:
			row.Status = Added
		case nb == nil && cfg.AllowMissing:
			row.Status = Removed
		case ob == nil:
			row.Problems = append(row.Problems, fmt.Sprintf("not in %s (a new benchmark?)", before.Name))
			r.missing = true
		case nb == nil:
			row.Problems = append(row.Problems, fmt.Sprintf("not in %s (did it fail? renamed? removed?)", after.Name))
			r.missing = true
		}
		for _, err := range []error{oerr, nerr} {
			if err != nil {
				row.Problems = append(row.Problems, err.Error())
			}
		}
		if ov != nil && nv != nil {
			compareValues(&row, *ov, *nv, better)
		}
		if nv != nil {
			checkLimits(&row, *nv, unit)
		}
		if row.Status == "" {
			row.Status = NotCompared
		}
		if row.Status == Regression {
			attribute(&row, ob, nb, opts, r)
		}
		switch {
		case len(row.Problems) > 0:
			r.Errors++
		case row.Status == Regression:
			r.Regressions++
		case row.Status == Improved:
			r.Improvements++
		}
		r.Rows = append(r.Rows, row)
	}
	for i, rule := range cfg.Benchmarks {
		if !used[i] {
			r.Warnings = append(r.Warnings, fmt.Sprintf("configuration rule %d (match %q) matches no benchmark", i+1, rule.Match))
		}
	}
	return r, nil
}

func hasUnit(bs *Benchmarks, unit string) bool {
	for _, b := range bs.List {
		if len(b.Value(unit)) > 0 {
			return true
		}
	}
	return false
}

// gateValue returns b's value of unit in input bs: the value of every run
// for an exact unit, the median otherwise. A nil b has no value and no
// error (the caller reports it missing).
func gateValue(b *Benchmark, bs *Benchmarks, unit string, exact bool) (*float64, error) {
	if b == nil {
		return nil, nil
	}
	vs := b.Value(unit)
	switch {
	case len(vs) == 0:
		return nil, fmt.Errorf("no %s in %s (line %d)", unit, bs.Name, b.Runs[0].Line)
	case len(vs) < len(b.Runs):
		return nil, fmt.Errorf("%s in %d of its %d runs in %s", unit, len(vs), len(b.Runs), bs.Name)
	}
	if exact {
		for _, v := range vs[1:] {
			if v != vs[0] {
				return nil, fmt.Errorf("its %d runs in %s differ (%s %s): %s is exact, so the benchmark does different work per op from run to run (setup inside the measured loop? map order, timing or scheduling?)",
					len(vs), bs.Name, joinValues(vs), unit, unit)
			}
		}
		return &vs[0], nil
	}
	s := slices.Sorted(slices.Values(vs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &m, nil
}

func joinValues(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = formatValue(v)
	}
	return strings.Join(s, ", ")
}

// compareValues sets row's status and delta from its old and new value.
// The threshold is compared exactly: 0.5% of 52310 is 261.55, and
// 52310+261.55 is within it.
func compareValues(row *Row, ov, nv float64, better int) {
	if ov != 0 {
		d := 100 * (nv - ov) / ov
		row.Delta = &d
	}
	worse := (nv-ov)*float64(-better) > 0
	switch {
	case nv == ov:
		row.Status = Unchanged
	case !worse:
		row.Status = Improved
	case exceeds(ov, nv, row.Threshold):
		row.Status = Regression
		row.Reasons = append(row.Reasons, fmt.Sprintf("%s beyond the %s threshold", formatDelta(row.Delta), row.Threshold))
	default:
		row.Status = Worse
	}
}

// exceeds reports whether |nv − ov| > threshold% of |ov|, exactly, with
// the values as decimals, as the benchmark output wrote them.
func exceeds(ov, nv float64, threshold Percent) bool {
	diff := new(big.Rat).Sub(decimal(nv), decimal(ov))
	diff.Abs(diff)
	diff.Mul(diff, big.NewRat(100, 1))
	allowed := new(big.Rat).Abs(decimal(ov))
	allowed.Mul(allowed, threshold.rat())
	return diff.Cmp(allowed) > 0
}

// decimal returns v as the shortest decimal that reads back as v: 52571.55
// for the float64 nearest to it.
func decimal(v float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok { // ±Inf, NaN: not from benchfmt, which parses finite numbers
		return new(big.Rat).SetFloat64(v)
	}
	return r
}

func checkLimits(row *Row, nv float64, unit string) {
	over := row.Max != nil && nv > *row.Max
	under := row.Min != nil && nv < *row.Min
	if over {
		row.Reasons = append(row.Reasons, fmt.Sprintf("%s %s above the limit %s", formatValue(nv), unit, formatValue(*row.Max)))
	}
	if under {
		row.Reasons = append(row.Reasons, fmt.Sprintf("%s %s below the limit %s", formatValue(nv), unit, formatValue(*row.Min)))
	}
	if over || under {
		row.Status = Regression
	}
}

// ProfileFileName returns the name of a benchmark's profile in a
// directory written by kprof test -bench --profile DIR: the benchmark's
// name with "/" replaced by "_", and ".kprof".
func ProfileFileName(benchmark string) string {
	return strings.ReplaceAll(benchmark, "/", "_") + ".kprof"
}

// attribute lists the calling contexts of a regressed benchmark whose
// instructions per op changed most.
func attribute(row *Row, ob, nb *Benchmark, opts Options, r *Result) {
	top := opts.Top
	switch {
	case top < 0:
		return
	case top == 0:
		top = DefaultTop
	}
	if opts.OldProfiles == "" || opts.NewProfiles == "" {
		return
	}
	var ps [2]*profile.Profile
	for i, dir := range []string{opts.OldProfiles, opts.NewProfiles} {
		path := filepath.Join(dir, ProfileFileName(row.Name))
		p, err := profile.ParseFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			row.Notes = append(row.Notes, fmt.Sprintf("no profile %s to say where the change came from", path))
			return
		case err != nil:
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s: %v", path, pe.Err)
			}
			row.Problems = append(row.Problems, fmt.Sprintf("profile %v", err))
			return
		}
		ps[i] = p
	}
	if err := profile.SameMetric(&ps[0].Meta, &ps[1].Meta); err != nil {
		row.Problems = append(row.Problems, fmt.Sprintf("its profiles in %s and %s: %v; profile both sides with the same kprof and -metric",
			opts.OldProfiles, opts.NewProfiles, err))
		return
	}
	row.Contexts = contextChanges(ps[0], ps[1], perOp(ps[0], ob), perOp(ps[1], nb), top)
	if len(row.Contexts) == 0 {
		row.Notes = append(row.Notes, "its profiles have the same instructions per op in every calling context")
	}
}

// perOp returns the function that turns p's counts into counts per op
// of benchmark b (see Compare). It multiplies before it divides, so a
// profile of exactly the benchmark's ops gives whole numbers.
func perOp(p *profile.Profile, b *Benchmark) func(int64) float64 {
	if vs := b.Value(UnitInstructions); len(vs) > 0 && p.TotalInstructions > 0 {
		v, total := vs[0], float64(p.TotalInstructions)
		return func(x int64) float64 { return float64(x) * v / total }
	}
	if n := float64(b.Runs[0].Iters); n > 0 {
		return func(x int64) float64 { return float64(x) / n }
	}
	return func(x int64) float64 { return float64(x) }
}

// contextChanges returns the top calling contexts, present in a or in b,
// whose Instructions scaled by sa and sb differ most, largest change
// first; ties keep canonical stack order.
//
// overlap.Diff ranks contexts by their shares of each profile, which is
// what kprof compare asks (do two profiles agree?). A regression asks how
// many more instructions each op executes and where: when one context
// grows, every other context's share shrinks although it executes
// exactly what it did. So the gate ranks absolute changes per op.
func contextChanges(a, b *profile.Profile, sa, sb func(int64) float64, top int) []Context {
	type context struct {
		parent int
		f      profile.Func
		x, y   int64
	}
	var all []context
	type id struct {
		parent int
		f      profile.Func
	}
	index := map[id]int{}
	for side, p := range []*profile.Profile{a, b} {
		var path []int // path[d]: the context at depth d+1 on the current stack
		p.Walk(func(stack []profile.Func, n *profile.Node) {
			d := len(stack) - 1
			parent := -1
			if d > 0 {
				parent = path[d-1]
			}
			k := id{parent, n.Func}
			i, ok := index[k]
			if !ok {
				i = len(all)
				index[k] = i
				all = append(all, context{parent: parent, f: n.Func})
			}
			if side == 0 {
				all[i].x += n.Instructions
			} else {
				all[i].y += n.Instructions
			}
			path = append(path[:d], i)
		})
	}
	var order []int
	for i, c := range all {
		if sb(c.y) != sa(c.x) {
			order = append(order, i)
		}
	}
	change := func(i int) float64 { return math.Abs(sb(all[i].y) - sa(all[i].x)) }
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(change(j), change(i)) })
	if len(order) > top {
		order = order[:top]
	}
	var out []Context
	for _, i := range order {
		var stack []profile.Func
		for j := i; j >= 0; j = all[j].parent {
			stack = append(stack, all[j].f)
		}
		slices.Reverse(stack)
		o, n := sa(all[i].x), sb(all[i].y)
		out = append(out, Context{Stack: stack, Old: o, New: n, Delta: n - o})
	}
	return out
}

// formatValue formats a benchmark value: integers in full (exact counts
// must not round), others with four significant digits or one decimal.
func formatValue(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// formatDelta formats a relative change in percent with a sign and two
// decimals; a change too small for two decimals keeps two significant
// digits, so no change prints as 0.00% unless it is none.
func formatDelta(d *float64) string {
	switch {
	case d == nil:
		return "?"
	case *d == 0:
		return "0.00%"
	}
	s := fmt.Sprintf("%+.2f%%", *d)
	if s == "+0.00%" || s == "-0.00%" {
		s = fmt.Sprintf("%+.2g%%", *d)
	}
	return s
}
