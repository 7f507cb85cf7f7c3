package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/kprof/kprof/counter"
	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
)

var (
	fa = &Func{Name: "a", File: "p/a.go", Line: 1}
	fb = &Func{Name: "b", File: "p/b.go", Line: 2}
	fc = &Func{Name: "c", File: "p/c.go", Line: 3}
)

// The path cache must give the same tree as walking from the root.
func TestSampleTree(t *testing.T) {
	a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 100})
	a.Register()
	samples := []struct {
		stack []*Func
		n     int64
	}{
		{[]*Func{fa}, 10},
		{[]*Func{fa, fb}, 20},
		{[]*Func{fa, fb, fc}, 30},
		{[]*Func{fa, fc}, 40}, // the cached path diverges at depth 1
		{[]*Func{fa, fb, fc}, 50},
		{nil, 5}, // no stack
	}
	for _, s := range samples {
		if g := a.Sample(s.stack, 0, s.n); g != 100 {
			t.Fatalf("granularity %d, want 100 (no jitter)", g)
		}
	}
	a.Exit(7)
	p := a.Profile(profile.Meta{Program: "t"})
	want := map[string]int64{"a": 10, "a;b": 20, "a;b;c": 80, "a;c": 40, "(no stack)": 5 + 7}
	got := map[string]int64{}
	var sum int64
	p.Walk(func(stack []profile.Func, n *profile.Node) {
		key := ""
		for i, f := range stack {
			if i > 0 {
				key += ";"
			}
			key += f.Name
		}
		got[key] = n.Instructions
		sum += n.Instructions
	})
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d instructions, want %d", k, got[k], v)
		}
	}
	if p.TotalInstructions != 155+7 || p.TotalSamples != 6 {
		t.Errorf("totals %d instructions, %d samples; want 162, 6", p.TotalInstructions, p.TotalSamples)
	}
	if sum != 162 {
		t.Errorf("sum over contexts %d, want 162 (the exit tail goes to the last sampled context)", sum)
	}
}

// Randomised granularities are g + r, r in [0, R), and the same sequence
// for every goroutine (one seed).
func TestJitter(t *testing.T) {
	seq := func() []int64 {
		a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 1000, Jitter: 100, Seed: 42})
		var gs []int64
		gs = append(gs, a.Register())
		for i := 0; i < 200; i++ {
			gs = append(gs, a.Sample([]*Func{fa}, 0, 1))
		}
		a.Exit(0)
		return gs
	}
	s1, s2 := seq(), seq()
	distinct := map[int64]bool{}
	for i := range s1 {
		if s1[i] != s2[i] {
			t.Fatalf("sample %d: granularity %d then %d: not reproducible", i, s1[i], s2[i])
		}
		if s1[i] < 1000 || s1[i] >= 1100 {
			t.Fatalf("granularity %d outside [1000, 1100)", s1[i])
		}
		distinct[s1[i]] = true
	}
	if len(distinct) < 50 {
		t.Errorf("only %d distinct granularities in 201: jitter is not spreading", len(distinct))
	}
}

// The exact agent samples at every check.
func TestExactGranularity(t *testing.T) {
	a := NewCCT(Settings{Mode: profile.ModeExact, Granularity: 10000, Jitter: 100})
	if g := a.Register(); g != 0 {
		t.Errorf("exact mode: granularity %d, want 0 (a sample at every check)", g)
	}
	a.Exit(0)
}

