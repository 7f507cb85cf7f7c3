package rewrite

// Distribution: the weight of a block with no landing point of its own
// goes to its neighbours by flow conservation, and the operands of && and
// || are matched to the blocks that evaluate them.

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// distribute places the weight of a block without a landing point on its
// neighbours when flow conservation makes that exact.
func (c *funcCtx) distribute(b *ssa.BasicBlock, p *FuncPlan, landed map[*ssa.BasicBlock]Point) bool {
	w := p.Charged[b.Index]
	// All predecessors that can go to b go only to b and are landed (a
	// test of a constant, as go/ssa makes for a constant operand of &&
	// or ||, goes one way only). A block no path reaches never runs.
	if !c.reachable(b) {
		return true
	}
	if len(b.Preds) > 0 {
		ok := true
		var from []*ssa.BasicBlock
		for _, pr := range b.Preds {
			succs := liveSuccs(pr)
			if !c.reachable(pr) || !slices.Contains(succs, b) {
				continue // (never from pr)
			}
			if _, l := landed[pr]; !l || len(succs) != 1 {
				ok = false
				break
			}
			from = append(from, pr)
		}
		if ok && len(from) > 0 {
			for _, pr := range from {
				p.add(landed[pr], w)
			}
			landed[b] = landed[from[0]]
			return true
		}
	}
	// b is the only predecessor of its only successor.
	if len(b.Succs) == 1 && len(b.Succs[0].Preds) == 1 {
		if at, l := landed[b.Succs[0]]; l {
			p.add(at, w)
			landed[b] = at
			return true
		}
	}
	// Every successor has b as its only predecessor and is landed.
	if len(b.Succs) > 0 {
		for _, s := range b.Succs {
			if _, l := landed[s]; !l || len(s.Preds) != 1 {
				return false
			}
		}
		for _, s := range b.Succs {
			p.add(landed[s], w)
		}
		return true
	}
	return false
}

// liveSuccs returns the successors control can go to from b: the one a
// test of a constant selects, or all.
func liveSuccs(b *ssa.BasicBlock) []*ssa.BasicBlock {
	if v, ok := constTest(b); ok {
		if v {
			return b.Succs[:1]
		}
		return b.Succs[1:]
	}
	return b.Succs
}

// constTest reports whether b ends in a test of a constant (go/ssa gives
// it no position), and its value.
func constTest(b *ssa.BasicBlock) (value, ok bool) {
	if i := endingIf(b); i != nil {
		if k, ok := i.Cond.(*ssa.Const); ok && k.Value != nil && k.Value.Kind() == constant.Bool {
			return constant.BoolVal(k.Value), true
		}
	}
	return false, false
}

// constTestPos returns the position of the constant that the If ending
// b tests, where buildSSA found it; NoPos otherwise.
func (c *funcCtx) constTestPos(b *ssa.BasicBlock) token.Pos {
	if t := endingIf(b); t != nil {
		return c.consts[t]
	}
	return token.NoPos
}

// reachable reports whether control can reach b from the entry (or from
// a panic, the recover block) through the successors that tests of
// constants leave live.
func (c *funcCtx) reachable(b *ssa.BasicBlock) bool {
	fn := c.fn
	if c.live == nil {
		c.live = make([]bool, len(fn.Blocks))
		var work []*ssa.BasicBlock
		for _, r := range []*ssa.BasicBlock{fn.Blocks[0], fn.Recover} {
			if r != nil && !c.live[r.Index] {
				c.live[r.Index] = true
				work = append(work, r)
			}
		}
		for len(work) > 0 {
			x := work[len(work)-1]
			work = work[:len(work)-1]
			for _, s := range liveSuccs(x) {
				if !c.live[s.Index] {
					c.live[s.Index] = true
					work = append(work, s)
				}
			}
		}
	}
	return c.live[b.Index]
}

