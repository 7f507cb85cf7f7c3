package toolexec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"go/types"
	"go/version"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/gcexportdata"

	"github.com/kprof/kprof/cost"
	"github.com/kprof/kprof/rewrite"
	"github.com/kprof/kprof/toolchain"
)

// ConfigEnv names the environment variable through which kprof build hands
// the -toolexec wrapper its configuration file.
const ConfigEnv = "KPROF_TOOLEXEC_CONFIG"

// CheckPlansEnv, set to 1 in the environment of kprof build, makes the
// wrapper check every function's plan as it instruments it
// (rewrite.Options.CheckPlans): a plan that breaks an invariant fails the
// build. The end-to-end tests set it. Packages the build cache already
// holds are not instrumented again, so not checked.
const CheckPlansEnv = "KPROF_CHECKPLANS"

// Config is what the -toolexec wrapper needs to know; kprof build writes it
// to a file before running go build.
type Config struct {
	Options   rewrite.Options
	ToolID    string            // appended to the tools' -V=full answers
	GoVersion string            // toolchain version, for messages
	GOROOT    string            // the toolchain's GOROOT (the standard library's source)
	Exports   map[string]string // kprof's own packages (and their deps): import path → export data
	Agent     string            // import path of the agent linked into main packages
	Skip      map[string]bool   // import paths never instrumented
	Only      []string          // -pkgs patterns; empty means all
	Verbose   bool              // report approximations on stderr
	Compiler  string            // kprof's patched compiler (see PatchedCompiler); "" for the stock one
	// Nondeterministic keeps Go's own randomness (map seeds, select,
	// sync.Pool per P): kprof build -nondeterministic.
	Nondeterministic bool
	// Support lists the agent and everything it depends on, dependencies
	// first, as go list reported them when kprof build prebuilt them.
	Support []SupportPkg
}

// SupportPkg is one package of the agent's closure (go list -json fields).
type SupportPkg struct {
	ImportPath string
	Export     string
	Dir        string
	GoFiles    []string
	SFiles     []string
	Imports    []string
	ImportMap  map[string]string
	Standard   bool
}

// ReadConfig reads the wrapper configuration named by ConfigEnv.
func ReadConfig() (*Config, error) {
	path := os.Getenv(ConfigEnv)
	if path == "" {
		return nil, fmt.Errorf("kprof toolexec: %s is not set; run the go command through kprof build or kprof test", ConfigEnv)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg := new(Config)
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("kprof toolexec: %s: %v", path, err)
	}
	return cfg, nil
}

// Toolexec runs one tool invocation of a go build (args[0] is the tool's
// path), instrumenting compile steps. It returns the exit status.
func Toolexec(cfg *Config, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "kprof toolexec: no tool to run")
		return 2
	}
	tool := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	if tool == "compile" && cfg.Compiler != "" {
		args = append([]string{cfg.Compiler}, args[1:]...)
	}
	if len(args) == 2 && args[1] == "-V=full" {
		out, err := exec.Command(args[0], args[1:]...).Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kprof toolexec: %s -V=full: %v\n", tool, err)
			return 1
		}
		fmt.Printf("%s kprof=%s\n", strings.TrimSpace(string(out)), cfg.ToolID)
		return 0
	}
	var err error
	var after func() error // once the tool has succeeded
	switch tool {
	case "compile":
		args, after, err = compileStep(cfg, args)
	case "link":
		args, err = linkStep(cfg, args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if args == nil {
		return 0 // the step wrote its output (copyPrebuilt)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var stderr bytes.Buffer
	if tool == "link" {
		cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
	}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if hint := linkHint(stderr.Bytes()); hint != "" {
				fmt.Fprintln(os.Stderr, hint)
			}
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "kprof toolexec:", err)
		return 1
	}
	if after != nil {
		if err := after(); err != nil {
			fmt.Fprintln(os.Stderr, "kprof toolexec:", err)
			return 1
		}
	}
	return 0
}