// Recording keeps a second set of counts for the stretches between
// Record(true) and Record(false), forgotten by ResetRecord; contexts with
// nothing recorded are left out of the recorded profile.
func TestRecord(t *testing.T) {
	a := NewCCT(Settings{Mode: profile.ModeExact})
	a.Register()
	flat := func(p *profile.Profile) map[string]int64 {
		m := map[string]int64{}
		p.Walk(func(stack []profile.Func, n *profile.Node) { m[stack[len(stack)-1].Name] += n.Instructions })
		return m
	}
	a.Sample([]*Func{fa}, 0, 1000) // setup, before the timer
	a.Record(true)
	a.Sample([]*Func{fa, fb}, 0, 50) // a first run, reset below
	a.ResetRecord()
	a.Sample([]*Func{fa, fb}, 0, 20)
	a.SampleCall([]*Func{fa}, 0, fc, 5)
	a.Record(false)
	a.Sample([]*Func{fa, fc}, 0, 300) // after the timer
	a.Record(true)
	a.Sample([]*Func{fa, fc}, 0, 7)
	a.Exit(3) // the tail goes to the last context, fa;fc
	p := a.RecordProfile(profile.Meta{Program: "t"})
	want := map[string]int64{"a": 5, "b": 20, "c": 10}
	if got := flat(p); len(got) != len(want) || got["a"] != 5 || got["b"] != 20 || got["c"] != 10 {
		t.Errorf("recorded %v, want %v", got, want)
	}
	if p.TotalInstructions != 35 {
		t.Errorf("recorded total %d, want 35", p.TotalInstructions)
	}
	var calls int64
	p.Walk(func(_ []profile.Func, n *profile.Node) { calls += n.Calls })
	if calls != 1 {
		t.Errorf("recorded calls %d, want 1", calls)
	}
	if all := a.Profile(profile.Meta{Program: "t"}); all.TotalInstructions != 1385 {
		t.Errorf("whole profile %d instructions, want 1385", all.TotalInstructions)
	}
}

// WriteFinal writes the bytes Profile(meta).WriteFile writes, with trees
// in the states of ended and running goroutines and in the merged tree,
// the largest adopted without a copy, and leaves the profile as it was.
func TestWriteFinal(t *testing.T) {
	for _, mode := range []string{profile.ModeSample, profile.ModeExact} {
		t.Run(mode, func(t *testing.T) {
			a := NewCCT(Settings{Mode: mode, Granularity: 100, Jitter: 10, Seed: 7})
			fs := []*Func{fa, fb, fc}
			// Goroutines: ended with small and large trees (a large one
			// merges on exit), and one still running.
			for gi, depth := range []int{3, 600, 40, 1200, 5} {
				*counter.Local() = nil // a goroutine on a new g
				a.Register()
				var stack []*Func
				for i := range depth {
					stack = append(stack, fs[(i*i+gi)%3])
					a.SampleCall(stack[:i], i, stack[i], int64(i%5))
					a.Sample(stack, 0, int64(1+i%7))
				}
				if gi < 4 {
					a.Exit(int64(gi))
				}
			}
			meta := profile.Meta{Program: "t", Labels: []profile.Label{{Key: "k", Value: "v"}}}
			dir := t.TempDir()
			want := filepath.Join(dir, "want.kprof")
			if err := a.Profile(meta).WriteFile(want); err != nil {
				t.Fatal(err)
			}
			got := filepath.Join(dir, "got.kprof")
			if err := a.WriteFinal(got, meta); err != nil {
				t.Fatal(err)
			}
			again := filepath.Join(dir, "again.kprof")
			if err := a.Profile(meta).WriteFile(again); err != nil {
				t.Fatal(err)
			}
			w, _ := os.ReadFile(want)
			for _, f := range []string{got, again} {
				if b, err := os.ReadFile(f); err != nil || !bytes.Equal(b, w) {
					t.Errorf("%s differs from Profile(meta).WriteFile (%d bytes, %d): %v", filepath.Base(f), len(b), len(w), err)
				}
			}
			if p, err := profile.ParseFile(got); err != nil || overlap.Size(p) < 1200 {
				t.Errorf("written profile: %v, size %d", err, overlap.Size(p))
			}
		})
	}
}

