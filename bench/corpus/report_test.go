package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeReport is a tiny run: one module passing everywhere, one failing
// under kprof, one whose setup failed.
func fakeReport() *Report {
	pass := func(s float64, rss int64) *Run {
		return &Run{Status: statusPass, Wall: time.Duration(s * float64(time.Second)), TestRSS: rss, TreeRSS: 2 * rss}
	}
	return &Report{
		Header: Header{
			Date:      time.Date(2026, 11, 26, 1, 2, 0, 0, time.UTC),
			Nproc:     2,
			GoVersion: "go version go1.26.8 linux/amd64",
			Command:   "go run ./bench/corpus -modules a,b,c",
			Commit:    "abc1234",
			Total:     4,
		},
		Modes: []string{"off", "sample", "exact"},
		Results: []Result{
			{
				Module: Module{Path: "example.com/a", Version: "v1.0.0", Pkgs: []string{"./..."}},
				GoLine: "1.12",
				Build:  map[string]time.Duration{"plain": time.Second, "kprof": 3 * time.Second},
				Runs: map[string]*Run{
					"plain": pass(2, 10*1024), "off": pass(3, 12*1024),
					"sample": pass(8, 200*1024), "exact": pass(20, 15*1024),
				},
			},
			{
				Module: Module{Path: "example.com/b", Version: "v0.1.0", Pkgs: []string{"."}, Flags: []string{"-skip", "^TestX$"}},
				GoLine: noGoMod,
				Build:  map[string]time.Duration{"plain": time.Second, "kprof": 3 * time.Second},
				Runs: map[string]*Run{
					"plain":  pass(1, 5*1024),
					"off":    {Status: statusBuild, Errors: []string{"# example.com/b", "x.go:1:1: oops"}},
					"sample": {Status: statusBuild, Errors: []string{"# example.com/b", "x.go:1:1: oops"}},
					"exact":  {Status: statusTimeout, Errors: []string{"panic: test timed out"}},
				},
			},
			{
				Module: Module{Path: "example.com/c", Version: "v2.0.0", Pkgs: []string{"."}},
				Setup:  "go mod download: not found",
			},
		},
	}
}

// table is the rows of the first Markdown table after heading (or the
// first table if heading is ""), each split into trimmed cells.
func table(t *testing.T, md, heading string) [][]string {
	t.Helper()
	if heading != "" {
		_, after, ok := strings.Cut(md, heading+"\n")
		if !ok {
			t.Fatalf("no %q in report", heading)
		}
		md = after
	}
	var rows [][]string
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

func TestReportShape(t *testing.T) {
	var b bytes.Buffer
	if err := fakeReport().Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"**PARTIAL: 3 of 4 modules ran.**",
		"- Date: 2026-11-26 01:02 UTC",
		"- Machine: 2 CPUs (nproc), go version go1.26.8 linux/amd64",
		"- Command: `go run ./bench/corpus -modules a,b,c`",
		"- kprof: commit abc1234",
		"- plain go test: 2 of 3 modules pass",
		"- off: passes 1 of 2 (50%); time ratio median 1.50×, worst 1.50× (example.com/a@v1.0.0)",
		"- exact: passes 1 of 2 (50%); time ratio median 10.00×, worst 10.00× (example.com/a@v1.0.0)",
		"- example.com/a@v1.0.0: RSS 200 MB vs 10 MB plain, time 4.00×",
		"### example.com/b@v0.1.0: off, build failed",
		"### example.com/b@v0.1.0: exact, timeout",
		"### example.com/c@v2.0.0: setup",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "example.com/b@v0.1.0: plain") {
		t.Errorf("report lists a failure for a plain run that passed")
	}

	rows := table(t, md, "")
	wantHeader := []string{"module", "go.mod", "packages", "plain", "off", "sample", "exact",
		"RSS plain", "RSS off", "RSS sample", "RSS exact"}
	if !slices.Equal(rows[0], wantHeader) {
		t.Fatalf("header = %q, want %q", rows[0], wantHeader)
	}
	if len(rows) != 2+3 {
		t.Fatalf("results table has %d rows, want header, separator and 3 modules", len(rows))
	}
	for _, r := range rows[1:] {
		if len(r) != len(wantHeader) {
			t.Errorf("row %q has %d cells, want %d", r, len(r), len(wantHeader))
		}
	}
	wantA := []string{"example.com/a@v1.0.0", "1.12", "`./...`", "2.0 s pass", "1.50× pass", "4.00× pass", "10.00× pass",
		"10 MB", "12 MB", "200 MB", "15 MB"}
	if !slices.Equal(rows[2], wantA) {
		t.Errorf("row a = %q, want %q", rows[2], wantA)
	}
	if got := rows[3][2]; got != "`.` `-skip ^TestX$`" {
		t.Errorf("packages of b = %q", got)
	}
	if got := rows[3][4]; got != "**build failed**" {
		t.Errorf("off of b = %q, want **build failed**", got)
	}

	builds := table(t, md, "## Builds")
	if len(builds) != 2+3 {
		t.Errorf("builds table has %d rows, want 5", len(builds))
	}
	if got := builds[2][2:]; !slices.Equal(got, []string{"1.0 s", "3.0 s", "20 MB", "400 MB"}) {
		t.Errorf("builds row a = %q", got)
	}
}

