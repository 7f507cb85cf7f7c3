package overlap

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

func TestContexts(t *testing.T) {
	tests := []struct {
		name string
		a, b *profile.Profile
		want float64
	}{
		// A: a ½, a;b ½. B: a ¼, a;b ¼, c ½.
		{"subset", build("a 50", "a;b 50"), build("a 25", "a;b 25", "c 50"), 50},
		{"swapped", build("a 1", "b 3"), build("a 3", "b 1"), 50},
		// The context b is in B with no instructions: it adds min(¼, 0).
		{"zero context", build("a 1", "b 1", "c 2"), build("a 1", "b;c 1"), 25},
		{"thirds", build("a 1", "b 1", "c 1"), build("a 1", "b 2"), 200.0 / 3},
		{"disjoint", build("a 1"), build("b 1"), 0},
		{"same calls, other callers", build("m;f 1"), build("m;g;f 1"), 0},
		{"proportional", build("a 1", "b 2"), build("a 10", "b 20"), 100},
		{"huge counts", build("a 4611686018427387903", "b 4611686018427387903"), build("a 1", "b 1"), 100},
		{"both empty", build(), build(), 100},
		{"no instructions is empty", build("a 0 5 5"), build(), 100},
		{"one empty", build(), build("a 1"), 0},
		// The same function declared in another file (another GOARCH's
		// generated file): identity is the name.
		{"other file", build("a 1"), &profile.Profile{Root: &profile.Node{Children: []*profile.Node{{Func: profile.Func{Name: "a", File: "other.go", Line: 9}, Instructions: 1}}}}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, back := Contexts(tt.a, tt.b), Contexts(tt.b, tt.a)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Contexts = %v, want %v", got, tt.want)
			}
			if got != back {
				t.Errorf("Contexts is not symmetric: %v and %v", got, back)
			}
		})
	}
}

