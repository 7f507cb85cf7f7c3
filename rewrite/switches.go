package rewrite

// Switches and selects: the tests of case values and type cases, the
// dispatch of clauses that list several values, default clauses.

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// onlyJumps reports whether b holds a jump and nothing else.
func onlyJumps(b *ssa.BasicBlock) bool {
	if len(b.Instrs) != 1 {
		return false
	}
	_, ok := b.Instrs[0].(*ssa.Jump)
	return ok
}

// clauseOfTest finds the clause a body block without a position belongs
// to from the test in its predecessor: a type switch test's position is
// its clause's case keyword; a select body follows its index comparison.
func (c *funcCtx) clauseOfTest(b *ssa.BasicBlock, kind string) (ast.Node, bool) {
	// An empty clause that b, a jump, may be the body of; unless another
	// test leads to b from a clause with a body (the next clause's, where
	// go/ssa threads the empty body of a nested switch's clause that
	// falls through to it).
	//
	// Of the clauses whose tests lead to b, b is the body of the last:
	// a test never jumps back to an earlier clause, but the empty body of
	// a clause that only falls through (case 1: fallthrough) is threaded
	// on to the body of the clause after it.
	var empty, last *ast.CaseClause
	for _, pr := range b.Preds {
		switch kind {
		case "typeswitch":
			if len(pr.Succs) != 2 || pr.Succs[0] != b {
				continue // (the default clause follows the last test's failure)
			}
			if ta, ok := testOf(pr).(*ssa.TypeAssert); ok {
				if cl, ok := enclosing(c, ta.Pos(), func(cl *ast.CaseClause) bool { return cl.Case == ta.Pos() }); ok {
					return cl, true
				}
			}
			if bin := nilCase(pr); bin != nil {
				if cl, _, ok := c.nilClause(bin); ok {
					return cl, true
				}
			}
		case "switch":
			// The comparison that jumps here on true is a case value of
			// the clause.
			if len(pr.Succs) == 2 && pr.Succs[0] == b {
				// (The If's condition, positioned on the case value;
				// the block's first position may be the tag's.)
				pp := ifPos(pr)
				if !pp.IsValid() {
					if y, ok := c.operandAfter(pr); ok {
						pp = y.Pos() // (a constant operand: case a > 0 && true:)
					} else if v, ok := c.constantCaseAfter(pr); ok {
						pp = v.Pos() // (a constant case: case true:)
					}
				}
				if !pp.IsValid() {
					pp = blockPos(pr)
				}
				if pp.IsValid() {
					if cl, ok := enclosing(c, pp, func(cl *ast.CaseClause) bool {
						for _, v := range cl.List {
							if contains(v, pp) {
								return true
							}
						}
						return false
					}); ok && len(cl.Body) > 0 {
						if last == nil || cl.Pos() > last.Pos() {
							last = cl
						}
					} else if ok && onlyJumps(b) && empty == nil {
						// (A clause with an empty body has no block of
						// its own unless a jump stays for it (before
						// φ-nodes): go/ssa threads its jump on, here to
						// the body of the clause another test leads to.)
						empty = cl
					}
				}
			}
		case "select":
			// pr compares the chosen index with a constant k: the k'th
			// clause with a communication.
			sel, _ := testOf(pr).(*ssa.Select)
			if sel == nil || len(pr.Succs) != 2 || pr.Succs[0] != b {
				continue
			}
			var k int64 = -1
			for _, instr := range pr.Instrs {
				if bin, ok := instr.(*ssa.BinOp); ok && bin.Op == token.EQL {
					if cst, ok := bin.Y.(*ssa.Const); ok {
						k = cst.Int64()
					}
				}
			}
			ss, ok := enclosing(c, sel.Pos(), func(s *ast.SelectStmt) bool { return s.Select == sel.Pos() })
			if !ok || k < 0 {
				continue
			}
			i := int64(0)
			for _, st := range ss.Body.List {
				if cl := st.(*ast.CommClause); cl.Comm != nil {
					if i == k {
						return cl, true
					}
					i++
				}
			}
		}
	}
	if last != nil {
		return last, true
	}
	if empty != nil {
		return empty, true
	}
	return nil, false
}

