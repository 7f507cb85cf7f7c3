package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kprof/kprof/bench/internal/pprofconv"
	"github.com/kprof/kprof/toolchain"
)

// Granularities of paper §7, in instructions.
var paperGranularities = []int64{500, 1000, 5000, 10000, 50000, 100000, 500000, 1000000}

// PprofRates are the runtime/pprof sampling rates compared, in Hz.
var PprofRates = []int{100, 1000}

const paperJitter = 100 // R of the randomised granularity

// Quick mode.
var (
	quickWorkloads     = []string{"jack", "mtrt", "pipeline"}
	quickGranularities = []int64{1000, 10000}
)

// ReportName is the report's file name in the output directory; the figures
// and raw.json go to its subdirectory FigDir.
const (
	ReportName = "RESULTS.md"
	FigDir     = "results"
	RawName    = "raw.json"
)

// Config says what Run measures and where it writes.
type Config struct {
	Quick     bool
	Out       string   // report directory
	Work      string   // binaries and profiles; "" for a temporary directory
	Workloads []string // nil: all (quick: quickWorkloads)
	Runs      int      // timed runs per configuration; 0: default
	PprofRuns int      // runs merged into a pprof reference, the timed ones included; 0: default
	ExactRuns int      // timed exact-mode runs (the first rounds); 0: Runs
	N         string   // -n for every workload; "": the workload's default
	Command   string   // the command line, for the report
	Log       io.Writer
}

func (cfg *Config) defaults() error {
	if cfg.Runs == 0 {
		cfg.Runs = 5
		if cfg.Quick {
			cfg.Runs = 2
		}
	}
	if cfg.PprofRuns == 0 {
		cfg.PprofRuns = 20
		if cfg.Quick {
			cfg.PprofRuns = 3
		}
	}
	if cfg.ExactRuns == 0 || cfg.ExactRuns > cfg.Runs {
		cfg.ExactRuns = cfg.Runs
	}
	if cfg.Quick && cfg.N == "" {
		cfg.N = "1"
	}
	if cfg.Runs < 2 || cfg.ExactRuns < 2 || cfg.PprofRuns <= cfg.Runs {
		return fmt.Errorf("-runs and -exactruns must be at least 2 (run-to-run overlap), -pprofruns more than -runs")
	}
	if cfg.N != "" {
		if n, err := strconv.Atoi(cfg.N); err != nil || n < 1 {
			return fmt.Errorf("-n %q: want a positive integer", cfg.N)
		}
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return nil
}

// Run builds everything, measures, and writes the report.
func Run(ctx context.Context, cfg *Config) (err error) {
	if err := cfg.defaults(); err != nil {
		return err
	}
	h := &harness{cfg: cfg, start: time.Now()}
	if h.root, err = moduleRoot(); err != nil {
		return err
	}
	all, err := listWorkloads(h.root)
	if err != nil {
		return err
	}
	names := cfg.Workloads
	if names == nil {
		names = all
		if cfg.Quick {
			names = quickWorkloads
		}
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return fmt.Errorf("no workload %q (have %s)", n, strings.Join(all, ", "))
		}
	}
	grans := paperGranularities
	if cfg.Quick {
		grans = quickGranularities
	}
	if cfg.Work == "" {
		if h.work, err = os.MkdirTemp("", "kprof-harness-"); err != nil {
			return err
		}
		defer func() {
			if err == nil {
				os.RemoveAll(h.work)
			} else {
				fmt.Fprintf(cfg.Log, "harness: binaries and profiles kept in %s\n", h.work)
			}
		}()
	} else {
		h.work = cfg.Work
		if err := os.MkdirAll(h.work, 0o777); err != nil {
			return err
		}
	}
	res := &Results{
		Date:          h.start.Format("2006-01-02"),
		Command:       cfg.Command,
		Commit:        gitCommit(h.root),
		Quick:         cfg.Quick,
		Runs:          cfg.Runs,
		PprofRuns:     cfg.PprofRuns,
		ExactRuns:     cfg.ExactRuns,
		N:             cfg.N,
		Granularities: grans,
		Jitter:        paperJitter,
		Rates:         PprofRates,
		Machine:       describeMachine(),
	}
	if res.GoVersion, err = h.output(h.root, "go", "env", "GOVERSION"); err != nil {
		return err
	}
	deps, err := h.output(h.root, "go", "list", "-deps", "-f", "{{.ImportPath}}", "runtime")
	if err != nil {
		return err
	}
	h.filter = pprofconv.NewFilter(strings.Fields(deps))

	if err := h.build(ctx, names); err != nil {
		return err
	}
	plan := h.plan(names, grans)
	if err := h.measure(ctx, plan); err != nil {
		return err
	}
	for _, name := range names {
		w, err := h.analyze(name, grans)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		res.Workloads = append(res.Workloads, w)
	}
	res.Failures = h.failures
	res.Elapsed = time.Since(h.start).Round(time.Second).String()
	if err := writeRaw(cfg.Out, res); err != nil {
		return err
	}
	h.logf("writing the report and figures")
	return writeReport(cfg.Out, res)
}