// linkHint explains a link that failed on a fingerprint mismatch of a
// kprof package (the linker's "fingerprint mismatch: PKG has H1, import
// from Q expecting H2"): the packages of the binary were compiled against
// different builds of PKG. A test variant of a package the runtime
// depends on causes it, but its compile step says so already (compileStep),
// so what is left is packages from kprof's caches that do not fit
// together: an inconsistency that kprof clean and a rebuild mend. It
// returns "" for any other failure.
func linkHint(stderr []byte) string {
	const mismatch = "fingerprint mismatch: "
	_, rest, ok := bytes.Cut(stderr, []byte(mismatch))
	if !ok {
		return ""
	}
	pkg, rest, _ := bytes.Cut(rest, []byte(" "))
	if !bytes.HasPrefix(pkg, []byte(path.Dir(rewrite.CounterPath)+"/")) { // kprof's own packages
		return ""
	}
	from := ""
	if _, after, ok := bytes.Cut(rest, []byte("import from ")); ok {
		q, _, _ := bytes.Cut(after, []byte(" "))
		from = fmt.Sprintf(" (%s expects another build of it)", q)
	}
	return fmt.Sprintf("kprof: the packages linked into this binary were compiled against different builds of %s%s. "+
		"kprof's cached packages do not fit together: run \"kprof clean\" and build again; "+
		"if it happens again, please report it with the command that failed", pkg, from)
}

// runtimeDepsHint is the error of the compile of a test variant of a
// package the runtime depends on: every package above it, the runtime
// included, would be compiled against it, and the link would fail on the
// counter's fingerprint.
const runtimeDepsHint = "kprof: this test binary has its own version of a package the runtime depends on " +
	"(internal/cpu, internal/abi, …), so kprof's counter, built against the ordinary runtime, does not fit the " +
	"packages compiled against it; kprof does not instrument the runtime and its dependencies: test them with go test"

// hasTestFiles reports whether a compile step's files include a
// package's own _test.go files (its test variant).
func hasTestFiles(files []string) bool {
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}

// flagValue returns the value of a tool flag given as "-name value" or
// "-name=value", and the index of the argument holding it.
func flagValue(args []string, name string) (string, int) {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1], i + 1
		}
		if strings.HasPrefix(a, name+"=") {
			return a[len(name)+1:], i
		}
	}
	return "", -1
}

func setFlag(args []string, name, value string) {
	if _, i := flagValue(args, name); i >= 0 {
		if strings.HasPrefix(args[i], name+"=") {
			args[i] = name + "=" + value
		} else {
			args[i] = value
		}
	}
}

// goFiles returns the index of the first of the trailing .go arguments.
func goFiles(args []string) int {
	i := len(args)
	for i > 1 && strings.HasSuffix(args[i-1], ".go") && !strings.HasPrefix(args[i-1], "-") {
		i--
	}
	return i
}

// syncPackages are not counted in deterministic mode.
var syncPackages = map[string]bool{"sync": true, "internal/sync": true, "sync/atomic": true, "internal/synctest": true}

// inert reports whether the package path reaches no instrumented code but
// through function and interface values (Options.Inert): the runtime and
// its dependencies, which import nothing else, and in deterministic mode
// the sync packages, which import only those.
func (cfg *Config) inert(path string) bool {
	return cfg.Skip[path] || path == "unsafe" || !cfg.Nondeterministic && syncPackages[path]
}

// Instrumented reports whether cfg instruments the package path.
func (cfg *Config) Instrumented(path string) bool {
	if cfg.Skip[path] || path == "unsafe" || strings.HasPrefix(path, "runtime/") || strings.HasPrefix(path, "internal/runtime/") {
		return false
	}
	if strings.HasPrefix(path, "github.com/kprof/kprof/") || path == cfg.Agent {
		return false // kprof's own linked-in packages and the agent
	}
	if path == "testing" {
		// The test harness: profiles of tests start at the test
		// function, and a benchmark's instructions/op counts the code
		// under test alone.
		return false
	}
	if !cfg.Nondeterministic && syncPackages[path] {
		// Deterministic mode: how often a lock spins, or whether a
		// WaitGroup finds its waiter already parked, is timing. Like the
		// runtime's scheduling code, the packages' own instructions are
		// not counted, nor the atomic wrappers they call (what they call
		// back, Once.Do's function, is).
		return false
	}
	if path == "os/signal" {
		// The agent handles SIGINT/SIGTERM with it: its goroutine runs
		// whenever the scheduler gets to it, so counting it would make
		// profiles differ from run to run.
		return false
	}
	if len(cfg.Only) == 0 {
		return true
	}
	for _, pat := range cfg.Only {
		if MatchPattern(pat, path) {
			return true
		}
	}
	return false
}

