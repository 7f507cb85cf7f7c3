package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCustomAgent builds the README's custom agent (instructions per
// package) into a program with kprof build -agent and runs it.
func TestCustomAgent(t *testing.T) {
	t.Parallel() // (heavy: builds and runs beside the other heavy tests)
	kprofBin := buildKprof(t)
	dir, _ := filepath.Abs("../../testdata/customagent")
	bin := filepath.Join(t.TempDir(), "ca")
	if out, err := runCmd(dir, nil, kprofBin, "build", "-agent", "example.com/customagent/pkgagent", "-o", bin, "."); err != nil {
		t.Fatalf("kprof build -agent: %v\n%s", err, out)
	}
	out, err := runCmd(t.TempDir(), nil, bin)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"20001\n", "pkgagent: fmt ", "pkgagent: main "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
