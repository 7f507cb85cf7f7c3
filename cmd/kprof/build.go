package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kprof/kprof"
	"github.com/kprof/kprof/cost"
	"github.com/kprof/kprof/rewrite"
	"github.com/kprof/kprof/toolchain"
	"github.com/kprof/kprof/toolexec"
)

const (
	modulePath   = "github.com/kprof/kprof"
	defaultAgent = modulePath + "/agent/auto"
)

// kprofFlags are kprof's own flags of build and test; everything else goes
// to the go command.
type kprofFlags struct {
	opts    rewrite.Options
	pkgs    []string
	agent   string
	verbose bool
	stock   bool   // use the stock compiler (inlining changes under instrumentation)
	nondet  bool   // keep Go's own randomness (no deterministic mode)
	profile string // kprof test --profile: directory for per-benchmark profiles
	metric  string // -metric: "instructions" or "cost"
	table   string // -costtable: a table file (default: cost.Default)
	// shimFlags are the flags above that change what a build makes, as
	// given (-costtable's file made absolute), for the go shim's plugin
	// builds.
	shimFlags []string
}

// goValueFlags are the go build/test flags that take a separate value.
var goValueFlags = map[string]bool{
	"-o": true, "-p": true, "-tags": true, "-gcflags": true, "-ldflags": true, "-asmflags": true,
	"-gccgoflags": true, "-mod": true, "-modfile": true, "-overlay": true, "-pgo": true, "-pkgdir": true,
	"-toolexec": true, "-buildmode": true, "-compiler": true, "-installsuffix": true, "-C": true,
	"-covermode": true, "-coverpkg": true, "-exec": true, "-run": true, "-bench": true, "-benchtime": true,
	"-count": true, "-cpu": true, "-parallel": true, "-timeout": true, "-skip": true, "-list": true,
	"-coverprofile": true, "-cpuprofile": true, "-memprofile": true, "-blockprofile": true,
	"-mutexprofile": true, "-trace": true, "-outputdir": true, "-shuffle": true, "-fuzz": true,
	"-fuzztime": true, "-fuzzminimizetime": true, "-vet": true, "-benchmem": false,
}

// forwarded are the flags that change how packages compile: the support
// packages are prebuilt with them too.
var forwarded = map[string]bool{"-buildmode": true, "-linkshared": true, "-race": true, "-msan": true, "-asan": true, "-tags": true, "-gcflags": true, "-asmflags": true, "-trimpath": true, "-installsuffix": true}

// splitArgs separates kprof's flags from the go command's arguments and
// picks out the go flags the support packages must be built with.
func splitArgs(args []string) (kf kprofFlags, goArgs, fwd []string, err error) {
	kf.opts = rewrite.DefaultOptions
	kf.agent = defaultAgent
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		name = "-" + strings.TrimLeft(name, "-")
		// shim passes the flag on to the go shim's builds as v.
		shim := func(v string) { kf.shimFlags = append(kf.shimFlags, name+"="+v) }
		take := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		switch name {
		case "-pkgs":
			v, err := take()
			if err != nil {
				return kf, nil, nil, err
			}
			kf.pkgs = append(kf.pkgs, strings.Fields(strings.ReplaceAll(v, ",", " "))...)
			shim(v)
			continue
		case "-maxpath", "-smallleaf":
			v, err := take()
			if err != nil {
				return kf, nil, nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return kf, nil, nil, fmt.Errorf("%s=%q: want a non-negative integer", name, v)
			}
			if name == "-maxpath" {
				kf.opts.MaxPath = n
			} else {
				kf.opts.SmallLeaf = n
			}
			shim(v)
			continue
		case "-metric", "-costtable":
			v, err := take()
			if err != nil {
				return kf, nil, nil, err
			}
			if name == "-metric" {
				kf.metric = v
			} else {
				kf.table = v
				if abs, err := filepath.Abs(v); err == nil {
					v = abs
				}
			}
			shim(v)
			continue
		case "-agent":
			v, err := take()
			if err != nil {
				return kf, nil, nil, err
			}
			kf.agent = v
			shim(v)
			continue
		case "-kprof.v":
			kf.verbose = true
			continue
		case "-kprof.stockcompiler":
			kf.stock = true
			kf.shimFlags = append(kf.shimFlags, name)
			continue
		case "-nondeterministic":
			kf.nondet = true
			kf.shimFlags = append(kf.shimFlags, name)
			continue
		case "-profile":
			v, err := take()
			if err != nil {
				return kf, nil, nil, err
			}
			kf.profile = v
			continue
		case "-toolexec":
			return kf, nil, nil, errors.New("kprof runs the go command with -toolexec itself; it cannot be combined with another -toolexec")
		}
		goArgs = append(goArgs, a)
		if !strings.HasPrefix(a, "-") {
			continue
		}
		takesValue := goValueFlags[name] && !hasVal
		if forwarded[name] {
			fwd = append(fwd, a)
			if takesValue && i+1 < len(args) {
				fwd = append(fwd, args[i+1])
			}
		}
		if takesValue && i+1 < len(args) {
			i++
			goArgs = append(goArgs, args[i])
		}
	}
	if err := kf.setMetric(); err != nil {
		return kf, nil, nil, err
	}
	return kf, goArgs, fwd, nil
}

