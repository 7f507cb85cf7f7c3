// Package auto installs kprof's built-in agent chosen by the environment
// when the program starts. kprof build links it into every program unless
// -agent names another agent.
//
// Settings, read once before main:
//
//	KPROF_MODE    sample | exact | off   (default sample)
//	KPROF_GRAN    sampling granularity g, in units of the build's metric (default 10000
//	              instructions; under -metric cost 10000 times the table's scale, picoseconds)
//	KPROF_JITTER  R: granularity g + r, r uniform in [0, R) (default 100, scaled as g; 0 = constant)
//	KPROF_SEED    seed of the per-goroutine PRNGs (default 1)
//	KPROF_MAX_CONTEXTS
//	              calling contexts one goroutine may add to the profile (default
//	              agent.DefaultMaxContexts, 4194304); beyond them its new stacks are
//	              counted below an overflow context that keeps their innermost function
//	KPROF_OUT     profile path (default <program name>.kprof in the working directory,
//	              or in KPROF_OUT_DIR if set; kprof test sets that, or, when the
//	              user set KPROF_OUT, KPROF_OUT_MERGE: <program>.p<pid>.kprof there,
//	              which kprof test merges into KPROF_OUT)
//	KPROF_BENCH_PROFILES
//	              directory for one profile per benchmark (kprof test --profile):
//	              what the agent recorded while the benchmark's timer ran
//	KPROF_HTTP    ADDR: serve live profiles at http://ADDR/debug/kprof/ (agent.ServeLive);
//	              unset: no server, no goroutine, no listener
//	KPROF_LABELS  k=v,…: labels of the program, in every profile it writes (Meta.Labels)
//	              and in its pprof profiles' comments, with path, version and
//	              vcs.revision from the build information
//	KPROF_INTERVAL
//	              D (60s, 5m): also write what was counted in each interval to
//	              <KPROF_OUT without .kprof>.<n>.kprof, n from 1, the last at exit
//	KPROF_EVERY   N (at least 1000000): the same, each time the instructions the program's
//	              samples report reach a multiple of N (everyAgent); not with KPROF_INTERVAL
//
// An invalid value stops the program before main with exit status 2.
package auto

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kprof/kprof/agent"
	"github.com/kprof/kprof/counter"
	"github.com/kprof/kprof/profile"
)

