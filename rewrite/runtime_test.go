package rewrite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A runtime without the shape the patch expects fails closed with a message
// naming the supported Go versions.
func TestPatchRuntimeFailsClosed(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"runtime2.go": "package runtime\n\ntype g struct {\n\tstack uintptr\n}\n",
		"proc.go":     "package runtime\n\nfunc goexit1() {\n}\n",
	}
	for _, tc := range []struct{ name, file, src string }{
		{"no g struct", "runtime2.go", "package runtime\n\ntype m struct{}\n"},
		{"no goexit1", "proc.go", "package runtime\n\nfunc goexit0() {}\n"},
		{"no race context", "proc.go", "package runtime\n\nfunc goexit1() {\n}\n"},
	} {
		var paths []string
		for name, src := range files {
			if name == tc.file {
				src = tc.src
			}
			p := filepath.Join(dir, tc.name, name)
			os.MkdirAll(filepath.Dir(p), 0o777)
			if err := os.WriteFile(p, []byte(src), 0o666); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		_, err := patchRuntime(paths, t.TempDir(), "go1.99.0", true)
		if err == nil || !strings.Contains(err.Error(), "kprof supports "+SupportedGo+".x only") || !strings.Contains(err.Error(), "go1.99.0") {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

// The patches fit this toolchain's sources: the runtime (both modes),
// package testing and package sync.
func TestPatchesFitGOROOT(t *testing.T) {
	goroot := runtime.GOROOT()
	files := func(pkg string) []string {
		m, err := filepath.Glob(filepath.Join(goroot, "src", pkg, "*.go"))
		if err != nil || len(m) == 0 {
			t.Skipf("no sources of %s in %s", pkg, goroot)
		}
		return m
	}
	if v := runtime.Version(); !strings.HasPrefix(v, SupportedGo+".") && v != SupportedGo {
		t.Skipf("toolchain %s; the patches are for %s", v, SupportedGo)
	}
	for _, det := range []bool{true, false} {
		out, err := patchRuntime(files("runtime"), t.TempDir(), runtime.Version(), det)
		if err != nil {
			t.Fatal(err)
		}
		last, _ := os.ReadFile(out[len(out)-1])
		if want := fmt.Sprintf("const kprofDet = %v", det); !strings.Contains(string(last), want) {
			t.Errorf("deterministic=%v: kprof_runtime.go lacks %q", det, want)
		}
	}
	for _, p := range []struct {
		pkg   string
		patch func([]string, string, string) ([]string, error)
	}{{"testing", patchTesting}, {"sync", patchSync}} {
		in := files(p.pkg)
		out, err := p.patch(in, t.TempDir(), runtime.Version())
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(in)+1 {
			t.Errorf("%s: %d files in, %d out; want one added", p.pkg, len(in), len(out))
		}
		// Every edit keeps the line count.
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
}
