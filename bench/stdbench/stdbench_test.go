package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kprof/kprof/toolchain"
)

// cannedOutput is go test -bench output of one run: a header, the
// benchmarks with ns/op as given (and instructions/op for kprof), and a
// log line, as the test binaries print them.
func cannedOutput(pkg string, kprof bool, nsPerOp map[string]float64, names []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: %s\ncpu: Some CPU\n", pkg)
	if kprof {
		b.WriteString("Unit instructions/op assume=exact\n")
	}
	for _, n := range names {
		fmt.Fprintf(&b, "Benchmark%s-2   \t    1000\t   %g ns/op\t  12.5 MB/s", n, nsPerOp[n])
		if kprof {
			b.WriteString("\t  42.00 instructions/op")
		}
		b.WriteString("\n")
	}
	b.WriteString("    some_test.go:12: a log line\nPASS\n")
	return b.Bytes()
}

func TestParseBench(t *testing.T) {
	out := cannedOutput("strings", true, map[string]float64{"Index": 8.5, "Repeat/5x1": 1200}, []string{"Index", "Repeat/5x1"})
	ss, err := parseBench("strings", "exact", 2, out)
	if err != nil {
		t.Fatal(err)
	}
	want := []sample{
		{Pkg: "strings", Bench: "Index", Variant: "exact", Round: 2, NsPerOp: 8.5, Iters: 1000, InstrPerOp: 42},
		{Pkg: "strings", Bench: "Repeat/5x1", Variant: "exact", Round: 2, NsPerOp: 1200, Iters: 1000, InstrPerOp: 42},
	}
	if fmt.Sprint(ss) != fmt.Sprint(want) {
		t.Errorf("parseBench:\n got %v\nwant %v", ss, want)
	}
}

func TestQuantile(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{3}, 0.9, 3},
		{[]float64{1, 2, 3}, 0.5, 2},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0.9, 10},
		{[]float64{0, 10}, 0.9, 9},
	} {
		if got := quantile(c.xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
	}
}

// cannedReport builds a report from canned runs of two packages in two
// rounds: plain ns/op 100 (round 1) and 110 (round 2) for every
// benchmark, each mode a fixed multiple of plain per benchmark.
func cannedReport(t *testing.T) *report {
	t.Helper()
	modes := []string{"off", "sample", "exact"}
	factors := map[string]map[string]float64{ // benchmark → mode → ratio
		"A":     {"off": 1, "sample": 1.5, "exact": 2},
		"B/x=1": {"off": 2, "sample": 1.5, "exact": 8},
		"C":     {"off": 4, "sample": 1.5, "exact": 4},
	}
	pkgs := map[string][]string{"p/one": {"A", "B/x=1"}, "two": {"C"}}
	var samples []sample
	var runs []run
	for round := 1; round <= 2; round++ {
		base := map[int]float64{1: 100, 2: 110}[round]
		for _, p := range []string{"p/one", "two"} {
			for _, v := range append([]string{plain}, modes...) {
				ns := map[string]float64{}
				for _, b := range pkgs[p] {
					ns[b] = base
					if v != plain {
						ns[b] = base * factors[b][v]
					}
				}
				names := pkgs[p]
				if p == "two" && v == "exact" && round == 2 {
					names = append(names, "OnlyExact") // incomplete: no other variant has it
				}
				ss, err := parseBench(p, v, round, cannedOutput(p, v != plain, ns, names))
				if err != nil {
					t.Fatal(err)
				}
				samples = append(samples, ss...)
				runs = append(runs, run{Pkg: p, Variant: v, Round: round, Seconds: 1, MaxRSSKB: int64(1024 * (len(v) + round)), Results: len(ss)})
			}
		}
	}
	runs = append(runs, run{Pkg: "two", Variant: "exact", Round: 2, Err: "exit status 1: panic: boom"})
	rep := buildReport([]string{"p/one", "two"}, modes, samples, runs)
	rep.Header = map[string]string{"date": "2026-01-02 03:04 UTC", "command": "`go run ./bench/stdbench`"}
	return rep
}

