package rewrite

// Range-over-func loops: bodies are functions of their own, and a return
// or break inside one leaves through the iterator.

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/ssa"
)

// rangeFuncExits returns the return and branch statements of body (not
// nested function literals) that stand inside the body of a
// range-over-func loop, with the number of such loops around them.
func rangeFuncExits(body *ast.BlockStmt, info *types.Info) map[ast.Stmt]int {
	var out map[ast.Stmt]int
	var depth int
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.RangeStmt:
			if rangeKind(info, n) == "rangefunc" {
				ast.Inspect(n.X, visit)
				depth++
				ast.Inspect(n.Body, visit)
				depth--
				return false
			}
		case *ast.ReturnStmt, *ast.BranchStmt:
			if depth > 0 {
				if out == nil {
					out = make(map[ast.Stmt]int)
				}
				out[n.(ast.Stmt)] = depth
			}
		}
		return true
	}
	ast.Inspect(body, visit)
	return out
}

// returnsInRange reports whether the function returns from inside a
// range-over-func loop body.
func (p *FuncPlan) returnsInRange() bool {
	for s := range p.RangeExits {
		if _, ok := s.(*ast.ReturnStmt); ok {
			return true
		}
	}
	return false
}

// landRangeFunc places the blocks go/ssa makes for range-over-func loops:
// in the synthetic yield function (the loop body), its header, continue
// and misuse blocks; in the enclosing function, the "resume" blocks that
// run after the iterator returns and dispatch on how the body left.
func (c *funcCtx) landRangeFunc(b *ssa.BasicBlock, p *FuncPlan, w int64, pos token.Pos) (Point, bool, bool) {
	switch b.Comment {
	case "yield-loop":
		// Runs on every call of the yield function, before the body.
		at := Point{atBodyStart, c.body}
		p.add(at, w)
		return at, true, true
	case "yield-continue":
		r := c.fn.Syntax().(*ast.RangeStmt)
		c.chargeAfterIteration(p, r, r.Body, w)
		return elsewhere, false, true
	case "yield-invalid", "rangefunc.resume.busy":
		// Panics of iterators that misuse yield: not counted.
		return elsewhere, false, true
	case "rangefunc.resume.ready.check", "rangefunc.resume.ready":
		r, ok := c.rangeFuncByRank(b)
		if !ok {
			return Point{}, false, true
		}
		// ready.check runs once each time the iterator returns: once per
		// execution of the range statement. ready runs when no exit
		// statement (break, return, goto out of the body) ended the loop.
		// Both are charged after the loop, where the loop's end and its
		// own breaks go; a break then takes ready back, and the other
		// exits charge ready.check (as they charge their dispatch,
		// below). Not before the loop: a panic that leaves it through
		// the iterator (recovered further up) runs neither.
		at, _ := c.put(p, Point{afterStmt, c.listStmt(r)}, w)
		check := b.Comment == "rangefunc.resume.ready.check"
		for _, e := range c.exitStmts(r) {
			switch own := isBreakOf(e, c.labels[r]); {
			case own && !check:
				p.add(Point{beforeStmt, e}, -w)
			case !own && check:
				p.add(Point{beforeStmt, e}, w)
			}
		}
		return at, true, true
	case "rangefunc.resume.exits", "rangefunc.resume.cnd":
		// Compares the exit taken with the exit at pos: runs for that
		// exit and every later one.
		if !pos.IsValid() {
			return elsewhere, false, true // no exit left to compare: unreachable
		}
		exits, k := c.exitAt(pos)
		if k < 0 {
			return Point{}, false, true
		}
		for _, e := range exits[k:] {
			p.add(Point{beforeStmt, e}, w)
		}
		return elsewhere, false, true
	case "rangefunc.resume.match":
		// The action of one exit: runs once each time that exit is taken.
		if pos.IsValid() {
			return Point{}, false, false // a return: lands at the statement
		}
		for _, pr := range b.Preds {
			if pp := blockPos(pr); pp.IsValid() {
				if exits, k := c.exitAt(pp); k >= 0 {
					at, _ := c.put(p, Point{beforeStmt, exits[k]}, w)
					return at, true, true
				}
			}
		}
		return Point{}, false, true
	case "rangefunc.done":
		if !pos.IsValid() {
			for _, pr := range b.Preds {
				if pr.Comment == "rangefunc.resume.ready" {
					if r, ok := c.rangeFuncByRank(pr); ok {
						at, _ := c.put(p, Point{afterStmt, c.listStmt(r)}, w)
						return at, true, true
					}
				}
			}
		}
	}
	return Point{}, false, false
}