// constantCaseAfter returns the case expression of a tagless switch whose
// test ends b in an If on a constant (go/ssa keeps the test), a case that
// is constant or whose first operand of && or || is: for a switch.next
// block holding only that If, the case after the one the test before b
// evaluates; for a block that runs code before it, the switch's first
// case (firstConstantCase).
func (c *funcCtx) constantCaseAfter(b *ssa.BasicBlock) (ast.Expr, bool) {
	return c.constantCaseAfterN(b, len(c.fn.Blocks))
}

// constantCaseAfterN is constantCaseAfter, following at most n constant
// tests back.
func (c *funcCtx) constantCaseAfterN(b *ssa.BasicBlock, n int) (ast.Expr, bool) {
	if len(b.Instrs) == 0 || n <= 0 {
		return nil, false
	}
	if test, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If); !ok {
		return nil, false
	} else if _, ok := test.Cond.(*ssa.Const); !ok {
		return nil, false
	}
	switch b.Comment {
	case "cond.true", "cond.false", "binop.rhs":
		return nil, false // (a constant operand inside a case expression)
	}
	if len(b.Instrs) > 1 {
		return c.firstConstantCase(b)
	}
	if b.Comment != "switch.next" {
		return nil, false
	}
	pp := testPos(b)
	if !pp.IsValid() {
		// The test before is constant too (case true: case true:, or
		// the switch's first case after other code): the case after
		// the one it evaluates.
		for _, pr := range b.Preds {
			if len(pr.Succs) == 2 && pr.Succs[1] == b {
				if v, ok := c.constantCaseAfterN(pr, n-1); ok {
					pp = v.Pos()
					break
				}
			}
		}
	}
	if !pp.IsValid() {
		return nil, false
	}
	sw, ok := enclosing(c, pp, func(sw *ast.SwitchStmt) bool { return sw.Tag == nil && contains(sw.Body, pp) })
	if !ok {
		return nil, false
	}
	var cases []ast.Expr
	for _, st := range sw.Body.List {
		cases = append(cases, st.(*ast.CaseClause).List...)
	}
	for i, v := range cases {
		if contains(v, pp) && i+1 < len(cases) && c.constantFirst(cases[i+1]) {
			return cases[i+1], true
		}
	}
	return nil, false
}

// firstConstantCase returns the first case expression of the tagless
// switch whose test ends b, a block that runs code before it: the first
// such switch after b's last position whose first case begins with a
// constant operand.
func (c *funcCtx) firstConstantCase(b *ssa.BasicBlock) (ast.Expr, bool) {
	last := token.NoPos
	for _, instr := range b.Instrs {
		if _, phi := instr.(*ssa.Phi); phi {
			continue // (positioned at the variable's declaration)
		}
		if p := instr.Pos(); p.IsValid() && p > last {
			last = p
		}
	}
	if !last.IsValid() {
		return nil, false
	}
	var best *ast.SwitchStmt
	inspectOwn(c.info, c.body, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		// (The body's brace: an init statement's code comes before it.)
		if !ok || sw.Tag != nil || sw.Body.Lbrace <= last || best != nil && sw.Body.Lbrace >= best.Body.Lbrace {
			return true
		}
		if len(sw.Body.List) > 0 {
			if cl := sw.Body.List[0].(*ast.CaseClause); len(cl.List) > 0 && c.constantFirst(cl.List[0]) {
				best = sw
			}
		}
		return true
	})
	if best == nil {
		return nil, false
	}
	return best.Body.List[0].(*ast.CaseClause).List[0], true
}

