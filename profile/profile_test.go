package profile

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fn returns a test function named name.
func fn(name string) Func {
	return Func{Name: name, File: "src/" + name + ".go", Line: 10 * len(name)}
}

// build returns a canonical exact-mode profile from folded stacks: "a;b;c 7"
// adds 7 instructions to the context a→b→c, "a;b;c 7 2 1" also 2 samples and
// 1 call. TotalInstructions is the sum of the instructions.
func build(folded ...string) *Profile {
	p := &Profile{
		Meta: Meta{Mode: ModeExact, MetricVersion: MetricVersion, GOOS: "linux", GOARCH: "amd64", Program: "test"},
		Root: &Node{},
	}
	for _, line := range folded {
		if err := p.AddFolded(line, fn); err != nil {
			panic(err)
		}
	}
	return p
}

// folded renders p's contexts as sorted folded stacks, for messages.
func folded(p *Profile) string {
	var lines []string
	p.Canonical().Walk(func(stack []Func, n *Node) {
		var names []string
		for _, f := range stack {
			names = append(names, f.Name)
		}
		lines = append(lines, strings.Join(names, ";")+" "+strconv.FormatInt(n.Instructions, 10))
	})
	return strings.Join(lines, ", ")
}

// chain returns a profile that is one stack depth deep, alternating two
// functions, with one instruction per context.
func chain(depth int) *Profile {
	p := build()
	n := p.Root
	for i := range depth {
		n = n.Child(fn([2]string{"even", "odd"}[i%2]))
		n.Instructions = 1
	}
	p.TotalInstructions = int64(depth)
	return p
}

func TestCheckValid(t *testing.T) {
	if err := build("a;b 3", "a;c 4", "d 1").CheckValid(); err != nil {
		t.Fatalf("valid profile: %v", err)
	}
	if err := (&Profile{Root: &Node{}}).CheckValid(); err != nil {
		t.Fatalf("empty profile: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(p *Profile)
		want   string
	}{
		{"nil root", func(p *Profile) { p.Root = nil }, "no root"},
		{"root func", func(p *Profile) { p.Root.Func = fn("r") }, "root node has function"},
		{"root counts", func(p *Profile) { p.Root.Instructions = 1 }, "root node has counts"},
		{"negative granularity", func(p *Profile) { p.Meta.Granularity = -1 }, "negative granularity"},
		{"negative jitter", func(p *Profile) { p.Meta.Jitter = -1 }, "negative jitter"},
		{"negative metric", func(p *Profile) { p.Meta.MetricVersion = -1 }, "negative metric version"},
		{"negative total", func(p *Profile) { p.TotalInstructions = -1 }, "negative total instructions"},
		{"negative samples total", func(p *Profile) { p.TotalSamples = -1 }, "negative total samples"},
		{"empty name", func(p *Profile) { p.Root.Children[0].Func.Name = "" }, "empty function name"},
		{"negative line", func(p *Profile) { p.Root.Children[0].Func.Line = -1 }, "negative line"},
		{"negative samples", func(p *Profile) { p.Root.Children[0].Samples = -1 }, "negative samples"},
		{"negative instructions", func(p *Profile) { p.Root.Children[0].Children[0].Instructions = -2 }, `node "b" at depth 2 has negative instructions -2`},
		{"negative calls", func(p *Profile) { p.Root.Children[1].Calls = -1 }, "negative calls"},
		{"nil child", func(p *Profile) { p.Root.Children[0].Children[1] = nil }, `child 1 of node "a" at depth 1 is nil`},
		{"unsorted", func(p *Profile) {
			k := p.Root.Children
			k[0], k[1] = k[1], k[0]
		}, "out of canonical order"},
		{"duplicate", func(p *Profile) { p.Root.Children[1].Func = p.Root.Children[0].Func }, "duplicate"},
		{"sum overflow", func(p *Profile) {
			p.Root.Children[0].Instructions = math.MaxInt64
			p.Root.Children[1].Instructions = 1
		}, "sum of instructions over all nodes overflows int64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build("a;b 3", "a;c 4", "d 1")
			tt.mutate(p)
			err := p.CheckValid()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckValid() = %v, want ErrInvalid with %q", err, tt.want)
			}
		})
	}
}

func TestCanonicalize(t *testing.T) {
	// a → {c, b, c, nil} where the two c's have children to merge in turn.
	p := &Profile{Root: &Node{Children: []*Node{
		{Func: fn("a"), Instructions: 1, Children: []*Node{
			{Func: fn("c"), Instructions: 2, Samples: 1, Children: []*Node{{Func: fn("e"), Instructions: 5}}},
			{Func: fn("b"), Instructions: 3},
			{Func: fn("c"), Instructions: 4, Calls: 2, Children: []*Node{{Func: fn("e"), Instructions: 6}, {Func: fn("d"), Instructions: 7}}},
			nil,
		}},
	}}}
	p.Canonicalize()
	if err := p.CheckValid(); err != nil {
		t.Fatalf("CheckValid after Canonicalize: %v", err)
	}
	want := &Profile{Root: &Node{Children: []*Node{
		{Func: fn("a"), Instructions: 1, Children: []*Node{
			{Func: fn("b"), Instructions: 3},
			{Func: fn("c"), Instructions: 6, Samples: 1, Calls: 2, Children: []*Node{{Func: fn("d"), Instructions: 7}, {Func: fn("e"), Instructions: 11}}},
		}},
	}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Canonicalize = %s, want %s", folded(p), folded(want))
	}
	again := p.Copy()
	again.Canonicalize()
	if !reflect.DeepEqual(again, p) {
		t.Errorf("Canonicalize is not idempotent")
	}

	// Functions differing only in file or line are distinct, ordered by them.
	q := &Profile{Root: &Node{Children: []*Node{
		{Func: Func{Name: "f", File: "b.go", Line: 1}},
		{Func: Func{Name: "f", File: "a.go", Line: 2}},
		{Func: Func{Name: "f", File: "a.go", Line: 1}},
	}}}
	q.Canonicalize()
	var got []Func
	for _, c := range q.Root.Children {
		got = append(got, c.Func)
	}
	wantOrder := []Func{{"f", "a.go", 1}, {"f", "a.go", 2}, {"f", "b.go", 1}}
	if !reflect.DeepEqual(got, wantOrder) {
		t.Errorf("canonical order = %v, want %v", got, wantOrder)
	}

	var z Profile
	z.Canonicalize()
	if z.Root == nil || z.CheckValid() != nil {
		t.Errorf("Canonicalize of the zero Profile: root %v, CheckValid %v", z.Root, z.CheckValid())
	}
}

func TestCopy(t *testing.T) {
	p := build("a;b 3", "a;c 4", "d 1")
	q := p.Copy()
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("Copy differs from the original")
	}
	q.Root.Children[0].Children[0].Instructions = 100
	q.Root.Children[0].Child(fn("z"))
	q.Meta.Program = "other"
	if p.Root.Children[0].Children[0].Instructions != 3 || len(p.Root.Children[0].Children) != 2 || p.Meta.Program != "test" {
		t.Errorf("changing the copy changed the original")
	}
	if (&Profile{}).Copy().Root != nil {
		t.Errorf("Copy of a nil root is not nil")
	}
}
