package main

import (
	"bytes"
	"testing"
)

// TestMemoryTable: the report gives the median peak RSS of plain, No
// Prof., sampling at the reference granularity and exact mode, when the
// runs measured it, and leaves the table out for results that have none.
func TestMemoryTable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rss    map[string][]int64
		want   string
		absent bool
	}{
		{"measured", map[string][]int64{
			cfgPlain: {10 << 20, 12 << 20, 11 << 20}, cfgOff: {12 << 20, 12 << 20, 12 << 20},
			"g10000": {20 << 20, 21 << 20, 19 << 20}, cfgExact: {30 << 20, 30 << 20, 30 << 20},
		}, "| w | 11.0 | 12.0 | 20.0 | 30.0 |", false},
		{"partly", map[string][]int64{cfgPlain: {10 << 20}}, "| w | 10.0 | — | — | — |", false},
		{"none", nil, "Peak resident set", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			timing := []Timing{{1, 1}, {1, 1}, {1, 1}}
			res := &Results{
				Date: "2026-11-26", Runs: 3, PprofRuns: 4, Granularities: []int64{10000}, Jitter: 100, Rates: PprofRates,
				Workloads: []*Workload{{
					Name: "w", ExactSize: 10, ExactSelf: 100, ExactRepeat: 100,
					Constant:   []Accuracy{{Granularity: 10000, Overlap: 80, RelSize: 40}},
					Randomised: []Accuracy{{Granularity: 10000, Overlap: 97, RelSize: 45, Identical: true}},
					Times: map[string][]Timing{
						cfgPlain: timing, cfgOff: timing, "g10000": timing, cfgExact: timing, "pprof100": timing, "pprof1000": timing,
					},
					MaxRSS: tc.rss,
					Pprof:  []PprofResult{{Hz: 100, Samples: 100, RunToRun: 80, VsMerged: 85}, {Hz: 1000, Samples: 1000, RunToRun: 90, VsMerged: 92}},
				}},
			}
			data := renderReport(t, dir, res)
			if got := bytes.Contains(data, []byte(tc.want)); got == tc.absent {
				t.Errorf("report has %q: %v, want %v", tc.want, got, !tc.absent)
			}
		})
	}
}