// setMetric checks -metric and -costtable and sets the instrumentation's
// table of weights.
func (kf *kprofFlags) setMetric() error {
	switch kf.metric {
	case "", "instructions":
		if kf.table != "" {
			return fmt.Errorf("-costtable %s needs -metric cost", kf.table)
		}
		return nil
	case cost.Metric:
	default:
		return fmt.Errorf("-metric=%q: want instructions or cost", kf.metric)
	}
	if kf.table == "" {
		kf.opts.Cost = cost.Default()
		return nil
	}
	data, err := os.ReadFile(kf.table)
	if err != nil {
		return fmt.Errorf("-costtable: %v", err)
	}
	t, err := cost.Parse(data)
	if err != nil {
		return fmt.Errorf("-costtable %s: %v", kf.table, err)
	}
	if miss := t.Missing(); len(miss) > 0 {
		fmt.Fprintf(os.Stderr, "kprof: warning: -costtable %s has no weight for %s: they weigh what \"other\" does (%d ps), and a growth class left out charges nothing; kprof calibrate writes a complete table\n",
			kf.table, strings.Join(miss, ", "), t.Class("other"))
	}
	kf.opts.Cost = t
	return nil
}

// runGo runs "go verb" with kprof's -toolexec wrapper.
func runGo(verb string, args []string) error {
	kf, goArgs, fwd, err := splitArgs(args)
	if err != nil {
		return usageError{err}
	}
	if verb == "test" {
		goArgs = fixedBenchtime(goArgs)
	}
	if kf.profile != "" {
		if err := benchProfiles(verb, kf.profile); err != nil {
			return err
		}
	}
	// One go env call for everything the build depends on.
	envOut, err := goOutput("", nil, "env", "GOVERSION", "GOROOT", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "GOAMD64")
	if err != nil {
		return err
	}
	goEnv := strings.Split(envOut, "\n")
	for len(goEnv) < 2 {
		goEnv = append(goEnv, "")
	}
	goVersion, goroot := strings.TrimSpace(goEnv[0]), strings.TrimSpace(goEnv[1])
	release, err := toolchain.Lookup(goVersion)
	if err != nil {
		return err
	}
	cache, err := kprofCache()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if self, err = hostKprof(self, goVersion, goroot, cache); err != nil {
		return err
	}
	id, err := toolID(self, kf, fwd)
	if err != nil {
		return err
	}
	cfg := &toolexec.Config{
		Options:   kf.opts,
		ToolID:    id,
		GoVersion: goVersion,
		GOROOT:    goroot,
		Exports:   map[string]string{},
		Agent:     kf.agent,
		Only:      kf.pkgs,
		Verbose:   kf.verbose,

		Nondeterministic: kf.nondet,
	}
	tmp, err := os.MkdirTemp("", "kprof-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var env []string // for the go command
	if verb == "test" {
		target := ""
		if len(goEnv) > 3 {
			target = strings.TrimSpace(goEnv[2]) + "_" + strings.TrimSpace(goEnv[3])
		}
		if goArgs, env, err = installGoShim(tmp, self, goroot, kf, target, goArgs); err != nil {
			return err
		}
	}
	cfgPath := filepath.Join(tmp, "config.json")
	wrapper := self + " toolexec"
	now := time.Now()
	// (Trimmed when the build is done: what it used is marked by then.)
	defer trimCache(cache, now)
	if !kf.stock {
		progress := newProgress("kprof: building the patched compiler (first time only)")
		cfg.Compiler, err = release.PatchedCompiler(goroot, goVersion, cache)
		progress.done()
		if err != nil {
			return err
		}
		markUsed(filepath.Dir(cfg.Compiler), now)
	}
	// The linked-in packages, prebuilt with the user's flags: from kprof's
	// own copy, unless a custom agent is resolved in the user's module.
	// For kprof's own agent the result is remembered (keyed by everything
	// it depends on) as long as the build cache still has the files.
	key := ""
	if kf.agent == defaultAgent {
		h := sha256.New()
		fmt.Fprintf(h, "%s\n%q\n%s", id, fwd, envOut)
		key = filepath.Join(cache, "prebuilt-"+hex.EncodeToString(h.Sum(nil))[:24]+".json")
	}
	build := func() error { return buildSupport(cfg, kf.agent, id, wrapper, cfgPath, fwd) }
	switch {
	case key == "":
		err = build()
	case loadPrebuilt(key, cfg):
		markUsed(key, now)
		markUsed(filepath.Join(cache, "support-"+id), now) // (the packages' sources, which relinks compile)
	default:
		err = buildPrebuilt(key, cfg, build)
	}
	if err != nil {
		return err
	}
	return runWithConfig(verb, goArgs, env, wrapper, cfgPath, cfg)
}

// buildPrebuilt builds the linked-in packages (build) and remembers them
// in key, unless another build, which it waits for, did: builds that
// start together (go test running packages side by side, parallel CI
// jobs) would each compile the same packages, as the go command's cache
// does not know of a compile under way.
func buildPrebuilt(key string, cfg *toolexec.Config, build func() error) error {
	unlock := lockEntry(key+".lock", "kprof: waiting for another kprof build of the same packages")
	defer unlock()
	if loadPrebuilt(key, cfg) {
		return nil
	}
	if err := build(); err != nil {
		return err
	}
	savePrebuilt(key, cfg)
	return nil
}

// benchProfiles makes kprof test --profile DIR write an exact profile per
// benchmark into DIR (created if needed), through the environment the
// test binaries inherit.
func benchProfiles(verb, profile string) error {
	if verb != "test" {
		return usageError{errors.New("--profile is a flag of kprof test (one profile per benchmark)")}
	}
	if m := os.Getenv("KPROF_MODE"); m != "" && m != "exact" {
		return usageError{fmt.Errorf("--profile writes exact profiles; KPROF_MODE=%s asks for another mode", m)}
	}
	dir, err := filepath.Abs(profile)
	if err == nil {
		err = os.MkdirAll(dir, 0o777)
	}
	if err != nil {
		return fmt.Errorf("--profile %s: %v", profile, err)
	}
	os.Setenv("KPROF_MODE", "exact")
	os.Setenv("KPROF_BENCH_PROFILES", dir)
	return nil
}

// buildSupport builds the packages linked into instrumented programs (the
// counter, and the agent with its dependencies) with the user's build
// flags fwd, through the wrapper, and records their export data in cfg:
// the packages the runtime depends on are left alone (cfg.Skip), and the
// instrumented runtime and standard library are built on the way.
func buildSupport(cfg *toolexec.Config, agent, id, wrapper, cfgPath string, fwd []string) error {
	skip, err := goOutput("", nil, "list", "-deps", "-f", "{{.ImportPath}}", "runtime")
	if err != nil {
		return err
	}
	cfg.Skip = map[string]bool{}
	for _, p := range strings.Fields(skip) {
		cfg.Skip[p] = true
	}
	dir := ""
	if agent == defaultAgent {
		if dir, err = supportModule(id); err != nil {
			return err
		}
	}
	start := time.Now()
	progress := newProgress("kprof: building the instrumented runtime and standard library (first build only)")
	defer progress.done()
	exports := func(pkg string, deps bool) error {
		if err := writeConfig(cfgPath, cfg); err != nil {
			return err
		}
		listArgs := []string{"list", "-export", "-json=ImportPath,Export,Dir,GoFiles,SFiles,Imports,ImportMap,Standard", "-toolexec", wrapper}
		if deps {
			listArgs = append(listArgs, "-deps")
		}
		listArgs = append(listArgs, fwd...)
		listArgs = append(listArgs, pkg)
		out, err := goOutput(dir, []string{toolexec.ConfigEnv + "=" + cfgPath}, listArgs...)
		if err != nil {
			return fmt.Errorf("building kprof's %s: %v", pkg, err)
		}
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var sp toolexec.SupportPkg
			if err := dec.Decode(&sp); err != nil {
				return fmt.Errorf("go list %s: %v", pkg, err)
			}
			if sp.Export == "" {
				continue
			}
			cfg.Exports[sp.ImportPath] = sp.Export
			if deps {
				cfg.Support = append(cfg.Support, sp)
			}
		}
		return nil
	}
	if err := exports(rewrite.CounterPath, false); err != nil {
		return err
	}
	if err := exports(agent, true); err != nil {
		return err
	}
	progress.done()
	if cfg.Verbose {
		fmt.Fprintf(os.Stderr, "kprof: support packages ready in %v\n", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// runWithConfig runs the go command with the wrapper and its
// configuration, and env added to the environment.
func runWithConfig(verb string, goArgs, env []string, wrapper, cfgPath string, cfg *toolexec.Config) error {
	if err := writeConfig(cfgPath, cfg); err != nil {
		return err
	}
	cmd := exec.Command("go", append([]string{verb, "-toolexec", wrapper}, goArgs...)...)
	cmd.Env = append(append(os.Environ(), env...), toolexec.ConfigEnv+"="+cfgPath)
	out := os.Getenv("KPROF_OUT")
	merge := ""
	switch {
	case verb != "test":
	case out == "" && os.Getenv("KPROF_OUT_DIR") != "":
		// (the user's)
	default:
		// Every test binary would write KPROF_OUT (from its package's
		// directory, if relative), or <package>.test.kprof, the last one
		// of a name winning, and so would their KPROF_INTERVAL and
		// KPROF_EVERY files: they write to a directory of their own
		// instead, and kprof test writes their profiles where it runs at
		// the end (collectTestProfiles).
		dir, err := os.MkdirTemp("", "kprof-test-profiles-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		merge = dir
		cmd.Env = append(cmd.Env, "KPROF_OUT=", "KPROF_OUT_MERGE="+dir)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var runErr error
	if merge != "" {
		// Interrupted, the test binaries still write their profiles (the
		// agent's handler), and kprof must live to merge them: it passes
		// the signal on to the go command (a terminal's Ctrl-C reaches
		// it already) and waits for it.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		if runErr = cmd.Start(); runErr == nil {
			stop := make(chan struct{})
			go func() {
				for {
					select {
					case sig := <-sigs:
						cmd.Process.Signal(sig)
					case <-stop:
						return
					}
				}
			}()
			runErr = cmd.Wait()
			close(stop)
		}
		signal.Stop(sigs)
	} else {
		runErr = cmd.Run()
	}
	var collectErr error
	if merge != "" {
		collectErr = collectTestProfiles(merge, out)
	}
	if runErr != nil {
		// (The tests' status first: a profile's error is on stderr.)
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return exitStatus(ee.ExitCode())
		}
		return runErr
	}
	return collectErr
}

// collectTestProfiles writes the profiles kprof test's binaries wrote to
// dir (KPROF_OUT_MERGE, <program>.p<pid>.kprof): to out, merged, if set;
// else one per program to <program>.kprof in the working directory, as
// before, the processes of one package merged (a test that runs its own
// binary again), and packages of the same name (internal/util and
// pkg/util) told apart by their import paths: internal_util.test.kprof.
// The interval profiles of KPROF_INTERVAL and KPROF_EVERY
// (<program>.p<pid>.<n>.kprof) go beside the profile their process's went
// to, <stem>.<n>.kprof, as a program writes them; <stem>.p<pid>.<n>.kprof
// where several processes went to one profile (their intervals are not
// the same stretches of time, and are not merged).
func collectTestProfiles(dir, out string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.kprof"))
	if err != nil || len(files) == 0 {
		return err // (no test binary ran: -c, -run matched no package, a build failed)
	}
	sort.Strings(files)
	var finals []string
	intervals := make(map[string][]string) // by process, <program>.p<pid>
	for _, f := range files {
		if proc, ok := intervalProcess(f); ok {
			intervals[proc] = append(intervals[proc], f)
		} else {
			finals = append(finals, f)
		}
	}
	dest, lastErr := testProfileNames(finals, out)
	byDest := make(map[string][]string)
	var dests []string
	for _, f := range finals {
		if _, ok := dest[f]; !ok {
			continue // (unreadable: reported)
		}
		if byDest[dest[f]] == nil {
			dests = append(dests, dest[f])
		}
		byDest[dest[f]] = append(byDest[dest[f]], f)
	}
	for _, d := range dests {
		if err := mergeTestProfiles(byDest[d], d); err != nil {
			lastErr = err
		}
	}
	procs := make([]string, 0, len(intervals))
	for proc := range intervals {
		procs = append(procs, proc)
	}
	sort.Strings(procs)
	for _, proc := range procs {
		final := filepath.Join(dir, proc+".kprof")
		d, ok := dest[final]
		if !ok { // (the process wrote no final profile: it crashed)
			d = strings.TrimSuffix(proc, filepath.Ext(proc)) + ".kprof"
			if out != "" {
				d = out
			}
		}
		stem := strings.TrimSuffix(d, ".kprof")
		if len(byDest[d]) > 1 || !ok && len(byDest[d]) > 0 {
			stem += filepath.Ext(proc) // .p<pid>
		}
		for _, f := range intervals[proc] {
			n := filepath.Ext(strings.TrimSuffix(f, ".kprof"))
			if err := moveFile(f, stem+n+".kprof"); err != nil {
				lastErr = fail("%s: %v", stem+n+".kprof", err)
			}
		}
	}
	return lastErr
}

// intervalProcess reports whether f, in kprof test's directory of
// profiles, is an interval profile, <program>.p<pid>.<n>.kprof, and
// returns its process, <program>.p<pid>; a final profile's name ends in
// .p<pid>.
func intervalProcess(f string) (string, bool) {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(f), ".kprof"), ".")
	k := len(parts)
	if k < 3 || !allDigits(parts[k-1]) || !strings.HasPrefix(parts[k-2], "p") || !allDigits(parts[k-2][1:]) {
		return "", false
	}
	return strings.Join(parts[:k-1], "."), true
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// testProfileNames returns the name each of the final profiles files
// (<program>.p<pid>.kprof) goes to (see collectTestProfiles). A profile
// that cannot be read is reported and left out; the last such error is
// returned.
func testProfileNames(files []string, out string) (map[string]string, error) {
	dest := make(map[string]string)
	if out != "" {
		for _, f := range files {
			dest[f] = out
		}
		return dest, nil
	}
	byProg := make(map[string][]string)
	var progs []string
	for _, f := range files {
		prog := strings.TrimSuffix(filepath.Base(f), ".kprof")
		if i := strings.LastIndexByte(prog, '.'); i > 0 {
			prog = prog[:i] // (the pid)
		}
		if byProg[prog] == nil {
			progs = append(progs, prog)
		}
		byProg[prog] = append(byProg[prog], f)
	}
	var lastErr error
	for _, prog := range progs {
		fs := byProg[prog]
		if len(fs) == 1 {
			dest[fs[0]] = prog + ".kprof"
			continue
		}
		paths := make(map[string]string)
		seen := make(map[string]bool)
		for _, f := range fs {
			p, err := loadProfile(f)
			if err != nil {
				lastErr = fail("%v", err)
				continue
			}
			path := prog
			for _, l := range p.Meta.Labels {
				if l.Key == "path" && l.Value != "" {
					path = l.Value
				}
			}
			paths[f] = path
			seen[path] = true
		}
		for f, path := range paths {
			dest[f] = prog + ".kprof"
			if len(seen) > 1 {
				dest[f] = strings.ReplaceAll(path, "/", "_") + ".kprof"
			}
		}
	}
	return dest, lastErr
}

// mergeTestProfiles writes the profiles files to out, merged if there
// are several.
func mergeTestProfiles(files []string, out string) error {
	if len(files) == 1 {
		if err := moveFile(files[0], out); err != nil {
			return fail("%s: %v", out, err)
		}
		return nil
	}
	sort.Strings(files)
	p, err := loadProfiles(files, isLarge(files))
	if err != nil {
		return err
	}
	if err := p.WriteFile(out); err != nil {
		return fail("%s: %v", out, err)
	}
	fmt.Fprintf(os.Stderr, "kprof: %s: the profiles of %d test processes, merged\n", out, len(files))
	return nil
}

// moveFile moves the file from to the path to, copying it if they are on
// different file systems or to is not a regular file (a symbolic link,
// /dev/null), which a rename would replace.
func moveFile(from, to string) error {
	if fi, err := os.Lstat(to); (err != nil || fi.Mode().IsRegular()) && os.Rename(from, to) == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeConfig(path string, cfg *toolexec.Config) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o666)
}

// goOutput runs the go command and returns its standard output; on failure
// the error carries its standard error.
func goOutput(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if dir != "" {
		cmd.Env = append(cmd.Env, "GOWORK=off", "GOFLAGS=")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// toolID identifies this kprof binary and its instrumentation options in
// the build cache, with a custom agent also the counter it links
// (counterSource; fwd: the build flags kprof forwards).
func toolID(self string, kf kprofFlags, fwd []string) (string, error) {
	sum, err := binaryHash(self)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s maxpath=%d smallleaf=%d pkgs=%q agent=%s stock=%v nondet=%v", sum, kf.opts.MaxPath, kf.opts.SmallLeaf, kf.pkgs, kf.agent, kf.stock, kf.nondet)
	if t := kf.opts.Cost; t != nil {
		fmt.Fprintf(h, " metric=cost table=%s", t.Ident())
	}
	if kf.agent != defaultAgent {
		if err := counterSource(h, fwd); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// counterSource writes to h the source of the counter package the user's
// module resolves for a build with a custom agent: its directory and
// files. The instrumented packages import the counter without the go
// command knowing, so their cached compiles are keyed by the tool ID
// alone. With kprof's own agent the counter is kprof's (in its cache, per
// binary); a custom agent's module brings its own, which may be edited, or
// be another checkout of the same kprof (a replace directive), while the
// kprof binary stays the same: packages compiled against one counter must
// not be linked with another ("fingerprint mismatch").
func counterSource(h io.Writer, fwd []string) error {
	args := append([]string{"list", "-f", "{{.Dir}}"}, fwd...)
	out, err := goOutput("", nil, append(args, rewrite.CounterPath)...)
	if err != nil {
		return err
	}
	dir := strings.TrimSpace(out)
	fmt.Fprintf(h, " counter=%s\n", dir)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range files { // (every file: the toolexec swaps state_plain.go for state_kprof.go)
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		hashFile(h, filepath.Base(f), data)
	}
	return nil
}

// hashFile writes a file's name, size and contents to h.
func hashFile(h io.Writer, name string, data []byte) {
	fmt.Fprintf(h, "%s %d\n", name, len(data))
	h.Write(data)
}

// binaryHash returns the SHA-256 of the kprof executable, remembered in
// the user cache by path, size and modification time (hashing it takes
// longer than an unchanged go build).
func binaryHash(self string) (string, error) {
	fi, err := os.Stat(self)
	if err != nil {
		return "", err
	}
	cache, cerr := kprofCache()
	k := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d", self, fi.Size(), fi.ModTime().UnixNano())))
	memo := filepath.Join(cache, "self-"+hex.EncodeToString(k[:12]))
	if cerr != nil {
		memo = "" // (no cache: hash every time; the build reports it)
	} else if data, err := os.ReadFile(memo); err == nil && len(data) == 64 {
		markUsed(memo, time.Now())
		return string(data), nil
	}
	f, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if memo != "" && os.MkdirAll(filepath.Dir(memo), 0o777) == nil {
		os.WriteFile(memo, []byte(sum), 0o666) // best effort
	}
	return sum, nil
}

// supportModule writes kprof's linked-in packages as a module in the user
// cache (once per kprof binary) and returns its directory.
func supportModule(id string) (string, error) {
	cache, err := kprofCache()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "support-"+id)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		markUsed(dir, time.Now())
		return dir, nil
	}
	tmp := dir + ".tmp" + strconv.Itoa(os.Getpid())
	if err := writeFiles(kprof.Support, tmp, 0o444, false); err != nil {
		return "", err
	}
	mod := fmt.Sprintf("module %s\n\ngo %s\n", modulePath, strings.TrimPrefix(toolchain.Oldest().Name, "go"))
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(mod), 0o444); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, err2 := os.Stat(filepath.Join(dir, "go.mod")); err2 != nil {
			return "", err
		}
	}
	return dir, nil
}

// prebuilt is what kprof build remembers of the linked-in packages.
type prebuilt struct {
	Skip    map[string]bool
	Exports map[string]string
	Support []toolexec.SupportPkg
}

// loadPrebuilt fills cfg from a remembered prebuild if every file it names
// is still in the build cache.
func loadPrebuilt(path string, cfg *toolexec.Config) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var pb prebuilt
	if json.Unmarshal(data, &pb) != nil || len(pb.Exports) == 0 {
		return false
	}
	for _, f := range pb.Exports {
		if _, err := os.Stat(f); err != nil {
			return false
		}
	}
	// The sources of kprof's own packages, in its cache (supportModule):
	// a trim or a user may have removed them.
	for _, sp := range pb.Support {
		if _, err := os.Stat(sp.Dir); !sp.Standard && err != nil {
			return false
		}
	}
	cfg.Skip, cfg.Exports, cfg.Support = pb.Skip, pb.Exports, pb.Support
	return true
}

func savePrebuilt(path string, cfg *toolexec.Config) {
	data, err := json.Marshal(prebuilt{cfg.Skip, cfg.Exports, cfg.Support})
	if err != nil {
		return
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, data, 0o666) == nil {
		os.Rename(tmp, path) // best effort: a failure only costs the next build time
	}
}

// DefaultBenchtime is the iteration count kprof test gives benchmarks when
// -benchtime is not set: a count fixed in advance (instead of go test's
// one second) keeps instructions/op the same on every run even for
// benchmarks whose work per operation changes with b.N.
const DefaultBenchtime = "100x"

// fixedBenchtime adds -benchtime=DefaultBenchtime to go test arguments
// that run benchmarks without choosing a -benchtime.
func fixedBenchtime(args []string) []string {
	bench := false
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "bench", "test.bench":
			bench = true
		case "benchtime", "test.benchtime":
			return args
		}
	}
	if !bench {
		return args
	}
	return append([]string{"-benchtime=" + DefaultBenchtime}, args...)
}