// WriteFinal of a tree in which two distinct functions share name, file
// and line (a custom agent's tables can hold such twins) falls back to
// Profile, which merges them: the file is the one Profile writes.
func TestWriteFinalTwins(t *testing.T) {
	twin := &Func{Name: fa.Name, File: fa.File, Line: fa.Line}
	defer runtime.KeepAlive(twin) // (referred to from the off-heap tree)
	a := NewCCT(Settings{Mode: profile.ModeExact})
	*counter.Local() = nil
	a.Register()
	a.Sample([]*Func{fb, fa}, 0, 3)
	a.Sample([]*Func{fb, twin}, 0, 4)
	a.Exit(0)
	meta := profile.Meta{Program: "t"}
	dir := t.TempDir()
	want, got := filepath.Join(dir, "want.kprof"), filepath.Join(dir, "got.kprof")
	if err := a.Profile(meta).WriteFile(want); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFinal(got, meta); err != nil {
		t.Fatal(err)
	}
	w, _ := os.ReadFile(want)
	if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, w) {
		t.Errorf("WriteFinal's file differs from Profile's: %v", err)
	}
	p, err := profile.ParseFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Root.Children[0].Find(profile.Func{Name: fa.Name, File: fa.File, Line: fa.Line}); n == nil || n.Instructions != 7 {
		t.Errorf("the twins' context: %+v, want their 7 instructions merged", n)
	}
}

// SampleLeaf, exact mode's two samples of a small leaf's call in one,
// gives the profile the two samples give (SampleCall, then Sample with
// the leaf on top), recorded counts included, at any depth and with the
// samples around it as the counter reports them at granularity 0 (the
// stack below the running function unchanged).
func TestSampleLeaf(t *testing.T) {
	fs := []*Func{fa, fb, fc, {Name: "d", File: "p/d.go", Line: 4}}
	run := func(one bool) []byte {
		a := NewCCT(Settings{Mode: profile.ModeExact})
		*counter.Local() = nil
		a.Register()
		var stack []*Func
		x := uint64(1)
		for i := range 20000 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			if i%5000 == 0 {
				a.Record(i%10000 == 0)
			}
			leaf := fs[x>>8%4]
			switch r := x % 8; {
			case r < 3 && len(stack) < 200: // a call: the entry, then the callee's sample
				a.SampleCall(stack, len(stack), leaf, int64(x>>16%5))
				stack = append(stack, leaf)
				a.Sample(stack, len(stack), int64(x>>20%3))
			case r < 5 && len(stack) > 0: // a return
				stack = stack[:len(stack)-1]
				a.Sample(stack, len(stack), int64(x>>16%4))
			default: // a small leaf's call
				m, n := int64(x>>16%4), int64(x>>24%6)
				ls := append(stack[:len(stack):len(stack)], leaf)
				if one {
					a.SampleLeaf(ls, len(stack), m, n)
				} else {
					a.SampleCall(stack, len(stack), leaf, m)
					a.Sample(ls, len(stack), n)
				}
			}
		}
		a.Exit(3)
		return encodedProfiles(t, a)
	}
	if two, one := run(false), run(true); !bytes.Equal(two, one) {
		t.Errorf("SampleLeaf's profiles differ from those of SampleCall and Sample (%d bytes, %d)", len(one), len(two))
	}
}

