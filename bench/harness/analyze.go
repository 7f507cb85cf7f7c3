package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"

	"github.com/kprof/kprof/bench/internal/pprofconv"
	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
)

// Results is everything a report is made from; raw.json holds it.
type Results struct {
	Date          string
	Command       string
	Commit        string
	Quick         bool
	Runs          int
	PprofRuns     int
	ExactRuns     int
	N             string // "" when each workload ran at its default size
	Granularities []int64
	Jitter        int64
	Rates         []int
	Machine       Machine
	GoVersion     string
	Elapsed       string
	Workloads     []*Workload
	// Failures lists runs that exited 0 but wrote no profile.
	Failures []string
}

// Machine is where the measurements ran.
type Machine struct {
	CPU      string
	Cores    int
	OS, Arch string
}

// Workload holds one workload's measurements.
type Workload struct {
	Name     string
	Checksum string // the line every run printed
	// Exact profile: instructions counted, in contexts, and contexts.
	ExactTotal    int64
	ExactContexts int64
	ExactSize     int
	ExactFailed   bool // no exact-mode run wrote a profile
	// ExactRepeat is the overlap of the first two exact-mode runs' profiles
	// (100 for a deterministic program).
	ExactRepeat float64
	// ExactSelf is the exact profile's overlap with itself: 100 unless the
	// measure is broken.
	ExactSelf  float64
	Constant   []Accuracy // per granularity, KPROF_JITTER=0
	Randomised []Accuracy // per granularity, R = Jitter
	// Times[config] are the timed runs, in round order: configs "plain",
	// "off", "g<granularity>" (randomised), "exact", "pprof<hz>".
	Times map[string][]Timing
	// MaxRSS[config] are the peak resident sets of the same runs, in
	// bytes (none where the system does not say).
	MaxRSS map[string][]int64 `json:",omitempty"`
	Pprof  []PprofResult      // per rate
}

// Accuracy compares one sampled profile with the exact one.
type Accuracy struct {
	Granularity int64
	Samples     int64
	Overlap     float64 // overlap.Contexts with the exact profile
	FlatOverlap float64 // overlap.Functions with the exact profile
	// DeltaB is δb of the instructions in the profile's contexts (b_approx)
	// against the exact total; DeltaBTotal of the profile's own total.
	DeltaB, DeltaBTotal float64
	Size                int     // calling contexts
	RelSize             float64 // Size as a percentage of the exact profile's
	// Repeat is the overlap of this setting's first two timed runs
	// (randomised only; 100 for a deterministic program).
	Repeat    float64
	Identical bool // the two runs' profiles are equal
	// Failed is set when no run of the setting wrote a profile; the other
	// fields are then zero.
	Failed bool
}

// Timing is one run's wall-clock and CPU (user + system) time in seconds.
type Timing struct {
	Wall, CPU float64
}

// PprofResult is runtime/pprof at one rate.
type PprofResult struct {
	Hz int
	// Samples is the mean number of samples in a timed run's profile;
	// Dropped the mean number with no instrumented frame.
	Samples, Dropped float64
	Contexts         float64 // mean calling contexts of a timed run's profile
	RunToRun         float64 // mean overlap over all pairs of timed runs
	VsMerged         float64 // mean overlap of a timed run with the merge of the other PprofRuns-1 runs
	MergedSamples    int64
}

func (h *harness) analyze(name string, grans []int64) (*Workload, error) {
	w := &Workload{Name: name, Checksum: h.checksum[name], Times: h.times[name], MaxRSS: h.rss[name]}
	// A run that wrote no profile is listed in Results.Failures; its
	// settings are marked Failed here and left out of the means.
	exacts, exactPaths := h.profiles(name, cfgExact, h.cfg.ExactRuns)
	if len(exacts) == 0 {
		w.ExactFailed = true
		for _, g := range grans {
			w.Constant = append(w.Constant, Accuracy{Granularity: g, Failed: true})
			w.Randomised = append(w.Randomised, Accuracy{Granularity: g, Failed: true})
		}
	} else {
		exact := exacts[0]
		w.ExactTotal = exact.TotalInstructions
		w.ExactContexts = exact.SumInstructions()
		w.ExactSize = overlap.Size(exact)
		w.ExactSelf = overlap.Contexts(exact, exact.Copy())
		w.ExactRepeat = 100
		if len(exacts) > 1 {
			w.ExactRepeat = overlap.Contexts(exact, exacts[1])
		}
		_ = exactPaths
		compare := func(p *profile.Profile, g int64) Accuracy {
			a := Accuracy{
				Granularity: g,
				Samples:     p.TotalSamples,
				Overlap:     overlap.Contexts(exact, p),
				FlatOverlap: overlap.Functions(exact, p),
				DeltaB:      overlap.DeltaB(p.SumInstructions(), exact.TotalInstructions),
				DeltaBTotal: overlap.DeltaB(p.TotalInstructions, exact.TotalInstructions),
				Size:        overlap.Size(p),
			}
			a.RelSize = 100 * float64(a.Size) / float64(max(w.ExactSize, 1))
			return a
		}
		for _, g := range grans {
			cs, _ := h.profiles(name, fmt.Sprintf("c%d", g), 1)
			if len(cs) == 0 {
				w.Constant = append(w.Constant, Accuracy{Granularity: g, Failed: true})
			} else {
				w.Constant = append(w.Constant, compare(cs[0], g))
			}
			rs, paths := h.profiles(name, cfgSample(g), h.cfg.Runs)
			if len(rs) == 0 {
				w.Randomised = append(w.Randomised, Accuracy{Granularity: g, Failed: true})
				continue
			}
			a := compare(rs[0], g)
			a.Repeat, a.Identical = 100, true
			if len(rs) > 1 {
				a.Repeat = overlap.Contexts(rs[0], rs[1])
				a.Identical = equalFiles(paths[0], paths[1])
			}
			w.Randomised = append(w.Randomised, a)
		}
	}
	for _, hz := range PprofRates {
		pr, err := h.analyzePprof(name, hz)
		if err != nil {
			return nil, err
		}
		w.Pprof = append(w.Pprof, pr)
	}
	return w, nil
}

