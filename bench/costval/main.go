// Command costval validates kprof's cost metric against CPU time: for each
// workload of bench/workloads it compares the flat profile (each
// function's own share) of kprof's exact profiles — instruction metric and
// cost metric — with the merge of several runtime/pprof CPU profiles of
// the plain build, converted by the harness's rules (bench/internal/
// pprofconv: time in uninstrumented callees such as the allocator goes to
// the nearest instrumented caller), and the cost profile's total with the
// CPU time the plain runs took.
//
// Usage, from the kprof module:
//
//	go run ./bench/costval [-workloads a,b] [-runs 5] [-hz 500] [-size 0.25] [-costtable FILE] [-work DIR] [-out FILE]
//
// The table is fitted on micro-benchmarks (kprof calibrate), none of
// which is a workload: every workload is a program the table was not
// fitted on. It prints a markdown table (and writes it to -out).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kprof/kprof/bench/internal/pprofconv"
	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/toolchain"
)

// defaultWorkloads are the deterministic, single-process workloads (churn
// and httpserver time goroutine scheduling and I/O more than code).
var defaultWorkloads = []string{"binarytrees", "bigmath", "compress", "db", "jack", "javac", "jess", "json", "mpegaudio", "mtrt", "pipeline", "recursion"}

type config struct {
	workloads  []string
	runs       int
	hz         int
	size       float64
	table      string
	work       string
	out        string
	fit        bool
	writeTable string
	explain    int
	args       string
}

// A row is one workload's result.
type row struct {
	name                  string
	n                     int
	instrFlat, costFlat   float64 // flat overlap with the merged pprof profile, %
	costNS                float64 // the cost profile's total, ns
	cpuNS                 float64 // median CPU time (user+sys) of the plain runs, ns
	pprofSamples, dropped int64
	halves                float64 // flat overlap of the odd pprof runs' merge with the even ones', %
}

func main() {
	var cfg config
	var workloads string
	flag.StringVar(&workloads, "workloads", strings.Join(defaultWorkloads, ","), "comma-separated `names` of workloads")
	flag.IntVar(&cfg.runs, "runs", 5, "pprof runs of the plain build per workload, merged")
	flag.IntVar(&cfg.hz, "hz", 250, "runtime/pprof sampling rate (above 250 Hz Linux delivers fewer signals than asked here: 157 ms of 610 ms CPU at 1000 Hz)")
	flag.Float64Var(&cfg.size, "size", 0.25, "each workload's -n as a `fraction` of its default")
	flag.StringVar(&cfg.table, "costtable", "", "the cost table (default: kprof's shipped one)")
	flag.StringVar(&cfg.work, "work", "", "keep binaries and profiles in this `dir` (default: a temporary one)")
	flag.StringVar(&cfg.out, "out", "", "also write the markdown report to this `file`")
	flag.BoolVar(&cfg.fit, "fit", false, "fit group weights on the workloads, validate leaving each one out (see fit.go)")
	flag.StringVar(&cfg.writeTable, "table-out", "", "with -fit: write the table fitted on all workloads to this `file`")
	flag.IntVar(&cfg.explain, "explain", 0, "print each workload's `N` functions whose share of the cost profile is furthest from their share of CPU time")
	flag.Parse()
	cfg.args = strings.Join(os.Args[1:], " ")
	cfg.workloads = strings.Split(workloads, ",")
	if err := run(context.Background(), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "costval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg *config) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if cfg.work == "" {
		if cfg.work, err = os.MkdirTemp("", "kprof-costval-"); err != nil {
			return err
		}
		defer os.RemoveAll(cfg.work)
	}
	if err := os.MkdirAll(cfg.work, 0o777); err != nil {
		return err
	}
	kprof := filepath.Join(cfg.work, "kprof")
	if err := toolchain.BuildKprof(root, kprof); err != nil {
		return err
	}
	deps, err := output(ctx, root, "go", "list", "-deps", "-f", "{{.ImportPath}}", "runtime")
	if err != nil {
		return err
	}
	filter := pprofconv.NewFilter(strings.Fields(deps))
	if cfg.fit {
		return fit(ctx, cfg, root, kprof, filter)
	}
	costFlags := []string{"-metric", "cost"}
	if cfg.table != "" {
		abs, err := filepath.Abs(cfg.table)
		if err != nil {
			return err
		}
		costFlags = append(costFlags, "-costtable", abs)
	}
	var rows []row
	for _, w := range cfg.workloads {
		r, err := workload(ctx, cfg, root, kprof, costFlags, filter, w)
		if err != nil {
			return fmt.Errorf("%s: %v", w, err)
		}
		rows = append(rows, r)
		logf("%s: flat overlap instructions %.1f%%, cost %.1f%%; cost %.0f ms, CPU %.0f ms", w, r.instrFlat, r.costFlat, r.costNS/1e6, r.cpuNS/1e6)
	}
	var b bytes.Buffer
	report(&b, cfg, rows)
	os.Stdout.Write(b.Bytes())
	if cfg.out != "" {
		return os.WriteFile(cfg.out, b.Bytes(), 0o666)
	}
	return nil
}

