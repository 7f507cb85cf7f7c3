package gate

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/profile/profiletest"
	"github.com/kprof/kprof/reports"
)

func readGateInput(t *testing.T, name string) *Benchmarks {
	t.Helper()
	bs, err := ReadBenchmarksFile(filepath.Join("testdata", "gate", name))
	if err != nil {
		t.Fatal(err)
	}
	bs.Name = name
	return bs
}

// TestReadBenchmarks reads the hand-written samples of kprof test -bench
// output with benchfmt, as benchstat does.
func TestReadBenchmarks(t *testing.T) {
	tests := []struct {
		file   string
		names  []string // package + " " + name
		values []float64
		runs   int
	}{
		{"old.txt", []string{"example.com/m BenchmarkFoo", "example.com/m BenchmarkBar", "example.com/m BenchmarkBaz/size=10"}, []float64{50000, 20000, 2000}, 1},
		// GOMAXPROCS 4 instead of 2: the same names.
		{"same.txt", []string{"example.com/m BenchmarkFoo", "example.com/m BenchmarkBar", "example.com/m BenchmarkBaz/size=10"}, []float64{50000, 20000, 2000}, 1},
		{"count.txt", []string{"example.com/m BenchmarkFoo", "example.com/m BenchmarkBar", "example.com/m BenchmarkBaz/size=10"}, []float64{50000, 20000, 2000}, 3},
		{"twopkgs.txt", []string{"example.com/m/a BenchmarkFoo", "example.com/m/b BenchmarkFoo"}, []float64{50000, 7000}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			bs := readGateInput(t, tt.file)
			var names []string
			var values []float64
			for _, b := range bs.List {
				names = append(names, b.Package+" "+b.Name)
				vs := b.Value(UnitInstructions)
				if len(vs) != tt.runs || len(b.Runs) != tt.runs {
					t.Errorf("%s: %d values in %d runs, want %d", b.Name, len(vs), len(b.Runs), tt.runs)
				}
				values = append(values, vs[0])
			}
			if !slices.Equal(names, tt.names) || !slices.Equal(values, tt.values) {
				t.Errorf("read %q %v, want %q %v", names, values, tt.names, tt.values)
			}
			// The Unit line reaches benchfmt's metadata: benchstat treats
			// the metric as exact.
			if m := bs.units.Get(UnitInstructions, "assume"); m == nil || m.Value != "exact" {
				t.Errorf("benchfmt has no assume=exact for %s: %v", UnitInstructions, m)
			}
			// ns/op is matched as written and as benchfmt tidies it.
			if ns, sec := bs.List[0].Value("ns/op"), bs.List[0].Value("sec/op"); len(ns) != tt.runs || len(sec) != tt.runs || math.Abs(ns[0]-sec[0]*1e9) > 1e-6 {
				t.Errorf("ns/op %v, sec/op %v", ns, sec)
			}
		})
	}

	// go test -cpu 1,2: both GOMAXPROCS are kept apart.
	cpu := "pkg: m\nBenchmarkFoo \t 10\t 100 instructions/op\nBenchmarkFoo-2 \t 10\t 200 instructions/op\nBenchmarkBar-2 \t 10\t 5 instructions/op\n"
	bs, err := ReadBenchmarks(strings.NewReader(cpu), "cpu.txt")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs.List {
		names = append(names, b.Name)
	}
	if want := []string{"BenchmarkFoo", "BenchmarkFoo-2", "BenchmarkBar"}; !slices.Equal(names, want) {
		t.Errorf("-cpu names %q, want %q", names, want)
	}
}