// SampleEntries and SampleReturns, runs of entries one inside the other
// and of samples one frame below the other, give the profile their
// samples give one by one (SampleCall and Sample), recorded counts
// included, with the stacks a recursion makes: new contexts (its first
// descent, and enough of them that the goroutine takes the merged tree),
// contexts the path cache holds (it descends again), and runs that start
// anywhere in the stack, and the merged tree, larger, taken in the middle
// of a run.
func TestSampleRuns(t *testing.T) {
	fs := []*Func{fa, fb, fc, {Name: "d", File: "p/d.go", Line: 4}}
	// (Referred to from off-heap trees, which the collector does not
	// see: kept reachable to the end.)
	rs := make([]Func, mergeNodes)
	for i := range rs {
		rs[i].Name = fmt.Sprint("r", i)
	}
	r := &Func{Name: "r"}
	defer runtime.KeepAlive(rs)
	defer runtime.KeepAlive(r)
	run := func(runs bool) []byte {
		a := NewCCT(Settings{Mode: profile.ModeExact})
		// A goroutine that ended left a large tree.
		*counter.Local() = nil
		a.Register()
		var stack []*Func
		for i := range 3000 {
			stack = append(stack, fs[i%3])
			a.SampleCall(stack[:i], i, stack[i], 1)
		}
		a.Exit(0)
		*counter.Local() = nil
		a.Register()
		// Contexts up to one less than mergeNodes, then a run whose
		// first call makes the context at which the goroutine takes the
		// merged tree: the path cache then holds its last context alone.
		g := (*gstate)(*counter.Local())
		for i := 0; g.nodes.n < mergeNodes-1; i++ {
			a.SampleCall(nil, 0, &rs[i], 1)
		}
		stack = append(stack[:0], r, fa, fb, fa, fb)
		if runs {
			a.SampleEntries(stack, 0, []int64{1, 2, 3, 0, 4})
			a.SampleReturns(stack, len(stack), []int64{1, 0, 3})
		} else {
			for j, m := range []int64{1, 2, 3, 0, 4} {
				a.SampleCall(stack[:j], j, stack[j], m)
			}
			for j, n := range []int64{1, 0, 3} {
				a.Sample(stack[:len(stack)-j], len(stack)-j, n)
			}
		}
		if a.merged.nodes.n != 0 {
			t.Errorf("the merged tree was not taken at its run: %d contexts", a.merged.nodes.n)
		}
		stack = stack[:0]
		x := uint64(7)
		next := func() uint64 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			return x
		}
		for i := range 3000 {
			if i%700 == 0 {
				a.Record(i%1400 == 0)
			}
			k := int(next() % 40)
			ns := make([]int64, k+1)
			for j := range ns {
				ns[j] = int64(next() % 4)
			}
			if next()%2 == 0 && len(stack) < 2000 { // entries
				d := len(stack)
				for range ns {
					stack = append(stack, fs[next()%2]) // (few functions: contexts repeat)
				}
				if runs {
					a.SampleEntries(stack, d, ns)
				} else {
					for j, m := range ns {
						a.SampleCall(stack[:d+j], d+j, stack[d+j], m)
					}
				}
				continue
			}
			k = min(len(ns), len(stack))
			if k == 0 {
				continue
			}
			if runs {
				a.SampleReturns(stack, len(stack), ns[:k])
			} else {
				for j, n := range ns[:k] {
					a.Sample(stack[:len(stack)-j], len(stack)-j, n)
				}
			}
			stack = stack[:len(stack)-k+1]
			stack = stack[:len(stack)-1] // (the last sample's function returns)
		}
		a.Exit(3)
		return encodedProfiles(t, a)
	}
	if one, runs := run(false), run(true); !bytes.Equal(one, runs) {
		t.Errorf("the runs' profiles differ from those of their samples one by one (%d bytes, %d)", len(runs), len(one))
	}
}