// profiles reads the profiles of kind from runs 1..n that were written,
// with their paths.
func (h *harness) profiles(name, kind string, n int) ([]*profile.Profile, []string) {
	var ps []*profile.Profile
	var paths []string
	for r := 1; r <= n; r++ {
		path := h.profPath(name, kind, r)
		p, err := profile.ParseFile(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				h.failures = append(h.failures, fmt.Sprintf("%s: %v", path, err))
			}
			continue
		}
		ps = append(ps, p)
		paths = append(paths, path)
	}
	return ps, paths
}

func equalFiles(a, b string) bool {
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func (h *harness) readPprof(name string, hz int, path string) (*profile.Profile, pprofconv.Stats, error) {
	p, err := pprofconv.ReadFile(path)
	if err != nil {
		return nil, pprofconv.Stats{}, err
	}
	// The workload sets the rate before runtime/pprof asks for 100 Hz (see
	// bench/workloads/internal/cpuprofile): the period shows which won.
	if want := int64(1e9 / hz); p.Period != want {
		return nil, pprofconv.Stats{}, fmt.Errorf("%s: period %d ns, want %d ns (%d Hz)", path, p.Period, want, hz)
	}
	return pprofconv.Convert(p, h.filter, name)
}

func (h *harness) analyzePprof(name string, hz int) (PprofResult, error) {
	res := PprofResult{Hz: hz}
	var all []*profile.Profile // runs 1..PprofRuns; the first Runs are the timed ones
	var timed int
	for r := 1; r <= h.cfg.PprofRuns; r++ {
		p, st, err := h.readPprof(name, hz, h.profPath(name, cfgPprof(hz), r))
		if errors.Is(err, fs.ErrNotExist) {
			continue // listed in the failures
		}
		if err != nil {
			return res, err
		}
		all = append(all, p)
		if r <= h.cfg.Runs {
			timed++
			res.Samples += float64(st.Samples)
			res.Dropped += float64(st.Dropped)
			res.Contexts += float64(overlap.Size(p))
		}
	}
	if timed < 2 || len(all) <= timed {
		return res, fmt.Errorf("pprof %d Hz: %d timed and %d further profiles, too few to compare", hz, timed, len(all)-timed)
	}
	res.Samples /= float64(timed)
	res.Dropped /= float64(timed)
	res.Contexts /= float64(timed)
	merged, err := profile.Merge(all...)
	if err != nil {
		return res, err
	}
	res.MergedSamples = merged.TotalSamples
	var pairs []float64
	for i := 0; i < timed; i++ {
		for j := i + 1; j < timed; j++ {
			pairs = append(pairs, overlap.Contexts(all[i], all[j]))
		}
	}
	res.RunToRun = mean(pairs)
	// Each timed run against the merge of all the other runs, so that it
	// is not compared with itself.
	var vs []float64
	for i := 0; i < timed; i++ {
		others, err := profile.Merge(slices.Concat(all[:i], all[i+1:])...)
		if err != nil {
			return res, err
		}
		vs = append(vs, overlap.Contexts(all[i], others))
	}
	res.VsMerged = mean(vs)
	return res, nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// median returns the median of xs (the mean of the middle two for an even
// count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// geomean returns the geometric mean of xs, which must be positive; NaN
// for none.
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

// medianTime returns the median wall (or CPU) time of w's runs of config.
func (w *Workload) medianTime(config string, cpu bool) float64 {
	var xs []float64
	for _, t := range w.Times[config] {
		if cpu {
			xs = append(xs, t.CPU)
		} else {
			xs = append(xs, t.Wall)
		}
	}
	return median(xs)
}

// medianRSS returns the median peak resident set of w's runs of config,
// in bytes, or 0 if it was not measured.
func (w *Workload) medianRSS(config string) float64 {
	var xs []float64
	for _, m := range w.MaxRSS[config] {
		if m > 0 {
			xs = append(xs, float64(m))
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return median(xs)
}

// Slowdown returns the median time of config over the plain build's.
func (w *Workload) Slowdown(config string, cpu bool) float64 {
	return w.medianTime(config, cpu) / w.medianTime(cfgPlain, cpu)
}
