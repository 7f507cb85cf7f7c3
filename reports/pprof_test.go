package reports

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/profile/profiletest"
)

func TestPprof(t *testing.T) {
	tests := []struct {
		name string
		p    *profile.Profile
	}{
		{"exact", demoProfile()},
		{"sampled", sampledProfile()},
		{"empty", profiletest.Profile(profile.ModeExact)},
		// Contexts without counts get no sample; their callees do.
		{"zero contexts", profiletest.Profile(profile.ModeSample, "a 0", "a;b 0 0 7", "a;b;c 5 1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pp, err := Pprof(tt.p)
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
			if err := back.CheckValid(); err != nil {
				t.Fatal(err)
			}
			if back.DefaultSampleType != "instructions" || len(back.SampleType) != 2 ||
				back.SampleType[0].Type != "samples" || back.SampleType[1].Type != "instructions" {
				t.Fatalf("sample types %v, default %q", back.SampleType, back.DefaultSampleType)
			}
			var samples, instructions int64
			for _, s := range back.Sample {
				samples += s.Value[0]
				instructions += s.Value[1]
				if s.Value[0] == 0 && s.Value[1] == 0 {
					t.Errorf("sample with no counts: %v", stackOf(s))
				}
			}
			if want := tt.p.SumInstructions(); instructions != want {
				t.Errorf("instructions add up to %d, want %d", instructions, want)
			}
			if want := sumSamples(tt.p); samples != want {
				t.Errorf("samples add up to %d, want %d", samples, want)
			}
			if got, want := len(back.Function), len(tt.p.Flat()); got != want {
				t.Errorf("%d functions, want %d", got, want)
			}
			// Every context with counts is one sample, its stack leaf first.
			want := map[string][2]int64{}
			tt.p.Walk(func(stack []profile.Func, n *profile.Node) {
				if n.Samples != 0 || n.Instructions != 0 {
					var names []string
					for i := len(stack) - 1; i >= 0; i-- {
						names = append(names, stack[i].Name+"@"+stack[i].File)
					}
					want[strings.Join(names, " ")] = [2]int64{n.Samples, n.Instructions}
				}
			})
			if len(back.Sample) != len(want) {
				t.Errorf("%d samples, want %d", len(back.Sample), len(want))
			}
			for _, s := range back.Sample {
				if v, ok := want[stackOf(s)]; !ok || v != [2]int64{s.Value[0], s.Value[1]} {
					t.Errorf("sample %q %v, want %v (present %v)", stackOf(s), s.Value, v, ok)
				}
			}
		})
	}
}

func TestPprofFunctions(t *testing.T) {
	pp, err := Pprof(sampledProfile())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range pp.Location {
		if len(l.Line) != 1 {
			t.Fatalf("location %d has %d lines", l.ID, len(l.Line))
		}
		f := l.Line[0].Function
		if l.Line[0].Line != f.StartLine {
			t.Errorf("%s: line %d, declared at %d", f.Name, l.Line[0].Line, f.StartLine)
		}
		got = append(got, filepath.Base(f.Filename)+":"+f.Name)
	}
	// Both main.work functions are kept apart.
	if want := "main.go:main.main main.go:main.work work.go:main.work"; strings.Join(got, " ") != want {
		t.Errorf("functions %q, want %q", strings.Join(got, " "), want)
	}
	if pp.Period != 100 || pp.PeriodType.Type != "instructions" {
		t.Errorf("period %d %v, want 100 instructions", pp.Period, pp.PeriodType)
	}
}

func TestPprofDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		pp, err := Pprof(demoProfile())
		if err != nil {
			t.Fatal(err)
		}
		if err := pp.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two exports of the same profile differ")
	}
}

// TestGoToolPprof runs the real go tool pprof on an export.
func TestGoToolPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	pp, err := Pprof(demoProfile())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "demo.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCmd, "tool", "pprof", "-top", path)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	// The first row after the column headings is the top function.
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") && i+1 < len(lines) {
			f := strings.Fields(lines[i+1])
			if len(f) != 6 || f[0] != "570" || f[5] != "main.work" {
				t.Errorf("top row %q, want main.work with 570 flat\n%s", lines[i+1], out)
			}
			if !strings.Contains(string(out), "of 1000 total") {
				t.Errorf("pprof's total is not 1000\n%s", out)
			}
			return
		}
	}
	t.Fatalf("no table in go tool pprof -top output:\n%s", out)
}

// stackOf names a sample's stack, leaf first, by function and file.
func stackOf(s *pprofile.Sample) string {
	var names []string
	for _, l := range s.Location {
		f := l.Line[0].Function
		names = append(names, f.Name+"@"+f.Filename)
	}
	return strings.Join(names, " ")
}

func sumSamples(p *profile.Profile) int64 {
	var n int64
	p.Walk(func(_ []profile.Func, c *profile.Node) { n += c.Samples })
	return n
}

// The pprof export's comments: the metadata, then one "key=value" per
// label, as the agent's live profiles carry them.
func TestPprofComments(t *testing.T) {
	labelled := demoProfile()
	labelled.Meta.Labels = []profile.Label{{Key: "env", Value: "prod"}, {Key: "version", Value: "v1.2.3"}}
	for _, tc := range []struct {
		name string
		p    *profile.Profile
		want string
	}{
		{"no labels", demoProfile(), "kprof profile of demo, kprof v0.1.0, go1.26.8, linux/amd64|mode exact, granularity 0, jitter 0, seed 0, instruction metric 1|1000 instructions in total, 1000 in calling contexts, 0 samples|57 calls counted"},
		{"labels", labelled, "kprof profile of demo, kprof v0.1.0, go1.26.8, linux/amd64|mode exact, granularity 0, jitter 0, seed 0, instruction metric 1|1000 instructions in total, 1000 in calling contexts, 0 samples|env=prod|version=v1.2.3|57 calls counted"},
	} {
		pp, err := Pprof(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(pp.Comments, "|"); got != tc.want {
			t.Errorf("%s: comments\n %q, want\n %q", tc.name, got, tc.want)
		}
	}
}