func TestBuildReport(t *testing.T) {
	rep := cannedReport(t)
	if len(rep.Benchmarks) != 3 {
		t.Fatalf("%d benchmarks, want 3", len(rep.Benchmarks))
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// Medians over the two rounds: plain 105, each mode its factor × 105.
	near("A plain median", rep.Benchmarks[0].NsPerOp[plain], 105)
	near("B exact ratio", rep.Benchmarks[1].Ratio["exact"], 8)
	near("A plain spread", rep.Benchmarks[0].Spread, 10.0/105)
	// Overall, off: ratios 1, 2, 4.
	off := rep.Overall["off"]
	near("off geomean", off.GeoMean, 2)
	near("off p50", off.P50, 2)
	near("off p90", off.P90, 3.6)
	near("off max", off.Max, 4)
	near("exact geomean", rep.Overall["exact"].GeoMean, 4) // (2·8·4)^(1/3)
	near("sample geomean", rep.Overall["sample"].GeoMean, 1.5)
	near("off geomean, fastest rounds", rep.OverallMin["off"].GeoMean, 2)
	near("B exact ratio, fastest rounds", rep.Benchmarks[1].MinRatio["exact"], 8)
	// Per package.
	if len(rep.Packages) != 2 || rep.Packages[0].Pkg != "p/one" || rep.Packages[0].Benchmark != 2 {
		t.Fatalf("packages: %+v", rep.Packages)
	}
	near("p/one exact geomean", rep.Packages[0].Modes["exact"].GeoMean, 4) // √(2·8)
	near("two off geomean", rep.Packages[1].Modes["off"].GeoMean, 4)
	// Worst: by ratio, worst first.
	var worst []string
	for _, b := range rep.Worst["exact"] {
		worst = append(worst, b.Bench)
	}
	if got := strings.Join(worst, " "); got != "B/x=1 C A" {
		t.Errorf("worst exact: %s, want B/x=1 C A", got)
	}
	// Peak memory: the largest of the rounds (variant length + round MiB).
	if got := rep.Packages[0].MaxRSSKB["sample"]; got != 1024*(6+2) {
		t.Errorf("p/one sample max RSS %d KB, want %d", got, 1024*8)
	}
	if got := rep.MaxRSSKB[plain]; got != 1024*(5+2) {
		t.Errorf("overall plain max RSS %d KB, want %d", got, 1024*7)
	}
	if len(rep.Incomplete) != 1 || rep.Incomplete[0] != "two OnlyExact" {
		t.Errorf("incomplete: %v", rep.Incomplete)
	}
	if len(rep.Failures) != 1 {
		t.Errorf("failures: %v", rep.Failures)
	}
}

// checkShape checks a markdown report's sections and tables: the header
// lines, one overall row per mode, one row per package, a worst table
// per mode.
func checkShape(t *testing.T, md string, modes []string, pkgs []string, partial bool) {
	t.Helper()
	if got := strings.HasPrefix(md, "# kprof on the standard library's benchmarks (PARTIAL)"); got != partial {
		t.Errorf("title partial = %v, want %v:\n%s", got, partial, firstLines([]byte(md), 3))
	}
	for _, k := range []string{"date", "command"} {
		if !strings.Contains(md, "\n- "+k+": ") {
			t.Errorf("no %s line in the header", k)
		}
	}
	section := func(title string) string {
		i := strings.Index(md, "\n## "+title)
		if i < 0 {
			t.Errorf("no section %q", title)
			return ""
		}
		s := md[i+1:]
		if j := strings.Index(s[3:], "\n## "); j >= 0 {
			s = s[:j+3]
		}
		return s
	}
	rows := func(s string) []string {
		var rs []string
		for l := range strings.SplitSeq(s, "\n") {
			if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| ---") && !strings.HasPrefix(l, "| mode") &&
				!strings.HasPrefix(l, "| package") && !strings.HasPrefix(l, "| peak") {
				rs = append(rs, l)
			}
		}
		return rs
	}
	ratio := regexp.MustCompile(`\*\*[0-9]+\.[0-9]{2}×\*\*`)
	overall := rows(section("Overall"))
	// The modes, again from the fastest rounds if there were several, then
	// the two memory rows.
	if len(overall) != len(modes)+2 && len(overall) != 2*len(modes)+2 {
		t.Errorf("overall: %d rows, want %d or %d:\n%s", len(overall), len(modes)+2, 2*len(modes)+2, strings.Join(overall, "\n"))
	}
	for i, m := range modes {
		if i < len(overall) && (!strings.HasPrefix(overall[i], "| "+modeName(m)+" |") || !ratio.MatchString(overall[i])) {
			t.Errorf("overall row %d: %q, want mode %s and a ratio", i, overall[i], m)
		}
	}
	per := rows(section("Per package"))
	if len(per) != len(pkgs) {
		t.Errorf("per package: %d rows, want %d", len(per), len(pkgs))
	}
	for i, p := range pkgs {
		if i < len(per) && !strings.HasPrefix(per[i], "| "+p+" |") {
			t.Errorf("per package row %d: %q, want %s", i, per[i], p)
		}
		if i < len(per) && strings.Count(per[i], "|") != 2+2*len(modes)+2 {
			t.Errorf("per package row %q: %d cells, want %d", per[i], strings.Count(per[i], "|")-1, 2+2*len(modes)+1)
		}
	}
	for _, m := range modes {
		w := rows(section("Worst"))
		_ = w
		if !strings.Contains(md, ", "+modeName(m)+"\n") {
			t.Errorf("no worst table for %s", m)
		}
	}
}

func TestMarkdownShape(t *testing.T) {
	rep := cannedReport(t)
	var b bytes.Buffer
	if err := rep.writeMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	checkShape(t, md, rep.Modes, []string{"p/one", "two"}, false)
	for _, want := range []string{
		"| off (No Prof.) | **2.00×** | 2.00× | 3.60× | 4.00× |",
		"| exact | **4.00×** |",
		"| all packages | 7 MiB | 5 MiB | 8 MiB | 7 MiB |",
		"| geo. mean over packages, ratio to plain | 1.00× | 0.71× | 1.14× | 1.00× |",
		"| p/one | 2 | 1.41× | 1.90× | 1.50× | 1.50× | 4.00× | 7.40× | 7 MiB / 5 MiB / 8 MiB / 7 MiB |",
		"| p/one | B/x=1 | 105 ns | 840 ns | **8.00×** | 10% |",
		"## Incomplete (1 benchmarks",
		"- two OnlyExact",
		"- two, exact, round 2: exit status 1: panic: boom",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	rep.Partial = "stopped"
	b.Reset()
	rep.writeMarkdown(&b)
	checkShape(t, b.String(), rep.Modes, []string{"p/one", "two"}, true)

	// The JSON output carries the same figures.
	b.Reset()
	if err := jsonEncoder(&b).Encode(&jsonReport{rep, nil}); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Overall map[string]summary `json:"overall"`
		Worst   map[string][]benchRatio
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Overall["off"].GeoMean != 2 || len(back.Worst["exact"]) != 3 {
		t.Errorf("JSON: %+v", back)
	}
}

// TestQuick runs the -quick slice end to end (a minute or two with a warm
// build cache; the first instrumented build takes several) and checks the
// report's shape, not its timings.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kprof and instrumented test binaries; run without -short")
	}
	dir := t.TempDir()
	kprof := filepath.Join(dir, "kprof")
	if err := toolchain.BuildKprof("../..", kprof); err != nil {
		t.Fatal(err)
	}
	md, js := filepath.Join(dir, "quick.md"), filepath.Join(dir, "quick.json")
	o := options{quick: true, rounds: 1, benchtime: "20ms", modes: []string{"off", "sample", "exact"},
		kprof: kprof, out: md, jsonOut: js, timeout: 5 * time.Minute}
	start := time.Now()
	if err := stdbench(context.Background(), o, []string{"stdbench", "-quick"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("quick slice: %v", time.Since(start).Round(time.Second))
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, string(b), o.modes, []string{"strings", "hash/fnv"}, false)
	if strings.Contains(string(b), "## Failed runs") || strings.Contains(string(b), "## Incomplete") {
		t.Errorf("quick slice had failures:\n%s", b)
	}
	jb, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Benchmarks []benchRatio `json:"benchmarks"`
		Samples    []sample     `json:"samples"`
	}
	if err := json.Unmarshal(jb, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Benchmarks) < 5 || len(back.Samples) != 4*len(back.Benchmarks) {
		t.Errorf("JSON: %d benchmarks, %d samples; want at least 5 and 4 samples each", len(back.Benchmarks), len(back.Samples))
	}
	for _, s := range back.Samples {
		if (s.Variant == plain) != (s.InstrPerOp == 0) {
			t.Errorf("sample %+v: instructions/op only and always under kprof", s)
		}
	}
}