// A goroutine whose tree reaches mergeNodes contexts takes the merged
// tree, larger, that goroutines which ended left (CCT.take): goroutines
// that run the same code one after the other grow one tree, not one
// copy each. The profile is the one the same goroutines give in the
// other order, recorded counts and the tails of ended goroutines
// included, in both modes; the tree that was taken is read while its
// goroutine runs, and the goroutine ends right after it took it (its
// tail goes to its last context, found again in that tree).
func TestTakeMerged(t *testing.T) {
	fs := make([]*Func, 40)
	for i := range fs {
		fs[i] = &Func{Name: fmt.Sprintf("f%d", i), File: "p/f.go", Line: i}
	}
	defer runtime.KeepAlive(fs) // (referred to from off-heap trees)
	// run samples a goroutine on a new g: stacks of a recursion through
	// fs, a tree of about depth²/2 contexts (shift changes the leaves), up
	// to the sample after which stop reports true or the limit-th, and
	// returns the number of samples. In exact mode the stack below the
	// running function is reported unchanged, as the counter does at
	// granularity 0; in sample mode nothing is.
	run := func(a *CCT, depth, shift, limit int, stop func() bool) int {
		*counter.Local() = nil
		a.Register()
		from := func(d int) int {
			if !a.exact {
				return 0
			}
			return d
		}
		n := 0
		done := func() bool {
			n++
			return n == limit || stop != nil && stop()
		}
		defer a.Record(false)
		var stack []*Func
		for d := range depth {
			stack = append(stack, fs[d%30])
			a.SampleCall(stack[:d], from(d), stack[d], int64(d%3))
			if done() {
				return n
			}
			for j := range d % 17 {
				a.Sample(append(stack[:d+1:d+1], fs[30+(j+shift)%10]), from(d+1), int64(1+j))
				if done() {
					return n
				}
			}
			if d == depth/2 {
				a.Record(true)
			}
		}
		return n
	}
	profiles := func(a *CCT) []byte { return encodedProfiles(t, a) }
	for _, mode := range []string{profile.ModeSample, profile.ModeExact} {
		t.Run(mode, func(t *testing.T) {
			set := Settings{Mode: mode, Granularity: 1}
			a := NewCCT(set)
			run(a, 200, 0, -1, nil)
			a.Exit(5) // merged
			if n := a.merged.nodes.n; n < 4*mergeNodes {
				t.Fatalf("the first goroutine's tree merged into %d contexts", n)
			}
			took := run(a, 150, 3, -1, func() bool { return a.merged.nodes.n == 0 })
			g := (*gstate)(*counter.Local())
			if n := a.merged.nodes.n; n != 0 {
				t.Fatalf("the merged tree has %d contexts after the second goroutine's %d samples, want 0 (taken)", n, took)
			}
			// Read as another goroutine's tree; no context twice: the tree
			// holds the profile's contexts, and those the second made
			// before it took the first's, now free.
			*counter.Local() = nil
			contexts := 0
			a.Profile(profile.Meta{Program: "t"}).Walk(func([]profile.Func, *profile.Node) { contexts++ })
			if g.nodes.n > contexts+mergeNodes {
				t.Errorf("the second goroutine's tree has %d contexts, the profile %d", g.nodes.n, contexts)
			}
			*counter.Local() = unsafe.Pointer(g)
			a.Exit(7)
			run(a, 150, 5, -1, nil) // takes the tree again
			a.Exit(5)
			b := NewCCT(set) // the second first: it takes nothing
			run(b, 150, 3, took, nil)
			b.Exit(7)
			run(b, 150, 5, -1, nil)
			b.Exit(5)
			run(b, 200, 0, -1, nil)
			b.Exit(5)
			if got, want := profiles(a), profiles(b); !bytes.Equal(got, want) {
				t.Errorf("profiles differ from those of the other order (%d bytes, %d)", len(got), len(want))
			}
		})
	}
}

// encodedProfiles returns a's profile and its recorded profile, encoded
// one after the other.
func encodedProfiles(t *testing.T, a *CCT) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, p := range []*profile.Profile{a.Profile(profile.Meta{Program: "t"}), a.RecordProfile(profile.Meta{Program: "t"})} {
		f := filepath.Join(t.TempDir(), "p.kprof")
		if err := p.WriteFile(f); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.Bytes()
}