func init() {
	set, out, err := settings(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kprof:", err)
		os.Exit(2)
	}
	// (Not counted: a program's profile is the same with or without the
	// live settings' code.)
	var addr string
	var every time.Duration
	var everyN int64
	agent.Suspend(func() {
		addr, labels, err = liveSettings(os.Getenv, buildLabels())
		if err == nil {
			every, err = intervalSetting(os.Getenv)
		}
		if err == nil {
			everyN, err = everySetting(os.Getenv)
		}
	})
	if err == nil && addr != "" && set.Mode == "off" {
		err = fmt.Errorf("KPROF_HTTP=%q: KPROF_MODE=off has no profile to serve", addr)
	}
	if err == nil && every != 0 && set.Mode == "off" {
		err = fmt.Errorf("KPROF_INTERVAL=%q: KPROF_MODE=off has no profile to write", os.Getenv("KPROF_INTERVAL"))
	}
	if err == nil && everyN != 0 && set.Mode == "off" {
		err = fmt.Errorf("KPROF_EVERY=%q: KPROF_MODE=off has no profile to write", os.Getenv("KPROF_EVERY"))
	}
	if err == nil && everyN != 0 && every != 0 {
		err = fmt.Errorf("KPROF_EVERY=%q and KPROF_INTERVAL=%q: both write <KPROF_OUT stem>.<n>.kprof, set one", os.Getenv("KPROF_EVERY"), os.Getenv("KPROF_INTERVAL"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kprof:", err)
		os.Exit(2)
	}
	if set.Mode == "off" {
		agent.Off()
		return
	}
	a := agent.NewCCT(set)
	var per *periodic
	switch {
	case everyN != 0:
		per = newPeriodic(a, out)
		agent.Install(&everyAgent{CCT: a, n: everyN, per: per})
	default:
		agent.Install(a)
	}
	if dir := os.Getenv("KPROF_BENCH_PROFILES"); dir != "" {
		agent.SetRecorder(benchRecorder{a, dir})
	}
	var once sync.Once
	if every != 0 {
		per = startPeriodic(a, out, every)
	}
	// exiting: the program ends (agent.AtExit); after a signal, a program
	// that handles it itself goes on.
	write := func(exiting bool) {
		once.Do(func() {
			if exiting {
				// The program is ending: a collection while the profile
				// is built would mark all of the program's heap for the
				// few megabytes the profile takes (36 % of the instructions
				// a sampled run of bench/workloads/javac -n 1 ran beyond
				// KPROF_MODE=off's). A memory limit the program set still
				// holds.
				debug.SetGCPercent(-1)
			}
			if per != nil {
				per.stop()
			}
			a.FlushRunning()
			if exiting && per == nil {
				// The run's one profile, written from the agent's tree
				// as it is: no copy of a tree of millions of contexts.
				if err := a.WriteFinal(out, meta()); err != nil {
					fmt.Fprintln(os.Stderr, "kprof: writing profile:", err)
				}
				return
			}
			p := a.Profile(meta())
			if err := p.WriteFile(out); err != nil {
				fmt.Fprintln(os.Stderr, "kprof: writing profile:", err)
			}
			if per != nil {
				per.last(p)
			}
		})
	}
	// The live profiles: served on KPROF_HTTP's address, and by package
	// kprofhttp's handler on the program's own server, KPROF_HTTP set or
	// not.
	agent.Suspend(func() {
		l := agent.NewLive(a, meta)
		if addr != "" {
			// Listening here, before main: a bad or busy address stops
			// the program as other invalid settings do.
			if err := agent.ServeLive(addr, l); err != nil {
				fmt.Fprintf(os.Stderr, "kprof: KPROF_HTTP=%q: %v\n", addr, err)
				os.Exit(2)
			}
		}
		agent.SetLive(l)
	})
	agent.AtExit(func() { write(true) })
	watchSignals(write)
}

// watchSignals makes SIGINT and SIGTERM write the profile, then have
// their usual effect, unless the program handles them itself: it then got
// the signal too, and the profile is written when it exits, as usual. A
// signal ignored from the start (nohup, a shell's background job) stays
// ignored. The watcher is hidden from the program (its leak checks count
// goroutines).
func watchSignals(write func(exiting bool)) {
	var watched []os.Signal
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if !signal.Ignored(s) {
			watched = append(watched, s)
		}
	}
	if len(watched) == 0 {
		return
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, watched...)
	counter.GoHidden(func() {
		for {
			sig := <-sigs
			if n, ok := sig.(syscall.Signal); ok && counter.SignalDelivered(uint32(n)) > 1 {
				// The program's own handler got it too, whatever it
				// does next (signal.Stop at once, as a graceful
				// shutdown does); the next may be ours (a program that
				// lets a second Ctrl-C kill it).
				continue
			}
			signal.Stop(sigs)
			agent.Suspend(func() { write(false) })
			signal.Reset(sig)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Signal(sig)
			}
			return
		}
	})
}

// labels are the program's labels (liveSettings), in every profile it
// writes.
var labels []profile.Label

// program is the program's name: its executable's file name, without
// ".exe" — not os.Args[0], which a test that runs its own binary again
// may set to anything (logrus's "reexectest-…", ""): the profiles of such
// processes are the package's, which kprof test merges by name. os.Args[0]
// where the executable cannot be found.
func program() string {
	exe, err := os.Executable()
	if err != nil || exe == "" {
		exe = os.Args[0]
	}
	if exe == "" {
		return "program"
	}
	return strings.TrimSuffix(filepath.Base(exe), ".exe")
}

func meta() profile.Meta {
	return profile.Meta{
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		Program:   program(),
		Labels:    labels,
	}
}

// benchRecorder writes the profile of each benchmark's timed part to
// dir/<name>.kprof, "/" in names as "_".
type benchRecorder struct {
	*agent.CCT
	dir string
}

func (r benchRecorder) WriteRecord(name string) {
	p := r.RecordProfile(meta())
	path := filepath.Join(r.dir, strings.ReplaceAll(name, "/", "_")+".kprof")
	if err := p.WriteFile(path); err != nil {
		fmt.Fprintln(os.Stderr, "kprof: writing benchmark profile:", err)
	}
}

