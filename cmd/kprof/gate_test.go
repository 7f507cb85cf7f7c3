package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

// gateSamples copies the hand-written kprof test -bench outputs of the
// reports package into dir.
func gateSamples(t *testing.T, dir string) {
	t.Helper()
	src := filepath.Join("..", "..", "gate", "testdata", "gate")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFileT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGateCLI runs kprof gate as CI would: on benchmark outputs in a
// module whose .kprof/gate.json holds the configuration, from a
// subdirectory of it.
func TestGateCLI(t *testing.T) {
	bin := buildKprof(t)
	root := t.TempDir()
	writeFileT(t, filepath.Join(root, "go.mod"), "module example.com/m\n")
	writeFileT(t, filepath.Join(root, ".kprof", "gate.json"),
		`{"threshold": "0.5%", "benchmarks": [{"match": "^BenchmarkBar$", "threshold": "20%"}]}`)
	dir := filepath.Join(root, "sub")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gateSamples(t, dir)
	writeFileT(t, filepath.Join(dir, "limit.json"), `{"benchmarks": [{"match": "Baz/size=", "max": 1500}]}`)
	writeFileT(t, filepath.Join(dir, "bad.json"), `{"threshold": "1%", "benchmarks": [{"match": "(", "max": 1}]}`)
	// BenchmarkBar gets 20% worse: beyond 0.5%, within its override.
	writeFileT(t, filepath.Join(dir, "bar.txt"), strings.ReplaceAll(mustRead(t, filepath.Join(dir, "old.txt")), "20000 instructions/op", "24000 instructions/op"))

	tests := []struct {
		name   string
		args   []string
		status int
		stdout []string // in order
		stderr string   // substring; "" wants none
	}{
		{"unchanged", []string{"old.txt", "same.txt"}, 0,
			[]string{"unit: instructions/op (exact)  threshold: 0.5%", "BenchmarkFoo          50000    50000     0.00%\n", "gate passed: 3 benchmarks within limits\n"}, ""},
		{"regression", []string{"old.txt", "regress.txt"}, 1,
			[]string{"BenchmarkFoo          50000    50500        +1.00%   REGRESSION: +1.00% beyond the 0.5% threshold\n",
				"BenchmarkBar          20000    18000        -10.00%  improved\n",
				"gate FAILED: 1 of 3 benchmarks regressed: BenchmarkFoo +1.00% beyond the 0.5% threshold\n"},
			"kprof: gate FAILED: 1 of 3 benchmarks regressed: BenchmarkFoo"},
		{"threshold flag", []string{"--threshold", "1%", "old.txt", "regress.txt"}, 0, []string{"+1.00%   within 1%\n"}, ""},
		{"flags after the files", []string{"old.txt", "regress.txt", "--threshold=2"}, 0, []string{"within 2%\n"}, ""},
		{"override", []string{"old.txt", "bar.txt"}, 0, []string{"BenchmarkBar          20000    24000    +20.00%  within 20%\n"}, ""},
		{"absolute limit", []string{"--config", "limit.json", "old.txt", "same.txt"}, 1,
			[]string{"threshold: 1%", "REGRESSION: 2000 instructions/op above the limit 1500\n"}, "kprof: gate FAILED: 1 of 3 benchmarks regressed: BenchmarkBaz/size=10 2000"},
		{"missing", []string{"old.txt", "missing.txt"}, 2,
			[]string{"ERROR: not in missing.txt", "ERROR: not in old.txt"}, "kprof: gate ERROR: 2 of 4 benchmarks could not be checked"},
		{"missing allowed", []string{"--allow-missing", "old.txt", "missing.txt"}, 0, []string{"removed: only in old.txt", "added: only in missing.txt"}, ""},
		{"runs differ", []string{"old.txt", "countdiffer.txt"}, 2,
			[]string{"ERROR: its 3 runs in countdiffer.txt differ (50000, 50000, 50012 instructions/op)"}, "kprof: gate ERROR: 1 of 3"},
		{"garbage", []string{"old.txt", "garbage.txt"}, 2, nil,
			"kprof: garbage.txt: no benchmark results (lines like \"BenchmarkFoo-2  1000  52310 instructions/op\"): is it the output of kprof test -bench?\n"},
		{"malformed", []string{"malformed.txt", "old.txt"}, 2, nil, "kprof: malformed.txt:5: parsing iteration count"},
		{"no such file", []string{"nope.txt", "old.txt"}, 2, nil, "kprof: nope.txt: no such file or directory\n"},
		{"directory", []string{"old.txt", "."}, 2, nil, "kprof: .: is a directory\n"},
		{"no instructions/op", []string{"old.txt", "plain.txt"}, 2, nil,
			"kprof: plain.txt: no benchmark reports instructions/op: is it the output of plain go test rather than kprof test -bench?"},
		{"ns/op", []string{"--unit", "ns/op", "--threshold", "50%", "plain.txt", "plain.txt"}, 0, []string{"unit: ns/op  threshold: 50%"}, ""},
		{"bad config", []string{"--config", "bad.json", "old.txt", "same.txt"}, 2, nil, "kprof: bad.json: benchmark rule 1: match \"(\": error parsing regexp"},
		{"no config", []string{"--config", "none.json", "old.txt", "same.txt"}, 2, nil, "kprof: none.json: no such file or directory\n"},
		{"bad threshold", []string{"--threshold", "-1%", "old.txt", "same.txt"}, 2, nil, "kprof: gate: --threshold: \"-1%\" is not a percentage such as 1% or 0.5%"},
		{"two outputs", []string{"--json", "--markdown", "old.txt", "same.txt"}, 2, nil, "kprof: gate: --json and --markdown both choose the output"},
		{"one file", []string{"old.txt"}, 2, nil, "kprof: gate: want two benchmark outputs, OLD and NEW; got 1"},
		{"markdown", []string{"--markdown", "old.txt", "regress.txt"}, 1,
			[]string{"### kprof gate: 1 regression\n", "| `BenchmarkFoo` | 50000 | 50500 | +1.00% | **REGRESSION: +1.00% beyond the 0.5% threshold** |\n",
				"| `BenchmarkBar` | 20000 | 18000 | -10.00% | improved |\n"}, "kprof: gate FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runKprof(t, bin, dir, append([]string{"gate"}, tt.args...)...)
			if r.status != tt.status {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.status, tt.status, r.stdout, r.stderr)
			}
			checkOrder(t, r.stdout, tt.stdout)
			if tt.stderr == "" && r.stderr != "" || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want %q", r.stderr, tt.stderr)
			}
			if tt.status != 0 && strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("the message is not one line: %q", r.stderr)
			}
		})
	}

	t.Run("json", func(t *testing.T) {
		r := runKprof(t, bin, dir, "gate", "--json", "old.txt", "regress.txt")
		var got struct {
			Verdict    string
			Benchmarks []struct {
				Name     string
				Old, New float64
				Status   string
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if r.status != 1 || got.Verdict != "fail" || len(got.Benchmarks) != 3 ||
			got.Benchmarks[0].Name != "BenchmarkFoo" || got.Benchmarks[0].New != 50500 || got.Benchmarks[0].Status != "regression" ||
			got.Benchmarks[1].Status != "improved" {
			t.Errorf("exit status %d, JSON:\n%s", r.status, r.stdout)
		}
	})

	t.Run("attribution", func(t *testing.T) {
		// 1000 ops in the old profile, 100 in the new one; m.parse does
		// 500 instructions more per op.
		oldDir, newDir := filepath.Join(dir, "oldprof"), filepath.Join(dir, "newprof")
		for _, d := range []string{oldDir, newDir} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		writeTestProfile(t, oldDir, "BenchmarkFoo.kprof", profile.ModeExact, "m.BenchmarkFoo;m.work 30000000", "m.BenchmarkFoo;m.parse 20000000")
		writeTestProfile(t, newDir, "BenchmarkFoo.kprof", profile.ModeExact, "m.BenchmarkFoo;m.work 3000000", "m.BenchmarkFoo;m.parse 2050000")
		r := runKprof(t, bin, dir, "gate", "--old-profiles", "oldprof", "--new-profiles", "newprof", "old.txt", "regress.txt")
		if r.status != 1 {
			t.Errorf("exit status %d\n%s%s", r.status, r.stdout, r.stderr)
		}
		checkOrder(t, r.stdout, []string{
			"REGRESSION",
			"\nBenchmarkFoo:\ncalling contexts whose instructions/op changed most:\n",
			"  20000  20500   +500  m.BenchmarkFoo > m.parse\n",
			"gate FAILED",
		})
		if strings.Contains(r.stdout, "m.work") {
			t.Errorf("m.work executes the same per op, but is listed:\n%s", r.stdout)
		}
		// --top 0 lists none.
		r = runKprof(t, bin, dir, "gate", "--top", "0", "--old-profiles", "oldprof", "--new-profiles", "newprof", "old.txt", "regress.txt")
		if r.status != 1 || strings.Contains(r.stdout, "calling contexts") {
			t.Errorf("--top 0: exit status %d\n%s", r.status, r.stdout)
		}
	})

	t.Run("baselines", func(t *testing.T) { testGateBaselines(t, bin, root, dir) })
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testGateBaselines saves and uses baselines in the module's
// .kprof/baselines, and never replaces one unasked.
func testGateBaselines(t *testing.T, bin, root, dir string) {
	store := filepath.Join(root, ".kprof", "baselines")
	saved := func(name string) string { return mustRead(t, filepath.Join(store, name, "benchmarks.txt")) }
	steps := []struct {
		name   string
		args   []string
		status int
		stdout []string
		stderr string
	}{
		{"save", []string{"--save-baseline", "main", "old.txt"}, 0, nil,
			`kprof: saved baseline "main" (3 benchmarks from old.txt) in ` + store + "\n"},
		{"no replacing unasked", []string{"--save-baseline", "main", "regress.txt"}, 2, nil,
			`kprof: baseline "main" already exists in ` + store + ": --force replaces it\n"},
		{"compare", []string{"--baseline", "main", "regress.txt"}, 1,
			[]string{"benchmark             baseline main  regress.txt  delta\n", "REGRESSION"}, "kprof: gate FAILED"},
		{"unknown", []string{"--baseline", "release", "regress.txt"}, 2, nil,
			`kprof: no baseline "release" in ` + store + " (saved: main): save one with kprof gate --save-baseline release FILE\n"},
		{"bad name", []string{"--save-baseline", "../x", "old.txt"}, 2, nil, `kprof: gate: baseline name "../x": use letters`},
		{"garbage is not saved", []string{"--save-baseline", "junk", "garbage.txt"}, 2, nil, "kprof: garbage.txt: no benchmark results"},
		{"differing runs are not saved", []string{"--save-baseline", "junk", "countdiffer.txt"}, 2, nil,
			`kprof: countdiffer.txt: not saved as baseline "junk": BenchmarkFoo: its 3 runs in countdiffer.txt differ (50000, 50000, 50012 instructions/op)`},
		{"plain output is not saved", []string{"--save-baseline", "junk", "plain.txt"}, 2, nil,
			`kprof: plain.txt: not saved as baseline "junk": plain.txt: no benchmark reports instructions/op`},
		{"baseline and two files", []string{"--baseline", "main", "old.txt", "same.txt"}, 2, nil, "kprof: gate: with --baseline, give one file"},
		{"force without save", []string{"--force", "old.txt", "same.txt"}, 2, nil, "kprof: gate: --force without --save-baseline"},
		// Compare and save: a ratchet that moves the baseline forward.
		{"compare and replace", []string{"--baseline", "main", "--save-baseline", "main", "--force", "regress.txt"}, 1,
			[]string{"REGRESSION"}, `kprof: saved baseline "main" (3 benchmarks from regress.txt)`},
		{"compare with the new one", []string{"--baseline", "main", "regress.txt"}, 0, []string{"gate passed"}, ""},
		{"save with profiles", []string{"--save-baseline", "prof", "--new-profiles", "oldprof", "old.txt"}, 0, nil,
			`kprof: saved baseline "prof" (3 benchmarks and their profiles from old.txt)`},
		{"profiles from the baseline", []string{"--baseline", "prof", "--new-profiles", "newprof", "regress.txt"}, 1,
			[]string{"calling contexts whose instructions/op changed most:\n", "+500  m.BenchmarkFoo > m.parse\n"}, "kprof: gate FAILED"},
		{"no profiles", []string{"--save-baseline", "empty", "--new-profiles", ".", "old.txt"}, 2, nil, "kprof: baseline \"empty\": . has no profiles (*.kprof)"},
		{"other directory", []string{"--baseline-dir", "bl", "--save-baseline", "main", "same.txt"}, 0, nil, `kprof: saved baseline "main" (3 benchmarks from same.txt) in bl`},
	}
	for _, s := range steps {
		r := runKprof(t, bin, dir, append([]string{"gate"}, s.args...)...)
		if r.status != s.status {
			t.Errorf("%s: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", s.name, r.status, s.status, r.stdout, r.stderr)
		}
		checkOrder(t, r.stdout, s.stdout)
		if !strings.Contains(r.stderr, s.stderr) || s.stderr == "" && r.stderr != "" {
			t.Errorf("%s: stderr %q, want %q", s.name, r.stderr, s.stderr)
		}
		switch s.name {
		case "save", "no replacing unasked":
			if saved("main") != mustRead(t, filepath.Join(dir, "old.txt")) {
				t.Errorf("%s: baseline main is not old.txt", s.name)
			}
		case "compare and replace":
			if saved("main") != mustRead(t, filepath.Join(dir, "regress.txt")) {
				t.Errorf("%s: baseline main is not regress.txt", s.name)
			}
		}
	}
	entries, _ := os.ReadDir(store)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"main", "prof"}; !slices.Equal(names, want) {
		t.Errorf("baselines directory holds %q, want %q (no temporary or failed ones)", names, want)
	}
	if _, err := os.Stat(filepath.Join(store, "prof", "profiles", "BenchmarkFoo.kprof")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bl", "main", "benchmarks.txt")); err != nil {
		t.Error(err)
	}
}

func TestModuleRoot(t *testing.T) {
	root := t.TempDir()
	writeFileT(t, filepath.Join(root, "go.mod"), "module m\n")
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := moduleRoot(deep); got != root {
		t.Errorf("moduleRoot(%s) = %s, want %s", deep, got, root)
	}
	// No go.mod up to / (in a fresh temporary directory, assuming / has
	// none): the directory itself.
	other := t.TempDir()
	if _, err := os.Stat("/go.mod"); err == nil {
		t.Skip("/go.mod exists")
	}
	if got := moduleRoot(other); got != other {
		t.Errorf("moduleRoot(%s) = %s", other, got)
	}
}
