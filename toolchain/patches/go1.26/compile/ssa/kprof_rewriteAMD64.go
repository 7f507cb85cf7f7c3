//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside rewriteAMD64.go.

package ssa

// kprofMergeCharges rewrites (ADDQconstmodify [c1,off] (GetG) (ADDQconstmodify
// [c2,off] (GetG) mem)), in one block, as (ADDQconstmodify [c1+c2,off]
// (GetG) mem), if nothing but v uses the inner one's memory — nothing but
// inlining marks, which name a position, and GetG, the g register: those
// then take mem, and the inner one is dead.
func kprofMergeCharges(v *Value) bool {
	m := v.Args[1]
	if m.Op != OpAMD64ADDQconstmodify || m.Block != v.Block || m.Aux != v.Aux {
		return false
	}
	if v.Args[0].Op != OpGetG || m.Args[0].Op != OpGetG {
		return false
	}
	a, b := ValAndOff(v.AuxInt), ValAndOff(m.AuxInt)
	sum := int64(a.Val()) + int64(b.Val())
	if a.Off() != b.Off() || sum != int64(int32(sum)) {
		return false
	}
	uses := int32(0)
	for _, w := range v.Block.Values {
		for _, x := range w.Args {
			if x == m {
				if w != v && w.Op != OpInlMark && w.Op != OpGetG {
					return false
				}
				uses++
			}
		}
	}
	if uses != m.Uses {
		return false // a control or another block uses it
	}
	mem := m.Args[1]
	for _, w := range v.Block.Values {
		for i, x := range w.Args {
			if x == m {
				w.SetArg(i, mem)
			}
		}
	}
	v.AuxInt = valAndOffToAuxInt(makeValAndOff(int32(sum), a.Off()))
	return true
}
