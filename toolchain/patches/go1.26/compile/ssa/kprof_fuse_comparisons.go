//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside fuse_comparisons.go.

package ssa

// kprofPhisAgree reports whether the phis of the block that edges e1 and
// e2 enter take the same value along both.
func kprofPhisAgree(e1, e2 Edge) bool {
	for _, v := range e1.b.Values {
		if v.Op == OpPhi && v.Args[e1.i] != v.Args[e2.i] {
			return false
		}
	}
	return true
}
