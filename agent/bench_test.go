package agent

import (
	"fmt"
	"testing"

	"github.com/kprof/kprof/overlap"
)

// BenchmarkSample measures one sample of the sampling agent at stack
// depths 10 and 100, where only the innermost frame changes between
// samples (a leaf called in a loop): with the path cache (paper Fig. 9) the
// agent compares the stack with the cached path (pointer compares) and
// walks the tree only for the changed frame; without it, it walks the tree
// from the root every time (paper Fig. 7).
func BenchmarkSample(b *testing.B) {
	for _, depth := range []int{10, 100} {
		funcs := make([]*Func, depth+2)
		for i := range funcs {
			funcs[i] = &Func{Name: fmt.Sprintf("f%d", i)}
		}
		stackA := append([]*Func(nil), funcs[:depth]...)
		stackB := append(append([]*Func(nil), funcs[:depth-1]...), funcs[depth])
		for _, cached := range []bool{true, false} {
			name := fmt.Sprintf("depth=%d/cache=%v", depth, cached)
			b.Run(name, func(b *testing.B) {
				a := NewCCT(Settings{Mode: overlap.ModeSample, Granularity: 10000})
				a.Register()
				g := a.local()
				a.Sample(stackA, 0, 1)
				a.Sample(stackB, 0, 1)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s := stackA
					if i%2 == 1 {
						s = stackB
					}
					if !cached {
						g.cut(0)
					}
					a.Sample(s, 0, 1)
				}
				b.StopTimer()
				a.Exit(0)
			})
		}
	}
}

// BenchmarkExactCall measures what exact mode asks of the agent for one
// call: the sample at the callee's entry check (in the caller's context,
// counting the call) and the one at its return check, with the stack below
// reported unchanged, as the counter reports it at granularity 0.
func BenchmarkExactCall(b *testing.B) {
	const depth = 10
	funcs := make([]*Func, depth+8)
	for i := range funcs {
		funcs[i] = &Func{Name: fmt.Sprintf("f%d", i)}
	}
	a := NewCCT(Settings{Mode: overlap.ModeExact})
	a.Register()
	stack := append([]*Func(nil), funcs[:depth+1]...)
	a.Sample(stack[:depth], 0, 1)
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
