//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside rewritegeneric.go.

package ssa

// kprofGLoad reports whether x loads a field of the running goroutine's g.
func kprofGLoad(x *Value) bool {
	if x.Op != OpLoad {
		return false
	}
	p := x.Args[0]
	for p.Op == OpOffPtr || p.Op == OpNilCheck {
		p = p.Args[0]
	}
	return p.Op == OpGetG
}
