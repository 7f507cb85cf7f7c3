package toolchain

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kprof/kprof/rewrite"
)

// goroots returns a GOROOT for each release found on this machine: the
// running toolchain's, and toolchains the go command fetched into the
// module cache (GOTOOLCHAIN=go1.27.3 go version).
func goroots(t *testing.T) map[*Release]string {
	t.Helper()
	found := make(map[*Release]string)
	if r, err := Lookup(runtime.Version()); err == nil {
		found[r] = runtime.GOROOT()
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "golang.org", "toolchain@v0.0.1-go*."+runtime.GOOS+"-"+runtime.GOARCH))
	for _, d := range dirs {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(d), "toolchain@v0.0.1-"), "."+runtime.GOOS+"-"+runtime.GOARCH)
		if r, err := Lookup(v); err == nil && found[r] == "" {
			found[r] = d
		}
	}
	return found
}

// Every patch of every release found here applies to its GOROOT — the
// runtime (both modes), sync, testing and the compiler — and every edit
// keeps the line count.
func TestPatchesFitGOROOT(t *testing.T) {
	roots := goroots(t)
	for _, r := range releases {
		t.Run(r.Name, func(t *testing.T) {
			goroot := roots[r]
			if goroot == "" {
				t.Skipf("no %s toolchain here (GOTOOLCHAIN=%s.0 go version fetches one)", r.Name, r.Name)
			}
			for _, pkg := range sortedKeys(r.Packages) {
				in, _ := filepath.Glob(filepath.Join(goroot, "src", pkg, "*.go"))
				out, err := r.PatchPackage(pkg, r.Name, in, t.TempDir(), map[string]string{"extra.go": "package " + pkg})
				if err != nil {
					t.Fatal(err)
				}
				added, _ := r.addedFiles(pkg)
				if len(out) != len(in)+len(added)+1 {
					t.Errorf("%s: %d files in, %d out; want %d added", pkg, len(in), len(out), len(added)+1)
				}
				for i, f := range in {
					if out[i] == f {
						continue // not patched
					}
					a, _ := os.ReadFile(f)
					b, _ := os.ReadFile(out[i])
					if na, nb := bytes.Count(a, []byte("\n")), bytes.Count(b, []byte("\n")); nb != na+1 {
						t.Errorf("%s: %d lines, patched %d (want one more: the //line directive)", f, na, nb)
					}
				}
			}
			patched, err := r.compilerSources(goroot, r.Name)
			if err != nil {
				t.Fatal(err)
			}
			for name, src := range patched {
				if _, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution); err != nil {
					t.Errorf("compiler: %v", err)
				}
			}
		})
	}
}

// A runtime without the shape the patch expects fails closed, naming the
// supported releases.
func TestPatchFailsClosed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o666); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("runtime2.go", "package runtime\n\ntype g struct {\n\tstack uintptr\n}\n")
	for _, tc := range []struct{ name, file, src string }{
		{"no g struct", "runtime2.go", "package runtime\n\ntype m struct{}\n"},
		{"no goexit1", "proc.go", "package runtime\n\nfunc goexit0() {}\n"},
	} {
		files := []string{good, write(tc.file, tc.src)}
		if tc.file == "runtime2.go" {
			files = files[1:]
		}
		_, err := go126.PatchPackage("runtime", "go1.99.0", files, t.TempDir(), nil)
		if err == nil || !strings.Contains(err.Error(), "kprof supports "+Supported()) || !strings.Contains(err.Error(), "go1.99.0") {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"go1.26.8", "go1.26"},
		{"go1.26", "go1.26"},
		{"go1.27.3", "go1.27"},
		{"go1.27rc2", "go1.27"},
		{"go1.27.3 X:nosynchashtriemap", "go1.27"},
		{"go1.25.9", ""},
		{"go1.260.1", ""},
		{"go1.28.0", ""},
		{"devel go1.28-abcdef", ""},
	} {
		r, err := Lookup(tc.version)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("Lookup(%q) = %s, want an error", tc.version, r.Name)
		case tc.want == "" && !strings.Contains(err.Error(), "kprof supports go1.26.x and go1.27.x; the go command here is "+tc.version):
			t.Errorf("Lookup(%q): %v", tc.version, err)
		case tc.want != "" && (err != nil || r.Name != tc.want):
			t.Errorf("Lookup(%q) = %v, %v; want %s", tc.version, r, err, tc.want)
		}
	}
}

// The names and the counter's import path that the compiler patch
// recognises are those rewrite writes.
func TestCompilerKnowsRewrite(t *testing.T) {
	roles := map[string]string{
		"kprofLocalName":       "local",
		"kprofDepthName":       "depth",
		"kprofTagName":         "tag",
		"kprofResultPrefix":    "result",
		"kprofLatePrefix":      "late",
		"kprofBodyDepthPrefix": "bodyDepth",
	}
	seen := 0
	err := fs.WalkDir(patchFS, "patches", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, _ := fs.ReadFile(patchFS, path)
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if role, ok := roles[name.Name]; ok && i < len(n.Values) {
						seen++
						if lit, ok := n.Values[i].(*ast.BasicLit); !ok || lit.Value != strconv.Quote(rewrite.ReservedNames[role]) {
							t.Errorf("%s: %s = %s, rewrite writes %q", path, name.Name, lit.Value, rewrite.ReservedNames[role])
						}
					}
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && strings.Contains(s, "kprof/counter") && !strings.HasPrefix(s, rewrite.CounterPath) {
					t.Errorf("%s: %q is not under %s", path, s, rewrite.CounterPath)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(roles) {
		t.Errorf("found %d of the %d names", seen, len(roles))
	}
}