func TestFailureLines(t *testing.T) {
	out := []byte(`=== RUN   TestA
--- PASS: TestA (0.00s)
--- FAIL: TestB (0.00s)
    b_test.go:9: got 1, want 2

FAIL
FAIL	example.com/a	0.01s
`)
	want := []string{"--- FAIL: TestB (0.00s)", "    b_test.go:9: got 1, want 2", "FAIL"}
	if got := failureLines(out, 3); !slices.Equal(got, want) {
		t.Errorf("failureLines = %q, want %q", got, want)
	}
	// No line looks like a failure: the last lines.
	if got := failureLines([]byte("a\nb\nc\n"), 2); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("failureLines = %q, want the last 2 lines", got)
	}
}

func TestGoMod(t *testing.T) {
	for _, c := range []struct{ mod, want string }{
		{"module a\n\ngo 1.12\n", "1.12"},
		{"module a\n\ngo 1.21.0\n\ntoolchain go1.22.1\n", "1.21.0"},
		{"module a\n\nrequire b v1.0.0\n", noGoLine},
	} {
		if got := goDirective(c.mod); got != c.want {
			t.Errorf("goDirective(%q) = %q, want %q", c.mod, got, c.want)
		}
	}
	got := dropGoLines("module a\n\ngo 1.26.8\n\ntoolchain go1.26.8\n\nrequire b v1.0.0\n")
	if want := "module a\n\n\n\nrequire b v1.0.0\n"; got != want {
		t.Errorf("dropGoLines = %q, want %q", got, want)
	}
}

func TestMaxKiB(t *testing.T) {
	if got := maxKiB("120\n4000\n\n37\n"); got != 4000 {
		t.Errorf("maxKiB = %d, want 4000", got)
	}
	if got := maxKiB(""); got != 0 {
		t.Errorf("maxKiB of nothing = %d, want 0", got)
	}
}

func TestSelect(t *testing.T) {
	ms, err := selectModules("", true)
	if err != nil || len(ms) != 5 {
		t.Fatalf("quick subset: %d modules, %v; want 5", len(ms), err)
	}
	if _, err := selectModules("example.com/nope", false); err == nil {
		t.Errorf("an unknown module was accepted")
	}
	if modes, err := parseModes("exact, off,exact"); err != nil || !slices.Equal(modes, []string{"exact", "off"}) {
		t.Errorf("parseModes = %q, %v", modes, err)
	}
	if _, err := parseModes("fast"); err == nil {
		t.Errorf("an unknown mode was accepted")
	}
	seen := map[string]bool{}
	for _, m := range corpus {
		if seen[m.Path] {
			t.Errorf("%s twice in the corpus", m.Path)
		}
		seen[m.Path] = true
		if m.Version == "" || len(m.Pkgs) == 0 || m.Traits == "" {
			t.Errorf("%s: version, packages and traits are required", m.Path)
		}
	}
	if len(corpus) < 30 {
		t.Errorf("corpus has %d modules, want at least 30", len(corpus))
	}
}

func TestWatchRSS(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	start := time.Now()
	go watchRSS(cmd.Process, 1) // 1 KiB: any process is over it
	if err := cmd.Wait(); err == nil {
		t.Fatalf("sleep ended normally; want it killed over the RSS limit")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("killed after %s", d)
	}
}
