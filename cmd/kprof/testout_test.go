package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

// TestTestProfileMerge runs kprof test on two packages of the same name
// with KPROF_OUT set, relative: the one profile, in the directory kprof
// test ran in, holds both test binaries' work (each used to overwrite
// the other's, and a relative path landed in each package's directory).
func TestTestProfileMerge(t *testing.T) {
	kprofBin := buildKprof(t)
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":              "module m\n\ngo 1.22\n",
		"a/util/util.go":      "package util\n\nfunc A(n int) int {\n\ts := 0\n\tfor i := 0; i < n; i++ {\n\t\ts += i\n\t}\n\treturn s\n}\n",
		"a/util/util_test.go": "package util\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A(1000) != 499500 {\n\t\tt.Fatal(A(1000))\n\t}\n}\n",
		"b/util/util.go":      "package util\n\nfunc B(n int) int {\n\ts := 1\n\tfor i := 0; i < n; i++ {\n\t\ts ^= i\n\t}\n\treturn s\n}\n",
		"b/util/util_test.go": "package util\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {\n\tif B(1000) == 0 {\n\t\tt.Fatal(B(1000))\n\t}\n}\n",
	}
	writeTree(t, dir, files)
	out, err := runCmd(dir, []string{"KPROF_MODE=exact", "KPROF_OUT=both.kprof"}, kprofBin, "test", "-count=1", "./...")
	if err != nil {
		t.Fatalf("kprof test: %v\n%s", err, out)
	}
	if !strings.Contains(out, "the profiles of 2 test processes, merged") {
		t.Errorf("kprof test did not say it merged two profiles:\n%s", out)
	}
	for _, stray := range []string{"a/util/both.kprof", "b/util/both.kprof"} {
		if _, err := os.Stat(filepath.Join(dir, stray)); err == nil {
			t.Errorf("%s written", stray)
		}
	}
	p, err := profile.ParseFile(filepath.Join(dir, "both.kprof"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"m/a/util.A", "m/b/util.B", "m/a/util.TestA", "m/b/util.TestB"} {
		if _, calls := funcStats(p, f); calls != 1 {
			t.Errorf("%s: %d calls in the merged profile, want 1", f, calls)
		}
	}

	// Without KPROF_OUT, one profile per package where kprof test ran,
	// the two named util told apart by their import paths.
	out, err = runCmd(dir, []string{"KPROF_MODE=exact", "KPROF_OUT="}, kprofBin, "test", "-count=1", "./...")
	if err != nil {
		t.Fatalf("kprof test: %v\n%s", err, out)
	}
	for name, f := range map[string]string{"m_a_util.test.kprof": "m/a/util.A", "m_b_util.test.kprof": "m/b/util.B"} {
		p, err := profile.ParseFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%v (kprof test printed %s)", err, out)
			continue
		}
		if _, n := funcStats(p, f); n != 1 {
			t.Errorf("%s: %s has %d calls, want 1", name, f, n)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "util.test.kprof")); err == nil {
		t.Error("util.test.kprof written: one package's profile over the other's")
	}

	// Interval profiles (KPROF_EVERY; the last one at exit) go beside
	// their process's profile, none over another's.
	for _, tc := range []struct {
		out  string
		want []string
	}{
		{"", []string{"m_a_util.test.1.kprof", "m_b_util.test.1.kprof"}},
		{"every.kprof", []string{"every.*.1.kprof", "every.*.1.kprof"}},
	} {
		out, err = runCmd(dir, []string{"KPROF_MODE=exact", "KPROF_OUT=" + tc.out, "KPROF_EVERY=1000000"}, kprofBin, "test", "-count=1", "./...")
		if err != nil {
			t.Fatalf("kprof test, KPROF_OUT=%q KPROF_EVERY: %v\n%s", tc.out, err, out)
		}
		for _, pattern := range tc.want {
			m, _ := filepath.Glob(filepath.Join(dir, pattern))
			if want := strings.Count(strings.Join(tc.want, " "), pattern); len(m) != want {
				t.Errorf("KPROF_OUT=%q: %d files %s, want %d (kprof test printed %s)", tc.out, len(m), pattern, want, out)
			}
			for _, f := range m {
				if _, err := profile.ParseFile(f); err != nil {
					t.Error(err)
				}
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.kprof")); len(m) != 0 {
		t.Errorf("profiles written in package directories: %v", m)
	}
}

// TestTestPanicProfile runs a test that panics: kprof test fails as go
// test does, and the test binary's profile is still written, with what
// ran before the panic.
func TestTestPanicProfile(t *testing.T) {
	kprofBin := buildKprof(t)
	dir := sumModule(t, "package p\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif Sum(1000) == 499500 {\n\t\tpanic(\"boom\")\n\t}\n}\n")
	out, err := runCmd(dir, []string{"KPROF_MODE=exact", "KPROF_OUT="}, kprofBin, "test", "-count=1", "./...")
	if err == nil || !strings.Contains(out, "panic: boom") {
		t.Fatalf("kprof test of a panicking test: %v, want a failure with the panic\n%s", err, out)
	}
	p, err := profile.ParseFile(filepath.Join(dir, "p.test.kprof"))
	if err != nil {
		t.Fatalf("%v (kprof test printed %s)", err, out)
	}
	_, calls := funcStats(p, "m/p.Sum")
	if calls != 1 {
		t.Errorf("m/p.Sum has %d calls in the profile, want 1", calls)
	}
}

// TestTestReexecMerged runs a test that runs its own binary again with
// other names in os.Args[0] (as logrus's tests do, "" included): the
// children's profiles are the package's, merged into p.test.kprof, and no
// file is named after their os.Args[0].
func TestTestReexecMerged(t *testing.T) {
	kprofBin := buildKprof(t)
	dir := sumModule(t, `package p

import (
	"os"
	"os/exec"
	"testing"
)

func TestReexec(t *testing.T) {
	if os.Getenv("P_CHILD") != "" {
		Sum(10)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, argv0 := range []string{"child-proc", "", "helper.2"} {
		cmd := exec.Command(exe, "-test.run=^TestReexec$")
		cmd.Args[0] = argv0
		cmd.Env = append(os.Environ(), "P_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%q: %v %s", argv0, err, out)
		}
	}
	Sum(10)
}
`)
	out, err := runCmd(dir, []string{"KPROF_MODE=exact", "KPROF_OUT="}, kprofBin, "test", "-count=1", "./...")
	if err != nil {
		t.Fatalf("kprof test: %v\n%s", err, out)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.kprof"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*.kprof"))
	if m = append(m, hidden...); len(m) != 1 || filepath.Base(m[0]) != "p.test.kprof" {
		t.Fatalf("profiles %v, want p.test.kprof alone (kprof test printed %s)", m, out)
	}
	p, err := profile.ParseFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	_, calls := funcStats(p, "m/p.Sum")
	if calls != 4 {
		t.Errorf("m/p.Sum has %d calls in the merged profile, want 4 (the test and its three children)", calls)
	}
}

// sumModule writes module m, whose package p has a function Sum and the
// test file test, into a new directory, and returns the directory.
func sumModule(t *testing.T, test string) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":      "module m\n\ngo 1.22\n",
		"p/p.go":      "package p\n\nfunc Sum(n int) int {\n\ts := 0\n\tfor i := 0; i < n; i++ {\n\t\ts += i\n\t}\n\treturn s\n}\n",
		"p/p_test.go": test,
	})
	return dir
}