func TestIdentical(t *testing.T) {
	otherFile := func(p *profile.Profile) *profile.Profile {
		for _, c := range p.Root.Children {
			c.Func.File, c.Func.Line = "zsyscall_linux_386.go", 77
		}
		return p
	}
	for _, tt := range []struct {
		name string
		a, b *profile.Profile
		want bool
	}{
		{"same", build("a;b 5 1 2", "c 1"), build("a;b 5 1 2", "c 1"), true},
		{"declared elsewhere", build("a;b 5 1 2", "c 1"), otherFile(build("a;b 5 1 2", "c 1")), true},
		{"other count", build("a;b 5"), build("a;b 6"), false},
		{"other calls", build("a;b 5 1 2"), build("a;b 5 1 3"), false},
		{"other context", build("a;b 5"), build("a;c 5"), false},
		{"extra context", build("a 5"), build("a 5", "b 0"), false},
	} {
		if got := Identical(tt.a, tt.b); got != tt.want || Identical(tt.b, tt.a) != tt.want {
			t.Errorf("%s: Identical = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestFunctions(t *testing.T) {
	tests := []struct {
		name         string
		a, b         *profile.Profile
		want, wantCx float64
	}{
		{"other callers", build("m;f 100"), build("m;g;f 100"), 100, 0},
		// A: f .3, g .7. B: f .3, m .7.
		{"partly", build("m;f 30", "m;g 70"), build("m;g;f 30", "m 70"), 30, 0},
		// Self instructions of f sum over its contexts: A f 4/5, B f 1/2;
		// c is 1/5 and 1/2 in both measures.
		{"summed", build("a;f 2", "b;f 2", "c 1"), build("f 1", "c 1"), 70, 20},
		{"both empty", build(), build(), 100, 100},
		{"one empty", build("a 1"), build(), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, back := Functions(tt.a, tt.b), Functions(tt.b, tt.a)
			if math.Abs(got-tt.want) > 1e-12 || got != back {
				t.Errorf("Functions = %v and reversed %v, want %v", got, back, tt.want)
			}
			if cx := Contexts(tt.a, tt.b); math.Abs(cx-tt.wantCx) > 1e-12 {
				t.Errorf("Contexts = %v, want %v", cx, tt.wantCx)
			}
		})
	}
}

// TestMeasureProperties checks, over every pair of test profiles, that the
// overlaps lie in [0, 100], are symmetric and are exactly 100 for a profile
// with itself, that Functions ≥ Contexts (flattening only merges contexts),
// and that the measures leave their arguments alone.
func TestMeasureProperties(t *testing.T) {
	ps := testProfiles()
	ps["nonCanonical"] = &profile.Profile{Root: &profile.Node{Children: []*profile.Node{
		{Func: fn("b"), Instructions: 3}, {Func: fn("a"), Instructions: 1}, {Func: fn("b"), Instructions: 2},
	}}}
	ps["sample"] = build("main.main;main.work 40000", "main.main;main.work;fmt.Println 10000", "runtime.goexit;main.worker 10000")
	for na, a := range ps {
		for nb, b := range ps {
			before := a.Copy()
			for _, m := range []struct {
				name string
				f    func(a, b *profile.Profile) float64
			}{{"Contexts", Contexts}, {"Functions", Functions}} {
				ab, ba := m.f(a, b), m.f(b, a)
				if ab < 0 || ab > 100 || ab != ba {
					t.Errorf("%s(%s, %s) = %v, reversed %v", m.name, na, nb, ab, ba)
				}
				if na == nb && ab != 100 {
					t.Errorf("%s(%s, itself) = %v, want 100", m.name, na, ab)
				}
			}
			if c, f := Contexts(a, b), Functions(a, b); f < c-1e-9 {
				t.Errorf("Functions(%s, %s) = %v < Contexts %v", na, nb, f, c)
			}
			Diff(a, b, 0)
			Size(a)
			if !reflect.DeepEqual(a, before) {
				t.Errorf("measures modified %s", na)
			}
		}
	}
}

func TestDeltaB(t *testing.T) {
	tests := []struct {
		approx, exact int64
		want          float64
	}{
		{100, 100, 0},
		{99, 100, -0.01},
		{101, 100, 0.01},
		{0, 100, -1},
		{math.MaxInt64, math.MaxInt64 - 1, 1.0 / (math.MaxInt64 - 1)},
		{0, 0, 0},
		{5, 0, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := DeltaB(tt.approx, tt.exact); got != tt.want && math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("DeltaB(%d, %d) = %v, want %v", tt.approx, tt.exact, got, tt.want)
		}
	}
}

func TestSize(t *testing.T) {
	dup := &profile.Profile{Root: &profile.Node{Children: []*profile.Node{
		{Func: fn("b"), Children: []*profile.Node{{Func: fn("x")}}}, {Func: fn("a")}, {Func: fn("b"), Children: []*profile.Node{{Func: fn("x")}, {Func: fn("y")}}},
	}}}
	for _, tt := range []struct {
		p    *profile.Profile
		want int
	}{
		{&profile.Profile{}, 0},
		{build(), 0},
		{build("a;b 1", "a;c 0", "d 1"), 4},
		{dup, 4}, // a, b, b;x, b;y
		{chain(10), 10},
	} {
		if got := Size(tt.p); got != tt.want {
			t.Errorf("Size(%s) = %d, want %d", folded(tt.p), got, tt.want)
		}
	}
}

func TestDiff(t *testing.T) {
	a := build("a 50", "a;b 30", "c 20")
	b := build("a 50", "a;b 10", "d 40")
	tests := []struct {
		name string
		a, b *profile.Profile
		n    int
		want []string
	}{
		// a is equal and left out; a;b and c tie at 20 points and come in stack order.
		{"all", a, b, 0, []string{"d 0 40", "a;b 30 10", "c 20 0"}},
		{"negative n is all", a, b, -1, []string{"d 0 40", "a;b 30 10", "c 20 0"}},
		{"top 2", a, b, 2, []string{"d 0 40", "a;b 30 10"}},
		{"reversed", b, a, 2, []string{"d 40 0", "a;b 10 30"}},
		{"more than there are", a, b, 10, []string{"d 0 40", "a;b 30 10", "c 20 0"}},
		{"other totals", build("a 1", "b 1"), build("a 2", "b 2", "c 4"), 0, []string{"c 0 50", "a 50 25", "b 50 25"}},
		{"one empty", build(), build("a 1", "b 3"), 0, []string{"b 0 75", "a 0 25"}},
		{"both empty", build("a 0"), build(), 0, nil},
		{"equal", a, a.Copy(), 0, nil},
		{"proportional", build("a 1", "b 1"), build("a 3", "b 3"), 0, nil},
		{"prefix first", build("x;y;z 1", "x;y 1", "w 2"), build(), 0, []string{"w 50 0", "x;y 25 0", "x;y;z 25 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range Diff(tt.a, tt.b, tt.n) {
				var names []string
				for _, f := range d.Stack {
					names = append(names, f.Name)
				}
				got = append(got, strings.Join(names, ";")+" "+ftoa(d.A)+" "+ftoa(d.B))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
		})
	}
	// Full stacks of deep contexts, not just their functions.
	d := Diff(build("x;y;z 1"), build("x;y 1"), 0)
	if want := []profile.Func{fn("x"), fn("y"), fn("z")}; len(d) != 2 || !reflect.DeepEqual(d[1].Stack, want) {
		t.Errorf("Diff = %+v, want the stack x;y;z", d)
	}
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// TestDeep checks that a CCT far deeper than any recursive traversal would
// like goes through every operation.
func TestDeep(t *testing.T) {
	const depth = 50_000
	p := chain(depth)
	b := encode(t, p)
	q, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := Size(q); got != depth {
		t.Errorf("Size = %d, want %d", got, depth)
	}
	if got := Contexts(p, q); got != 100 {
		t.Errorf("Contexts = %v, want 100", got)
	}
	flat := q.Flat()
	if len(flat) != 2 || flat[0].Cum != depth || flat[1].Cum != depth-1 || flat[0].Self != depth/2 {
		t.Errorf("Flat = %+v", flat)
	}
	m, err := profile.Merge(p, q)
	if err != nil || m.SumInstructions() != 2*depth {
		t.Errorf("Merge: %v, sum %d", err, m.SumInstructions())
	}
	if d := Diff(p, m, 1); len(d) != 0 {
		t.Errorf("Diff of proportional profiles = %v, want none", d)
	}
}