var defaultN = regexp.MustCompile(`flag\.Int\("n", (\d+),`)

func workload(ctx context.Context, cfg *config, root, kprof string, costFlags []string, filter *pprofconv.Filter, name string) (row, error) {
	r := row{name: name}
	pkg := "./bench/workloads/" + name
	args, err := sizeArgs(root, cfg, name)
	if err != nil {
		return r, err
	}
	r.n, _ = strconv.Atoi(args[1])
	plain := filepath.Join(cfg.work, name+".plain")
	instr := filepath.Join(cfg.work, name+".instr")
	costb := filepath.Join(cfg.work, name+".cost")
	if err := do(ctx, root, "go", "build", "-o", plain, pkg); err != nil {
		return r, err
	}
	if err := do(ctx, root, kprof, "build", "-o", instr, pkg); err != nil {
		return r, err
	}
	if err := do(ctx, root, kprof, append(append([]string{"build", "-o", costb}, costFlags...), pkg)...); err != nil {
		return r, err
	}
	// The plain build's output is the reference every run must print.
	want, _, err := runBin(ctx, plain, nil, args...)
	if err != nil {
		return r, err
	}
	ref, err := cpuProfiles(ctx, cfg, plain, want, filter, name, args)
	if err != nil {
		return r, err
	}
	merged := ref.merged
	r.cpuNS, r.pprofSamples, r.dropped, r.halves = ref.cpuNS, ref.st.Samples, ref.st.Dropped, ref.halves
	profs := map[string]*profile.Profile{}
	for _, b := range []string{instr, costb} {
		path := b + ".kprof"
		out, _, err := runBin(ctx, b, []string{"KPROF_MODE=exact", "KPROF_OUT=" + path}, args...)
		if err != nil {
			return r, err
		}
		if out != want {
			return r, fmt.Errorf("%s printed %q, want %q", filepath.Base(b), out, want)
		}
		if profs[b], err = profile.ParseFile(path); err != nil {
			return r, err
		}
	}
	r.instrFlat = overlap.Functions(profs[instr], merged)
	r.costFlat = overlap.Functions(profs[costb], merged)
	if profs[costb].Meta.Metric != "cost" {
		return r, fmt.Errorf("the cost build's profile has metric %q", profs[costb].Meta.Metric)
	}
	r.costNS = float64(profs[costb].TotalInstructions) / 1000
	if cfg.explain > 0 {
		explain(os.Stderr, name, cfg.explain, merged, profs[instr], profs[costb])
	}
	return r, nil
}