// constantFirst reports whether e, or the operand of && and || that e
// evaluates first, is constant.
func (c *funcCtx) constantFirst(e ast.Expr) bool {
	for {
		if tv, ok := c.info.Types[e]; ok && tv.Value != nil {
			return true
		}
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.BinaryExpr:
			if x.Op != token.LAND && x.Op != token.LOR {
				return false
			}
			e = x.X
		default:
			return false
		}
	}
}

// typeTested returns the value whose type the first test in b tests (a
// type assertion with ok, or a comparison with nil that ends b), or nil.
func typeTested(b *ssa.BasicBlock) ssa.Value {
	if t := assertTested(b); t != nil {
		return t.X
	}
	for _, instr := range b.Instrs {
		if t, ok := instr.(*ssa.TypeAssert); ok && t.CommaOk {
			return t.X
		}
	}
	if bin := nilCase(b); bin != nil {
		return bin.X
	}
	return nil
}

// nilClause returns the type switch clause whose list holds the nil that
// bin compares with, and its index there.
func (c *funcCtx) nilClause(bin *ssa.BinOp) (*ast.CaseClause, int, bool) {
	cl, ok := enclosing(c, bin.Pos(), func(cl *ast.CaseClause) bool {
		return slices.ContainsFunc(cl.List, func(e ast.Expr) bool { return e.Pos() == bin.Pos() })
	})
	if !ok {
		return nil, 0, false
	}
	if path := c.pathTo(cl.Pos()); len(path) < 3 {
		return nil, 0, false
	} else if _, ok := path[2].(*ast.TypeSwitchStmt); !ok {
		return nil, 0, false // (an expression switch's case nil)
	}
	return cl, slices.IndexFunc(cl.List, func(e ast.Expr) bool { return e.Pos() == bin.Pos() }), true
}

// noMatch returns where the code of a type switch's or select's last
// "next" block without a test runs: the default clause, or after the
// statement.
func (c *funcCtx) noMatch(b *ssa.BasicBlock, kind string) (Point, bool) {
	for _, pr := range b.Preds {
		var body *ast.BlockStmt
		var stmt ast.Stmt
		if kind == "switch" {
			pp := blockPos(pr)
			if sw, ok := enclosing(c, pp, func(*ast.SwitchStmt) bool { return true }); ok && pp.IsValid() {
				body, stmt = sw.Body, sw
			}
		}
		t := testOf(pr)
		if t == nil && body == nil {
			continue
		}
		switch kind {
		case "typeswitch":
			sw, ok := enclosing(c, t.Pos(), func(*ast.TypeSwitchStmt) bool { return true })
			if !ok {
				return Point{}, false
			}
			body, stmt = sw.Body, sw
		case "select":
			ss, ok := enclosing(c, t.Pos(), func(s *ast.SelectStmt) bool { return s.Select == t.Pos() })
			if !ok {
				return Point{}, false
			}
			body, stmt = ss.Body, ss
		}
		if body == nil {
			continue
		}
		for _, s := range body.List {
			switch cl := s.(type) {
			case *ast.CaseClause:
				if cl.List == nil {
					return Point{atBodyStart, cl}, true
				}
			case *ast.CommClause:
				if cl.Comm == nil {
					return Point{atBodyStart, cl}, true
				}
			}
		}
		return Point{afterStmt, c.listStmt(stmt)}, true
	}
	return Point{}, false
}

// clause returns the case or comm clause whose body (or case list) holds pos.
func (c *funcCtx) clause(pos token.Pos) (ast.Node, bool) {
	// A body's first instruction may be the test of a switch or select
	// that begins it, positioned in a nested clause: a case expression,
	// a type switch's case keyword, a channel operand ("case 'v':
	// switch { case f(): …"). The clause is the innermost one whose
	// body holds the position; failing that, the innermost one.
	var inner ast.Node
	for _, n := range c.pathTo(pos) {
		switch n := n.(type) {
		case *ast.CaseClause:
			if len(n.Body) > 0 && n.Body[0].Pos() <= pos && pos < n.Body[len(n.Body)-1].End() {
				return n, true
			}
		case *ast.CommClause:
			if !slices.ContainsFunc(commOperands(n.Comm), func(e ast.Expr) bool { return contains(e, pos) }) {
				return n, true // (a receive's assignment is the clause's)
			}
		default:
			continue
		}
		if inner == nil {
			inner = n
		}
	}
	return inner, inner != nil
}