// MatchPattern reports whether an import path matches a go-style pattern
// ("std" is not expanded; "..." matches any string).
func MatchPattern(pattern, path string) bool {
	if !strings.Contains(pattern, "...") {
		return pattern == path
	}
	if strings.HasSuffix(pattern, "/...") && path == strings.TrimSuffix(pattern, "/...") {
		return true
	}
	parts := strings.Split(pattern, "...")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// compileStep returns the compiler's arguments for a compile step, and what
// to do once the compiler has succeeded (add the package's facts to its
// archive), if anything.
func compileStep(cfg *Config, args []string) ([]string, func() error, error) {
	pkgPath, _ := flagValue(args, "-p")
	out, _ := flagValue(args, "-o")
	if out == "" {
		return args, nil, nil
	}
	first := goFiles(args)
	files := append([]string(nil), args[first:]...)
	for i, f := range files {
		if !filepath.IsAbs(f) {
			wd, _ := os.Getwd()
			files[i] = filepath.Join(wd, f)
		}
	}
	if cfg.Skip[pkgPath] && hasTestFiles(files) {
		// The test variant of a package the runtime depends on: every
		// package above it, the runtime included, is rebuilt against it,
		// and the link would fail on the counter's fingerprint. Say so
		// now rather than after building the whole standard library.
		return nil, nil, errors.New(runtimeDepsHint)
	}
	if done, err := copyPrebuilt(cfg, pkgPath, args, files); done || err != nil {
		return nil, nil, err // nil args: written, nothing to run
	}
	workDir := filepath.Join(filepath.Dir(out), "kprof")
	if err := os.MkdirAll(workDir, 0o777); err != nil {
		return nil, nil, err
	}
	if pkgPath == rewrite.CounterPath {
		// The counter's access to the patched runtime is excluded from
		// ordinary builds by a constraint no one sets.
		for i, f := range files {
			if filepath.Base(f) == "state_plain.go" {
				files[i] = filepath.Join(filepath.Dir(f), "state_kprof.go")
			}
		}
		if t := cfg.Options.Cost; t != nil {
			// The build's metric, for the agent to record (counter.Metric),
			// and what the runtime charges for append's growth; in place of
			// costbuild.go, costBuild is true.
			obj, perByte := t.Growth()
			src := fmt.Sprintf("package counter\n\nconst costBuild = true\n\nfunc init() { metricName, metricTable, metricScale = %q, %q, %d; setGrowth(%d, %d) }\n", cost.Metric, t.Ident(), t.Scale, obj, perByte)
			nf := filepath.Join(workDir, "kprof_metric.go")
			if err := os.WriteFile(nf, []byte(src), 0o666); err != nil {
				return nil, nil, err
			}
			files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "costbuild.go" })
			files = append(files, nf)
		}
		return append(args[:first:first], files...), nil, nil
	}
	rel, err := toolchain.Lookup(cfg.GoVersion)
	if err != nil {
		return nil, nil, err
	}
	if pkgPath == "runtime" {
		det := fmt.Sprintf("package runtime\n\n// kprofDet: deterministic mode.\nconst kprofDet = %v\n", !cfg.Nondeterministic)
		nf, err := rel.PatchPackage("runtime", cfg.GoVersion, files, workDir, map[string]string{"kprof_det.go": det})
		if err != nil {
			return nil, nil, err
		}
		return append(args[:first:first], nf...), nil, nil
	}
	importcfg, _ := flagValue(args, "-importcfg")
	if pkgPath == "testing" {
		nf, err := rel.PatchPackage("testing", cfg.GoVersion, files, workDir, nil)
		if err != nil {
			return nil, nil, err
		}
		nc, err := extendImportcfg(importcfg, filepath.Join(workDir, "importcfg"), cfg.Exports, []string{rewrite.CounterPath})
		if err != nil {
			return nil, nil, err
		}
		args = append(args[:first:first], nf...)
		setFlag(args, "-importcfg", nc)
		return args, nil, nil
	}
	// os/signal always (for the agent's signal watcher; it is never
	// instrumented), sync in deterministic mode.
	if pkgPath == "os/signal" || pkgPath == "sync" && !cfg.Nondeterministic {
		nf, err := rel.PatchPackage(pkgPath, cfg.GoVersion, files, workDir, nil)
		if err != nil {
			return nil, nil, err
		}
		files = nf
		args = append(args[:first:first], nf...)
	}
	if len(files) == 0 || !cfg.Instrumented(pkgPath) {
		return args, nil, nil
	}
	lang, _ := flagValue(args, "-lang")
	isMain := pkgPath == "main"
	newFiles, approx, quiet, err := instrumentFiles(cfg, pkgPath, args, files, importcfg, lang, isMain, workDir)
	if err != nil {
		// Not type-correct (or not analysable): let the compiler report
		// on the original files. If it compiles them, the package is
		// valid Go that kprof could not analyse: say so, as its
		// instructions go uncounted.
		if cfg.Verbose || strings.Contains(err.Error(), "internal error") {
			fmt.Fprintf(os.Stderr, "kprof: warning: %s is not instrumented, its instructions are not counted: %v\n", pkgPath, err)
			return args, nil, nil
		}
		warn := func() error {
			fmt.Fprintf(os.Stderr, "kprof: warning: %s is not instrumented, its instructions are not counted: %v\n", pkgPath, err)
			return nil
		}
		return args, warn, nil
	}
	if cfg.Verbose {
		for _, a := range approx {
			fmt.Fprintf(os.Stderr, "kprof: approximate: %s\n", a)
		}
	}
	var after func() error
	if len(quiet) > 0 {
		after = func() error { return appendFacts(out, quiet) }
	}
	if newFiles == nil {
		return args, after, nil
	}
	// The instrumented files import the counter (and main the agent).
	extra := []string{rewrite.CounterPath}
	if isMain && cfg.Agent != "" {
		extra = append(extra, cfg.Agent)
	}
	nc, err := extendImportcfg(importcfg, filepath.Join(workDir, "importcfg"), cfg.Exports, extra)
	if err != nil {
		return nil, nil, err
	}
	args = append(args[:first:first], newFiles...)
	setFlag(args, "-importcfg", nc)
	if isMain {
		// Kept for the link step, which may have to compile main again
		// (see relink).
		data, err := json.Marshal(args)
		if err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(workDir, "main-compile.json"), data, 0o666); err != nil {
			return nil, nil, err
		}
	}
	return args, after, nil
}

