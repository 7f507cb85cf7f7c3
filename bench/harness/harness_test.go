package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testLog sends the harness's progress to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestQuick runs the harness in quick mode and checks the report's
// structure: sections, tables, figures, and that the numbers parse and lie
// in their ranges. It never checks timings.
func TestQuick(t *testing.T) {
	out := t.TempDir()
	cfg := &Config{Quick: true, Out: out, Command: "go run ./bench/harness -quick", Log: testLog{t}}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	if err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("quick harness: %.0f s", time.Since(start).Seconds())

	data, err := os.ReadFile(filepath.Join(out, ReportName))
	if err != nil {
		t.Fatal(err)
	}
	report := string(data)
	for _, s := range Sections {
		if !strings.Contains(report, "\n"+s+"\n") {
			t.Errorf("report has no section %q", s)
		}
	}
	for _, f := range Figures {
		checkPNG(t, filepath.Join(out, FigDir, f))
		if !strings.Contains(report, "("+FigDir+"/"+f+")") {
			t.Errorf("report does not link %s", f)
		}
	}
	var res Results
	if raw, err := os.ReadFile(filepath.Join(out, FigDir, RawName)); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal(raw, &res); err != nil {
		t.Errorf("%s: %v", RawName, err)
	} else if len(res.Workloads) != len(quickWorkloads) {
		t.Errorf("%s has %d workloads, want %d", RawName, len(res.Workloads), len(quickWorkloads))
	}

	tables := parseTables(t, report)
	if len(tables) < 10 {
		t.Fatalf("report has %d tables, want at least 10", len(tables))
	}
	var overlapTables, exactColumns int
	for _, tb := range tables {
		for col, head := range tb.header {
			if col == 0 {
				continue
			}
			isOverlap := strings.HasSuffix(head, "%") || strings.HasPrefix(tb.section, "## Accuracy")
			for _, row := range tb.rows {
				cell := strings.Trim(row[col], "*")
				if cell == "—" || (col == len(tb.header)-1 && tb.section == Sections[0]) || tb.section == Sections[0] {
					continue
				}
				v, err := parseNumber(cell)
				if err != nil {
					t.Errorf("%s, table %q, row %q: cell %q is not a number", tb.section, head, row[0], cell)
					continue
				}
				if isOverlap && (v < 0 || v > 100) {
					t.Errorf("%s, column %q, row %q: overlap %v outside [0, 100]", tb.section, head, row[0], v)
				}
				if head == "exact" && strings.HasPrefix(tb.section, "## Accuracy") && !strings.HasPrefix(row[0], "**") {
					exactColumns++
					if cell != "100.00" {
						t.Errorf("%s, row %q: exact profile against itself %s, want 100.00", tb.section, row[0], cell)
					}
				}
			}
			if isOverlap {
				overlapTables++
			}
		}
	}
	if overlapTables == 0 || exactColumns == 0 {
		t.Errorf("found %d overlap columns and %d exact-vs-exact cells; the report's tables changed shape", overlapTables, exactColumns)
	}
	// The summary compares every target with a measured value.
	for _, want := range []string{"overlap with exact profile", "No Prof.", "exact mode", "δb"} {
		if !strings.Contains(report, want) {
			t.Errorf("summary has no row for %q", want)
		}
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 200 {
		t.Errorf("%s: %v pixels, too small", path, b)
	}
}

// parseNumber parses a cell such as "97.12", "1.53×", "-1.2e-06" or "0".
func parseNumber(s string) (float64, error) {
	return strconv.ParseFloat(strings.TrimSuffix(s, "×"), 64)
}

type table struct {
	section string
	header  []string
	rows    [][]string
}

// parseTables returns the report's markdown tables, checking that every row
// has as many cells as the header and that the separator row follows it.
func parseTables(t *testing.T, report string) []table {
	var tables []table
	var cur *table
	section := ""
	cells := func(line string) []string {
		line = strings.ReplaceAll(line, `\|`, "\x00") // an escaped pipe is text
		parts := strings.Split(strings.Trim(line, "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(strings.ReplaceAll(parts[i], "\x00", "|"))
		}
		return parts
	}
	lines := strings.Split(report, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "## ") {
			section = line
		}
		if !strings.HasPrefix(line, "|") {
			cur = nil
			continue
		}
		if cur == nil {
			tables = append(tables, table{section: section, header: cells(line)})
			cur = &tables[len(tables)-1]
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "| ---") {
				t.Errorf("%s: table header %q has no separator row", section, line)
			}
			continue
		}
		if strings.HasPrefix(line, "| ---") {
			continue
		}
		row := cells(line)
		if len(row) != len(cur.header) {
			t.Errorf("%s: row %q has %d cells, header %d", section, line, len(row), len(cur.header))
			continue
		}
		cur.rows = append(cur.rows, row)
	}
	return tables
}

// TestRender writes the report again from raw data alone.
func TestRender(t *testing.T) {
	dir := t.TempDir()
	res := &Results{
		Date: "2026-11-22", Runs: 2, PprofRuns: 1, Granularities: []int64{1000, 10000}, Jitter: 100, Rates: PprofRates,
		Workloads: []*Workload{{
			Name: "w", ExactSize: 10, ExactSelf: 100, ExactRepeat: 100,
			Constant:   []Accuracy{{Granularity: 1000, Overlap: 90, RelSize: 50}, {Granularity: 10000, Overlap: 80, RelSize: 40}},
			Randomised: []Accuracy{{Granularity: 1000, Overlap: 99, RelSize: 60, Identical: true}, {Granularity: 10000, Overlap: 97, RelSize: 45, Identical: true}},
			Times: map[string][]Timing{
				cfgPlain: {{1, 1}, {1, 1}}, cfgOff: {{1.1, 1.1}, {1.1, 1.1}}, "g1000": {{1.5, 1.5}, {1.5, 1.5}},
				"g10000": {{1.2, 1.2}, {1.2, 1.2}}, cfgExact: {{4, 4}, {4, 4}}, "pprof100": {{1, 1}, {1, 1}}, "pprof1000": {{1.1, 1.1}, {1.1, 1.1}},
			},
			Pprof: []PprofResult{{Hz: 100, Samples: 100, RunToRun: 80, VsMerged: 85}, {Hz: 1000, Samples: 1000, RunToRun: 90, VsMerged: 92}},
		}},
	}
	data := renderReport(t, dir, res)
	for _, want := range []string{"| overlap with exact profile (geo. mean) | ≥ 97 % | > 90 % | 97.00 % | met |", "| w | 1.00 | 1.10× | 1.50× | 1.20× | 4.00× |", "Missed: exact-mode slowdown (4.0× > 3×)."} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range Figures {
		checkPNG(t, filepath.Join(dir, FigDir, f))
	}
}

// renderReport writes res as dir's raw results, renders the report from
// them and returns it.
func renderReport(t *testing.T, dir string, res *Results) []byte {
	t.Helper()
	if err := writeRaw(dir, res); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ReportName))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
