package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/profile/profiletest"
)

func TestCompare(t *testing.T) {
	exact := func(folded ...string) *profile.Profile { return profiletest.Profile(profile.ModeExact, folded...) }
	sample := func(folded ...string) *profile.Profile { return profiletest.Profile(profile.ModeSample, folded...) }
	tests := []struct {
		name      string
		a, b      *profile.Profile
		first     string  // first line of the output
		functions float64 // function overlap
		identical bool
		exact     string
		deltaB    float64
		diffs     int
		contains  []string
	}{
		{
			name: "identical", a: demoProfile(), b: demoProfile(),
			first: "overlap: 100.00%", functions: 100, identical: true, exact: "b",
			contains: []string{"the profiles are identical", "δb: 0 "},
		},
		{
			// A: a ½, a;b ½. B: a ¼, a;b ¼, c ½: min(½,¼)+min(½,¼) = 50%.
			name: "subset", a: exact("a 50", "a;b 50"), b: exact("a 25", "a;b 25", "c 50"),
			first: "overlap: 50.00%", functions: 50, exact: "b", diffs: 3,
			contains: []string{"calling contexts whose shares differ most:", "0.00%  50.00%      +50.00  c\n"},
		},
		{
			name: "swapped", a: exact("a 1", "b 3"), b: exact("a 3", "b 1"),
			first: "overlap: 50.00%", functions: 50, exact: "b", diffs: 2,
		},
		{
			// min(⅓,⅓) + min(⅓,⅔) = ⅔.
			name: "thirds", a: exact("a 1", "b 1", "c 1"), b: exact("a 1", "b 2"),
			first: "overlap: 66.67%", functions: 200.0 / 3, exact: "b", diffs: 2,
		},
		{
			// The same function called by another caller is another
			// context, but the same function.
			name: "other callers", a: exact("m;f 100"), b: exact("m;g;f 100"),
			first: "overlap: 0.00%", functions: 100, exact: "b", diffs: 2,
		},
		{
			name: "proportional", a: exact("a 1", "b 2"), b: exact("a 10", "b 20"),
			first: "overlap: 100.00%", functions: 100, exact: "b", deltaB: -0.9,
			contains: []string{"no calling context's share differs", "δb: -0.9 (A's instructions against B's"},
		},
		{
			// 99.999999% must not round to a claim of identity.
			name: "almost", a: exact("a 1", "b 99999999"), b: exact("a 2", "b 99999998"),
			first: "overlap: 99.99%", functions: 99.999999, exact: "b", diffs: 2,
		},
		{
			// B: a 990/1010, so min(1, 990/1010) = 98.0198%.
			// The exact profile is the reference for δb whichever side it is.
			name: "exact side a", a: exact("a 1000"), b: sample("a 990", "b 20"),
			first: "overlap: 98.02%", functions: 100 * 990.0 / 1010, exact: "a", deltaB: 0.01, diffs: 2,
			contains: []string{"δb: +0.01 (B's instructions against A's, taken as exact)", "mode                 exact  sample"},
		},
		{
			name: "exact side b", a: sample("a 990", "b 20"), b: exact("a 1000"),
			first: "overlap: 98.02%", functions: 100 * 990.0 / 1010, exact: "b", deltaB: 0.01, diffs: 2,
		},
		{
			name: "empty", a: exact(), b: exact("a 1"),
			first: "overlap: 0.00%", functions: 0, exact: "b", deltaB: -1, diffs: 1,
			contains: []string{"warning: A has no instructions in calling contexts"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			r, err := Compare(&b, tt.a, tt.b, CompareOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if first, _, _ := strings.Cut(out, "\n"); first != tt.first {
				t.Errorf("first line %q, want %q", first, tt.first)
			}
			if math.Abs(r.FunctionOverlap-tt.functions) > 1e-9 {
				t.Errorf("function overlap %v, want %v", r.FunctionOverlap, tt.functions)
			}
			if r.Overlap != overlap.Contexts(tt.a, tt.b) {
				t.Errorf("overlap %v, want overlap.Contexts %v", r.Overlap, overlap.Contexts(tt.a, tt.b))
			}
			if r.Identical != tt.identical {
				t.Errorf("identical %v, want %v", r.Identical, tt.identical)
			}
			if r.Exact != tt.exact {
				t.Errorf("exact side %q, want %q", r.Exact, tt.exact)
			}
			if math.Abs(r.DeltaB-tt.deltaB) > 1e-12 {
				t.Errorf("δb %v, want %v", r.DeltaB, tt.deltaB)
			}
			if len(r.Diffs) != tt.diffs {
				t.Errorf("%d differing contexts, want %d", len(r.Diffs), tt.diffs)
			}
			if r.Identical != strings.Contains(out, "identical") {
				t.Errorf("identical is %v, but the output says:\n%s", r.Identical, out)
			}
			for _, want := range tt.contains {
				if !strings.Contains(out, want) {
					t.Errorf("the output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// Metadata other than the metric does not make profiles differ: the same
// tree on another GOARCH is identical.
func TestCompareIdenticalAcrossMachines(t *testing.T) {
	a, b := demoProfile(), demoProfile()
	b.Meta.GOARCH, b.Meta.GoVersion = "arm64", "go1.26.9"
	r, err := Compare(&bytes.Buffer{}, a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Identical || r.Overlap != 100 || len(r.Warnings) != 0 {
		t.Errorf("identical %v, overlap %v, warnings %q", r.Identical, r.Overlap, r.Warnings)
	}
	// Equal instructions but other samples or calls are not identical.
	b.Root.Children[0].Calls++
	if r, _ := Compare(&bytes.Buffer{}, a, b, CompareOptions{}); r.Identical {
		t.Error("profiles with different calls are identical")
	}
}

func TestCompareWarnings(t *testing.T) {
	a, b := demoProfile(), demoProfile()
	b.Meta.Program = "other"
	var out bytes.Buffer
	r, err := Compare(&out, a, b, CompareOptions{NameA: "a.kprof", NameB: "b.kprof"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `a.kprof is a profile of "demo", b.kprof of "other"`
	if len(r.Warnings) != 1 || r.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
	lines := strings.Split(out.String(), "\n")
	if lines[0] != "overlap: 100.00%" || !strings.Contains(out.String(), "\nwarning: "+want+"\n") {
		t.Errorf("output:\n%s", out.String())
	}

	b = demoProfile()
	b.Meta.MetricVersion = profile.MetricVersion + 1
	out.Reset()
	if _, err := Compare(&out, a, b, CompareOptions{}); err == nil || !errors.Is(err, profile.ErrMetric) || !strings.Contains(err.Error(), "metric version 2") {
		t.Errorf("metric versions differ: error %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("output for refused profiles:\n%s", out.String())
	}
}

func TestCompareTop(t *testing.T) {
	a := profiletest.Profile(profile.ModeExact, "a 1", "b 2", "c 3", "d 4")
	b := profiletest.Profile(profile.ModeExact, "a 4", "b 3", "c 2", "d 1")
	for _, tt := range []struct{ top, want int }{{0, 4}, {-1, 0}, {1, 1}, {3, 3}} {
		r, err := Compare(&bytes.Buffer{}, a, b, CompareOptions{Top: tt.top})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Diffs) != tt.want {
			t.Errorf("Top %d: %d contexts, want %d", tt.top, len(r.Diffs), tt.want)
		}
	}
}

func TestCompareJSON(t *testing.T) {
	for _, tt := range []struct {
		name   string
		a, b   *profile.Profile
		deltaB any
	}{
		{"finite", profiletest.Profile(profile.ModeSample, "a 50", "a;b 50"), profiletest.Profile(profile.ModeExact, "a 25", "a;b 25", "c 50"), 0.0},
		// δb of counts against an exact count of 0 is infinite: null.
		{"infinite", profiletest.Profile(profile.ModeSample, "a 1"), profiletest.Profile(profile.ModeExact), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			r, err := Compare(&b, tt.a, tt.b, CompareOptions{JSON: true, NameA: "a.kprof"})
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Overlap   float64  `json:"overlap"`
				Identical bool     `json:"identical"`
				DeltaB    any      `json:"delta_b"`
				Exact     string   `json:"exact"`
				Warnings  []string `json:"warnings"`
				A         Side     `json:"a"`
				Diffs     []struct {
					Stack []struct{ Name, File string }
					A, B  float64
				} `json:"diffs"`
			}
			if err := json.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatalf("%v\n%s", err, b.Bytes())
			}
			if got.Overlap != r.Overlap || got.DeltaB != tt.deltaB || got.Exact != "b" || got.A != r.A || got.Warnings == nil {
				t.Errorf("JSON %+v\nresult %+v", got, r)
			}
			if len(got.Diffs) != len(r.Diffs) {
				t.Fatalf("%d diffs in JSON, %d in the result", len(got.Diffs), len(r.Diffs))
			}
			for i, d := range got.Diffs {
				if d.A != r.Diffs[i].A || d.B != r.Diffs[i].B || len(d.Stack) != len(r.Diffs[i].Stack) || d.Stack[0].File == "" {
					t.Errorf("diff %d: %+v, want %+v", i, d, r.Diffs[i])
				}
			}
		})
	}
}

func TestStackString(t *testing.T) {
	var stack []profile.Func
	for _, n := range strings.Fields("a b c d e f g h i j k l m") {
		stack = append(stack, profile.Func{Name: n})
	}
	for _, tt := range []struct {
		n    int
		want string
	}{
		{1, "a"},
		{3, "a > b > c"},
		{11, "a > b > c > d > e > f > g > h > i > j > k"},
		{13, "a > b > c > d > … 3 more … > h > i > j > k > l > m"},
	} {
		if got := StackString(stack[:tt.n]); got != tt.want {
			t.Errorf("%d frames: %q, want %q", tt.n, got, tt.want)
		}
	}
}
