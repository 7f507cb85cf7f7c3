//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside layout.go.

package ssa

// kprofCold reports whether b is the first block of a check's slow path:
// the unlikely side of a check (kprofLikely), entered from it alone.
func kprofCold(b *Block) bool {
	slow, ok := kprofCheckSide(b)
	return ok && slow
}

// kprofJoin returns the block where a check's fast path continues if b is
// the block on its fast side, nil otherwise. The join also follows the
// slow path, laid out later: without this, it waited behind every block
// ready before it, and the fast path jumped to it.
func kprofJoin(b *Block) *Block {
	if slow, ok := kprofCheckSide(b); ok && !slow && len(b.Succs) == 1 {
		return b.Succs[0].b
	}
	return nil
}

// kprofCheckSide reports whether b is entered from a check alone (ok) and,
// if so, whether it is the check's unlikely side, its slow path (slow).
func kprofCheckSide(b *Block) (slow, ok bool) {
	if len(b.Preds) != 1 {
		return false, false
	}
	p := b.Preds[0].b
	if !kprofCheckBlock(p) || p.Likely == BranchUnknown {
		return false, false
	}
	return (p.Likely == BranchUnlikely) == (p.Succs[0].b == b), true
}