// instrumentFiles type-checks and instruments the package's files, writing
// the changed ones to workDir. It returns the file list for the compiler.
// compile is the compile step's command line.
func instrumentFiles(cfg *Config, pkgPath string, compile, files []string, importcfg, lang string, isMain bool, workDir string) (_ []string, _ []string, quiet map[string]int64, err error) {
	defer func() {
		// A bug in the instrumenter must not break the user's build: the
		// package is compiled as it is, and the failure reported.
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error instrumenting %s: %v\n%s", pkgPath, r, debug.Stack())
		}
	}()
	fset := token.NewFileSet()
	in := &rewrite.Input{Fset: fset, Path: pkgPath, Info: rewrite.NewInfo()}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, nil, err
		}
		af, err := parser.ParseFile(fset, f, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, nil, err
		}
		in.Files = append(in.Files, af)
		in.Srcs = append(in.Srcs, src)
		in.Names = append(in.Names, f)
	}
	imp, err := newImporter(fset, importcfg)
	if err != nil {
		return nil, nil, nil, err
	}
	goarch := os.Getenv("GOARCH")
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	tc := &types.Config{
		Importer:  imp,
		Sizes:     types.SizesFor("gc", goarch),
		GoVersion: checkableLang(lang),
	}
	pkg, err := tc.Check(pkgPath, fset, in.Files, in.Info)
	if err != nil {
		return nil, nil, nil, err
	}
	in.Pkg = pkg
	if cfg.Options.Cost != nil {
		if diag, ok := escapeDiagnostics(compile, workDir); ok {
			in.Escapes = cost.ParseEscapes(diag, fset, in.Files)
		}
	}
	facts, err := newImportFacts(importcfg)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := cfg.Options
	opts.Inert = cfg.inert
	opts.Quiet = facts.quiet
	// (-pkgs leaves code uninstrumented that may recover a panic.)
	opts.ExactPops = opts.ExactPops || len(cfg.Only) > 0
	opts.CheckPlans = os.Getenv(CheckPlansEnv) == "1"
	if opts.Cost != nil {
		// Calls of code kprof does not count weigh its time.
		opts.Cost = opts.Cost.WithUncounted(func(path string) bool { return !cfg.Instrumented(path) }, cfg.GOROOT)
	}
	out, err := rewrite.Package(in, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	result := make([]string, len(files))
	changed := false
	for i, f := range files {
		src := out.Files[i]
		cgoGenerated := strings.HasPrefix(filepath.Base(f), "_cgo_")
		if isMain && cfg.Agent != "" && !changed && src == nil && !cgoGenerated {
			src = in.Srcs[i]
		}
		if src == nil {
			result[i] = f
			continue
		}
		if isMain && cfg.Agent != "" && !changed {
			// Link the agent into the program.
			src = append(src, fmt.Sprintf("\nimport _ %q\n", cfg.Agent)...)
			src = moveImportUp(src)
		}
		changed = true
		// Same base name (the compiler knows cgo's files by theirs), one
		// directory per file (names may repeat across directories).
		dir := filepath.Join(workDir, fmt.Sprintf("src%d", i))
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, nil, nil, err
		}
		nf := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(nf, src, 0o666); err != nil {
			return nil, nil, nil, err
		}
		result[i] = nf
	}
	if !changed {
		return nil, out.Approx, out.Quiet, nil
	}
	if out.Tables != nil {
		// First, so that the tables are declared before the package's
		// variables (rewrite.Output.Tables).
		nf := filepath.Join(workDir, "kprof_tables.go")
		if err := os.WriteFile(nf, out.Tables, 0o666); err != nil {
			return nil, nil, nil, err
		}
		result = append([]string{nf}, result...)
	}
	return result, out.Approx, out.Quiet, nil
}

