package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// Lazy pushes.
//
// A function that calls out (not a leaf) needs its identifier on the
// reified stack only while a callee may sample, that is from before its
// first call on. Many functions return on their common path without
// calling anything (a fast path, an error branch that calls); such a
// function pushes at the nearest block that dominates all its calls and
// lies on no cycle, instead of at entry, so that its common path pays
// neither the push nor the pop.
//
// The depth at entry is read once ("_kd := counter.Depth()"); the push
// there (counter.PushAt) writes the function at that depth and sets the
// depth above it. A check's sample may then come before or after the push:
// it names the function through counter.W, which tells the two apart by
// the current depth. A return that no path through the push reaches
// restores nothing.

// lazyPush returns the point where fn pushes itself if that is not its
// entry: the landing point of the nearest block that dominates every block
// that calls out (calls: the package's callsOut, bound to its options) and
// is on no cycle of the control flow graph, and whose
// landing point is a statement boundary (the push is a statement). It
// also returns the blocks reachable from that block, the only ones after
// which the function may have pushed.
func lazyPush(fn *ssa.Function, landed map[*ssa.BasicBlock]Point, calls func(*ssa.BasicBlock) bool) (Point, map[*ssa.BasicBlock]bool, bool) {
	var at *ssa.BasicBlock
	for _, b := range fn.Blocks {
		if !calls(b) {
			continue
		}
		if at == nil {
			at = b
			continue
		}
		for at != nil && !at.Dominates(b) {
			at = at.Idom()
		}
	}
	cyclic := onCycle(fn)
	for ; at != nil && at.Index != 0; at = at.Idom() {
		if cyclic[at] {
			continue
		}
		pt, ok := landed[at]
		if !ok {
			continue
		}
		switch pt.Kind {
		case beforeStmt, atBodyStart, atFuncEnd, atBodyEnd:
		case afterStmt:
			if isTerminating(pt.Node.(ast.Stmt)) {
				continue
			}
		default:
			continue
		}
		after := make(map[*ssa.BasicBlock]bool)
		var walk func(b *ssa.BasicBlock)
		walk = func(b *ssa.BasicBlock) {
			if after[b] {
				return
			}
			after[b] = true
			for _, s := range b.Succs {
				walk(s)
			}
		}
		walk(at)
		return pt, after, true
	}
	return Point{}, nil, false
}

// onCycle returns the blocks of fn that lie on a cycle of its control
// flow graph (Tarjan's strongly connected components: a block is on a
// cycle if its component has more than one block or it jumps to itself).
func onCycle(fn *ssa.Function) map[*ssa.BasicBlock]bool {
	index := make(map[*ssa.BasicBlock]int)
	low := make(map[*ssa.BasicBlock]int)
	on := make(map[*ssa.BasicBlock]bool)
	var stack []*ssa.BasicBlock
	cyclic := make(map[*ssa.BasicBlock]bool)
	var visit func(b *ssa.BasicBlock)
	visit = func(b *ssa.BasicBlock) {
		index[b] = len(index)
		low[b] = index[b]
		stack = append(stack, b)
		on[b] = true
		for _, s := range b.Succs {
			if _, seen := index[s]; !seen {
				visit(s)
				low[b] = min(low[b], low[s])
			} else if on[s] {
				low[b] = min(low[b], index[s])
			}
			if s == b {
				cyclic[b] = true
			}
		}
		if low[b] != index[b] {
			return
		}
		i := len(stack) - 1
		for stack[i] != b {
			i--
		}
		if len(stack)-i > 1 {
			for _, c := range stack[i:] {
				cyclic[c] = true
			}
		}
		for _, c := range stack[i:] {
			on[c] = false
		}
		stack = stack[:i]
	}
	for _, b := range fn.Blocks {
		if _, seen := index[b]; !seen {
			visit(b)
		}
	}
	return cyclic
}

// noPops returns the positions of the return statements of fn that no path
// through a block of after reaches, and whether that holds for its
// implicit return (at the end of a function without results) too.
func noPops(fn *ssa.Function, after map[*ssa.BasicBlock]bool) (map[token.Pos]bool, bool) {
	reached := make(map[token.Pos]bool)
	none := make(map[token.Pos]bool)
	for _, b := range fn.Blocks {
		if len(b.Instrs) == 0 {
			continue
		}
		if r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			if after[b] {
				reached[r.Pos()] = true
			} else {
				none[r.Pos()] = true
			}
		}
	}
	for pos := range reached {
		delete(none, pos)
	}
	end := none[token.NoPos]
	delete(none, token.NoPos)
	return none, end
}

// planPush decides where the function pushes itself (at entry, or lazily
// before its first call: lazy.go) and how it pops.
func (pl *planner) planPush() {
	p, fn := pl.p, pl.fn
	if !p.Leaf && !pl.yield && !p.Defers {
		out := func(b *ssa.BasicBlock) bool { return callsOut(b, pl.opts.Inert) }
		if at, after, ok := lazyPush(fn, pl.landed, out); ok {
			p.Lazy, p.PushAt, pl.pushed = true, at, after
			p.NoPop, p.NoEndPop = noPops(fn, after)
		}
	}
	// (RangeExits' checks sample with the stack cut at the saved depth.)
	p.PopByCount = !p.Leaf && !pl.yield && !p.Defers && !p.Lazy && len(p.RangeExits) == 0 && !pl.opts.ExactPops
	for _, b := range pl.pending {
		p.Approx = append(p.Approx, fmt.Sprintf("%s block %d (%s): weight %d not placed", fn, b.Index, b.Comment, p.Charged[b.Index]))
	}
	p.Approx = append(p.Approx, pl.c.approx...)
}
