package rewrite

import (
	"reflect"
	"strings"
	"testing"
)

// TestQuietAcrossPackages plans calls of another package's functions with
// that package's facts (Options.Quiet): a call of a quiet one needs no
// check or flush before it (the callee cannot stop the caller), though
// its caller pushes (the callee samples in its own name, above it) and
// flushes before it (so that the callee's check sees what the caller
// ran); a function that calls quiet functions is not quiet itself (it
// pushes, and its caller must flush before it too: jess's litValue, which
// calls lit.v, was never sampled); and the package's own quiet functions
// are its facts (Output.Quiet).
func TestQuietAcrossPackages(t *testing.T) {
	const src = `package p

import "unicode/utf8"

func width(rs []rune) int {
	n := 0
	for _, r := range rs {
		n += utf8.RuneLen(r)
	}
	return n
}

func isNaN(x float64) bool { return x != x }

func less(x, y float64) bool { return (isNaN(x) && !isNaN(y)) || x < y }

func loop(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i
	}
	return s
}
`
	facts := map[string]int64{"unicode/utf8.RuneLen": 12}
	opts := DefaultOptions
	opts.Quiet = func(pkg, name string) (int64, bool) {
		n, ok := facts[name]
		return n, ok && strings.HasPrefix(name, pkg+".")
	}
	_, out := instrumentWith(t, "p.go", []byte(src), opts)
	plan := func(out *Output, name string) *FuncPlan {
		for _, p := range out.Plans {
			if p.Name == name {
				return p
			}
		}
		t.Fatalf("no plan for %s", name)
		return nil
	}
	flushes := func(set map[Point]bool) int {
		n := 0
		for _, f := range set {
			if f {
				n++
			}
		}
		return n
	}
	if p := plan(out, "p.width"); p.Leaf || flushes(p.Flush) != 0 || flushes(p.QuietFlush) == 0 {
		t.Errorf("p.width calls a quiet function of another package: leaf %v, %d flushes, %d before quiet calls; want a function that pushes and flushes only before the quiet call", p.Leaf, flushes(p.Flush), flushes(p.QuietFlush))
	}
	// isNaN: x != x, return.
	if want := map[string]int64{"p.isNaN": 2}; !reflect.DeepEqual(out.Quiet, want) {
		t.Errorf("Output.Quiet = %v, want %v (quiet functions of p; not less, which calls isNaN, nor loop, which loops)", out.Quiet, want)
	}
	// Without the facts, the call stays a call.
	_, out = instrument(t, "p.go", []byte(src))
	if p := plan(out, "p.width"); p.Leaf || flushes(p.Flush) == 0 {
		t.Errorf("p.width without facts: leaf %v, %d flushes; want a function that calls and flushes before it", p.Leaf, flushes(p.Flush))
	}
}