// moveImportUp turns a trailing "import _ path" line into one placed
// right after the package clause (imports must precede declarations).
func moveImportUp(src []byte) []byte {
	s := string(src)
	i := strings.LastIndex(s, "\nimport _ ")
	line := strings.TrimSpace(s[i:])
	s = s[:i] + "\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", s, parser.PackageClauseOnly)
	if err != nil {
		return src
	}
	off := fset.Position(f.Name.End()).Offset
	return []byte(s[:off] + "; " + line + s[off:])
}

// extendImportcfg writes a copy of the importcfg at path with packagefile
// lines added for pkgs (taken from exports) and returns the new path.
func extendImportcfg(path, newPath string, exports map[string]string, pkgs []string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	have := make(map[string]bool)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "packagefile "); ok {
			if k, _, ok := strings.Cut(rest, "="); ok {
				have[k] = true
			}
		}
	}
	var b strings.Builder
	b.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, p := range pkgs {
		if have[p] {
			continue
		}
		exp, ok := exports[p]
		if !ok {
			return "", fmt.Errorf("kprof toolexec: no export data for %s", p)
		}
		fmt.Fprintf(&b, "packagefile %s=%s\n", p, exp)
		have[p] = true
	}
	if err := os.WriteFile(newPath, []byte(b.String()), 0o666); err != nil {
		return "", err
	}
	return newPath, nil
}

func linkStep(cfg *Config, args []string) ([]string, error) {
	importcfg, _ := flagValue(args, "-importcfg")
	out, _ := flagValue(args, "-o")
	if importcfg == "" || out == "" {
		return args, nil
	}
	linked, err := readImportcfg(importcfg)
	if err != nil {
		return nil, err
	}
	exports := cfg.Exports
	if rebuilt, err := relink(cfg, args, linked); err != nil {
		return nil, err
	} else if rebuilt != nil {
		exports = rebuilt
	}
	var pkgs []string
	for p := range exports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs) // a stable importcfg for a stable link
	nc, err := extendImportcfg(importcfg, importcfg+".kprof", exports, pkgs)
	if err != nil {
		return nil, err
	}
	setFlag(args, "-importcfg", nc)
	return args, nil
}

// readImportcfg returns the packagefile entries of an importcfg.
func readImportcfg(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "packagefile "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				m[k] = v
			}
		}
	}
	return m, nil
}

