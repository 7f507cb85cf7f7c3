package overlap

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

// fn returns a test function named name.
func fn(name string) profile.Func {
	return profile.Func{Name: name, File: "src/" + name + ".go", Line: 10 * len(name)}
}

// build returns an exact-mode profile from folded stacks: "a;b;c 7" adds 7
// instructions to the context a→b→c, "a;b;c 7 2 1" also 2 samples and 1
// call.
func build(folded ...string) *profile.Profile {
	p := &profile.Profile{
		Meta: profile.Meta{Mode: profile.ModeExact, MetricVersion: profile.MetricVersion, GOOS: "linux", GOARCH: "amd64", Program: "test"},
		Root: &profile.Node{},
	}
	for _, line := range folded {
		if err := p.AddFolded(line, fn); err != nil {
			panic(err)
		}
	}
	return p
}

// folded renders p's contexts as sorted folded stacks, for messages.
func folded(p *profile.Profile) string {
	var lines []string
	p.Canonical().Walk(func(stack []profile.Func, n *profile.Node) {
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
func chain(depth int) *profile.Profile {
	p := build()
	n := p.Root
	for i := range depth {
		n = n.Child(fn([2]string{"even", "odd"}[i%2]))
		n.Instructions = 1
	}
	p.TotalInstructions = int64(depth)
	return p
}

// encode returns p's file encoding.
func encode(t testing.TB, p *profile.Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testProfiles are profiles of many shapes for the properties every measure
// has.
func testProfiles() map[string]*profile.Profile {
	sample := build("main.main;main.work;fmt.Println 120 3 7", "main.main;main.work 5000 40 1", "main.main 12 0 1",
		"main.main;main.work;main.work;main.work 77 1 2", "runtime.goexit;main.worker 300 2 1")
	sample.Meta.Mode, sample.Meta.Granularity = profile.ModeSample, 10_000
	odd := &profile.Profile{Root: &profile.Node{Children: []*profile.Node{
		{Func: profile.Func{Name: "héllo.世界"}, Instructions: 1},
		{Func: profile.Func{Name: "f", File: "", Line: 0}},
		{Func: profile.Func{Name: "f", File: "f.go", Line: 1 << 30}, Calls: 1 << 50},
	}}}
	return map[string]*profile.Profile{
		"zero":   {},
		"empty":  build(),
		"one":    build("f 7"),
		"sample": sample,
		"huge":   build("f 9223372036854775807"),
		"odd":    odd,
		"deep":   chain(100),
	}
}