// explain prints the n functions whose flat share of the cost profile is
// furthest from their share of the CPU profile cpu, with their share of
// the instruction profile beside.
func explain(w io.Writer, name string, n int, cpu, instr, cost *profile.Profile) {
	// By name, as overlap.Functions identifies functions.
	shares := func(p *profile.Profile) map[string]float64 {
		m := map[string]float64{}
		var total float64
		for _, s := range p.Flat() {
			m[s.Func.Name] += float64(s.Self)
			total += float64(s.Self)
		}
		for f := range m {
			m[f] = 100 * m[f] / max(total, 1)
		}
		return m
	}
	c, i, k := shares(cpu), shares(instr), shares(cost)
	var funcs []string
	for _, m := range []map[string]float64{c, i, k} {
		for f := range m {
			funcs = append(funcs, f)
		}
	}
	slices.Sort(funcs)
	funcs = slices.Compact(funcs)
	sort.SliceStable(funcs, func(a, b int) bool {
		return math.Abs(k[funcs[a]]-c[funcs[a]]) > math.Abs(k[funcs[b]]-c[funcs[b]])
	})
	fmt.Fprintf(w, "%s: the %d functions furthest from their CPU share (%%: CPU, instructions, cost)\n", name, min(n, len(funcs)))
	for _, f := range funcs[:min(n, len(funcs))] {
		fmt.Fprintf(w, "  %6.2f %6.2f %6.2f  %s\n", c[f], i[f], k[f], f)
	}
}

// sizeArgs returns the workload's -n arguments: its default size times
// cfg.size (binarytrees: the depth that does about that fraction of the
// work).
func sizeArgs(root string, cfg *config, name string) ([]string, error) {
	src, err := os.ReadFile(filepath.Join(root, "bench", "workloads", name, "main.go"))
	if err != nil {
		return nil, err
	}
	m := defaultN.FindSubmatch(src)
	if m == nil {
		return nil, errors.New("no default -n found")
	}
	def, _ := strconv.Atoi(string(m[1]))
	n := max(1, int(math.Round(float64(def)*cfg.size)))
	if name == "binarytrees" {
		// Its -n is a depth: each level doubles the work.
		n = max(4, def+int(math.Round(math.Log2(cfg.size))))
	}
	return []string{"-n", strconv.Itoa(n)}, nil
}

// cpuRef is the reference a workload's profiles are compared with.
type cpuRef struct {
	merged *profile.Profile // the merge of the runs' CPU profiles
	cpuNS  float64          // median CPU time of the runs, ns
	st     pprofconv.Stats  // pprof samples read and dropped in all
	// The flat overlap of the merge of the odd-numbered runs with that of
	// the even-numbered ones, %: how far sampling noise alone keeps two
	// CPU profiles apart (noiseCeiling).
	halves float64
}

// noiseCeiling estimates, from the halves' overlap, the flat overlap a
// model that predicted CPU time exactly would reach against the merge of
// all runs: the halves differ by the noise of two samples of half the
// size each, about twice the noise of the whole merge (the spread of a
// count grows as the square root of the samples).
func noiseCeiling(halves float64) float64 { return 100 - (100-halves)/2 }

// cpuProfiles runs the plain build cfg.runs times with a CPU profile and
// checks that each run prints want.
func cpuProfiles(ctx context.Context, cfg *config, plain, want string, filter *pprofconv.Filter, name string, args []string) (cpuRef, error) {
	var ref cpuRef
	var halves [2][]*profile.Profile
	var cpus []float64
	for i := 1; i <= cfg.runs; i++ {
		path := filepath.Join(cfg.work, fmt.Sprintf("%s.pprof.%d", name, i))
		out, cpu, err := runBin(ctx, plain, nil, append(args, "-cpuprofile", path, "-cpuhz", strconv.Itoa(cfg.hz))...)
		if err != nil {
			return ref, err
		}
		if out != want {
			return ref, fmt.Errorf("pprof run printed %q, want %q", out, want)
		}
		cpus = append(cpus, cpu)
		p, st, err := readPprof(path, filter, name)
		if err != nil {
			return ref, err
		}
		ref.st.Samples += st.Samples
		ref.st.Dropped += st.Dropped
		halves[i%2] = append(halves[i%2], p)
	}
	var err error
	if ref.merged, err = profile.Merge(append(halves[0], halves[1]...)...); err != nil {
		return ref, err
	}
	if len(halves[0]) > 0 {
		odd, err := profile.Merge(halves[1]...)
		if err != nil {
			return ref, err
		}
		even, err := profile.Merge(halves[0]...)
		if err != nil {
			return ref, err
		}
		ref.halves = overlap.Functions(odd, even)
	}
	sort.Float64s(cpus)
	ref.cpuNS = cpus[len(cpus)/2]
	return ref, nil
}

