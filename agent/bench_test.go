package agent

import (
	"fmt"
	"testing"

	"github.com/kprof/kprof/profile"
)

// BenchmarkSample measures one sample of the sampling agent at stack
// depths 10 and 100, where only the innermost frame changes between
// samples (a leaf called in a loop): with the path cache (paper Fig. 9) the
// agent compares the stack with the cached path (pointer compares) and
// walks the tree only for the changed frame; without it, it walks the tree
// from the root every time (paper Fig. 7). The counter reports no part of
// the stack unchanged here (from 0), as it did before it marked stacks.
//
// Then a stack that alternates between depths 10 and 10,000 (a deep
// recursion that returns and descends again): a sample costs what changed,
// with from as the counter's marks report it (the bottom 10 entries kept
// on the way down, nothing on the way up, where 10 entries remain) and
// with from 0. The path cache keeps the deeper path while the stack is
// shallow, so that the way down compares entries instead of walking the
// tree.
func BenchmarkSample(b *testing.B) {
	funcs := func(n int) []*Func {
		fs := make([]*Func, n)
		for i := range fs {
			fs[i] = &Func{Name: fmt.Sprintf("f%d", i)}
		}
		return fs
	}
	type sample struct {
		stack []*Func
		from  int
	}
	run := func(b *testing.B, samples []sample, cached bool) {
		a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 10000})
		a.Register()
		g := a.local()
		for _, s := range samples {
			a.Sample(s.stack, 0, 1)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s := samples[i%len(samples)]
			if !cached {
				g.path, g.fns, g.n = g.path[:0], g.fns[:0], 0
			}
			a.Sample(s.stack, s.from, 1)
		}
		b.StopTimer()
		a.Exit(0)
	}
	for _, depth := range []int{10, 100} {
		fs := funcs(depth + 2)
		stackA := append([]*Func(nil), fs[:depth]...)
		stackB := append(append([]*Func(nil), fs[:depth-1]...), fs[depth])
		for _, cached := range []bool{true, false} {
			b.Run(fmt.Sprintf("depth=%d/cache=%v", depth, cached), func(b *testing.B) {
				run(b, []sample{{stackA, 0}, {stackB, 0}}, cached)
			})
		}
	}
	deep := make([]*Func, 10000)
	fs := funcs(11)
	copy(deep, fs[:10])
	for i := 10; i < len(deep); i++ {
		deep[i] = fs[10] // a recursive function
	}
	for _, c := range []struct {
		name     string
		down, up int // from on the way down and up
	}{
		{"marks", 10, 0},
		{"from=0", 0, 0},
	} {
		b.Run("depth=10,10000/"+c.name, func(b *testing.B) {
			run(b, []sample{{deep, c.down}, {deep[:10], c.up}}, true)
		})
	}
}

// BenchmarkExactCall measures what exact mode asks of the agent for one
// call: the sample at the callee's entry check (in the caller's context,
// counting the call) and the one at its return check, with the stack below
// reported unchanged, as the counter reports it at granularity 0.
func BenchmarkExactCall(b *testing.B) {
	const depth = 10
	a, funcs, stack := exactAtDepth(depth)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The caller calls one of 8 callees in turn.
		stack[depth] = funcs[depth+i%8]
		a.SampleCall(stack[:depth], depth, stack[depth], 3)
		a.Sample(stack, depth+1, 5)
	}
	b.StopTimer()
	a.Exit(0)
}

// BenchmarkExactLeaf measures what exact mode asks of the agent for one
// call of a small leaf (a function that does not push itself and checks
// only where it returns, counter.SED): the caller's sample counting the
// call and the leaf's own sample with the leaf above the stack, which the
// counter reports unchanged below the leaf — as two calls (SampleCall,
// Sample) and as one (SampleLeaf). At depth 100 the leaf's sample compares
// one entry with the path cache, as at depth 10 (it compared up to 63
// when the comparison started at a multiple of 64).
func BenchmarkExactLeaf(b *testing.B) {
	for _, depth := range []int{10, 100} {
		for _, one := range []bool{false, true} {
			name := fmt.Sprintf("depth=%d/two", depth)
			if one {
				name = fmt.Sprintf("depth=%d/one", depth)
			}
			b.Run(name, func(b *testing.B) {
				a, funcs, stack := exactAtDepth(depth)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					// The caller calls one of 8 leaves in turn.
					stack[depth] = funcs[depth+i%8]
					if one {
						a.SampleLeaf(stack, depth, 3, 5)
					} else {
						a.SampleCall(stack[:depth], depth, stack[depth], 3)
						a.Sample(stack, depth, 5)
					}
				}
				b.StopTimer()
				a.Exit(0)
			})
		}
	}
}

// BenchmarkGoroutineLife measures what a short goroutine costs the agent
// in sample mode: registering (its first granularity) and ending (its
// tail, counted as unsampled), with the state its runtime g's previous
// goroutine left — no allocation and no lock.
func BenchmarkGoroutineLife(b *testing.B) {
	a := NewCCT(Settings{Mode: profile.ModeSample, Granularity: 10000, Jitter: 100})
	claim := func() int64 { return 100 }
	a.Register()
	a.ExitClaim(claim)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.Register()
		a.ExitClaim(claim)
	}
}

// exactAtDepth returns an exact-mode agent whose goroutine has sampled a
// stack of depth functions, the functions (depth of them and 8 callees
// above) and a stack with room for one callee on top.
func exactAtDepth(depth int) (*CCT, []*Func, []*Func) {
	funcs := make([]*Func, depth+8)
	for i := range funcs {
		funcs[i] = &Func{Name: fmt.Sprintf("f%d", i)}
	}
	a := NewCCT(Settings{Mode: profile.ModeExact})
	a.Register()
	stack := append([]*Func(nil), funcs[:depth+1]...)
	a.Sample(stack[:depth], 0, 1)
	return a, funcs, stack
}
