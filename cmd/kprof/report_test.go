package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/kprof/kprof/profile"
)

// TestReportCompareCLI runs kprof report and kprof compare as a user
// would, on profiles written with overlap's WriteFile.
func TestReportCompareCLI(t *testing.T) {
	bin := buildKprof(t)
	t.Run("report", func(t *testing.T) { testReport(t, bin) })
	t.Run("report files", func(t *testing.T) { testReportFiles(t, bin) })
	t.Run("compare", func(t *testing.T) { testCompare(t, bin) })
}

type result struct {
	stdout, stderr string
	status         int
}

// runKprof runs the kprof binary bin in dir with args.
func runKprof(t *testing.T, bin, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("kprof %s: %v", strings.Join(args, " "), err)
	}
	r := result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("kprof %s panicked:\n%s", strings.Join(args, " "), r.stderr)
	}
	return r
}

// writeTestProfile writes a profile built from folded stacks ("f;g COUNT") to
// dir/name with overlap's WriteFile.
func writeTestProfile(t *testing.T, dir, name, mode string, folded ...string) string {
	t.Helper()
	p := &profile.Profile{
		Meta: profile.Meta{Mode: mode, MetricVersion: profile.MetricVersion, Program: "demo", GOOS: "linux", GOARCH: "amd64"},
		Root: &profile.Node{},
	}
	for _, line := range folded {
		stack, count, _ := strings.Cut(line, " ")
		n := p.Root
		for _, f := range strings.Split(stack, ";") {
			n = n.Child(profile.Func{Name: f, File: "/src/" + f + ".go", Line: 3})
		}
		var c int64
		for _, d := range count {
			c = 10*c + int64(d-'0')
		}
		n.Instructions += c
		n.Samples += c / 10
		p.TotalInstructions += c
		p.TotalSamples += c / 10
	}
	path := filepath.Join(dir, name)
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func testReport(t *testing.T, bin string) {
	dir := t.TempDir()
	writeTestProfile(t, dir, "a.kprof", profile.ModeExact,
		"main.main 100", "main.main;main.work 600", "main.main;main.work;main.leaf 250", "main.main;fmt.Println 50")
	writeTestProfile(t, dir, "b.kprof", profile.ModeExact, "main.main 100", "main.main;main.other 300")
	if err := os.WriteFile(filepath.Join(dir, "corrupt.kprof"), []byte("KPROF\x01garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseFile(filepath.Join(dir, "b.kprof"))
	if err != nil {
		t.Fatal(err)
	}
	p.Meta.MetricVersion++
	if err := p.WriteFile(filepath.Join(dir, "metric.kprof")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		status int
		stdout []string // substrings of stdout, in order
		stderr string   // substring of stderr; "" wants it empty
	}{
		{"top", []string{"report", "a.kprof"}, 0,
			[]string{"program: demo  mode: exact", "flat", "main.work\n", "main.leaf\n"}, ""},
		{"nodecount", []string{"report", "--nodecount", "1", "a.kprof"}, 0,
			[]string{"main.work\n", "showing 1 of 4 functions"}, ""},
		{"tree after the file", []string{"report", "a.kprof", "--tree", "--cutoff", "10"}, 0,
			[]string{"calling context", "main.main\n", "    main.leaf\n", "1 calling contexts below the 10% cut-off hidden"}, ""},
		{"top and tree", []string{"report", "--top", "--tree", "a.kprof"}, 0,
			[]string{"flat%", "main.work\n", "cum%", "  main.work\n"}, ""},
		{"merged", []string{"report", "a.kprof", "b.kprof"}, 0,
			[]string{"instructions: 1400", "main.work\n"}, ""},
		{"merged metrics", []string{"report", "a.kprof", "metric.kprof"}, 2, nil,
			"kprof: metric.kprof and a.kprof: profiles count different metrics: instructions (metric version 2) and instructions (metric version 1); they cannot be merged (profile both with the same kprof and -metric)\n"},
		{"missing", []string{"report", "missing.kprof"}, 2, nil,
			"kprof: missing.kprof: no such file or directory\n"},
		{"corrupt", []string{"report", "corrupt.kprof"}, 2, nil,
			"kprof: corrupt.kprof: corrupt kprof profile"},
		{"directory", []string{"report", "."}, 2, nil, "kprof: .: is a directory\n"},
		{"no file", []string{"report"}, 2, nil, "kprof: report: no profile given"},
		{"bad cutoff", []string{"report", "--tree", "--cutoff", "120", "a.kprof"}, 2, nil, "kprof: report: --cutoff 120 is not a percentage"},
		{"bad flag", []string{"report", "--bogus", "a.kprof"}, 2, nil, "kprof: report: flag provided but not defined"},
		{"bad flag after the file", []string{"report", "a.kprof", "--bogus"}, 2, nil, "kprof: report: flag provided but not defined"},
		{"unwritable", []string{"report", "--pprof", "nodir/x.pb.gz", "a.kprof"}, 2, nil,
			"kprof: nodir/x.pb.gz: no such file or directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runKprof(t, bin, dir, tt.args...)
			if r.status != tt.status {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.status, tt.status, r.stdout, r.stderr)
			}
			checkOrder(t, r.stdout, tt.stdout)
			if tt.stderr == "" && r.stderr != "" || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want %q", r.stderr, tt.stderr)
			}
			if tt.status == 2 && strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("the error is not one line: %q", r.stderr)
			}
		})
	}
}

