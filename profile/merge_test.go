package profile

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestChild(t *testing.T) {
	var root Node
	for _, name := range []string{"m", "c", "x", "a", "c", "m"} {
		root.Child(fn(name)).Instructions++
	}
	var got []string
	for _, c := range root.Children {
		got = append(got, c.Func.Name+":"+strconv.FormatInt(c.Instructions, 10))
	}
	if want := []string{"a:1", "c:2", "m:2", "x:1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("children = %v, want %v", got, want)
	}
	if c := root.Find(fn("m")); c == nil || c.Instructions != 2 {
		t.Errorf("Find(m) = %+v", c)
	}
	if c := root.Find(fn("b")); c != nil {
		t.Errorf("Find(b) = %+v, want nil", c)
	}
	if len(root.Children) != 4 {
		t.Errorf("Find added a child")
	}
}

func TestMerge(t *testing.T) {
	a := build("a;b 3 1 1", "c 2")
	b := build("a;b 4", "a 1", "d 6")
	b.Meta.Program = "other"
	b.TotalSamples = 5
	beforeA, beforeB := a.Copy(), b.Copy()
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := build("a;b 7 1 1", "a 1", "c 2", "d 6")
	want.TotalSamples = 6
	sameProfile(t, m, want)
	if m.Meta.Program != "test" {
		t.Errorf("Meta not taken from the first profile: %+v", m.Meta)
	}
	if !reflect.DeepEqual(a, beforeA) || !reflect.DeepEqual(b, beforeB) {
		t.Errorf("Merge modified its arguments")
	}
	if !isCanonical(m) {
		t.Errorf("Merge result is not canonical")
	}

	// Duplicate siblings of a non-canonical input are summed.
	dup := build()
	dup.Root.Children = []*Node{{Func: fn("b"), Instructions: 1}, {Func: fn("a"), Instructions: 2}, {Func: fn("b"), Instructions: 3}}
	m, err = Merge(dup)
	if err != nil {
		t.Fatal(err)
	}
	want = build("a 2", "b 4")
	want.TotalInstructions = 0
	sameProfile(t, m, want)

	one := build("f 1")
	m, err = Merge(one)
	if err != nil {
		t.Fatal(err)
	}
	if m.Root == one.Root {
		t.Errorf("Merge of one profile shares its tree")
	}
	sameProfile(t, m, one)
}

// Add merges in place: profile by profile, it gives what Merge gives.
func TestAdd(t *testing.T) {
	ps := []*Profile{build("a;b 3 1 1", "c 2"), build("a;b 4", "a 1", "d 6"), build("c;a;b 5 2", "a 7")}
	want, err := Merge(ps...)
	if err != nil {
		t.Fatal(err)
	}
	before := make([]*Profile, len(ps))
	for i, p := range ps {
		before[i] = p.Copy()
	}
	got := ps[0].Copy()
	for _, p := range ps[1:] {
		if err := got.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	sameProfile(t, got, want)
	if !isCanonical(got) {
		t.Errorf("Add's result is not canonical")
	}
	if !reflect.DeepEqual(ps, before) {
		t.Errorf("Add modified its argument")
	}
	other := build("a 1")
	other.Meta.MetricVersion = MetricVersion + 1
	if err := got.Add(other); err == nil || !errors.Is(err, ErrMetric) {
		t.Errorf("Add of another metric: %v, want an error wrapping ErrMetric", err)
	}
	if err := got.Add(nil); err == nil {
		t.Errorf("Add(nil) succeeded")
	}
}

func TestMergeErrors(t *testing.T) {
	other := build("a 1")
	other.Meta.MetricVersion = MetricVersion + 1
	big := build("a 1")
	big.Root.Children[0].Instructions = math.MaxInt64
	bigTotal := build()
	bigTotal.TotalInstructions = math.MaxInt64
	tests := []struct {
		name string
		ps   []*Profile
		want string
	}{
		{"none", nil, "no profiles"},
		{"nil", []*Profile{build(), nil}, "profile 1 is nil"},
		{"metric", []*Profile{build("a 1"), other}, "profile 1 and profile 0: profiles count different metrics: instructions (metric version 2) and instructions (metric version 1)"},
		{"count overflow", []*Profile{big, build("a 1")}, `profile 1: counts overflow int64 at node "a" at depth 1`},
		{"total overflow", []*Profile{bigTotal, build("a 1")}, "profile 1: totals overflow int64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Merge(tt.ps...)
			if m != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Merge = %v, %v; want error %q", m, err, tt.want)
			}
		})
	}
}

func TestWalk(t *testing.T) {
	p := build("b;x 1", "a;y 2", "a 3", "a;y;z 4")
	var got []string
	p.Walk(func(stack []Func, n *Node) {
		if stack[len(stack)-1] != n.Func {
			t.Errorf("stack %v does not end in %v", stack, n.Func)
		}
		var names []string
		for _, f := range stack {
			names = append(names, f.Name)
		}
		got = append(got, strings.Join(names, ";")+" "+strconv.FormatInt(n.Instructions, 10))
	})
	want := []string{"a 3", "a;y 2", "a;y;z 4", "b 0", "b;x 1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Walk visited %q, want %q", got, want)
	}
	(&Profile{}).Walk(func([]Func, *Node) { t.Errorf("Walk of a nil root visited a node") })
}

func TestFlat(t *testing.T) {
	tests := []struct {
		name string
		p    *Profile
		want []FuncStat
	}{
		{"empty", build(), nil},
		{
			// f recurs through g: main;f;g;f counts once in f's Cum.
			"recursion",
			build("main;f;g;f 4", "main;f 2", "main;g 3", "main 1"),
			[]FuncStat{{fn("f"), 6, 6}, {fn("g"), 3, 7}, {fn("main"), 1, 10}},
		},
		{
			"mutual recursion",
			build("a;b;a;b 5", "a;b;a 1"),
			[]FuncStat{{fn("a"), 1, 6}, {fn("b"), 5, 6}},
		},
		{
			"same name, other line",
			&Profile{Root: &Node{Children: []*Node{
				{Func: Func{Name: "f", Line: 2}, Instructions: 1, Children: []*Node{{Func: Func{Name: "f", Line: 1}, Instructions: 2}}},
			}}},
			[]FuncStat{{Func{Name: "f", Line: 1}, 2, 2}, {Func{Name: "f", Line: 2}, 1, 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Flat(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Flat = %+v, want %+v", got, tt.want)
			}
		})
	}
}
