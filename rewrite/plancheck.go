package rewrite

// The plan checker: the invariants every plan holds, whatever the function,
// verified as the plan is made when Options.CheckPlans is set (the golden,
// unit and end-to-end tests set it). A planning step that breaks one fails
// there, naming the function and the block, instead of as a wrong count in
// the oracle minutes later. The exact counts themselves are checked
// dynamically: the oracle (cmd/kprof) compares every calling context with
// go/ssa/interp's trace.

import (
	"cmp"
	"fmt"
	"go/token"
	"maps"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// checkBlocks checks what placeChecks and rangeExitChecks decided, block by
// block, before mergeLoops moves loop headers' charges and checks to the
// statements around the loop:
//
//   - a block that returns or panics is checked after its charge, so that
//     none of its instructions is left for the caller's next check;
//   - a loop header is checked (paper §5.2: the unchecked part of the
//     graph is acyclic);
//   - the entry block is checked, or the function's exits stand for its
//     entry check (small leaves that accumulate, the paths of a late-entry
//     function that never push: FuncPlan.ExitEntry);
//   - a block that calls a function that may sample, or may block, flushes
//     what the function accumulated; in a function that accumulates, a
//     block that may block is checked;
//   - a range-over-func body that calls is checked before the call;
//   - no path runs more than MaxPath instructions without a check, except
//     through blocks that have no landing point to hold one.
func (pl *planner) checkBlocks() error {
	p, fn := pl.p, pl.fn
	for _, b := range fn.Blocks {
		at, ok := pl.landed[b]
		if !ok {
			continue
		}
		var broken string
		switch {
		case terminates(b) && !p.Final[at]:
			broken = "returns or panics with no check after its charge"
		case pl.headers[b] && !p.Checks[at]:
			broken = "heads a loop and has no check"
		case b.Index == 0 && !p.Checks[at] && !p.LateEntry && !pl.smallLocal:
			broken = "is the entry and has no check"
		case terminates(b) && (p.LateEntry && !pl.pushed[b] || pl.smallLocal) && !p.ExitEntry[at]:
			broken = "returns unchecked since entry and its check does not stand for the entry check"
		case (pl.calls(b) || blocks(b)) && !p.Flush[at]:
			broken = "calls or may block and does not flush"
		case p.Local && blocks(b) && !p.Checks[at] && !p.Final[at]:
			broken = "may block in a function that accumulates and has no check"
		case pl.yield && pl.bodyCalls(b) && !p.Final[at]:
			broken = "calls from a range-over-func body with no check before the call"
		}
		if broken != "" {
			return blockError(b, at, broken)
		}
	}
	if maxPath := int64(pl.opts.MaxPath); maxPath > 0 {
		checked := func(b *ssa.BasicBlock) bool {
			at, ok := pl.landed[b]
			return ok && (p.Checks[at] || p.Final[at])
		}
		var over *ssa.BasicBlock
		walkMaxPath(fn, pl.pathW, checked, pl.cut, maxPath, func(b *ssa.BasicBlock) bool {
			_, ok := pl.landed[b]
			if ok && over == nil {
				over = b
			}
			return ok
		})
		if over != nil {
			return blockError(over, pl.landed[over], fmt.Sprintf("ends a path of more than MaxPath (%d) instructions with no check", maxPath))
		}
	}
	return nil
}

func blockError(b *ssa.BasicBlock, at Point, what string) error {
	return fmt.Errorf("block %d (%s, charged at %s) %s", b.Index, b.Comment, b.Parent().Prog.Fset.Position(at.Node.Pos()), what)
}

// checkTables checks that the finished plan's tables agree with each other
// and with its function: a weight for every block, every checked, flushed
// or final point a point of the plan, and the choices of how the function
// keeps its stack entry consistent.
func (p *FuncPlan) checkTables() error {
	n := len(p.Fn.Blocks)
	if len(p.Weights) != n || len(p.Charged) != n || len(p.Counts) != n {
		return fmt.Errorf("%d blocks, %d weights, %d charges, %d counts", n, len(p.Weights), len(p.Charged), len(p.Counts))
	}
	var total int64
	for _, w := range p.Weights {
		total += w
	}
	if total != p.Total {
		return fmt.Errorf("total %d, weights sum to %d", p.Total, total)
	}
	if len(p.order) != len(p.Charges) {
		return fmt.Errorf("%d points in order, %d charged", len(p.order), len(p.Charges))
	}
	for _, at := range p.order {
		if _, ok := p.Charges[at]; !ok {
			return fmt.Errorf("point %v is ordered but not charged", at)
		}
	}
	for name, set := range map[string]map[Point]bool{"checked": p.Checks, "loose": p.Loose, "final": p.Final, "flushed": p.Flush, "quiet-flushed": p.QuietFlush, "exit-entry": p.ExitEntry} {
		for _, at := range slices.SortedFunc(maps.Keys(set), comparePoints) {
			if _, ok := p.Charges[at]; !ok {
				return fmt.Errorf("a %s point (kind %d) is not a point of the plan", name, at.Kind)
			}
		}
	}
	for at := range p.ExitEntry {
		if !p.Final[at] || !p.Local {
			return fmt.Errorf("a check that stands for the entry check is not a final check of a function that accumulates")
		}
	}
	for at := range p.Loose {
		if !p.Checks[at] && !p.Final[at] {
			return fmt.Errorf("a loose check is no check")
		}
	}
	switch {
	case p.LateEntry && !(p.Lazy && p.Local):
		return fmt.Errorf("the entry check is late but the function does not push lazily and accumulate")
	case p.Lazy && p.PushAt.Node == nil:
		return fmt.Errorf("the function pushes lazily at no point")
	case !p.Lazy && (len(p.NoPop) > 0 || p.NoEndPop):
		return fmt.Errorf("returns skip the pop of a function that pushes at entry")
	case p.Lazy && p.Leaf:
		return fmt.Errorf("a leaf pushes lazily")
	case p.PopByCount && (p.Leaf || p.Lazy || p.Defers || len(p.RangeExits) > 0):
		return fmt.Errorf("pops by count though it is a leaf, pushes lazily, defers or returns from range-over-func bodies")
	}
	return nil
}

// comparePoints orders points by position and kind, so that the checker
// reports the same point on every run.
func comparePoints(a, b Point) int {
	pos := func(p Point) token.Pos {
		if p.Node == nil {
			return token.NoPos
		}
		return p.Node.Pos()
	}
	if c := cmp.Compare(pos(a), pos(b)); c != 0 {
		return c
	}
	return cmp.Compare(a.Kind, b.Kind)
}