// TestRerender checks that -from recomputes the same report from the
// JSON output.
func TestRerender(t *testing.T) {
	rep := cannedReport(t)
	rep.Skipped = []skipNote{{Pkg: "two", What: "-bench `.`", Why: "because"}}
	var samples []sample
	for _, p := range []string{"p/one", "two"} {
		for _, v := range []string{plain, "off", "sample", "exact"} {
			ss, _ := parseBench(p, v, 1, cannedOutput(p, v != plain, map[string]float64{"A": 10, "C": 20}, []string{"A", "C"}))
			samples = append(samples, ss...)
		}
	}
	rep = buildReport([]string{"p/one", "two"}, rep.Modes, samples, rep.Runs)
	rep.Header = map[string]string{"date": "then"}
	rep.Skipped = []skipNote{{Pkg: "two", What: "-bench `.`", Why: "because"}}
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	if err := writeReports(rep, samples, options{out: filepath.Join(dir, "a.md"), jsonOut: js}); err != nil {
		t.Fatal(err)
	}
	if err := rerender(js, options{out: filepath.Join(dir, "b.md")}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a.md"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.md"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("rerendered report differs:\n%s\n---\n%s", a, b)
	}
}

func TestCompleteRounds(t *testing.T) {
	var samples []sample
	var runs []run
	add := func(pkg string, round int, variants ...string) {
		for _, v := range variants {
			samples = append(samples, sample{Pkg: pkg, Bench: "X", Variant: v, Round: round, NsPerOp: 1})
			runs = append(runs, run{Pkg: pkg, Variant: v, Round: round})
		}
	}
	all := []string{plain, "off", "sample", "exact"}
	add("a", 1, all...)
	add("b", 1, all...)
	add("a", 2, all...)
	add("b", 2, plain, "off") // cut short
	ss, rs, n := completeRounds(samples, runs, 4, 1)
	if len(ss) != 12 || len(rs) != 12 || n != 1 {
		t.Errorf("kept %d samples, %d runs, %d packages of round 2; want 12, 12, 1", len(ss), len(rs), n)
	}
	for _, s := range ss {
		if s.Pkg == "b" && s.Round == 2 {
			t.Errorf("kept %+v", s)
		}
	}
}
