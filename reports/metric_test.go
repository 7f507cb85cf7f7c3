package reports

import (
	"bytes"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/profile/profiletest"
)

// costProfile is a profile of the cost metric (picoseconds).
func costProfile() *profile.Profile {
	p := profiletest.Profile(profile.ModeExact, "main.main 2500 1 1", "main.main;main.alloc 1499600 2 7", "main.main;main.add 400 1 3")
	p.Meta.Metric, p.Meta.MetricTable = "cost", "linux-amd64@0123456789abcdef"
	p.TotalInstructions = p.SumInstructions()
	p.TotalSamples = 4
	return p
}

// TestReportsNameTheMetric checks that text reports name a weighted
// metric and its unit in the header and the columns, and the instruction
// metric as before.
func TestReportsNameTheMetric(t *testing.T) {
	instr := profiletest.Profile(profile.ModeExact, "main.main 25 1 1")
	instr.TotalInstructions, instr.TotalSamples = 25, 1
	tests := []struct {
		name   string
		p      *profile.Profile
		tree   bool
		header string
		cols   string
	}{
		{"top instructions", instr, false, "program: demo  mode: exact  granularity: none  instructions: 25  samples: 1", "flat   flat%   sum%   cum    cum%  samples  function"},
		{"top cost", costProfile(), false, "program: demo  mode: exact  granularity: none  cost (ps, table linux-amd64@0123456789abcdef): 1502500  samples: 4", "flat(ps)   flat%   sum%  cum(ps)    cum%  samples  function"},
		{"tree cost", costProfile(), true, "program: demo  mode: exact  granularity: none  cost (ps, table linux-amd64@0123456789abcdef): 1502500  samples: 4", "cum(ps)    cum%  self(ps)   self%  samples  calls  calling context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			var err error
			if tt.tree {
				err = Tree(&b, tt.p, TreeOptions{})
			} else {
				err = Top(&b, tt.p, TopOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(b.String(), "\n")
			if lines[0] != tt.header {
				t.Errorf("header\n%s\nwant\n%s", lines[0], tt.header)
			}
			if got := strings.Join(strings.Fields(lines[1]), " "); got != strings.Join(strings.Fields(tt.cols), " ") {
				t.Errorf("columns\n%s\nwant\n%s", got, tt.cols)
			}
		})
	}
}

// TestPprofCost checks the pprof export of a cost profile: sample type
// cost in nanoseconds (values rounded to the nearest one), period too.
func TestPprofCost(t *testing.T) {
	p := costProfile()
	p.Meta.Mode, p.Meta.Granularity = profile.ModeSample, 4000000
	pp, err := Pprof(p)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pp.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.DefaultSampleType != "cost" || back.SampleType[1].Type != "cost" || back.SampleType[1].Unit != "nanoseconds" ||
		back.PeriodType.Type != "cost" || back.PeriodType.Unit != "nanoseconds" || back.Period != 4000 {
		t.Fatalf("sample types %v, default %q, period %v %d", back.SampleType, back.DefaultSampleType, back.PeriodType, back.Period)
	}
	got := map[string]int64{}
	for _, s := range back.Sample {
		got[s.Location[0].Line[0].Function.Name] = s.Value[1]
	}
	want := map[string]int64{"main.main": 3, "main.alloc": 1500, "main.add": 0}
	for f, v := range want {
		if got[f] != v {
			t.Errorf("%s: %d ns, want %d", f, got[f], v)
		}
	}
}