// Chunks of contexts freed by one goroutine's tree serve the tree that
// grows next: a reused context starts with no calls and nothing recorded,
// whatever the context that had its memory held. Checked against counts
// computed here, in both modes, over enough contexts to fill many chunks
// (each mode's chunk holds another number of them): the second goroutine's
// first mergeNodes contexts, recorded, are merged into the first's tree
// when it takes that tree (CCT.take), and their chunks serve the rest.
func TestChunkReuse(t *testing.T) {
	const n = 1000
	fs := make([]*Func, n)
	for i := range fs {
		fs[i] = &Func{Name: fmt.Sprintf("f%d", i), File: "p/f.go", Line: i}
	}
	defer runtime.KeepAlive(fs) // (referred to from off-heap trees)
	for _, mode := range []string{profile.ModeSample, profile.ModeExact} {
		t.Run(mode, func(t *testing.T) {
			a := NewCCT(Settings{Mode: mode, Granularity: 1})
			exact := mode == profile.ModeExact
			// run is one goroutine: under top, a call of each of fs (1
			// instruction in top's context), then 2 instructions in the
			// callee's, recorded from the recFrom-th call on.
			run := func(top *Func, recFrom int) {
				*counter.Local() = nil
				a.Register()
				defer a.Record(false)
				for i, f := range fs {
					a.Record(i >= recFrom)
					a.SampleCall([]*Func{top}, 1, f, 1)
					a.Sample([]*Func{top, f}, 1, 2)
				}
				a.Exit(0)
			}
			run(fa, n/2)
			run(fb, 0)
			// check compares p with the counts of the calls from[top]
			// on under each top.
			check := func(p *profile.Profile, what string, from map[string]int) {
				got := map[string][2]int64{}
				p.Walk(func(stack []profile.Func, nd *profile.Node) {
					k := ""
					for _, f := range stack {
						k += "/" + f.Name
					}
					got[k] = [2]int64{nd.Instructions, nd.Calls}
				})
				want := map[string][2]int64{}
				for top, first := range from {
					want["/"+top] = [2]int64{int64(n - first), 0}
					for i := first; i < n; i++ {
						calls := int64(0)
						if exact {
							calls = 1
						}
						want["/"+top+"/"+fs[i].Name] = [2]int64{2, calls}
					}
				}
				if len(got) != len(want) {
					t.Errorf("%s: %d contexts, want %d", what, len(got), len(want))
				}
				for k, w := range want {
					if got[k] != w {
						t.Errorf("%s: %s has %d instructions and %d calls, want %d and %d", what, k, got[k][0], got[k][1], w[0], w[1])
						break
					}
				}
			}
			check(a.Profile(profile.Meta{Program: "t"}), "profile", map[string]int{"a": 0, "b": 0})
			check(a.RecordProfile(profile.Meta{Program: "t"}), "recorded", map[string]int{"a": n / 2, "b": 0})
		})
	}
}

// TestStuckBusy: a goroutine whose sample panicked inside the agent (a
// bug of kprof's that a recover in the program outlived) keeps its state
// busy. A profile read then waits a while for it and reads it anyway; it
// used to wait forever, so a program that recovered such a panic hung at
// exit.
func TestStuckBusy(t *testing.T) {
	a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 100})
	var stuck []*gstate
	for range 2 { // (two, as a panic that several goroutines recovered leaves)
		*counter.Local() = nil
		a.Register()
		a.Sample([]*Func{fa, fb}, 0, 15)
		g := (*gstate)(*counter.Local())
		g.busy = true
		stuck = append(stuck, g)
	}
	*counter.Local() = nil
	a.Register()
	a.Sample([]*Func{fa}, 0, 10)
	done := make(chan *profile.Profile)
	go func() { done <- a.Profile(profile.Meta{Program: "t"}) }()
	select {
	case p := <-done:
		if p.TotalInstructions != 40 {
			t.Errorf("total %d instructions, want 40 (both goroutines')", p.TotalInstructions)
		}
		for _, g := range stuck {
			if g.busy {
				t.Error("a stuck state is still busy")
			}
		}
	case <-time.After(time.Minute):
		t.Fatal("the profile read waits for the stuck goroutine")
	}
}

// contextCounts returns the instructions and calls of p's contexts by
// stack, "a;b;c" with O for the overflow function.
func contextCounts(p *profile.Profile) map[string][2]int64 {
	m := map[string][2]int64{}
	p.Walk(func(stack []profile.Func, n *profile.Node) {
		var key []string
		for _, f := range stack {
			name := f.Name
			if name == profile.OverflowName {
				name = "O"
			}
			key = append(key, name)
		}
		if n.Instructions != 0 || n.Calls != 0 {
			m[strings.Join(key, ";")] = [2]int64{n.Instructions, n.Calls}
		}
	})
	return m
}