// relink handles test binaries of packages the agent itself depends on.
// go test compiles such a package with its tests, and everything in the
// binary that depends on it again; the agent, linked in behind the go
// command's back, was prebuilt against the ordinary package and would not
// match. relink compiles again every agent package that depends on a
// package the binary has in another version, then package main (which
// imports the agent), and points the link at them. It returns the exports
// to use, or nil if the prebuilt ones fit.
func relink(cfg *Config, args []string, linked map[string]string) (map[string]string, error) {
	diverged := make(map[string]bool)
	for _, sp := range cfg.Support {
		if f, ok := linked[sp.ImportPath]; ok && f != sp.Export && !sameFile(f, sp.Export) {
			diverged[sp.ImportPath] = true
		}
	}
	if len(diverged) == 0 {
		return nil, nil
	}
	rel, err := toolchain.Lookup(cfg.GoVersion)
	if err != nil {
		return nil, err
	}
	lang := rel.Name
	mainArchive := args[len(args)-1]
	// main's compile step saved its arguments, unless the build cache
	// had main: then main stays as it is (it imports only the agent
	// package itself, whose export data does not change when it is
	// compiled again).
	var mainArgs []string
	mainArgsFile := filepath.Join(filepath.Dir(mainArchive), "kprof", "main-compile.json")
	if data, err := os.ReadFile(mainArgsFile); err == nil {
		if err := json.Unmarshal(data, &mainArgs); err != nil {
			return nil, err
		}
	}
	compiler := filepath.Join(filepath.Dir(args[0]), "compile")
	if cfg.Compiler != "" {
		compiler = cfg.Compiler
	}
	dir := filepath.Join(filepath.Dir(mainArchive), "kprof", "relink")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	race := -1
	if mainArgs != nil {
		_, race = flagValue(mainArgs, "-race")
	} else {
		_, race = flagValue(args, "-race")
	}
	exports := make(map[string]string, len(cfg.Exports))
	for k, v := range cfg.Exports {
		exports[k] = v
	}
	lookup := func(p string) string {
		if f, ok := linked[p]; ok {
			return f
		}
		return exports[p]
	}
	stale := make(map[string]bool)
	for i, sp := range cfg.Support {
		if _, ok := linked[sp.ImportPath]; ok {
			continue // the binary has its own: use it
		}
		for _, imp := range sp.Imports {
			if m, ok := sp.ImportMap[imp]; ok {
				imp = m
			}
			if diverged[imp] || stale[imp] {
				stale[sp.ImportPath] = true
			}
		}
		if !stale[sp.ImportPath] {
			continue
		}
		for _, s := range sp.SFiles {
			if src, err := os.ReadFile(filepath.Join(sp.Dir, s)); err != nil || hasCode(src) {
				return nil, fmt.Errorf("kprof: cannot rebuild %s for this test binary: it has assembly (%s)", sp.ImportPath, s)
			}
		}
		icfg := filepath.Join(dir, fmt.Sprintf("%d.importcfg", i))
		var b strings.Builder
		for _, imp := range sp.Imports {
			if imp == "unsafe" {
				continue
			}
			target := imp
			if m, ok := sp.ImportMap[imp]; ok {
				target = m
				fmt.Fprintf(&b, "importmap %s=%s\n", imp, m)
			}
			fmt.Fprintf(&b, "packagefile %s=%s\n", target, lookup(target))
		}
		if err := os.WriteFile(icfg, []byte(b.String()), 0o666); err != nil {
			return nil, err
		}
		outFile := filepath.Join(dir, fmt.Sprintf("%d.a", i))
		cargs := []string{compiler, "-o", outFile, "-p", sp.ImportPath, "-lang=" + lang, "-importcfg", icfg, "-pack", "-nolocalimports"}
		if sp.Standard {
			cargs = append(cargs, "-std")
		}
		if len(sp.SFiles) == 0 {
			cargs = append(cargs, "-complete")
		}
		if race >= 0 {
			cargs = append(cargs, "-race")
		}
		for _, f := range sp.GoFiles {
			cargs = append(cargs, filepath.Join(sp.Dir, f))
		}
		cargs, after, err := compileStep(cfg, cargs)
		if err != nil {
			return nil, err
		}
		if err := runTool(cargs); err != nil {
			return nil, fmt.Errorf("kprof: rebuilding %s: %v", sp.ImportPath, err)
		}
		if after != nil {
			if err := after(); err != nil {
				return nil, err
			}
		}
		exports[sp.ImportPath] = outFile
	}
	if mainArgs == nil {
		return exports, nil
	}
	// main imports the agent: compile it again against the new agent.
	mcfg, _ := flagValue(mainArgs, "-importcfg")
	mlinked, err := readImportcfg(mcfg)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for p, f := range mlinked {
		if stale[p] {
			f = exports[p]
		}
		fmt.Fprintf(&b, "packagefile %s=%s\n", p, f)
	}
	newCfg := filepath.Join(dir, "main.importcfg")
	if err := os.WriteFile(newCfg, []byte(b.String()), 0o666); err != nil {
		return nil, err
	}
	newMain := filepath.Join(dir, "main.a")
	setFlag(mainArgs, "-importcfg", newCfg)
	setFlag(mainArgs, "-o", newMain)
	if err := runTool(mainArgs); err != nil {
		return nil, fmt.Errorf("kprof: rebuilding package main: %v", err)
	}
	// A cgo program's C objects (and any assembly) came with the go
	// command's archive of main, appended after its compile.
	if err := copyObjects(mainArchive, newMain); err != nil {
		return nil, fmt.Errorf("kprof: rebuilding package main: %v", err)
	}
	args[len(args)-1] = newMain
	return exports, nil
}

