package toolchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// The compiler's inliner charges every call in a function against a budget
// of 80 nodes; a call to a function that is not inlined costs 57. The
// checks and charges kprof inserts would tip many small functions over the
// budget, and a function that is no longer inlined changes the program
// (escape analysis then moves what it returns to the heap: tests that
// count allocations fail). Coverage instrumentation has the same problem,
// which the compiler solves by treating coverage counter updates as free
// (isAtomicCoverageCounterUpdate in inl.go). kprof builds a compiler whose
// inliner treats calls into package counter the same way, and whose back
// end keeps kprof's checks off the fast path; what each edit does is said
// beside it (go126.go) and in the files it adds (patches/*/compile).

// compilerDirs are the compiler's packages kprof adds files to, under
// cmd/compile/internal (and under compile/ in the release directories).
var compilerDirs = []string{"inline", "ssagen", "ssa"}

// PatchedCompiler returns the path of kprof's compiler for the toolchain
// at goroot, building it into cacheDir the first time (about half a
// minute).
func (r *Release) PatchedCompiler(goroot, goVersion, cacheDir string) (string, error) {
	patched, err := r.compilerSources(goroot, goVersion)
	if err != nil {
		return "", err
	}
	hash := sha256.New()
	for _, src := range sortedKeys(patched) {
		hash.Write([]byte(src))
		hash.Write(patched[src])
	}
	h := hash.Sum(nil)
	id := goVersion + "-" + hex.EncodeToString(h[:8])
	// The go command expects the tool to be called "compile" (-V=full).
	dir := filepath.Join(cacheDir, "compile-"+id)
	exe := filepath.Join(dir, "compile")
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, "compile-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	replace := make(map[string]string)
	for i, src := range sortedKeys(patched) {
		name := filepath.Join(tmp, fmt.Sprintf("%d-%s", i, filepath.Base(src)))
		if err := os.WriteFile(name, patched[src], 0o666); err != nil {
			return "", err
		}
		replace[src] = name
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o666); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "compile")
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), "build", "-overlay", ov, "-o", out, "cmd/compile")
	cmd.Dir = tmp // (outside the user's module)
	// A toolchain the go command fetched (GOTOOLCHAIN=go1.27.3) lives in
	// the module cache, whose files an overlay may not replace: this
	// build, which needs no module, gets a module cache of its own.
	cmd.Env = append(ToolEnv(goroot), "GOMODCACHE="+filepath.Join(cacheDir, "no-modcache"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kprof: building the patched compiler: %v\n%s", err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(out, exe); err != nil {
		return "", err
	}
	return exe, nil
}

// ToolEnv returns the environment in which the go command at goroot
// builds one of kprof's tools (its patched compiler, kprof itself) for
// this machine: none of what the user's environment or go env file says
// of their own build (target, flags, workspace, GOROOT of another
// release) applies. The module proxy and caches stay the user's.
func ToolEnv(goroot string) []string {
	return append(os.Environ(), "GOROOT="+goroot, "GOTOOLCHAIN=local", "GOWORK=off", "GO111MODULE=on",
		"GOFLAGS=-mod=mod -buildvcs=false", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH, "GOAMD64=v1",
		"CGO_ENABLED=0")
}

// compilerSources returns the compiler's files kprof changes and adds, by
// their path in goroot: the release's edits applied, its files added.
func (r *Release) compilerSources(goroot, goVersion string) (map[string][]byte, error) {
	internal := filepath.Join(goroot, "src", "cmd", "compile", "internal")
	patched := make(map[string][]byte)
	for _, f := range sortedKeys(r.Compiler) {
		data, err := os.ReadFile(filepath.Join(internal, filepath.FromSlash(f)))
		if err != nil {
			return nil, fmt.Errorf("kprof: reading the compiler's %s: %v", f, err)
		}
		what := func(w string) error {
			return fmt.Errorf("%w (or build with -kprof.stockcompiler)", r.unsupported("the compiler", goVersion, w))
		}
		if data, err = applyEdits(data, f, r.Compiler[f], what); err != nil {
			return nil, err
		}
		patched[filepath.Join(internal, filepath.FromSlash(f))] = data
	}
	for _, dir := range compilerDirs {
		added, err := r.addedFiles(path.Join("compile", dir))
		if err != nil {
			return nil, err
		}
		for name, data := range added {
			patched[filepath.Join(internal, dir, name)] = data
		}
	}
	return patched, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// structEnd returns the offset of the line holding the closing brace of
// the struct type name declared in src.
func structEnd(filename string, src []byte, name string) (int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, sp := range gd.Specs {
			ts := sp.(*ast.TypeSpec)
			if st, ok := ts.Type.(*ast.StructType); ok && ts.Name.Name == name {
				off := fset.Position(st.Fields.Closing).Offset
				return bytes.LastIndexByte(src[:off], '\n') + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no struct type %s", filepath.Base(filename), name)
}

// KprofCommand returns the command that builds kprof's command, from the
// kprof module at dir into out, with the go command at goroot. It is the
// one way kprof is built by kprof itself (a host for a newer release) and
// by its tests and benchmarks: -trimpath and ToolEnv make the binary
// depend on the source and the release alone, not on where the source is
// checked out nor on the user's go env. The go command caches the
// instrumented packages under the hash of kprof's binary, so every kprof
// built this way from one source shares them: a clean clone's tests find
// what an earlier checkout of the same commit built.
func KprofCommand(goroot, dir, out string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), "build", "-trimpath", "-o", out, "./cmd/kprof")
	cmd.Dir = dir
	cmd.Env = ToolEnv(goroot)
	return cmd
}

// GoRoot returns the GOROOT of the go command on $PATH, as it would run
// here (GOTOOLCHAIN may select another release than the one installed).
func GoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("go env GOROOT: %v\n%s", err, ee.Stderr)
		}
		return "", fmt.Errorf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// BuildKprof builds kprof's command from the kprof module at dir into
// out (KprofCommand) with the go command on $PATH.
func BuildKprof(dir, out string) error {
	goroot, err := GoRoot()
	if err != nil {
		return err
	}
	if out, err := KprofCommand(goroot, dir, out).CombinedOutput(); err != nil {
		return fmt.Errorf("go build -trimpath ./cmd/kprof: %v\n%s", err, out)
	}
	return nil
}
