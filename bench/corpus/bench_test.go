package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// cannedBench is kprof test -bench output over two packages: one
// benchmark identical in all runs, one that differs, one without
// instructions/op, one that ran only twice.
const cannedBench = `goos: linux
goarch: amd64
pkg: example.com/a
cpu: Test CPU
BenchmarkSame-2   	      20	       512.0 ns/op	      3188 instructions/op
BenchmarkSame-2   	      20	       498.0 ns/op	      3188 instructions/op
BenchmarkSame-2   	      20	       530.0 ns/op	      3188 instructions/op
BenchmarkParse/small/fastjson-2         	      20	       100.0 ns/op	      3188 instructions/op
BenchmarkParse/small/fastjson-2         	      20	       101.0 ns/op	      3188 instructions/op
BenchmarkParse/small/fastjson-2         	      20	       102.0 ns/op	      3191 instructions/op
Unit instructions/op assume=exact
PASS
ok  	example.com/a	1.234s
pkg: example.com/b
BenchmarkSame-2   	      20	       10.0 ns/op	       7 instructions/op
BenchmarkSame-2   	      20	       10.0 ns/op	       7 instructions/op
BenchmarkSame-2   	      20	       10.0 ns/op	       7 instructions/op
BenchmarkPlain-2  	      20	       10.0 ns/op
BenchmarkPlain-2  	      20	       10.0 ns/op
BenchmarkPlain-2  	      20	       10.0 ns/op
BenchmarkCut-2    	      20	       10.0 ns/op	       9 instructions/op
BenchmarkCut-2    	      20	       10.0 ns/op	       9 instructions/op
*** Test killed: ran too long (3m36s).
FAIL	example.com/b	216.0s
`

func TestParseBench(t *testing.T) {
	stats, err := parseBench([]byte(cannedBench))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		key, verdict string
		values       []float64
	}
	wants := []want{
		{"example.com/a BenchmarkSame-2", benchIdentical, []float64{3188, 3188, 3188}},
		{"example.com/a BenchmarkParse/small/fastjson-2", benchDiffers, []float64{3188, 3188, 3191}},
		{"example.com/b BenchmarkSame-2", benchIdentical, []float64{7, 7, 7}},
		{"example.com/b BenchmarkPlain-2", benchNoMetric, nil},
		{"example.com/b BenchmarkCut-2", benchIncomplete, []float64{9, 9}},
	}
	if len(stats) != len(wants) {
		t.Fatalf("%d benchmarks, want %d", len(stats), len(wants))
	}
	for i, w := range wants {
		s := stats[i]
		if s.Key() != w.key || s.Lines != 3 && w.verdict != benchIncomplete || !slices.Equal(s.Values, w.values) {
			t.Errorf("benchmark %d = %s, %d lines, %v; want %s, 3 lines, %v", i, s.Key(), s.Lines, s.Values, w.key, w.values)
		}
		if v := s.Verdict(3, 1); v != w.verdict {
			t.Errorf("%s: verdict %q, want %q", s.Key(), v, w.verdict)
		}
	}
	// One value, one run: identical by itself.
	if v := (&BenchStat{Lines: 1, Values: []float64{1}}).Verdict(1, 1); v != benchIdentical {
		t.Errorf("single run: %q", v)
	}
}

// Two processes of two -count runs: a benchmark whose first run differs
// in each process alike is told apart from one whose processes differ.
func TestParseBenchProcesses(t *testing.T) {
	proc := func(first, second string) []byte {
		return []byte("pkg: example.com/a\n" +
			"BenchmarkSame-2 20 5.0 ns/op 7 instructions/op\n" +
			"BenchmarkSame-2 20 5.0 ns/op 7 instructions/op\n" +
			"BenchmarkCache-2 20 5.0 ns/op 90 instructions/op\n" +
			"BenchmarkCache-2 20 5.0 ns/op 80 instructions/op\n" +
			"BenchmarkRace-2 20 5.0 ns/op " + first + " instructions/op\n" +
			"BenchmarkRace-2 20 5.0 ns/op " + second + " instructions/op\n")
	}
	stats, err := parseBench(proc("3", "3"), proc("3", "4"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"example.com/a BenchmarkSame-2":  benchIdentical,
		"example.com/a BenchmarkCache-2": benchWithin,
		"example.com/a BenchmarkRace-2":  benchDiffers,
	}
	if len(stats) != len(want) {
		t.Fatalf("%d benchmarks, want %d", len(stats), len(want))
	}
	for _, s := range stats {
		if v := s.Verdict(2, 2); v != want[s.Key()] || s.Lines != 4 {
			t.Errorf("%s: %q over %d lines, want %q over 4", s.Key(), v, s.Lines, want[s.Key()])
		}
	}
	if v := stats[1].Verdict(2, 3); v != benchIncomplete {
		t.Errorf("two processes of three: %q, want %q", v, benchIncomplete)
	}
}

func TestBenchArgs(t *testing.T) {
	m := Module{Path: "example.com/m", Pkgs: []string{".", "./x"},
		Flags: []string{"-skip", "^TestX$", "-vet=off"}, BenchSkip: "^BenchmarkSlow$"}
	got := strings.Join(benchArgs(m, "20x", 5, 3*time.Minute), " ")
	want := "test -run ^$ -bench . -benchtime=20x -count=5 -timeout 3m0s -vet=off -skip ^BenchmarkSlow$ . ./x"
	if got != want {
		t.Errorf("benchArgs = %q\nwant %q", got, want)
	}
}

func TestBenchReport(t *testing.T) {
	stats, err := parseBench([]byte(cannedBench))
	if err != nil {
		t.Fatal(err)
	}
	rep := &BenchReport{
		Header: Header{
			Date: time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC), Nproc: 2, GoVersion: "go version go1.26.8 linux/amd64",
			Command: "go run ./bench/corpus -bench", Commit: "abc1234", Total: 4,
		},
		Benchtime: "20x", Count: 3, Procs: 1, Timeout: 4 * time.Minute,
		Results: []BenchResult{
			{Module: Module{Path: "example.com/a", Version: "v1.0.0", Pkgs: []string{"./..."}}, Status: statusTimeout, Wall: time.Second, Stats: stats},
			{Module: Module{Path: "example.com/c", Version: "v1.0.0", Pkgs: []string{"."}}, Status: statusPass},
			{Module: Module{Path: "example.com/d", Version: "v1.0.0", Pkgs: []string{"."}}, Setup: "go mod download: no"},
		},
	}
	var b strings.Builder
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"**PARTIAL: 3 of 4 modules ran.**",
		"- Date: 2026-11-26 02:00 UTC",
		"- kprof: commit abc1234",
		"**2 of 5 benchmarks identical across 3 runs.**",
		"Without instructions/op: 1; with fewer than 3 lines: 1; modules without benchmarks: 1.",
		"| example.com/a@v1.0.0 | `./...` | **timeout** | 1.0 s | 5 | 2 | 0 | 1 | 1 | 1 |",
		"| example.com/c@v1.0.0 | `.` | pass, no benchmarks |",
		"## Benchmarks: differs",
		"- `example.com/a BenchmarkParse/small/fastjson-2` (example.com/a@v1.0.0): 3 lines; instructions/op 3188, 3188, 3191",
		"- `example.com/b BenchmarkCut-2` (example.com/a@v1.0.0): 2 lines; instructions/op 9, 9",
		"### example.com/d@v1.0.0: setup",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}