// settings reads the KPROF_* variables.
func settings(getenv func(string) string) (agent.Settings, string, error) {
	// The defaults are in instructions; a weighted metric (kprof build
	// -metric cost) scales them by what an average instruction weighs.
	_, _, scale := counter.Metric()
	set := agent.Settings{Mode: profile.ModeSample, Granularity: 10000 * scale, Jitter: 100 * scale, Seed: 1, VerifyPaths: getenv("KPROF_VERIFY_PATHS") == "1"}
	if m := getenv("KPROF_MODE"); m != "" {
		switch m {
		case profile.ModeSample, profile.ModeExact, "off":
			set.Mode = m
		default:
			return set, "", fmt.Errorf("KPROF_MODE=%q: want sample, exact or off", m)
		}
	}
	num := func(name string, min int64, dst *int64) error {
		v := getenv(name)
		if v == "" {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min {
			return fmt.Errorf("%s=%q: want an integer >= %d", name, v, min)
		}
		*dst = n
		return nil
	}
	if err := num("KPROF_GRAN", 1, &set.Granularity); err != nil {
		return set, "", err
	}
	if err := num("KPROF_JITTER", 0, &set.Jitter); err != nil {
		return set, "", err
	}
	if err := num("KPROF_MAX_CONTEXTS", 1, &set.MaxContexts); err != nil {
		return set, "", err
	}
	if v := getenv("KPROF_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return set, "", fmt.Errorf("KPROF_SEED=%q: want an unsigned integer", v)
		}
		set.Seed = s
	}
	out := getenv("KPROF_OUT")
	if dir := getenv("KPROF_OUT_MERGE"); dir != "" && out == "" {
		// Set by kprof test for a KPROF_OUT of its own: it merges the
		// profiles of its test binaries, which may share a name.
		// (p before the pid: an interval profile's name ends in a
		// number, <program>.p<pid>.<n>.kprof, and a program's may too.)
		out = filepath.Join(dir, fmt.Sprintf("%s.p%d.kprof", program(), os.Getpid()))
	} else if out == "" {
		// KPROF_OUT_DIR is set by kprof test, whose binaries run in the
		// package directory: the profiles go where kprof test was run.
		out = filepath.Join(getenv("KPROF_OUT_DIR"), program()+".kprof")
	}
	return set, out, nil
}

// liveSettings reads KPROF_HTTP and KPROF_LABELS ("k=v,k=v", spaces
// around keys and values trimmed, values may be empty) and returns the
// address and the program's labels: build's, then KPROF_LABELS', which
// replace build's of the same key, sorted by key.
func liveSettings(getenv func(string) string, build []profile.Label) (addr string, labels []profile.Label, err error) {
	addr = getenv("KPROF_HTTP")
	byKey := map[string]string{}
	for _, l := range build {
		byKey[l.Key] = l.Value
	}
	if v := getenv("KPROF_LABELS"); v != "" {
		seen := map[string]bool{}
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return "", nil, fmt.Errorf("KPROF_LABELS=%q: want k=v,… with a key before each = (%q)", v, kv)
			}
			if seen[k] {
				return "", nil, fmt.Errorf("KPROF_LABELS=%q: key %q twice", v, k)
			}
			seen[k] = true
			byKey[k] = strings.TrimSpace(val)
		}
	}
	for k, v := range byKey {
		labels = append(labels, profile.Label{Key: k, Value: v})
	}
	slices.SortFunc(labels, func(a, b profile.Label) int { return strings.Compare(a.Key, b.Key) })
	return addr, labels, nil
}

// buildLabels returns what the build information says of the program
// beyond what a profile's Meta holds (program name, Go version, GOOS,
// GOARCH): the main package's import path (path), its module's version
// (version: a tag, a pseudo-version from the VCS, or "(devel)") and the
// VCS revision it was built from (vcs.revision), those that are known.
func buildLabels() []profile.Label {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var ls []profile.Label
	add := func(k, v string) {
		if v != "" {
			ls = append(ls, profile.Label{Key: k, Value: v})
		}
	}
	add("path", bi.Path)
	add("version", bi.Main.Version)
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			add("vcs.revision", s.Value)
		}
	}
	return ls
}
