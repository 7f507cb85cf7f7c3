package rewrite

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"golang.org/x/tools/go/gcexportdata"
)

// ConfigEnv names the environment variable through which kprof build hands
// the -toolexec wrapper its configuration file.
const ConfigEnv = "KPROF_TOOLEXEC_CONFIG"

// Config is what the -toolexec wrapper needs to know; kprof build writes it
// to a file before running go build.
type Config struct {
	Options   Options
	ToolID    string            // appended to the tools' -V=full answers
	GoVersion string            // toolchain version, for messages
	Exports   map[string]string // kprof's own packages (and their deps): import path → export data
	Agent     string            // import path of the agent linked into main packages
	Skip      map[string]bool   // import paths never instrumented
	Only      []string          // -pkgs patterns; empty means all
	Verbose   bool              // report approximations on stderr
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
	switch tool {
	case "compile":
		args, err = compileStep(cfg, args)
	case "link":
		args, err = linkStep(cfg, args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "kprof toolexec:", err)
		return 1
	}
	return 0
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

// Instrumented reports whether cfg instruments the package path.
func (cfg *Config) Instrumented(path string) bool {
	if cfg.Skip[path] || path == "unsafe" || strings.HasPrefix(path, "runtime/") || strings.HasPrefix(path, "internal/runtime/") {
		return false
	}
	if strings.HasPrefix(path, "github.com/kprof/kprof/") || path == cfg.Agent {
		return false // kprof's own linked-in packages and the agent
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

func compileStep(cfg *Config, args []string) ([]string, error) {
	pkgPath, _ := flagValue(args, "-p")
	out, _ := flagValue(args, "-o")
	if out == "" {
		return args, nil
	}
	first := goFiles(args)
	files := append([]string(nil), args[first:]...)
	for i, f := range files {
		if !filepath.IsAbs(f) {
			wd, _ := os.Getwd()
			files[i] = filepath.Join(wd, f)
		}
	}
	workDir := filepath.Join(filepath.Dir(out), "kprof")
	if err := os.MkdirAll(workDir, 0o777); err != nil {
		return nil, err
	}
	if pkgPath == CounterPath {
		// The counter's access to the patched runtime is excluded from
		// ordinary builds by a constraint no one sets.
		for i, f := range files {
			if filepath.Base(f) == "state_plain.go" {
				files[i] = filepath.Join(filepath.Dir(f), "state_kprof.go")
			}
		}
		return append(args[:first:first], files...), nil
	}
	if pkgPath == "runtime" {
		nf, err := patchRuntime(files, workDir, cfg.GoVersion)
		if err != nil {
			return nil, err
		}
		return append(args[:first:first], nf...), nil
	}
	if len(files) == 0 || !cfg.Instrumented(pkgPath) {
		return args, nil
	}
	importcfg, _ := flagValue(args, "-importcfg")
	lang, _ := flagValue(args, "-lang")
	isMain := pkgPath == "main"
	newFiles, approx, err := instrumentFiles(cfg, pkgPath, files, importcfg, lang, isMain, workDir)
	if err != nil {
		// Not type-correct (or not analysable): let the compiler report
		// on the original files.
		if cfg.Verbose || strings.Contains(err.Error(), "internal error") {
			fmt.Fprintf(os.Stderr, "kprof: %s not instrumented: %v\n", pkgPath, err)
		}
		return args, nil
	}
	if cfg.Verbose {
		for _, a := range approx {
			fmt.Fprintf(os.Stderr, "kprof: approximate: %s\n", a)
		}
	}
	if newFiles == nil {
		return args, nil
	}
	// The instrumented files import the counter (and main the agent).
	extra := []string{CounterPath}
	if isMain && cfg.Agent != "" {
		extra = append(extra, cfg.Agent)
	}
	nc, err := extendImportcfg(importcfg, filepath.Join(workDir, "importcfg"), cfg.Exports, extra)
	if err != nil {
		return nil, err
	}
	args = append(args[:first:first], newFiles...)
	setFlag(args, "-importcfg", nc)
	return args, nil
}

// instrumentFiles type-checks and instruments the package's files, writing
// the changed ones to workDir. It returns the file list for the compiler.
func instrumentFiles(cfg *Config, pkgPath string, files []string, importcfg, lang string, isMain bool, workDir string) (_ []string, _ []string, err error) {
	defer func() {
		// A bug in the instrumenter must not break the user's build: the
		// package is compiled as it is, and the failure reported.
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error instrumenting %s: %v\n%s", pkgPath, r, debug.Stack())
		}
	}()
	fset := token.NewFileSet()
	in := &Input{Fset: fset, Path: pkgPath, Info: NewInfo()}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		af, err := parser.ParseFile(fset, f, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		in.Files = append(in.Files, af)
		in.Srcs = append(in.Srcs, src)
		in.Names = append(in.Names, f)
	}
	imp, err := newImporter(fset, importcfg)
	if err != nil {
		return nil, nil, err
	}
	goarch := os.Getenv("GOARCH")
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	tc := &types.Config{
		Importer:  imp,
		Sizes:     types.SizesFor("gc", goarch),
		GoVersion: lang,
	}
	pkg, err := tc.Check(pkgPath, fset, in.Files, in.Info)
	if err != nil {
		return nil, nil, err
	}
	in.Pkg = pkg
	out, err := Package(in, cfg.Options)
	if err != nil {
		return nil, nil, err
	}
	result := make([]string, len(files))
	changed := false
	for i, f := range files {
		src := out.Files[i]
		if isMain && cfg.Agent != "" && !changed && src == nil {
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
		nf := filepath.Join(workDir, fmt.Sprintf("%d_%s", i, filepath.Base(f)))
		if err := os.WriteFile(nf, src, 0o666); err != nil {
			return nil, nil, err
		}
		result[i] = nf
	}
	if !changed {
		return nil, out.Approx, nil
	}
	return result, out.Approx, nil
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
	var pkgs []string
	for p := range cfg.Exports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs) // a stable importcfg for a stable link
	nc, err := extendImportcfg(importcfg, importcfg+".kprof", cfg.Exports, pkgs)
	if err != nil {
		return nil, err
	}
	setFlag(args, "-importcfg", nc)
	return args, nil
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