// commOperands returns the expressions a select evaluates for the
// communication of a clause before it chooses: the channel, and the value
// sent.
func commOperands(comm ast.Stmt) []ast.Expr {
	var recv ast.Expr
	switch s := comm.(type) {
	case *ast.SendStmt:
		return []ast.Expr{s.Chan, s.Value}
	case *ast.ExprStmt:
		recv = s.X
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			recv = s.Rhs[0]
		}
	}
	if u, ok := ast.Unparen(recv).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
		return []ast.Expr{u.X}
	}
	return nil
}

// chargeCaseTest places the weight of a type-switch or select test block:
// the test runs on the way to every later clause, so its weight is charged
// at the start of those clauses' bodies, and at the default clause (added
// if missing: it is where no match lands).
func (c *funcCtx) chargeCaseTest(b *ssa.BasicBlock, p *FuncPlan, kind string, w int64) bool {
	switch kind {
	case "typeswitch":
		var ta *ssa.TypeAssert
		for _, instr := range b.Instrs {
			if t, ok := instr.(*ssa.TypeAssert); ok && t.CommaOk {
				ta = t
				break
			}
		}
		// The clause tested, and the index in its list of the type
		// tested (a type switch lists no type twice).
		var tested *ast.CaseClause
		rank := -1
		if ta != nil {
			// ta.Pos() is the case keyword of the clause being tested.
			tested, _ = enclosing(c, ta.Pos(), func(cl *ast.CaseClause) bool { return cl.Case == ta.Pos() })
			if tested != nil {
				for i, e := range tested.List {
					if t := c.info.TypeOf(e); t != nil && types.Identical(t, ta.AssertedType) {
						rank = i
					}
				}
			}
		} else if bin := nilCase(b); bin != nil {
			tested, rank, _ = c.nilClause(bin)
		}
		if tested == nil || rank < 0 {
			return false
		}
		// A test follows the test of the clause before it, of the same
		// operand; a block that asserts another value is the body of
		// a default clause that begins with a type switch, which
		// go/ssa fused into the last test's block.
		for _, pr := range b.Preds {
			if x := typeTested(pr); x != nil && x != typeTested(b) {
				return false
			}
		}
		sw, ok := enclosing(c, tested.Pos(), func(*ast.TypeSwitchStmt) bool { return true })
		if !ok {
			return false
		}
		var clauses []*ast.CaseClause
		for _, s := range sw.Body.List {
			clauses = append(clauses, s.(*ast.CaseClause))
		}
		ci := slices.Index(clauses, tested)
		if ci < 0 {
			return false
		}
		// b runs for the type it tests and those after it.
		for i := ci; i < len(clauses); i++ {
			cl := clauses[i]
			if cl.List == nil {
				continue
			}
			if i == ci {
				if rank >= len(cl.List) {
					return false
				}
				// Only the types from rank on come after this test.
				if rank > 0 {
					p.add(Point{typeCase, &typeTest{Clause: cl, Index: rank}}, w)
					continue
				}
			}
			p.add(Point{atBodyStart, cl}, w)
		}
		p.add(Point{defaultClause, sw}, w)
		return true
	case "select":
		// b compares the chosen index with the clause's index.
		var sel *ssa.Select
		for _, instr := range b.Instrs {
			if bin, ok := instr.(*ssa.BinOp); ok {
				if ex, ok := bin.X.(*ssa.Extract); ok {
					if s, ok := ex.Tuple.(*ssa.Select); ok {
						sel = s
						break
					}
				}
			}
		}
		if sel == nil || sel.Block() == b {
			// (A block that evaluates the select it tests begins the
			// body of an enclosing clause: a select.next block into
			// which go/ssa fused the default clause that holds it.)
			return false
		}
		ss, ok := enclosing(c, sel.Pos(), func(*ast.SelectStmt) bool { return true })
		if !ok || ss.Select != sel.Pos() {
			return false
		}
		// The index this block tests is its rank among the select's tests.
		rank := 1
		for _, ob := range c.fn.Blocks {
			if ob == b {
				break
			}
			// (The block that evaluates the select tests its first
			// index, whatever its comment: the default clause of an
			// enclosing select, fused into that one's last test.)
			if ob.Comment == "select.next" && ob != sel.Block() && testsSelect(ob, sel) {
				rank++
			}
		}
		i := 0
		for _, s := range ss.Body.List {
			cl := s.(*ast.CommClause)
			if cl.Comm == nil {
				p.add(Point{atBodyStart, cl}, w)
				continue
			}
			if i >= rank {
				p.add(Point{atBodyStart, cl}, w)
			}
			i++
		}
		return true
	}
	return false
}