// Render writes the report and figures again from dir's raw.json.
func Render(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, FigDir, RawName))
	if err != nil {
		return err
	}
	var res Results
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("%s: %w", RawName, err)
	}
	return writeReport(dir, &res)
}

func writeRaw(dir string, res *Results) error {
	if err := os.MkdirAll(filepath.Join(dir, FigDir), 0o777); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FigDir, RawName), append(data, '\n'), 0o666)
}

type harness struct {
	cfg    *Config
	root   string // module root
	work   string
	start  time.Time
	kprof  string // the kprof binary
	filter *pprofconv.Filter
	// checksum is each workload's checksum line from the plain build;
	// every other run must print the same.
	checksum map[string]string
	// times[workload][config] are the timed runs in round order.
	times map[string]map[string][]Timing
	rss   map[string]map[string][]int64 // peak resident sets of the runs in times
	// failures lists runs that exited 0 but wrote no profile.
	failures []string
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(h.cfg.Log, "harness: [%s] %s\n", fmtDuration(time.Since(h.start)), fmt.Sprintf(format, args...))
}

func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func (h *harness) output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the kprof module: run the harness from the repository")
	}
	return filepath.Dir(mod), nil
}

// listWorkloads returns the directories of bench/workloads that hold a
// main.go, sorted.
func listWorkloads(root string) ([]string, error) {
	dir := filepath.Join(root, "bench", "workloads")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "main.go")); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

func describeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: "unknown"}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// build builds kprof and every workload, plain and with kprof build.
func (h *harness) build(ctx context.Context, names []string) error {
	steps := 1 + 2*len(names)
	step := 0
	do := func(what string, run func() error) error {
		step++
		h.logf("build %d/%d: %s", step, steps, what)
		t := time.Now()
		if err := run(); err != nil {
			return err
		}
		h.logf("build %d/%d: %s done in %.1f s", step, steps, what, time.Since(t).Seconds())
		return nil
	}
	command := func(what string, name string, args ...string) func() error {
		return func() error {
			cmd := exec.CommandContext(ctx, name, args...)
			cmd.Dir = h.root
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", what, err, out)
			}
			return nil
		}
	}
	h.kprof = filepath.Join(h.work, "kprof")
	if err := do("go build ./cmd/kprof", func() error { return toolchain.BuildKprof(h.root, h.kprof) }); err != nil {
		return err
	}
	for _, n := range names {
		pkg := "./bench/workloads/" + n
		what := "go build " + pkg
		if err := do(what, command(what, "go", "build", "-o", h.bin(n, "plain"), pkg)); err != nil {
			return err
		}
		what = "kprof build " + pkg
		if err := do(what, command(what, h.kprof, "build", "-o", h.bin(n, "kprof"), pkg)); err != nil {
			return err
		}
	}
	return nil
}

func (h *harness) bin(workload, kind string) string {
	return filepath.Join(h.work, workload+"."+kind)
}

// A job is one run of a workload binary.
type job struct {
	workload string
	config   string // timing configuration, "" for an untimed run
	round    int    // 1-based round of a timed run
	bin      string
	env      []string
	args     []string
	label    string // for progress
	profile  string // the profile the run must write, if any
}

// Timing configurations, in the order each round runs them.
const (
	cfgPlain = "plain"
	cfgOff   = "off"
	cfgExact = "exact"
)

func cfgSample(g int64) string { return "g" + strconv.FormatInt(g, 10) }
func cfgPprof(hz int) string   { return "pprof" + strconv.Itoa(hz) }

// Profile paths in the work directory.
func (h *harness) profPath(workload, kind string, run int) string {
	return filepath.Join(h.work, "prof", fmt.Sprintf("%s.%s.%d", workload, kind, run))
}

