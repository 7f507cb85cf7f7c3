package rewrite

import (
	"os"
	"testing"
)

// TestLazyPush checks which functions of testdata/progs/lazy push lazily
// (FuncPlan.Lazy): those that call on some paths only, outside loops, and
// have no defer.
func TestLazyPush(t *testing.T) {
	src, err := os.ReadFile("../testdata/progs/lazy/main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, out := instrument(t, "lazy.go", src)
	want := map[string]bool{
		"main.inString":     true,  // calls on a control character only
		"main.classify":     true,  // calls in one clause
		"main.depthOf":      true,  // recurses on one path
		"main.mustPositive": true,  // panics without a push, calls on another path
		"main.loopMixed":    false, // calls inside its loop: pushes at entry
		"main.untilZero":    false, // likewise
		"main.safe":         false, // defers
		"main.main":         false, // calls first thing
		"main.afterString":  false, // a leaf
	}
	for _, p := range out.Plans {
		w, ok := want[p.Name]
		if !ok {
			continue
		}
		delete(want, p.Name)
		if p.Lazy != w {
			t.Errorf("%s: lazy %v, want %v", p.Name, p.Lazy, w)
		}
		if p.Lazy && len(p.NoPop) == 0 && !p.NoEndPop {
			t.Errorf("%s: pushes lazily, but every return restores the depth", p.Name)
		}
	}
	for name := range want {
		t.Errorf("%s: no plan", name)
	}
}

// TestInertCallsNoFlush checks that a call of an inert package's function
// needs no flush of the accumulator before it, unless it may stop the
// goroutine (a lock's wait: mayStop).
func TestInertCallsNoFlush(t *testing.T) {
	const src = `package p

import (
	"math/bits"
	"sync"
)

var mu sync.Mutex

func zeros(xs []uint) int {
	n := 0
	for _, x := range xs {
		n += bits.LeadingZeros(x) + bits.TrailingZeros(x)
	}
	return n
}

func locked(xs []uint) int {
	n := 0
	for _, x := range xs {
		mu.Lock()
		n += int(x)
		mu.Unlock()
	}
	return n
}
`
	opts := DefaultOptions
	opts.Inert = func(path string) bool { return path == "math/bits" || path == "sync" }
	_, out := instrumentWith(t, "p.go", []byte(src), opts)
	flushes := map[string]bool{"p.zeros": false, "p.locked": true}
	for _, p := range out.Plans {
		w, ok := flushes[p.Name]
		if !ok {
			continue
		}
		delete(flushes, p.Name)
		if !p.Local {
			t.Errorf("%s: does not accumulate its charges", p.Name)
		}
		if got := len(p.Flush) > 0; got != w {
			t.Errorf("%s: flushes %v, want %v", p.Name, got, w)
		}
	}
	for name := range flushes {
		t.Errorf("%s: no plan", name)
	}
}
