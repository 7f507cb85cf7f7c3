//go:build kprofpatch

// Code kprof adds to the compiler's package ssagen (cmd/compile/internal/ssagen), beside ssa.go.

package ssagen

import (
	"cmd/compile/internal/base"
	"cmd/internal/obj"
	"cmd/internal/src"
	"strings"
)

// kprofZeroSize makes the inline mark p a zero-size NOP that marks nothing,
// as genssa does with the marks it moves onto other instructions.
func kprofZeroSize(p *obj.Prog) {
	p.As = obj.ANOP
	p.Pos = src.NoXPos
	p.From = obj.Addr{}
	p.To = obj.Addr{}
}

// kprofCounterMark reports whether the inline mark of inline tree index ix
// marks a call of package counter, or a call inside an inlined body of
// package counter (runtime.KprofState inside counter's st). Such a mark
// needs no place of its own in the code (nothing unwinds the stack at its
// position: the slow paths inside the inlined body are calls with
// positions of their own), so it moves from the fast path, where it was a
// NOP executed at every check, to the end of the function, where it is
// never executed: only its address and position matter (the inline tree's
// parent PC). (The marks of runtime.KprofState calls became NOPs on the
// fast path wherever a slow path spilled the g it returns: one NOP in
// front of most loop checks.)
func kprofCounterMark(ix int32) bool {
	for i := int(ix); i >= 0; i = base.Ctxt.InlTree.Parent(i) {
		if f := base.Ctxt.InlTree.InlinedFunction(i); f != nil && strings.HasPrefix(f.Name, "github.com/kprof/kprof/counter.") {
			return true
		}
	}
	return false
}

// kprofInlineIndexes returns the inline tree indexes that some instruction
// of the function (other than an inline mark) lies in, with their ancestors.
func kprofInlineIndexes(text *obj.Prog, marks map[*obj.Prog]int32) map[int32]bool {
	used := make(map[int32]bool)
	for p := text; p != nil; p = p.Link {
		if _, ok := marks[p]; ok || !p.Pos.IsKnown() {
			continue
		}
		for ix := base.Ctxt.InnermostPos(p.Pos).Base().InliningIndex(); ix >= 0 && !used[int32(ix)]; ix = base.Ctxt.InlTree.Parent(ix) {
			used[int32(ix)] = true
		}
	}
	return used
}