// matchOperands places the blocks that evaluate an operand of && or || with
// no positioned instruction (a variable, !v): by the test before them,
// and with byCount the rest are matched, in order, with the operands of
// this function that no positioned block claimed. It returns the blocks
// it could not place.
func (c *funcCtx) matchOperands(p *FuncPlan, pending []*ssa.BasicBlock, landed map[*ssa.BasicBlock]Point, byCount bool) []*ssa.BasicBlock {
	var blocks, rest []*ssa.BasicBlock
	for _, b := range pending {
		switch b.Comment {
		case "cond.true", "cond.false", "binop.rhs":
			if !blockPos(b).IsValid() {
				blocks = append(blocks, b)
				continue
			}
		}
		rest = append(rest, b)
	}
	if len(blocks) == 0 {
		return pending
	}
	// An operand's block follows the test of the operand before it: the
	// position of that test's value, in the X of the && or || whose Y
	// the block evaluates, names the operand.
	if c.matched == nil {
		c.matched = make(map[ast.Expr]bool)
	}
	matched := c.matched
	var unmatched []*ssa.BasicBlock
	for _, b := range blocks {
		// (A block whose test of a constant lies in the operand is
		// that operand's whatever else landed there: the test of true
		// in (true || f()) as the Y of an &&, whose || is positioned.)
		y, ok := c.operandAfterAll(b, landed)
		if ok && (contains(y, c.constTestPos(b)) || !matched[y] && !c.ticked[y]) {
			matched[y] = true
			at := Point{tickExpr, y}
			p.add(at, p.Charged[b.Index])
			landed[b] = at
			continue
		}
		unmatched = append(unmatched, b)
	}
	blocks = unmatched
	if len(blocks) == 0 {
		return rest
	}
	if !byCount {
		return append(rest, blocks...)
	}
	// Otherwise by count. Constant operands usually leave no block (a
	// jump the builder threads away); they count only if the numbers
	// say so.
	var operands, withConst []ast.Expr
	inspectOwn(c.info, c.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if (n.Op == token.LAND || n.Op == token.LOR) && !c.ticked[n.Y] && !matched[n.Y] {
				withConst = append(withConst, n.Y)
				if tv, ok := c.info.Types[n.Y]; !ok || tv.Value == nil {
					operands = append(operands, n.Y)
				}
			}
		}
		return true
	})
	if len(operands) != len(blocks) {
		operands = withConst
	}
	if len(operands) != len(blocks) {
		c.approx = append(c.approx, fmt.Sprintf("%s: %d blocks of && / || operands without positions, %d candidate operands", c.fn, len(blocks), len(operands)))
		return pending
	}
	for i, b := range blocks {
		at := Point{tickExpr, operands[i]}
		matched[operands[i]] = true
		p.add(at, p.Charged[b.Index])
		landed[b] = at
	}
	return rest
}

// operandAfter returns the operand of && or || that b evaluates, from the
// test that leads to it: b's one predecessor ends in an If whose
// condition has a position in the X of the innermost && or || that holds
// it there; b evaluates that expression's Y.
func (c *funcCtx) operandAfter(b *ssa.BasicBlock) (ast.Expr, bool) {
	if len(b.Preds) != 1 {
		return nil, false
	}
	pos := ifPos(b.Preds[0])
	if !pos.IsValid() {
		return nil, false
	}
	return c.operandAfterTests(b, []token.Pos{pos})
}

// operandAfterAll is operandAfter for a block with several predecessors
// too (the tests of an operand that is itself an && or ||, as A and B in
// (A || B) && 3%4 > 2): the innermost && or || whose X holds all their
// conditions. A predecessor whose test has no position (a constant
// operand) stands for the operand it landed at; one whose test of a
// constant never goes to b is left out.
func (c *funcCtx) operandAfterAll(b *ssa.BasicBlock, landed map[*ssa.BasicBlock]Point) (ast.Expr, bool) {
	var tests []token.Pos
	for _, pr := range b.Preds {
		if !slices.Contains(liveSuccs(pr), b) {
			continue
		}
		pos := ifPos(pr)
		if at, ok := landed[pr]; !pos.IsValid() && ok && at.Kind == tickExpr && endingIf(pr) != nil {
			pos = at.Node.Pos()
		}
		if !pos.IsValid() {
			return nil, false
		}
		tests = append(tests, pos)
	}
	return c.operandAfterTests(b, tests)
}

// operandAfterTests returns the Y of the innermost && or || whose X holds
// the positions of the tests that lead to b, of the operator go/ssa names
// b after (cond.true: &&, cond.false: ||).
func (c *funcCtx) operandAfterTests(b *ssa.BasicBlock, tests []token.Pos) (ast.Expr, bool) {
	if len(tests) == 0 {
		return nil, false
	}
	for _, n := range c.pathTo(tests[0]) {
		switch n := n.(type) {
		case *ast.FuncLit:
			return nil, false
		case *ast.BinaryExpr:
			op := n.Op == token.LAND && b.Comment != "cond.false" || n.Op == token.LOR && b.Comment != "cond.true"
			if op && holdsAll(n.X, tests) {
				return n.Y, true
			}
		}
	}
	return nil, false
}