// sameFile reports whether two files have the same content (go build -a
// rebuilds identical archives under new names), but for their build IDs
// (copyPrebuilt's copies).
func sameFile(a, b string) bool {
	da, err1 := os.ReadFile(a)
	db, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && (bytes.Equal(da, db) || sameArchive(da, db))
}

// hasCode reports whether an assembly file has anything but comments and
// blank lines (an empty .s file only keeps the compiler from -complete).
func hasCode(src []byte) bool {
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "//") {
			return true
		}
	}
	return false
}

func runTool(args []string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// exportImporter reads export data named by a compile step's importcfg.
type exportImporter struct {
	fset      *token.FileSet
	files     map[string]string
	importMap map[string]string
	pkgs      map[string]*types.Package
}

func newImporter(fset *token.FileSet, importcfg string) (*exportImporter, error) {
	imp := &exportImporter{fset: fset, files: map[string]string{}, importMap: map[string]string{}, pkgs: map[string]*types.Package{}}
	f, err := os.Open(importcfg)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "packagefile "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				imp.files[k] = v
			}
		} else if rest, ok := strings.CutPrefix(line, "importmap "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				imp.importMap[k] = v
			}
		}
	}
	return imp, sc.Err()
}

func (imp *exportImporter) Import(path string) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	if m, ok := imp.importMap[path]; ok {
		path = m
	}
	if p, ok := imp.pkgs[path]; ok && p.Complete() {
		return p, nil
	}
	file, ok := imp.files[path]
	if !ok {
		return nil, fmt.Errorf("no export data for %q", path)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := gcexportdata.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("reading export data for %q: %v", path, err)
	}
	return gcexportdata.Read(r, imp.fset, imp.pkgs, path)
}

// checkableLang returns the language version kprof type-checks a package
// of language version lang at: lang itself, or, for a version newer than
// the go/types kprof was built with knows (a go1.27 module, kprof built
// with Go 1.26), that go/types' own version. The code of such a package
// type-checks alike unless it uses what only the newer version has (then
// kprof says it leaves the package uninstrumented).
func checkableLang(lang string) string {
	own := version.Lang(runtime.Version())
	if lang != "" && own != "" && version.Compare(lang, own) > 0 {
		return own
	}
	return lang
}

// escapeDiagnostics runs the compile step compile once more, on the
// original files, with the compiler's -m flag, its outputs in workDir, and
// returns what the compiler printed: its escape analysis of the package
// (cost.ParseEscapes). ok is false if the compiler failed; the compile
// step proper reports why.
func escapeDiagnostics(compile []string, workDir string) (out []byte, ok bool) {
	args := append([]string{compile[0], "-m"}, compile[1:]...)
	outputs := [][2]string{{"-o", "escapes.o"}, {"-linkobj", "escapes.linkobj"}, {"-asmhdr", "escapes_asm.h"}}
	for _, o := range outputs {
		setFlag(args, o[0], filepath.Join(workDir, o[1]))
	}
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	for _, o := range outputs {
		os.Remove(filepath.Join(workDir, o[1]))
	}
	return out, err == nil
}