func firstNonDefault(clauses []*ast.CaseClause) int {
	for i, cl := range clauses {
		if cl.List != nil {
			return i
		}
	}
	return -1
}

func testsSelect(b *ssa.BasicBlock, sel *ssa.Select) bool {
	for _, instr := range b.Instrs {
		if bin, ok := instr.(*ssa.BinOp); ok {
			if ex, ok := bin.X.(*ssa.Extract); ok && ex.Tuple == sel {
				return true
			}
		}
	}
	return false
}

// placeSwitches charges the comparisons of switches on constants in the
// clauses they lead to. The comparisons run in order, so the clause of the
// j'th value has run the first j+1 of them: its body is charged their sum
// (for a clause with several values, a switch on the same tag at the body's
// start tells which one matched); the default clause — added if missing —
// is charged all of them. A fallthrough takes back what the next clause's
// start charges. One charge per switch instead of one per comparison, and
// the case values stay constants, so the compiler keeps its jump tables.
func (c *funcCtx) placeSwitches(p *FuncPlan) {
	if len(c.cmps) == 0 {
		return
	}
	var switches []*ast.SwitchStmt
	inspectOwn(c.info, c.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SwitchStmt:
			if n.Tag != nil && c.constantSwitch(n) {
				switches = append(switches, n)
			}
		}
		return true
	})
	for _, sw := range switches {
		var total int64
		start := map[*ast.CaseClause]int64{} // what each clause's start charges
		var def *ast.CaseClause
		for _, s := range sw.Body.List {
			cl := s.(*ast.CaseClause)
			if cl.List == nil {
				def = cl
				continue
			}
			for j, v := range cl.List {
				total += c.cmps[v]
				if len(cl.List) == 1 {
					start[cl] = total
					p.add(Point{atBodyStart, cl}, total)
				} else if total != 0 {
					p.add(Point{valueCase, &valueTest{Switch: sw, Clause: cl, Index: j}}, total)
				}
			}
		}
		if def != nil {
			start[def] = total
			p.add(Point{atBodyStart, def}, total)
		} else if total != 0 {
			p.add(Point{defaultClause, sw}, total)
		}
		for i, s := range sw.Body.List {
			cl := s.(*ast.CaseClause)
			if len(cl.Body) == 0 || i+1 == len(sw.Body.List) {
				continue
			}
			if br, ok := cl.Body[len(cl.Body)-1].(*ast.BranchStmt); ok && br.Tok == token.FALLTHROUGH {
				if w := start[sw.Body.List[i+1].(*ast.CaseClause)]; w != 0 {
					p.add(Point{beforeStmt, br}, -w)
				}
			}
		}
	}
}