// rangeFuncByRank matches a resume block with its range statement by rank
// among the blocks of the same kind.
func (c *funcCtx) rangeFuncByRank(b *ssa.BasicBlock) (*ast.RangeStmt, bool) {
	return byRank(c.fn, b, c.rangeStmts("rangefunc"))
}

// exitStmts returns the statements of a range-over-func body that leave
// the loop (return, break, continue or goto to a target outside), in order:
// those the resume dispatch after the loop tells apart.
func (c *funcCtx) exitStmts(r *ast.RangeStmt) []ast.Stmt {
	return bodyExits(r.Body, false, c.labels[r])
}

// bodyExits returns, in order, the statements of a range-over-func loop
// body that leave the loop: returns, and break, continue and goto
// statements whose target is outside the body. With continues, the
// unlabeled continues of the loop itself are included too: they leave the
// body (the yield function returns true) without leaving the loop. label
// is the loop's own label, if any: a continue to it, from however deep in
// the body, is the loop's own continue.
func bodyExits(body *ast.BlockStmt, continues bool, label string) []ast.Stmt {
	inside := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if l, ok := n.(*ast.LabeledStmt); ok {
			inside[l.Label.Name] = true
		}
		_, lit := n.(*ast.FuncLit)
		return !lit
	})
	var out []ast.Stmt
	var walk func(n ast.Node, loops, breakables int)
	walk = func(n ast.Node, loops, breakables int) {
		ast.Inspect(n, func(m ast.Node) bool {
			if m == n {
				return true
			}
			switch m := m.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ForStmt, *ast.RangeStmt:
				walk(m, loops+1, breakables+1)
				return false
			case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				walk(m, loops, breakables+1)
				return false
			case *ast.ReturnStmt:
				out = append(out, m)
			case *ast.BranchStmt:
				switch {
				case m.Tok == token.FALLTHROUGH:
				case m.Label != nil && m.Tok == token.CONTINUE && m.Label.Name == label:
					if continues {
						out = append(out, m)
					}
				case m.Label != nil:
					if !inside[m.Label.Name] {
						out = append(out, m)
					}
				case m.Tok == token.BREAK && breakables == 0,
					m.Tok == token.CONTINUE && loops == 0 && continues:
					out = append(out, m)
				}
			}
			return true
		})
	}
	walk(body, 0, 0)
	sort.Slice(out, func(i, j int) bool { return out[i].Pos() < out[j].Pos() })
	return out
}

// isBreakOf reports whether e, an exit statement of a range-over-func
// loop labeled label (or not, ""), breaks that loop: it goes where the
// loop's end goes.
func isBreakOf(e ast.Stmt, label string) bool {
	b, ok := e.(*ast.BranchStmt)
	return ok && b.Tok == token.BREAK && (b.Label == nil || b.Label.Name == label)
}

// exitAt returns the exit statements of the range-over-func statement whose
// exit is at pos, and the index of that exit (-1 if none).
func (c *funcCtx) exitAt(pos token.Pos) ([]ast.Stmt, int) {
	for _, r := range c.rangeStmts("rangefunc") {
		if !contains(r.Body, pos) {
			continue
		}
		exits := c.exitStmts(r)
		for i, e := range exits {
			if e.Pos() == pos {
				return exits, i
			}
		}
	}
	return nil, -1
}
