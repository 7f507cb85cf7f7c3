package reports

import (
	"fmt"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/kprof/kprof/profile"
)

// Pprof converts p to a pprof profile, which go tool pprof, its flame graph
// and continuous-profiling services read (write it with its Write method,
// which compresses it with gzip).
//
// The profile has two sample types, samples/count and instructions/count,
// instructions being the default; its period is the sampling granularity in
// instructions. Each function of p becomes one Function (name, file and
// declaration line as StartLine) and one Location whose Line is the
// declaration line: kprof attributes instructions to functions, not to
// lines. Each calling context with non-zero samples or instructions becomes
// one Sample whose stack is leaf first, as pprof expects, so the samples'
// instructions add up to p's SumInstructions. Calls, the metadata and the
// labels (one "key=value" comment each) go into the profile's comments (go
// tool pprof -comments).
//
// The result is deterministic: functions and locations are in canonical
// order, samples in preorder of the canonical tree.
func Pprof(p *profile.Profile) (*pprofile.Profile, error) {
	p, err := prepare(p)
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	m := &p.Meta
	counted, unit, div := m.SampleType()
	out := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{
			{Type: "samples", Unit: "count"},
			{Type: counted, Unit: unit},
		},
		DefaultSampleType: counted,
		PeriodType:        &pprofile.ValueType{Type: counted, Unit: unit},
		Period:            (m.Granularity + div/2) / div,
		Comments: []string{
			"kprof profile" + describe(" of %s", m.Program) + describe(", kprof %s", m.KprofVersion) +
				describe(", %s", m.GoVersion) + describe(", %s", strings.Trim(m.GOOS+"/"+m.GOARCH, "/")),
			fmt.Sprintf("mode %s, granularity %d, jitter %d, seed %d, instruction metric %d", m.Mode, m.Granularity, m.Jitter, m.Seed, m.MetricVersion),
			fmt.Sprintf("%d instructions in total, %d in calling contexts, %d samples", p.TotalInstructions, p.SumInstructions(), p.TotalSamples),
		},
	}
	if m.Metric != "" {
		out.Comments[2] = fmt.Sprintf("metric %s, table %s: %d ps in total, %d in calling contexts, %d samples", m.Metric, m.MetricTable, p.TotalInstructions, p.SumInstructions(), p.TotalSamples)
	}
	// The labels, one comment "key=value" each, as the agent's live
	// profiles carry them (agent.MetaComments).
	for _, l := range m.Labels {
		out.Comments = append(out.Comments, l.Key+"="+l.Value)
	}
	// One mapping that says the functions are known, so pprof does not look
	// for a binary to symbolize addresses with.
	mapping := &pprofile.Mapping{
		ID:             1,
		File:           m.Program,
		HasFunctions:   true,
		HasFilenames:   true,
		HasLineNumbers: true,
	}
	out.Mapping = []*pprofile.Mapping{mapping}
	locs := map[profile.Func]*pprofile.Location{}
	for i, s := range p.Flat() {
		f := s.Func
		fn := &pprofile.Function{
			ID:         uint64(i + 1),
			Name:       f.Name,
			SystemName: f.Name,
			Filename:   f.File,
			StartLine:  int64(f.Line),
		}
		loc := &pprofile.Location{
			ID:      uint64(i + 1),
			Mapping: mapping,
			Line:    []pprofile.Line{{Function: fn, Line: int64(f.Line)}},
		}
		out.Function = append(out.Function, fn)
		out.Location = append(out.Location, loc)
		locs[f] = loc
	}
	var calls int64
	p.Walk(func(stack []profile.Func, n *profile.Node) {
		calls += n.Calls
		if n.Samples == 0 && n.Instructions == 0 {
			return
		}
		s := &pprofile.Sample{
			Location: make([]*pprofile.Location, len(stack)),
			Value:    []int64{n.Samples, (n.Instructions + div/2) / div},
		}
		for i, f := range stack {
			s.Location[len(stack)-1-i] = locs[f]
		}
		out.Sample = append(out.Sample, s)
	})
	if calls > 0 {
		out.Comments = append(out.Comments, fmt.Sprintf("%d calls counted", calls))
	}
	if err := out.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof: %w", err) // a bug in this function
	}
	return out, nil
}

// describe formats value into format, or returns "" for an empty value.
func describe(format, value string) string {
	if value == "" {
		return ""
	}
	return fmt.Sprintf(format, value)
}