func TestReadBenchmarksErrors(t *testing.T) {
	dir := t.TempDir()
	kp := filepath.Join(dir, "BenchmarkFoo.kprof")
	if err := profiletest.Profile(profile.ModeExact, "a 10").WriteFile(kp); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string
	}{
		{filepath.Join("testdata", "gate", "garbage.txt"), "testdata/gate/garbage.txt: no benchmark results"},
		{filepath.Join("testdata", "gate", "malformed.txt"), "testdata/gate/malformed.txt:5: parsing iteration count"},
		{filepath.Join("testdata", "gate", "nonexistent.txt"), "testdata/gate/nonexistent.txt: no such file or directory"},
		{dir, dir + ": is a directory"},
		{kp, kp + ": a kprof profile, not benchmark output"},
	}
	for _, tt := range tests {
		_, err := ReadBenchmarksFile(tt.path)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("ReadBenchmarksFile(%s): %v, want %q…", tt.path, err, tt.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, s := range []string{"1%", "0.5%", "0.125%", "2", "0%", "10.50%"} {
		p, err := ParsePercent(s)
		if err != nil {
			t.Errorf("ParsePercent(%q): %v", s, err)
			continue
		}
		if want := strings.TrimSuffix(s, "%") + "%"; p.String() != want {
			t.Errorf("ParsePercent(%q) = %s, want %s", s, p, want)
		}
	}
	for _, s := range []string{"", "%", "-1%", "1e3", "one", "1%%", ".5"} {
		if _, err := ParsePercent(s); err == nil {
			t.Errorf("ParsePercent(%q) accepted", s)
		}
	}
	if (Percent{}).String() != "0%" || DefaultThreshold.String() != "1%" {
		t.Errorf("zero %s, default %s", Percent{}, DefaultThreshold)
	}
}

func TestGateConfigErrors(t *testing.T) {
	tests := []struct {
		config string
		want   string
	}{
		{`{"treshold": "1%"}`, `gate.json: json: unknown field "treshold"`},
		{"{\n\"threshold\": \"1%\",\n}", "gate.json:3: invalid character '}'"},
		{`{"threshold": "lots"}`, `gate.json: "lots" is not a percentage`},
		{`{"threshold": -1}`, `gate.json: "-1" is not a percentage`},
		{`{"benchmarks": [{"match": "Foo("}]}`, "gate.json: benchmark rule 1: match \"Foo(\": error parsing regexp"},
		{`{"benchmarks": [{"match": "Foo"}]}`, `gate.json: benchmark rule 1 (match "Foo") sets no threshold, max or min`},
		{`{"benchmarks": [{"threshold": "1%"}]}`, `gate.json: benchmark rule 1 has no "match" pattern`},
		{`{"benchmarks": [{"match": "Foo", "max": 1, "min": 2}]}`, "gate.json: benchmark rule 1 (match \"Foo\"): min 2 is above max 1"},
		{"{\n\"benchmarks\": [{\"match\": \"Foo\", \"max\": \"big\"}]}", "gate.json:2: benchmarks.max: want a float64"},
	}
	for _, tt := range tests {
		_, err := ParseGateConfig([]byte(tt.config), "gate.json")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("ParseGateConfig(%s): %v, want %q…", tt.config, err, tt.want)
		}
	}
	c, err := ParseGateConfig([]byte(`{"threshold": 0.5, "unit": "ns/op", "benchmarks": [{"match": "Foo", "threshold": "2%", "max": 10}]}`), "gate.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.threshold().String() != "0.5%" || c.unit() != "ns/op" || *c.Benchmarks[0].Max != 10 {
		t.Errorf("parsed %+v", c)
	}
}

