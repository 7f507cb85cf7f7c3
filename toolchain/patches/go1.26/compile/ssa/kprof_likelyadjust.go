//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside likelyadjust.go.

package ssa

import (
	"cmd/compile/internal/base"
	"cmd/compile/internal/types"
	"cmd/internal/src"
	"strings"
)

// kprofLikely marks the branches of kprof's checks: a check is a block
// whose control an inlined check of package counter computed (Due, D,
// DueK, TC, …); the side that reaches a call of one of its slow paths,
// through blocks of counter code only, is unlikely.
func kprofLikely(f *Func) {
	for _, b := range f.Blocks {
		if !kprofCheckBlock(b) {
			continue
		}
		s0 := kprofReachesSlow(b.Succs[0].b, b, 4)
		s1 := kprofReachesSlow(b.Succs[1].b, b, 4)
		switch {
		case s0 && !s1:
			b.Likely = BranchUnlikely
		case s1 && !s0:
			b.Likely = BranchLikely
		}
	}
}

// kprofCounterFunc returns the name, within package counter, of the
// function inlined at pos, or "" if pos is not in an inlined function of
// package counter.
func kprofCounterFunc(pos src.XPos) string {
	if !pos.IsKnown() {
		return ""
	}
	return kprofCounterName(base.Ctxt.InnermostPos(pos).Base().InliningIndex())
}

// kprofCounterName returns the name, within package counter, of the
// function of the inlining index ix, or "" if it is not package counter's.
func kprofCounterName(ix int) string {
	if ix < 0 {
		return ""
	}
	fn := base.Ctxt.InlTree.InlinedFunction(ix)
	if fn == nil {
		return ""
	}
	name, ok := strings.CutPrefix(fn.Name, "github.com/kprof/kprof/counter.")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "[")
	return name
}

// kprofCounterCode reports whether pos is in code of package counter, the
// runtime's accessors it inlines included: the g that st() reads has the
// position of runtime.KprofState, and a slow path's first block that reads
// it again (where the fast path keeps the count in a register,
// kprofPromote) was taken for the caller's code, so that its check was
// left unmarked and the slow path laid out on the fast path.
func kprofCounterCode(pos src.XPos) bool {
	if !pos.IsKnown() {
		return false
	}
	ix := base.Ctxt.InnermostPos(pos).Base().InliningIndex()
	for ix >= 0 {
		fn := base.Ctxt.InlTree.InlinedFunction(ix)
		if fn == nil || !strings.HasPrefix(fn.Name, "runtime.Kprof") {
			break
		}
		ix = base.Ctxt.InlTree.Parent(ix)
	}
	return kprofCounterName(ix) != ""
}

// kprofFuncPtr reports whether t is *counter.Func: the self argument of a
// slow path, which the caller's code computes (the address of its table
// entry, or W's choice of it, with the check's position in the caller).
func kprofFuncPtr(t *types.Type) bool {
	if t == nil || !t.IsPtr() {
		return false
	}
	sym := t.Elem().Sym()
	return sym != nil && sym.Name == "Func" && sym.Pkg != nil && sym.Pkg.Path == "github.com/kprof/kprof/counter"
}

// kprofCheckBlock reports whether b branches on one of package counter's
// checks.
func kprofCheckBlock(b *Block) bool {
	return len(b.Succs) == 2 && b.NumControls() > 0 && kprofCheck(b.Controls[0].Pos)
}

// kprofCheck reports whether pos is in one of package counter's checks.
func kprofCheck(pos src.XPos) bool {
	switch kprofCounterFunc(pos) {
	case "Due", "DueP", "DueK", "D", "TC", "TCL", "TCW", "TCLW", "VC", "VCW":
		return true
	}
	return false
}

// kprofReachesSlow reports whether c calls a slow path of package counter
// or leads to one within depth blocks of counter code that are not checks
// themselves (from, the check, excluded).
func kprofReachesSlow(c, from *Block, depth int) bool {
	for _, v := range c.Values {
		if kprofSlowCall(v) {
			return true
		}
	}
	if depth == 0 || c == from || c.NumControls() > 0 && kprofCheck(c.Controls[0].Pos) {
		return false
	}
	for _, v := range c.Values {
		// (The inline mark of SLK's body has its call's position.)
		if v.Op != OpInlMark && v.Op != OpPhi && v.Pos.IsKnown() && !kprofCounterCode(v.Pos) && !kprofFuncPtr(v.Type) {
			return false
		}
	}
	for _, e := range c.Succs {
		if e.b != from && kprofReachesSlow(e.b, from, depth-1) {
			return true
		}
	}
	return false
}

// kprofSlowCall reports whether v calls one of package counter's slow
// paths (S, SE, SED, SK, SD, sl).
func kprofSlowCall(v *Value) bool {
	if kprofSlow(v) {
		return true
	}
	if !opcodeTable[v.Op].call {
		return false
	}
	ac, ok := v.Aux.(*AuxCall)
	return ok && ac.Fn != nil && ac.Fn.Name == "github.com/kprof/kprof/counter.SD"
}