// A goroutine adds at most Settings.MaxContexts contexts of its own; its
// stacks that need more go below the overflow context of the deepest
// context it has, keeping their innermost function. The outermost
// functions are never beyond the budget, and a new goroutine on the same
// state has a budget of its own, whatever its predecessor made.
func TestContextBudget(t *testing.T) {
	type step struct {
		stack  []*Func
		from   int
		callee *Func // SampleCall's, if not nil
		n      int64
		newG   bool // Register first
	}
	tests := []struct {
		name  string
		mode  string
		max   int64
		steps []step
		want  map[string][2]int64
	}{{
		name: "sample", mode: profile.ModeSample, max: 3,
		steps: []step{
			{stack: []*Func{fa}, n: 10},
			{stack: []*Func{fa, fb}, from: 1, n: 20},
			{stack: []*Func{fa, fb, fc}, from: 2, n: 30},
			{stack: []*Func{fa, fc}, from: 1, n: 40},            // over: below a's overflow
			{stack: []*Func{fa, fc, fb}, from: 2, n: 50},        // below an overflow context: its own overflow's
			{stack: []*Func{fa, fb, fc, fa}, from: 0, n: 60},    // the deepest context it has is a;b;c
			{stack: []*Func{fa, fb}, from: 0, n: 70},            // its own contexts go on
			{stack: []*Func{fb}, from: 0, n: 80},                // outermost: never over
			{stack: []*Func{fa, fc}, from: 0, n: 5, newG: true}, // another goroutine
			{stack: []*Func{fa, fb, fc}, from: 1, n: 6},         // contexts it did not make count too
		},
		want: map[string][2]int64{
			"a": {10, 0}, "a;b": {90, 0}, "a;b;c": {30, 0}, "a;O;c": {40, 0},
			"a;O;b": {50, 0}, "a;b;c;O;a": {60, 0}, "b": {80, 0}, "a;c": {5, 0}, "a;b;O;c": {6, 0},
		},
	}, {
		name: "exact", mode: profile.ModeExact, max: 2,
		steps: []step{
			{callee: fa},
			{stack: []*Func{fa}, from: 1, callee: fb, n: 3},
			{stack: []*Func{fa, fb}, from: 2, callee: fc, n: 4},
			{stack: []*Func{fa, fb, fc}, from: 3, n: 5},
			{stack: []*Func{fa, fb, fc}, from: 3, callee: fa, n: 6},
			{stack: []*Func{fa, fb, fc, fa}, from: 4, n: 7},
		},
		want: map[string][2]int64{
			"a": {3, 1}, "a;b": {4, 1}, "a;b;O;c": {11, 1}, "a;b;O;a": {7, 1},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, verify := range []bool{false, true} {
				a := NewCCT(Settings{Mode: tt.mode, Granularity: 100, MaxContexts: tt.max, VerifyPaths: verify})
				a.Register()
				var total int64
				for _, s := range tt.steps {
					if s.newG {
						a.Exit(0)
						a.Register()
					}
					if s.callee != nil {
						a.SampleCall(s.stack, s.from, s.callee, s.n)
					} else {
						a.Sample(s.stack, s.from, s.n)
					}
					total += s.n
				}
				a.Exit(0)
				p := a.Profile(profile.Meta{Program: "t"})
				got := contextCounts(p)
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("verify %v: contexts\n%v\nwant\n%v", verify, got, tt.want)
				}
				if p.TotalInstructions != total {
					t.Errorf("total %d, want %d", p.TotalInstructions, total)
				}
			}
		})
	}
}

var fd = &Func{Name: "d", File: "p/d.go", Line: 4}

// emulateFlushRunning does what flushRunning does for one running state
// (the loop after counter.FlushOthers), with n instructions.
func emulateFlushRunning(a *CCT, g *gstate, n int64) {
	m := a.merged
	var path []*Func
	for x := g.last; x.parent != nil; x = x.parent {
		path = append(path, x.fn)
	}
	cur := &m.root
	for i := len(path) - 1; i >= 0; i-- {
		cur = m.child(cur, path[i])
	}
	cur.instr += n
}

