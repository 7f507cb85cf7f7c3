package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/kprof/kprof/profile"
)

// benchResults runs kprof test -bench in dir and returns its output and
// the instructions/op of every benchmark line (name with -P suffix).
func benchResults(t *testing.T, kprofBin, dir string, args ...string) (string, map[string]float64) {
	t.Helper()
	env := []string{"KPROF_OUT=" + filepath.Join(t.TempDir(), "test.kprof")}
	out, err := runCmd(dir, env, kprofBin, append([]string{"test", "-run", "^$", "-bench", "."}, args...)...)
	if err != nil {
		t.Fatalf("kprof test -bench %v: %v\n%s", args, err, out)
	}
	r := benchfmt.NewReader(strings.NewReader(out), "kprof test")
	got := map[string]float64{}
	exact := false
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		case *benchfmt.UnitMetadata:
			if rec.Unit == "instructions/op" && rec.Key == "assume" && rec.Value == "exact" {
				exact = true
			}
		case *benchfmt.Result:
			v, ok := rec.Value("instructions/op")
			if !ok {
				t.Errorf("%s: no instructions/op metric", rec.Name)
			}
			got["Benchmark"+string(rec.Name)] = v
			if n := rec.Iters; len(args) == 0 && n != 100 {
				t.Errorf("%s: %d iterations, want the default 100", rec.Name, n)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if !exact {
		t.Errorf("no \"Unit instructions/op assume=exact\" line:\n%s", out)
	}
	if len(got) == 0 {
		t.Fatalf("no benchmark results:\n%s", out)
	}
	return out, got
}

// TestBenchInstructions: kprof test -bench adds an exact instructions/op
// metric that benchfmt (benchstat's reader) parses and that does not
// depend on -benchtime or GOMAXPROCS; setup before ResetTimer, or while
// the timer is stopped, is not counted; RunParallel's goroutines are.
func TestBenchInstructions(t *testing.T) {
	kprofBin := buildKprof(t)
	dir, _ := filepath.Abs("../../testdata/benchgate")
	_, def := benchResults(t, kprofBin, dir)
	_, at100 := benchResults(t, kprofBin, dir, "-benchtime=100x", "-cpu=1,2")
	_, at1000 := benchResults(t, kprofBin, dir, "-benchtime=1000x", "-cpu=1,2")
	for name, v := range at100 {
		if strings.HasPrefix(name, "BenchmarkParallelLazy") {
			continue // per-goroutine setup: see TestBenchParallelDeterministic
		}
		if at1000[name] != v {
			t.Errorf("%s: %v instructions/op at -benchtime=100x, %v at 1000x", name, v, at1000[name])
		}
		base, _, _ := strings.Cut(name, "-")
		if d, ok := def[name]; ok && d != v {
			t.Errorf("%s: %v instructions/op by default, %v at 100x", name, d, v)
		}
		if strings.HasSuffix(name, "-2") && at100[base] != v {
			t.Errorf("%s: %v instructions/op with GOMAXPROCS 2, %v with 1", base, v, at100[base])
		}
	}
	if a, b := def["BenchmarkChecksum-2"], def["BenchmarkChecksumSetup-2"]; a != b || a == 0 {
		t.Errorf("setup before ResetTimer counted: BenchmarkChecksum %v, BenchmarkChecksumSetup %v instructions/op", a, b)
	}
	// Checksum of n bytes costs a fixed amount per byte: BenchmarkPaused
	// (100 bytes timed, 5000 untimed) and BenchmarkParallel (200 bytes)
	// must be far below BenchmarkChecksum (1000 bytes).
	c := def["BenchmarkChecksum-2"]
	if p := def["BenchmarkPaused-2"]; p <= 0 || p > c/5 {
		t.Errorf("BenchmarkPaused: %v instructions/op, want a tenth of BenchmarkChecksum's %v plus the loop", p, c)
	}
	if p := def["BenchmarkParallel-2"]; p <= c/10 || p > c/4 {
		t.Errorf("BenchmarkParallel: %v instructions/op, want a fifth of BenchmarkChecksum's %v", p, c)
	}
}

// TestBenchParallelDeterministic: RunParallel's split of iterations among
// its goroutines does not depend on timing under kprof, so a benchmark
// whose goroutines set up state on their first iteration reports the same
// instructions/op on every run (-count), with 1, 2 and 4 goroutines.
func TestBenchParallelDeterministic(t *testing.T) {
	kprofBin := buildKprof(t)
	dir, _ := filepath.Abs("../../testdata/benchgate")
	env := []string{"KPROF_OUT=" + filepath.Join(t.TempDir(), "test.kprof")}
	out, err := runCmd(dir, env, kprofBin, "test", "-run", "^$", "-bench", "ParallelLazy", "-benchtime=30x", "-count=5", "-cpu=1,2,4")
	if err != nil {
		t.Fatalf("kprof test: %v\n%s", err, out)
	}
	seen := map[string][]float64{}
	r := benchfmt.NewReader(strings.NewReader(out), "kprof test")
	for r.Scan() {
		if rec, ok := r.Result().(*benchfmt.Result); ok {
			v, _ := rec.Value("instructions/op")
			seen[string(rec.Name.Full())] = append(seen[string(rec.Name.Full())], v)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("want results for -cpu 1, 2 and 4, got %v\n%s", seen, out)
	}
	for name, vs := range seen {
		if len(vs) != 5 {
			t.Errorf("%s: %d results, want 5", name, len(vs))
		}
		for _, v := range vs {
			if v != vs[0] || v == 0 {
				t.Errorf("%s: instructions/op %v differ across runs", name, vs)
				break
			}
		}
	}
}

// TestBenchGate is the regression gate on real kprof test output: an
// unchanged second run passes; a change that adds 1 % of work to one
// benchmark fails the gate (exit 1) and names that benchmark only.
func TestBenchGate(t *testing.T) {
	kprofBin := buildKprof(t)
	src, _ := filepath.Abs("../../testdata/benchgate")
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "work.go", "work_test.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	run := func(name string) string {
		out, got := benchResults(t, kprofBin, dir, "--profile", filepath.Join(tmp, name+".profiles"))
		// A b.Loop benchmark's profile holds exactly its loop: 100
		// iterations (the default -benchtime) of instructions/op.
		p, err := profile.ParseFile(filepath.Join(tmp, name+".profiles", "BenchmarkLoop.kprof"))
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(got["BenchmarkLoop-2"] * 100); p.TotalInstructions != want || p.Meta.Mode != "exact" {
			t.Errorf("BenchmarkLoop's profile: %d instructions (%s mode), want 100 × %v = %d in exact mode",
				p.TotalInstructions, p.Meta.Mode, got["BenchmarkLoop-2"], want)
		}
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gate := func(old, new string) (string, int) {
		cmd := exec.Command(kprofBin, "gate", "--threshold", "0.5%",
			"--old-profiles", old+".profiles", "--new-profiles", new+".profiles", old, new)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	}
	base := run("base.txt")
	same := run("same.txt")
	if out, code := gate(base, same); code != 0 {
		t.Errorf("unchanged rerun: kprof gate exit %d, want 0\n%s", code, out)
	}
	// The per-benchmark profiles repeat byte for byte.
	files, _ := filepath.Glob(filepath.Join(base+".profiles", "*.kprof"))
	if len(files) != 8 {
		t.Errorf("%d benchmark profiles, want 8: %v", len(files), files)
	}
	for _, f := range files {
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(same+".profiles", filepath.Base(f)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the rerun's profile differs (%v)", filepath.Base(f), err)
		}
	}
	// BenchmarkLoop checksums 500 bytes twice per op: 5 more bytes is 1 %.
	test := filepath.Join(dir, "work_test.go")
	b, _ := os.ReadFile(test)
	changed := bytes.Replace(b, []byte("Checksum(data[:500], 2)"), []byte("Checksum(data[:505], 2)"), 1)
	if bytes.Equal(changed, b) {
		t.Fatal("work_test.go: BenchmarkLoop's Checksum call not found")
	}
	if err := os.WriteFile(test, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := gate(base, run("slower.txt"))
	if code != 1 {
		t.Fatalf("1%% more work in BenchmarkLoop: kprof gate exit %d, want 1\n%s", code, out)
	}
	var regressed []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "Benchmark") && strings.Contains(line, "+") {
			regressed = append(regressed, f[0])
		}
	}
	if len(regressed) != 1 || !strings.HasPrefix(regressed[0], "BenchmarkLoop") {
		t.Errorf("regressions named: %v, want BenchmarkLoop alone\n%s", regressed, out)
	}
	// The per-benchmark profiles (kprof test --profile) show where: 5
	// bytes, twice, at 9 instructions a byte, in Checksum.
	if !regexp.MustCompile(`\+90 +example\.com/benchgate\.BenchmarkLoop > example\.com/benchgate\.Checksum`).MatchString(out) {
		t.Errorf("the regression is not attributed to BenchmarkLoop > Checksum (+90 instructions/op):\n%s", out)
	}
}

// kprof test --help shows kprof's help (not go test's), which says what
// instructions/op counts and that the iteration count is fixed.
func TestTestHelp(t *testing.T) {
	kprofBin := buildKprof(t)
	for _, flag := range []string{"--help", "-h"} {
		out, err := runCmd("", nil, kprofBin, "test", flag)
		if err != nil {
			t.Fatalf("kprof test %s: %v\n%s", flag, err, out)
		}
		for _, want := range []string{"instructions/op", "fixed 100x", "--profile DIR", "-nondeterministic"} {
			if !strings.Contains(out, want) {
				t.Errorf("kprof test %s: no %q in\n%s", flag, want, out)
			}
		}
	}
}
