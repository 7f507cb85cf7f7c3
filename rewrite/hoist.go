package rewrite

import (
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// Each charge is a read-modify-write of one word of the goroutine, and
// consecutive charges wait on each other through memory: on a path of
// short blocks that chain, not the instructions kprof adds, is what costs.
// hoistWeights removes charges from paths by moving a block's weight to a
// dominator that runs exactly as often, so that one charge pays for both.
//
// A block b's weight moves to a dominator d when
//   - every path from d reaches b, without running d again;
//   - b does not run again before d runs again;
//   - d and the blocks between d and b make no call, start no goroutine,
//     defer nothing and do not block on a channel.
//
// The first two make d and b run equally often, so the run's total stays
// exact. The third confines the difference to runs where a block between
// d and b panics with a runtime error (a nil dereference, an index out of
// range): then the frame is left with b's weight charged but not run. A
// call (which might panic, exit the program or never return) or a
// blocking operation (a goroutine blocked when the program exits) ends a
// region. Per calling context, the moved weight is charged by the same
// frame, so exact profiles attribute it to the same context.

// maxHoistRegion bounds the blocks visited to prove one move.
const maxHoistRegion = 64

// hoistWeights returns the weight to charge for each block of fn, given
// the blocks' weights w.
func hoistWeights(fn *ssa.Function, w []int64) []int64 {
	charged := append([]int64(nil), w...)
	if len(fn.Blocks) < 2 || fn.Recover != nil {
		return charged
	}
	loops, ok := loopNest(fn)
	if !ok {
		return charged
	}
	target := make([]*ssa.BasicBlock, len(fn.Blocks))
	for _, b := range fn.Blocks {
		target[b.Index] = b
		if w[b.Index] == 0 || b.Index == 0 {
			continue
		}
		// The farthest dominator that qualifies (one between may not: a
		// loop's header does not run as often as the loop's exit).
		for d := b.Idom(); d != nil; d = d.Idom() {
			if slices.Equal(loops[d.Index], loops[b.Index]) && reaches(d, b) {
				target[b.Index] = d
			}
		}
	}
	// Moves chain: a block moved to d moves on with d's own weight.
	final := func(b *ssa.BasicBlock) *ssa.BasicBlock {
		for n := 0; target[b.Index] != b && n < len(fn.Blocks); n++ {
			b = target[b.Index]
		}
		return b
	}
	for _, b := range fn.Blocks {
		if f := final(b); f != b {
			charged[f.Index] += charged[b.Index]
			charged[b.Index] = 0
		}
	}
	return charged
}

// reaches reports whether every path from d, a dominator of b, reaches b
// before it runs d again or leaves the function, through blocks that
// flow plainly (and d flows plainly). With d and b in the same loops of
// a reducible function, b then does not run again before d does either
// (every cycle through b has a header that is d or dominates d, and from
// there every path to b passes d), so they run equally often.
func reaches(d, b *ssa.BasicBlock) bool {
	if !plainFlow(d) {
		return false
	}
	seen := map[*ssa.BasicBlock]bool{}
	work := append([]*ssa.BasicBlock(nil), d.Succs...)
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if x == b || seen[x] {
			continue
		}
		seen[x] = true
		if x == d || len(seen) > maxHoistRegion || !plainFlow(x) {
			return false
		}
		work = append(work, x.Succs...)
	}
	return true
}

// loopNest returns, for each block, the headers (by index, ascending) of
// the natural loops that contain it. It reports false for an irreducible
// function (goto into a loop), whose cycles are not all natural loops.
func loopNest(fn *ssa.Function) ([][]int, bool) {
	n := len(fn.Blocks)
	// Irreducible iff the graph without back edges (edges to a dominator)
	// has a cycle.
	state := make([]byte, n) // 0 new, 1 on the path, 2 done
	var cyclic func(b *ssa.BasicBlock) bool
	cyclic = func(b *ssa.BasicBlock) bool {
		state[b.Index] = 1
		for _, s := range b.Succs {
			if s.Dominates(b) {
				continue
			}
			if state[s.Index] == 1 || state[s.Index] == 0 && cyclic(s) {
				return true
			}
		}
		state[b.Index] = 2
		return false
	}
	if cyclic(fn.Blocks[0]) {
		return nil, false
	}
	loops := make([][]int, n)
	for _, h := range fn.Blocks {
		for i, ok := range naturalLoop(h) {
			if ok {
				loops[i] = append(loops[i], h.Index)
			}
		}
	}
	return loops, true
}

// naturalLoop returns the blocks (by index) of the natural loop of h: h
// and the blocks that reach a back edge into h without passing through h;
// nil if no back edge enters h.
func naturalLoop(h *ssa.BasicBlock) []bool {
	var in []bool
	var work []*ssa.BasicBlock
	for _, x := range h.Preds {
		if !h.Dominates(x) {
			continue
		}
		if in == nil {
			in = make([]bool, len(h.Parent().Blocks))
			in[h.Index] = true
		}
		if !in[x.Index] {
			in[x.Index] = true
			work = append(work, x)
		}
	}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range x.Preds {
			if !in[p.Index] {
				in[p.Index] = true
				work = append(work, p)
			}
		}
	}
	return in
}

// plainFlow reports whether b runs to its end and on to a successor once
// it starts, but for runtime errors: it calls nothing, starts or defers
// nothing, does not wait on a channel, and neither returns nor panics.
func plainFlow(b *ssa.BasicBlock) bool {
	return !hasCall(b) && !blocks(b) && !terminates(b)
}

// blocks reports whether b may wait on a channel.
func blocks(b *ssa.BasicBlock) bool {
	for _, instr := range b.Instrs {
		switch instr := instr.(type) {
		case *ssa.Send, *ssa.Select:
			return true
		case *ssa.UnOp:
			if instr.Op == token.ARROW {
				return true
			}
		}
	}
	return false
}
