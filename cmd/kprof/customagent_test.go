package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kprof/kprof"
)

// TestCustomAgent builds the README's custom agent (instructions per
// package) into a program with kprof build -agent and runs it: from the
// repository, and from a copy of the program whose module replaces kprof
// with another checkout of the same source (a copy elsewhere). The same
// kprof binary builds both: the instrumented packages compiled against one
// checkout's counter must not be linked with the other's (they were,
// "fingerprint mismatch", before the tool ID named the counter's source).
func TestCustomAgent(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	repoApp, _ := filepath.Abs("../../testdata/customagent")
	other := t.TempDir()
	if err := writeFiles(kprof.Source, filepath.Join(other, "kprof"), 0o666, false); err != nil {
		t.Fatal(err)
	}
	copyApp := filepath.Join(other, "app")
	for _, f := range []string{"go.mod", "main.go", "pkgagent/pkgagent.go"} {
		data, err := os.ReadFile(filepath.Join(repoApp, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "go.mod" {
			data = []byte(strings.Replace(string(data), "=> ../..", "=> ../kprof", 1))
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(copyApp, f)), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyApp, f), data, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{repoApp, copyApp} {
		bin := filepath.Join(t.TempDir(), "ca")
		if out, err := runCmd(dir, nil, kprofBin, "build", "-agent", "example.com/customagent/pkgagent", "-o", bin, "."); err != nil {
			t.Fatalf("%s: kprof build -agent: %v\n%s", dir, err, out)
		}
		out, err := runCmd(t.TempDir(), nil, bin)
		if err != nil {
			t.Fatalf("%s: %v\n%s", dir, err, out)
		}
		for _, want := range []string{"20001\n", "pkgagent: fmt ", "pkgagent: main "} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", dir, want, out)
			}
		}
	}
}