// TestGate runs the gate on the samples and checks each benchmark's
// status and the verdict.
func TestGate(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		config   string // JSON; "" for none
		verdict  int
		statuses []string // per row, in order
		text     []string // in the text output, in order
	}{
		{
			name: "unchanged", old: "old.txt", new: "same.txt", verdict: Pass,
			statuses: []string{Unchanged, Unchanged, Unchanged},
			text: []string{"unit: instructions/op (exact)  threshold: 1%", "pkg: example.com/m",
				"benchmark             old.txt  same.txt  delta", "BenchmarkFoo          50000    50000     0.00%",
				"gate passed: 3 benchmarks within limits\n"},
		},
		{
			name: "regression beyond 0.5%", old: "old.txt", new: "regress.txt", config: `{"threshold": "0.5%"}`, verdict: Fail,
			statuses: []string{Regression, Improved, Unchanged},
			text: []string{"BenchmarkFoo          50000    50500        +1.00%   REGRESSION: +1.00% beyond the 0.5% threshold",
				"BenchmarkBar          20000    18000        -10.00%  improved",
				"gate FAILED: 1 of 3 benchmarks regressed: BenchmarkFoo +1.00% beyond the 0.5% threshold\n"},
		},
		{
			// Exactly 1% is within the default threshold of 1%.
			name: "within the default", old: "old.txt", new: "regress.txt", verdict: Pass,
			statuses: []string{Worse, Improved, Unchanged},
			text:     []string{"+1.00%   within 1%", "gate passed: 3 benchmarks within limits, 1 improved\n"},
		},
		{
			name: "per-benchmark override", old: "old.txt", new: "regress.txt",
			config:  `{"threshold": "0.5%", "benchmarks": [{"match": "^BenchmarkFoo$", "threshold": "2%"}, {"match": "Foo", "threshold": "0%"}]}`,
			verdict: Pass, statuses: []string{Worse, Improved, Unchanged},
			text: []string{"within 2%"},
		},
		{
			name: "override tightens", old: "old.txt", new: "regress.txt",
			config:  `{"benchmarks": [{"match": "Fo+", "threshold": "0.99%"}]}`,
			verdict: Fail, statuses: []string{Regression, Improved, Unchanged},
			text: []string{"REGRESSION: +1.00% beyond the 0.99% threshold"},
		},
		{
			name: "absolute limit", old: "old.txt", new: "same.txt",
			config:  `{"benchmarks": [{"match": "^BenchmarkBaz/", "max": 1999}, {"match": "Bar", "max": 20000}]}`,
			verdict: Fail, statuses: []string{Unchanged, Unchanged, Regression},
			text: []string{"BenchmarkBaz/size=10  2000     2000      0.00%  REGRESSION: 2000 instructions/op above the limit 1999"},
		},
		{
			name: "unused rule", old: "old.txt", new: "same.txt", config: `{"benchmarks": [{"match": "Gone", "max": 1}]}`,
			verdict: Pass, statuses: []string{Unchanged, Unchanged, Unchanged},
			text: []string{`warning: configuration rule 1 (match "Gone") matches no benchmark`},
		},
		{
			name: "missing", old: "old.txt", new: "missing.txt", verdict: Err,
			statuses: []string{Unchanged, NotCompared, Unchanged, NotCompared},
			text: []string{"BenchmarkBar          20000    -            -      ERROR: not in missing.txt (did it fail? renamed? removed?)\n",
				"BenchmarkNew          -        400          -      ERROR: not in old.txt (a new benchmark?)\n",
				"gate ERROR: 2 of 4 benchmarks could not be checked: BenchmarkBar not in missing.txt (did it fail? renamed? removed?); " +
					"BenchmarkNew not in old.txt (a new benchmark?); allow_missing in the configuration or --allow-missing accepts benchmarks on one side only\n"},
		},
		{
			name: "missing allowed", old: "old.txt", new: "missing.txt", config: `{"allow_missing": true}`, verdict: Pass,
			statuses: []string{Unchanged, Removed, Unchanged, Added},
			text:     []string{"removed: only in old.txt", "added: only in missing.txt", "gate passed: 4 benchmarks"},
		},
		{
			name: "added over its limit", old: "old.txt", new: "missing.txt", config: `{"allow_missing": true, "benchmarks": [{"match": "New", "max": 399}]}`,
			verdict: Fail, statuses: []string{Unchanged, Removed, Unchanged, Regression},
			text: []string{"400 instructions/op above the limit 399"},
		},
		{
			name: "count", old: "count.txt", new: "old.txt", verdict: Pass,
			statuses: []string{Unchanged, Unchanged, Unchanged},
		},
		{
			name: "count differs", old: "old.txt", new: "countdiffer.txt", verdict: Err,
			statuses: []string{NotCompared, Unchanged, Unchanged},
			text:     []string{"ERROR: its 3 runs in countdiffer.txt differ (50000, 50000, 50012 instructions/op): instructions/op is exact"},
		},
		{
			// Time is noisy: the median of the runs, a looser threshold.
			name: "ns/op", old: "old.txt", new: "count.txt", config: `{"unit": "ns/op", "threshold": "0.5%"}`, verdict: Pass,
			statuses: []string{Improved, Worse, Improved},
			text:     []string{"unit: ns/op  threshold: 0.5%", "BenchmarkFoo          12345    12342      -0.02%"},
		},
		{
			name: "two packages", old: "twopkgs.txt", new: "twopkgs.txt", verdict: Pass,
			statuses: []string{Unchanged, Unchanged},
			text:     []string{"pkg: example.com/m/a", "BenchmarkFoo", "pkg: example.com/m/b", "BenchmarkFoo"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg *Config
			if tt.config != "" {
				var err error
				if cfg, err = ParseGateConfig([]byte(tt.config), "gate.json"); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Compare(readGateInput(t, tt.old), readGateInput(t, tt.new), Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if r.Verdict() != tt.verdict {
				t.Errorf("verdict %d, want %d\n%s", r.Verdict(), tt.verdict, text.String())
			}
			var statuses []string
			for _, row := range r.Rows {
				statuses = append(statuses, row.Status)
			}
			if !slices.Equal(statuses, tt.statuses) {
				t.Errorf("statuses %q, want %q\n%s", statuses, tt.statuses, text.String())
			}
			checkInOrder(t, text.String(), tt.text)
		})
	}
}

// TestGateThresholdExact checks the threshold at its boundary: 0.5% of
// 52310 is 261.55.
func TestGateThresholdExact(t *testing.T) {
	line := func(v string) *Benchmarks {
		bs, err := ReadBenchmarks(strings.NewReader("BenchmarkFoo-2\t1000\t"+v+" instructions/op\n"), v)
		if err != nil {
			t.Fatal(err)
		}
		return bs
	}
	cfg := &Config{Threshold: new(MustPercent("0.5%"))}
	for _, tt := range []struct {
		new    string
		status string
	}{
		{"52571", Worse}, {"52571.55", Worse}, {"52571.56", Regression}, {"52572", Regression},
		{"52048.45", Improved}, {"52310", Unchanged},
	} {
		r, err := Compare(line("52310"), line(tt.new), Options{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Rows[0].Status; s != tt.status {
			t.Errorf("52310 → %s: %s, want %s", tt.new, s, tt.status)
		}
	}
	// From 0 to more is a regression at any threshold.
	r, err := Compare(line("0"), line("1"), Options{Config: &Config{Threshold: new(MustPercent("1000%"))}})
	if err != nil {
		t.Fatal(err)
	}
	if row := r.Rows[0]; row.Status != Regression || row.deltaText() != "+Inf%" {
		t.Errorf("0 → 1: %s %s", row.Status, row.deltaText())
	}
}

func TestGateErrors(t *testing.T) {
	old := readGateInput(t, "old.txt")
	plain := readGateInput(t, "plain.txt")
	if _, err := Compare(old, plain, Options{}); err == nil || !strings.HasPrefix(err.Error(), "plain.txt: no benchmark reports instructions/op: is it the output of plain go test") {
		t.Errorf("Compare without instructions/op: %v", err)
	}
	if _, err := Compare(old, old, Options{Config: &Config{Unit: "MB/s"}}); err == nil || !strings.HasPrefix(err.Error(), "old.txt: no benchmark reports MB/s") {
		t.Errorf("Compare on a unit no one has: %v", err)
	}
	// Plain go test output gates on time.
	r, err := Compare(plain, plain, Options{Config: &Config{Unit: "ns/op"}})
	if err != nil || r.Verdict() != Pass || r.Exact {
		t.Errorf("plain ns/op: %v %+v", err, r)
	}
}

// writeBenchProfile writes a profile of a benchmark, built from folded
// stacks, to dir as kprof test -bench --profile does.
func writeBenchProfile(t *testing.T, dir, bench string, folded ...string) {
	t.Helper()
	if err := profiletest.Profile(profile.ModeExact, folded...).WriteFile(filepath.Join(dir, ProfileFileName(bench))); err != nil {
		t.Fatal(err)
	}
}

// TestGateAttribution attributes a regression to the calling contexts
// whose instructions per op changed: the old profile covers 1000 ops, the
// new one 100; only m.parse executes more per op.
func TestGateAttribution(t *testing.T) {
	oldDir, newDir := t.TempDir(), t.TempDir()
	// BenchmarkFoo: 50000 → 50500 instructions/op.
	writeBenchProfile(t, oldDir, "BenchmarkFoo",
		"m.BenchmarkFoo 1000000", "m.BenchmarkFoo;m.work 29000000", "m.BenchmarkFoo;m.parse 20000000")
	writeBenchProfile(t, newDir, "BenchmarkFoo",
		"m.BenchmarkFoo 100000", "m.BenchmarkFoo;m.work 2900000", "m.BenchmarkFoo;m.parse 2000000", "m.BenchmarkFoo;m.parse;m.grow 50000")
	// BenchmarkBaz/size=10 regresses under the limit below; its new
	// profile is missing.
	writeBenchProfile(t, oldDir, "BenchmarkBaz/size=10", "m.baz 2000")
	cfg := &Config{Threshold: new(MustPercent("0.5%")), Benchmarks: []Rule{{Match: "Baz", Max: new(1000.0)}}}
	r, err := Compare(readGateInput(t, "old.txt"), readGateInput(t, "regress.txt"),
		Options{Config: cfg, OldProfiles: oldDir, NewProfiles: newDir})
	if err != nil {
		t.Fatal(err)
	}
	foo := r.Rows[0]
	if foo.Name != "BenchmarkFoo" || foo.Status != Regression || len(foo.Contexts) != 1 {
		t.Fatalf("BenchmarkFoo: %+v", foo)
	}
	got := func(c Context) string { return reports.StackString(c.Stack) }
	if got(foo.Contexts[0]) != "m.BenchmarkFoo > m.parse > m.grow" || foo.Contexts[0].Old != 0 || foo.Contexts[0].New != 500 || foo.Contexts[0].Delta != 500 {
		t.Errorf("first context %s %+v", got(foo.Contexts[0]), foo.Contexts[0])
	}
	// The old profile covers 1000 ops, the new one 100: m.work and
	// m.parse execute the same per op (their shares changed: overlap.Diff
	// would list them), m.BenchmarkFoo itself too.
	for _, c := range foo.Contexts[1:] {
		t.Errorf("unchanged context listed: %s %+v", got(c), c)
	}
	baz := r.Rows[2]
	if baz.Status != Regression || len(baz.Contexts) != 0 || len(baz.Notes) != 1 ||
		!strings.Contains(baz.Notes[0], "no profile "+filepath.Join(newDir, "BenchmarkBaz_size=10.kprof")) {
		t.Errorf("BenchmarkBaz: %+v", baz)
	}
	if r.Verdict() != Fail {
		t.Errorf("verdict %d", r.Verdict())
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, text.String(), []string{
		"\nBenchmarkFoo:\ncalling contexts whose instructions/op changed most:\n",
		"  old  new  delta  calling context\n",
		"    0  500   +500  m.BenchmarkFoo > m.parse > m.grow\n",
		"\nBenchmarkBaz/size=10: no profile ",
	})

	// A damaged profile is an error that names it.
	if err := os.WriteFile(filepath.Join(newDir, "BenchmarkFoo.kprof"), []byte("KPROF\x01junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Compare(readGateInput(t, "old.txt"), readGateInput(t, "regress.txt"),
		Options{Config: cfg, OldProfiles: oldDir, NewProfiles: newDir})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict() != Err || len(r.Rows[0].Problems) != 1 ||
		!strings.HasPrefix(r.Rows[0].Problems[0], "profile "+filepath.Join(newDir, "BenchmarkFoo.kprof")+": corrupt kprof profile") {
		t.Errorf("damaged profile: verdict %d, %q", r.Verdict(), r.Rows[0].Problems)
	}
}

func TestGateJSONMarkdown(t *testing.T) {
	oldDir, newDir := t.TempDir(), t.TempDir()
	writeBenchProfile(t, oldDir, "BenchmarkFoo", "m.BenchmarkFoo;m.parse 50000")
	writeBenchProfile(t, newDir, "BenchmarkFoo", "m.BenchmarkFoo;m.parse 50000", "m.BenchmarkFoo;m.parse;m.grow|x 500")
	r, err := Compare(readGateInput(t, "old.txt"), readGateInput(t, "regress.txt"),
		Options{Config: &Config{Threshold: new(MustPercent("0.5%"))}, OldProfiles: oldDir, NewProfiles: newDir})
	if err != nil {
		t.Fatal(err)
	}

	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Verdict    string
		Summary    string
		Unit       string
		Exact      bool
		Old, New   string
		Threshold  string
		Benchmarks []struct {
			Package, Name string
			Old, New      *float64
			Delta         *float64 `json:"delta_percent"`
			Status        string
			Threshold     string
			Reasons       []string
			Contexts      []struct {
				Stack           []struct{ Name, File string }
				Old, New, Delta float64
			}
		}
		Warnings     []string
		Regressions  int
		Improvements int
		Errors       int
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, js.String())
	}
	foo := got.Benchmarks[0]
	switch {
	case got.Verdict != "fail", got.Unit != UnitInstructions, !got.Exact, got.Old != "old.txt", got.New != "regress.txt",
		got.Threshold != "0.5%", got.Regressions != 1, got.Improvements != 1, got.Errors != 0, got.Warnings == nil,
		!strings.HasPrefix(got.Summary, "gate FAILED: 1 of 3"), len(got.Benchmarks) != 3:
		t.Errorf("JSON:\n%s", js.String())
	case foo.Package != "example.com/m", foo.Name != "BenchmarkFoo", *foo.Old != 50000, *foo.New != 50500, *foo.Delta != 1,
		foo.Status != Regression, foo.Threshold != "0.5%", len(foo.Reasons) != 1, len(foo.Contexts) != 1:
		t.Errorf("JSON BenchmarkFoo:\n%s", js.String())
	case foo.Contexts[0].Delta != 500, len(foo.Contexts[0].Stack) != 3, foo.Contexts[0].Stack[2].Name != "m.grow|x",
		foo.Contexts[0].Stack[2].File != "/src/m/m.go":
		t.Errorf("JSON context:\n%s", js.String())
	case got.Benchmarks[1].Status != Improved, *got.Benchmarks[1].Delta != -10, got.Benchmarks[2].Delta == nil:
		t.Errorf("JSON BenchmarkBar, Baz:\n%s", js.String())
	}

	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, md.String(), []string{
		"### kprof gate: 1 regression\n\n",
		"gate FAILED: 1 of 3 benchmarks regressed: BenchmarkFoo +1.00% beyond the 0.5% threshold\n\n",
		"Unit: `instructions/op` (exact), threshold 0.5% unless configured; old: `old.txt`, new: `regress.txt`.\n",
		"\n`example.com/m`\n\n| benchmark | old | new | delta | |\n|---|--:|--:|--:|---|\n",
		"| `BenchmarkFoo` | 50000 | 50500 | +1.00% | **REGRESSION: +1.00% beyond the 0.5% threshold** |\n",
		"| `BenchmarkBar` | 20000 | 18000 | -10.00% | improved |\n",
		"| `BenchmarkBaz/size=10` | 2000 | 2000 | 0.00% |  |\n",
		"<details><summary>BenchmarkFoo: where the instructions changed</summary>\n\n",
		"| old | new | delta | calling context |\n|--:|--:|--:|---|\n",
		"| 0 | 500 | +500 | `m.BenchmarkFoo > m.parse > m.grow\\|x` |\n",
		"</details>\n",
	})

	// JSON of a passing gate has empty lists, not null.
	r, err = Compare(readGateInput(t, "old.txt"), readGateInput(t, "same.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	js.Reset()
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, js.String(), []string{`"verdict": "pass"`, `"warnings": []`})
	md.Reset()
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, md.String(), []string{"### kprof gate: passed\n\ngate passed: 3 benchmarks within limits\n"})
}

// checkInOrder checks that out contains each of want, in that order.
func checkInOrder(t *testing.T, out string, want []string) {
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

func TestGateSummaryFewNames(t *testing.T) {
	var input strings.Builder
	var after strings.Builder
	for _, n := range []string{"A", "B", "C", "D", "E"} {
		input.WriteString("Benchmark" + n + "\t10\t100 instructions/op\n")
		after.WriteString("Benchmark" + n + "\t10\t200 instructions/op\n")
	}
	before, _ := ReadBenchmarks(strings.NewReader(input.String()), "old")
	now, _ := ReadBenchmarks(strings.NewReader(after.String()), "new")
	r, err := Compare(before, now, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "gate FAILED: 5 of 5 benchmarks regressed: BenchmarkA +100.00% beyond the 1% threshold; " +
		"BenchmarkB +100.00% beyond the 1% threshold; BenchmarkC +100.00% beyond the 1% threshold; and 2 more"
	if got := r.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}
