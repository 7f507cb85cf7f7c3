package rewrite

// MaxPath: extra checks so that no path runs more than Options.MaxPath
// instructions without one.

import "golang.org/x/tools/go/ssa"

// addMaxPathChecks adds checks so that no path runs more than maxPath
// instructions without one. Checked blocks restart the count, and so do the
// blocks of cut after their own weight (they call a function that checks
// on entry and on return); loop headers already carry checks, so the
// unchecked part of the graph is acyclic.
func addMaxPathChecks(fn *ssa.Function, weights []int64, landed map[*ssa.BasicBlock]Point, need, cut map[*ssa.BasicBlock]bool, maxPath int64) {
	if maxPath <= 0 {
		return
	}
	walkMaxPath(fn, weights, func(b *ssa.BasicBlock) bool { return need[b] }, cut, maxPath, func(b *ssa.BasicBlock) bool {
		if _, ok := landed[b]; ok {
			need[b] = true
			return true
		}
		return false
	})
}

// walkMaxPath follows the instructions that run since the last check along
// every path of fn, in reverse postorder: a block that is checked restarts
// the count at its own weight, and so does a block of cut once it has run.
// Where a block would take the count past maxPath, over is called and
// reports whether the block is checked after all (addMaxPathChecks places
// a check there; the plan checker reports the block).
func walkMaxPath(fn *ssa.Function, weights []int64, checked func(*ssa.BasicBlock) bool, cut map[*ssa.BasicBlock]bool, maxPath int64, over func(*ssa.BasicBlock) bool) {
	acc := make(map[*ssa.BasicBlock]int64)
	for _, b := range reversePostorder(fn) {
		var in int64
		for _, pr := range b.Preds {
			if pr.Dominates(b) && b.Dominates(pr) {
				continue
			}
			if a := acc[pr]; a > in && !isBackEdge(pr, b) {
				in = a
			}
		}
		switch {
		case checked(b), in+weights[b.Index] > maxPath && over(b):
			acc[b] = weights[b.Index]
		case cut[b]:
			// The callee's entry check comes at most the block's
			// weight after the block starts, and after the callee's
			// return check at most that much of the block runs.
			acc[b] = weights[b.Index]
		default:
			acc[b] = in + weights[b.Index]
		}
	}
}

func isBackEdge(from, to *ssa.BasicBlock) bool { return to.Dominates(from) }

func reversePostorder(fn *ssa.Function) []*ssa.BasicBlock {
	seen := make(map[*ssa.BasicBlock]bool)
	var post []*ssa.BasicBlock
	var visit func(b *ssa.BasicBlock)
	visit = func(b *ssa.BasicBlock) {
		seen[b] = true
		for _, s := range b.Succs {
			if !seen[s] {
				visit(s)
			}
		}
		post = append(post, b)
	}
	if len(fn.Blocks) > 0 {
		visit(fn.Blocks[0])
	}
	for i, j := 0, len(post)-1; i < j; i, j = i+1, j-1 {
		post[i], post[j] = post[j], post[i]
	}
	return post
}

// longestPath returns the largest sum of block weights along any path of
// an acyclic function.
func longestPath(fn *ssa.Function, weights []int64) int64 {
	best := make(map[*ssa.BasicBlock]int64)
	var max int64
	for _, b := range reversePostorder(fn) {
		var in int64
		for _, pr := range b.Preds {
			if v := best[pr]; v > in {
				in = v
			}
		}
		best[b] = in + weights[b.Index]
		if best[b] > max {
			max = best[b]
		}
	}
	return max
}