func readPprof(path string, filter *pprofconv.Filter, name string) (*profile.Profile, pprofconv.Stats, error) {
	p, err := pprofconv.ReadFile(path)
	if err != nil {
		return nil, pprofconv.Stats{}, err
	}
	return pprofconv.Convert(p, filter, name)
}

// runBin runs a binary and returns its standard output and the CPU time
// (user and system) it took, in nanoseconds.
func runBin(ctx context.Context, bin string, env []string, args ...string) (string, float64, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("%s %q: %v\n%s", filepath.Base(bin), args, err, errb.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var cpu float64
	if ru != nil {
		cpu = float64(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))
	}
	return out.String(), cpu, nil
}

func report(w io.Writer, cfg *config, rows []row) {
	table := cfg.table
	if table == "" {
		table = "the shipped table (cost/linux_amd64.txt)"
	}
	if cfg.fit {
		table = "left out of the fit"
	}
	fmt.Fprintf(w, "Flat overlap of kprof's exact profiles with %d merged runtime/pprof CPU profiles (%d Hz) of the plain build, per workload (-n a %.2g fraction of the default, binarytrees' depth as much less work). Cost metric: %s. CPU time: median user+system time of the pprof runs.\n\n", cfg.runs, cfg.hz, cfg.size, table)
	fmt.Fprintf(w, "Noise: the odd-numbered pprof runs' merge against the even-numbered runs' (halves), and the flat overlap a model that predicted CPU time exactly would reach against the merge of all runs, estimated from it (ceiling: the halves differ by about twice the sampling noise of the whole).\n\n")
	fmt.Fprintf(w, "| workload | -n | pprof samples (dropped) | pprof halves | ceiling | instructions, flat overlap | cost, flat overlap | cost total | CPU time | cost / CPU |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var gi, gc, gr, gh, gx []float64
	for _, r := range rows {
		ratio := r.costNS / r.cpuNS
		fmt.Fprintf(w, "| %s | %d | %d (%d) | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.0f ms | %.0f ms | %.2f |\n", r.name, r.n, r.pprofSamples, r.dropped, r.halves, noiseCeiling(r.halves), r.instrFlat, r.costFlat, r.costNS/1e6, r.cpuNS/1e6, ratio)
		gi, gc, gr = append(gi, r.instrFlat), append(gc, r.costFlat), append(gr, ratio)
		gh, gx = append(gh, r.halves), append(gx, noiseCeiling(r.halves))
	}
	fmt.Fprintf(w, "| geometric mean | | | %.1f %% | %.1f %% | %.1f %% | %.1f %% | | | %.2f |\n", geomean(gh), geomean(gx), geomean(gi), geomean(gc), geomean(gr))
}

func geomean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += math.Log(math.Max(x, 1e-9))
	}
	return math.Exp(s / float64(len(xs)))
}

func do(ctx context.Context, dir, name string, args ...string) error {
	t := time.Now()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	logf("%s %s: %.1f s", filepath.Base(name), strings.Join(args, " "), time.Since(t).Seconds())
	return nil
}

func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from the kprof module")
	}
	return filepath.Dir(mod), nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "costval: "+format+"\n", args...)
}