// testReportFiles writes pprof and HTML in one call.
func testReportFiles(t *testing.T, bin string) {
	dir := t.TempDir()
	writeTestProfile(t, dir, "a.kprof", profile.ModeSample, "main.main 100", "main.main;main.work 900")
	r := runKprof(t, bin, dir, "report", "--pprof", "a.pb.gz", "--html", "a.html", "a.kprof")
	if r.status != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	f, err := os.Open(filepath.Join(dir, "a.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pp, err := pprofile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range pp.Sample {
		sum += s.Value[1]
	}
	if sum != 1000 {
		t.Errorf("the pprof profile holds %d instructions, want 1000", sum)
	}
	page, err := os.ReadFile(filepath.Join(dir, "a.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(`"main.work"`)) {
		t.Error("the HTML page lacks main.work")
	}
	// Asking for files as well as text prints the text too.
	r = runKprof(t, bin, dir, "report", "--top", "--html", "b.html", "a.kprof")
	checkOrder(t, r.stdout, []string{"main.work\n"})
	if _, err := os.Stat(filepath.Join(dir, "b.html")); err != nil {
		t.Error(err)
	}
	// A pprof profile given to kprof report gets a hint.
	r = runKprof(t, bin, dir, "report", "a.pb.gz")
	if r.status != 2 || !strings.Contains(r.stderr, "kprof: a.pb.gz: not a kprof profile but gzip-compressed data") {
		t.Errorf("exit status %d, stderr %q", r.status, r.stderr)
	}
}

func testCompare(t *testing.T, bin string) {
	dir := t.TempDir()
	writeTestProfile(t, dir, "a.kprof", profile.ModeExact, "main.main 50", "main.main;main.work 50")
	writeTestProfile(t, dir, "a2.kprof", profile.ModeExact, "main.main 50", "main.main;main.work 50")
	// B: main.main ¼, work ¼, other ½: 50% overlap with A.
	writeTestProfile(t, dir, "b.kprof", profile.ModeSample, "main.main 25", "main.main;main.work 25", "main.other 50")
	other := filepath.Join(dir, "metric.kprof")
	p, err := profile.ParseFile(filepath.Join(dir, "a.kprof"))
	if err != nil {
		t.Fatal(err)
	}
	p.Meta.MetricVersion++
	if err := p.WriteFile(other); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.kprof"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		status int
		first  string // first line of stdout
		stdout []string
		stderr string
	}{
		{"identical", []string{"compare", "a.kprof", "a2.kprof"}, 0, "overlap: 100.00%", []string{"the profiles are identical"}, ""},
		{"different", []string{"compare", "a.kprof", "b.kprof"}, 0, "overlap: 50.00%",
			[]string{"function overlap: 50.00%", "calling contexts whose shares differ most", "main.other\n"}, ""},
		{"min-overlap met", []string{"compare", "--min-overlap", "50", "a.kprof", "b.kprof"}, 0, "overlap: 50.00%", nil, ""},
		{"min-overlap missed", []string{"compare", "a.kprof", "b.kprof", "--min-overlap", "99.5"}, 1, "overlap: 50.00%", nil,
			"kprof: overlap 50% is below --min-overlap 99.5%\n"},
		{"identical above 100", []string{"compare", "--min-overlap=100", "a.kprof", "a2.kprof"}, 0, "overlap: 100.00%", nil, ""},
		{"json", []string{"compare", "--json", "a.kprof", "b.kprof"}, 0, "{", []string{`"overlap": 50`, `"exact": "a"`}, ""},
		{"no diffs", []string{"compare", "--top", "0", "a.kprof", "b.kprof"}, 0, "overlap: 50.00%", nil, ""},
		{"metric version", []string{"compare", "a.kprof", "metric.kprof"}, 2, "", nil, "kprof: cannot compare a.kprof with metric.kprof: profiles count different metrics: instructions (metric version 1) and instructions (metric version 2)"},
		{"missing", []string{"compare", "a.kprof", "missing.kprof"}, 2, "", nil, "kprof: missing.kprof: no such file or directory\n"},
		{"empty file", []string{"compare", "empty.kprof", "a.kprof"}, 2, "", nil, "kprof: empty.kprof: corrupt kprof profile"},
		{"one file", []string{"compare", "a.kprof"}, 2, "", nil, "kprof: compare: want two profiles, got 1"},
		{"bad min-overlap", []string{"compare", "--min-overlap", "200", "a.kprof", "b.kprof"}, 2, "", nil, "kprof: compare: --min-overlap 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runKprof(t, bin, dir, tt.args...)
			if r.status != tt.status {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.status, tt.status, r.stdout, r.stderr)
			}
			if first, _, _ := strings.Cut(r.stdout, "\n"); first != tt.first {
				t.Errorf("first line %q, want %q", first, tt.first)
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
	if r := runKprof(t, bin, dir, "compare", "--top", "1", "a.kprof", "b.kprof"); strings.Count(r.stdout, "main.") != 1 {
		t.Errorf("--top 1 lists other than one context:\n%s", r.stdout)
	}
}

// checkOrder checks that out contains each of want, in that order.
func checkOrder(t *testing.T, out string, want []string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("output lacks %q (in order):\n%s", w, out)
			return
		}
		rest = rest[i+len(w):]
	}
}
