package rewrite

import "golang.org/x/tools/go/ssa"

// Counted reports whether an instruction counts towards the metric (see the
// package documentation, "What is counted").
func Counted(instr ssa.Instruction) bool {
	switch instr.(type) {
	case *ssa.Phi, *ssa.DebugRef:
		return false
	}
	return true
}

// Weight returns the number of counted instructions of b.
func Weight(b *ssa.BasicBlock) int64 {
	var n int64
	for _, instr := range b.Instrs {
		if Counted(instr) {
			n++
		}
	}
	return n
}

// hasCall reports whether b calls a function that is not a builtin: such a
// block needs a check before the call (paper §5.2) and makes its function a
// non-leaf.
func hasCall(b *ssa.BasicBlock) bool {
	for _, instr := range b.Instrs {
		switch instr := instr.(type) {
		case *ssa.Call:
			if _, builtin := instr.Call.Value.(*ssa.Builtin); !builtin {
				return true
			}
		case *ssa.Go, *ssa.Defer:
			return true
		}
	}
	return false
}

// terminates reports whether b ends the function (return or panic).
func terminates(b *ssa.BasicBlock) bool {
	if len(b.Instrs) == 0 {
		return false
	}
	switch b.Instrs[len(b.Instrs)-1].(type) {
	case *ssa.Return, *ssa.Panic:
		return true
	}
	return false
}

// loopHeaders returns the blocks that are targets of a back edge (an edge
// to a dominator).
func loopHeaders(fn *ssa.Function) map[*ssa.BasicBlock]bool {
	h := make(map[*ssa.BasicBlock]bool)
	for _, b := range fn.Blocks {
		for _, s := range b.Succs {
			if s.Dominates(b) {
				h[s] = true
			}
		}
	}
	return h
}