// plan lists every run: the untimed constant-granularity runs first, then
// cfg.Runs rounds of timed runs (each round: every workload in every
// configuration), then the runs merged into the pprof references.
func (h *harness) plan(names []string, grans []int64) []job {
	var jobs []job
	n := []string{}
	if h.cfg.N != "" {
		n = []string{"-n", h.cfg.N}
	}
	for _, w := range names {
		for _, g := range grans {
			kind := fmt.Sprintf("c%d", g)
			jobs = append(jobs, job{
				workload: w, bin: h.bin(w, "kprof"), args: n,
				env:     kprofEnv("sample", g, 0, h.profPath(w, kind, 1)),
				profile: h.profPath(w, kind, 1),
				label:   fmt.Sprintf("accuracy %s g=%d constant", w, g),
			})
		}
	}
	for r := 1; r <= h.cfg.Runs; r++ {
		for _, w := range names {
			add := func(config, bin string, env, extra []string, profile string) {
				jobs = append(jobs, job{
					workload: w, config: config, round: r, bin: bin, env: env,
					args:    append(slices.Clone(n), extra...),
					profile: profile,
					label:   fmt.Sprintf("timing round %d/%d: %s %s", r, h.cfg.Runs, w, config),
				})
			}
			add(cfgPlain, h.bin(w, "plain"), nil, nil, "")
			add(cfgOff, h.bin(w, "kprof"), []string{"KPROF_MODE=off"}, nil, "")
			for _, g := range grans {
				p := h.profPath(w, cfgSample(g), r)
				add(cfgSample(g), h.bin(w, "kprof"), kprofEnv("sample", g, paperJitter, p), nil, p)
			}
			if r <= h.cfg.ExactRuns {
				p := h.profPath(w, cfgExact, r)
				add(cfgExact, h.bin(w, "kprof"), kprofEnv("exact", 0, 0, p), nil, p)
			}
			for _, hz := range PprofRates {
				p := h.profPath(w, cfgPprof(hz), r)
				add(cfgPprof(hz), h.bin(w, "plain"), nil, pprofArgs(p, hz), p)
			}
		}
	}
	for _, w := range names {
		for _, hz := range PprofRates {
			// The timed runs are part of the reference.
			for i := h.cfg.Runs + 1; i <= h.cfg.PprofRuns; i++ {
				p := h.profPath(w, cfgPprof(hz), i)
				jobs = append(jobs, job{
					workload: w, bin: h.bin(w, "plain"),
					args:    append(slices.Clone(n), pprofArgs(p, hz)...),
					profile: p,
					label:   fmt.Sprintf("pprof reference %s %d Hz, run %d/%d", w, hz, i, h.cfg.PprofRuns),
				})
			}
		}
	}
	return jobs
}

func kprofEnv(mode string, g, jitter int64, out string) []string {
	env := []string{"KPROF_MODE=" + mode, "KPROF_OUT=" + out, "KPROF_SEED=1"}
	if mode == "sample" {
		env = append(env, "KPROF_GRAN="+strconv.FormatInt(g, 10), "KPROF_JITTER="+strconv.FormatInt(jitter, 10))
	}
	return env
}

func pprofArgs(out string, hz int) []string {
	return []string{"-cpuprofile", out, "-cpuhz", strconv.Itoa(hz)}
}

// measure runs every job in order and records the timed ones.
func (h *harness) measure(ctx context.Context, jobs []job) error {
	if err := os.MkdirAll(filepath.Join(h.work, "prof"), 0o777); err != nil {
		return err
	}
	h.checksum = map[string]string{}
	h.times = map[string]map[string][]Timing{}
	h.rss = map[string]map[string][]int64{}
	for i, j := range jobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, rss, out, stderr, err := h.runOnce(ctx, j)
		if err != nil {
			return fmt.Errorf("%s: %w", j.label, err)
		}
		if j.profile != "" {
			if _, err := os.Stat(j.profile); err != nil {
				// The run succeeded but wrote no profile: a failure of
				// the profiler, which the report lists.
				f := fmt.Sprintf("%s: no profile written; stderr: %s", j.label, strings.TrimSpace(stderr))
				h.failures = append(h.failures, f)
				h.logf("FAILURE %s", f)
			}
		}
		// Every build and setting must compute the same thing.
		if want, ok := h.checksum[j.workload]; !ok {
			h.checksum[j.workload] = out
		} else if out != want {
			return fmt.Errorf("%s printed %q, the first run printed %q", j.label, out, want)
		}
		if j.config != "" {
			m := h.times[j.workload]
			if m == nil {
				m = map[string][]Timing{}
				h.times[j.workload] = m
			}
			m[j.config] = append(m[j.config], t)
			if h.rss[j.workload] == nil {
				h.rss[j.workload] = map[string][]int64{}
			}
			h.rss[j.workload][j.config] = append(h.rss[j.workload][j.config], rss)
		}
		h.logf("run %d/%d: %s (%.2f s)", i+1, len(jobs), j.label, t.Wall)
	}
	return nil
}

// runOnce runs j and returns its timing, peak resident set (bytes), stdout
// and stderr.
func (h *harness) runOnce(ctx context.Context, j job) (Timing, int64, string, string, error) {
	cmd := exec.CommandContext(ctx, j.bin, j.args...)
	cmd.Dir = h.work
	cmd.Env = append(cleanEnv(), j.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return Timing{}, 0, "", "", fmt.Errorf("%s: %v\n%s", filepath.Base(j.bin), err, stderr.Bytes())
	}
	ps := cmd.ProcessState
	return Timing{
		Wall: wall.Seconds(),
		CPU:  (ps.UserTime() + ps.SystemTime()).Seconds(),
	}, maxRSS(ps), stdout.String(), stderr.String(), nil
}

// cleanEnv is the environment without KPROF_* settings, which would
// otherwise leak into every run.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KPROF_") {
			env = append(env, kv)
		}
	}
	return env
}