// A snapshot (KPROF_INTERVAL, live) taken while a goroutine's last sample
// is in an overflow context makes that context in the merged tree, which
// another goroutine takes later: the contexts it counts its stacks in are
// the same with or without it. (Overflow contexts were once known by a
// stamp, which FlushRunning's did not have. Found in review.)
func TestContextBudgetSnapshot(t *testing.T) {
	roots := make([]*Func, 400)
	for i := range roots {
		roots[i] = &Func{Name: fmt.Sprintf("r%03d", i), File: "p/r.go", Line: i}
	}
	defer runtime.KeepAlive(roots)
	run := func(snapshot bool) map[string][2]int64 {
		a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 100, MaxContexts: 2})
		// G0: a large tree, merged at its end.
		*counter.Local() = nil
		a.Register()
		for _, r := range roots {
			a.Sample([]*Func{r}, 0, 1)
		}
		a.Exit(0)
		// G1: over its budget; its last sample is in a;b;O;c.
		*counter.Local() = nil
		a.Register()
		a.Sample([]*Func{fa}, 0, 1)
		a.Sample([]*Func{fa, fb}, 0, 1)
		a.Sample([]*Func{fa, fb, fc}, 0, 1)
		g1 := (*gstate)(*counter.Local())
		if snapshot {
			emulateFlushRunning(a, g1, 0) // (0: the tail is irrelevant here)
		}
		// G2: stamps a and a;b, then root contexts (exempt) until it takes
		// the merged tree, then the stacks a;b;c and a;b;c;d.
		*counter.Local() = nil
		a.Register()
		a.Sample([]*Func{fa}, 0, 1)
		a.Sample([]*Func{fa, fb}, 0, 1)
		for _, r := range roots[:254] {
			a.Sample([]*Func{r}, 0, 1)
		}
		if a.merged.nodes.n != 0 {
			t.Fatalf("not taken")
		}
		a.Sample([]*Func{fa, fb, fc}, 0, 10)
		a.Sample([]*Func{fa, fb, fc, fd}, 0, 20)
		a.Exit(0)
		*counter.Local() = unsafe.Pointer(g1)
		a.Exit(0)
		got := contextCounts(a.Profile(profile.Meta{Program: "t"}))
		for k := range got {
			if len(k) > 0 && k[0] == 'r' {
				delete(got, k)
			}
		}
		return got
	}
	without, with := run(false), run(true)
	if fmt.Sprint(without) != fmt.Sprint(with) {
		t.Errorf("without a snapshot:\n%v\nwith one:\n%v", without, with)
	}
}

// A goroutine's overflow contexts are bounded too: every context it stamped
// could get an overflow child per innermost function (816 contexts for a
// budget of 8 here, before they had a budget; found in review). Now: the
// budget's contexts, as many overflow contexts and as many of their
// children, and the overflow context at the root with a child per
// function.
func TestContextBudgetOverflows(t *testing.T) {
	const budget, leaves = 8, 100
	r := &Func{Name: "r", File: "p/r.go", Line: 1}
	ls := make([]*Func, leaves)
	for i := range ls {
		ls[i] = &Func{Name: fmt.Sprintf("l%03d", i), File: "p/l.go", Line: i}
	}
	defer runtime.KeepAlive(ls)
	a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 100, MaxContexts: budget})
	*counter.Local() = nil
	a.Register()
	var stack []*Func
	for range budget {
		stack = append(stack, r)
		a.Sample(stack, 0, 1) // r, r;r, ...: the budget
	}
	for d := 1; d <= budget; d++ {
		for _, l := range ls {
			a.Sample(append(stack[:d:d], l), 0, 1)
		}
	}
	g := (*gstate)(*counter.Local())
	t.Logf("budget %d: the goroutine's tree has %d contexts", budget, g.nodes.n)
	if g.nodes.n > 3*budget+1+leaves+1 {
		t.Errorf("%d contexts for a budget of %d", g.nodes.n, budget)
	}
}
