package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/ssa"
)

// A pointKind says where in the source a charge is placed.
type pointKind int

const (
	atFuncEntry     pointKind = iota // start of the function body
	beforeStmt                       // before a statement of a statement list
	afterStmt                        // right after a statement of a statement list
	atBodyStart                      // start of a block or clause body
	atFuncEnd                        // before the closing brace of the function body
	atBodyEnd                        // before the closing brace of a loop body
	tickExpr                         // boolean expression wrapped with a tick
	caseValue                        // expression switch case value wrapped with a typed tick
	typeCase                         // in a multi-type case clause, when the matched type is the Index'th or later
	defaultClause                    // the default clause of a type switch (added if missing)
	placedElsewhere                  // not a point: the weight went to other points
	postOf                           // not a point: charge after each iteration of the for statement Node
	switchCmp                        // not a point: a comparison with a constant case value Node (see placeSwitches)
	valueCase                        // in a clause listing several constants, when the tag matched the Index'th or later
)

// valueTest names the constants of an expression switch clause.
type valueTest struct {
	Switch *ast.SwitchStmt
	Clause *ast.CaseClause
	Index  int
}

func (t *valueTest) Pos() token.Pos { return t.Clause.Pos() }
func (t *valueTest) End() token.Pos { return t.Clause.End() }

// typeTest names the types of a type switch clause from Index on.
type typeTest struct {
	Clause *ast.CaseClause
	Index  int
}

func (t *typeTest) Pos() token.Pos { return t.Clause.Pos() }
func (t *typeTest) End() token.Pos { return t.Clause.End() }

// A Point is a source location where instrumented code charges the counter.
// Node is the statement, body, clause or expression the kind refers to.
type Point struct {
	Kind pointKind
	Node ast.Node
}

// landing is where a block's weight goes: Point with coefficient +1, plus
// optional further points (negative adjustments or distributed charges).
type charge struct {
	at     Point
	amount int64
}

// funcCtx holds what the landing rules need about one function.
type funcCtx struct {
	fn     *ssa.Function
	body   *ast.BlockStmt // the body whose statements belong to fn
	file   *ast.File
	info   *types.Info
	labels map[ast.Stmt]string    // labeled statements and their labels
	ticked map[ast.Node]bool      // expressions a positioned block ticks
	posts  map[*ast.ForStmt]int64 // weights of post statements, placed by mergeLoops
	cmps   map[ast.Node]int64     // weights of constant case comparisons, placed by placeSwitches
	approx []string               // blocks whose weight could only be placed approximately
	live   []bool                 // by block index: reachable past tests of constants (reachable)
	// matched are the operands of && and || that matchOperands gave a
	// block's weight.
	matched map[ast.Expr]bool
	// consts holds the positions of tests of constants that go/ssa
	// leaves without one (buildSSA).
	consts map[*ssa.If]token.Pos
}

// pathTo returns the AST path from the innermost node enclosing pos up to
// the function body (inclusive), or nil if pos lies outside the body.
func (c *funcCtx) pathTo(pos token.Pos) []ast.Node {
	if !pos.IsValid() || pos < c.body.Lbrace || pos > c.body.Rbrace {
		return nil
	}
	path, _ := astutil.PathEnclosingInterval(c.file, pos, pos)
	for i, n := range path {
		if n == c.body {
			return path[:i+1]
		}
	}
	return nil
}

// blockPos returns the position that identifies where in the source b
// starts: its first counted instruction with a position, or for the merge
// block of a value-context && or || the operator of its phi.
func blockPos(b *ssa.BasicBlock) token.Pos {
	for _, instr := range b.Instrs {
		if _, ok := instr.(*ssa.Phi); ok {
			continue
		}
		// The position of MakeClosure is the func literal's keyword: fine.
		if p := instr.Pos(); p.IsValid() {
			return p
		}
	}
	if b.Comment == "binop.done" {
		for _, instr := range b.Instrs {
			if phi, ok := instr.(*ssa.Phi); ok && (phi.Comment == "&&" || phi.Comment == "||") {
				return phi.Pos()
			}
		}
	}
	return token.NoPos
}

// stmtList returns the statement list of a block or a clause.
func stmtList(n ast.Node) ([]ast.Stmt, bool) {
	switch n := n.(type) {
	case *ast.BlockStmt:
		return n.List, true
	case *ast.CaseClause:
		return n.Body, true
	case *ast.CommClause:
		return n.Body, true
	}
	return nil, false
}

// inList reports whether stmt is an element of a statement list (block,
// case clause or comm clause body).
func inList(parent ast.Node, stmt ast.Node) bool {
	switch stmt.(type) {
	case *ast.CaseClause, *ast.CommClause:
		return false // elements of a switch or select body, not statements
	}
	list, ok := stmtList(parent)
	if !ok {
		return false
	}
	for _, s := range list {
		if s == stmt {
			return true
		}
	}
	return false
}

// generic finds the landing point of a block that starts at pos by walking
// from the innermost node outwards: the first conditional context (operand
// of && or ||, loop condition, post statement, case value) or else the
// innermost statement of a statement list.
func (c *funcCtx) generic(pos token.Pos) (Point, bool) {
	path := c.pathTo(pos)
	if path == nil {
		return Point{}, false
	}
	for i := 0; i+1 < len(path); i++ {
		n, parent := path[i], path[i+1]
		switch p := parent.(type) {
		case *ast.FuncLit:
			// pos is the func keyword of a closure (MakeClosure): keep walking.
		case *ast.BinaryExpr:
			if (p.Op == token.LAND || p.Op == token.LOR) && n == p.Y {
				return Point{tickExpr, p.Y}, true
			}
		case *ast.ForStmt:
			if n == p.Cond {
				return Point{tickExpr, p.Cond}, true
			}
			if n == p.Post {
				return Point{postOf, p}, true // the post statement, possibly fused into a body block
			}
		case *ast.IfStmt:
			if n == p.Else {
				// else-if: its init and condition open the else branch.
				if inner, ok := n.(*ast.IfStmt); ok {
					return Point{tickExpr, inner.Cond}, true
				}
			}
		case *ast.CaseClause:
			for _, v := range p.List {
				if v == n {
					return c.caseValuePoint(path[i+1:], p, v), true
				}
			}
		}
		if stmt, ok := n.(ast.Stmt); ok && inList(parent, stmt) {
			return Point{beforeStmt, stmt}, true
		}
	}
	return Point{}, false
}

// caseValuePoint returns the point for a case value of an expression switch:
// a tick on the boolean case of a tagless switch, a typed tick otherwise.
func (c *funcCtx) caseValuePoint(path []ast.Node, cc *ast.CaseClause, v ast.Expr) Point {
	for _, n := range path {
		switch sw := n.(type) {
		case *ast.SwitchStmt:
			if sw.Tag == nil {
				return Point{tickExpr, v}
			}
			if c.constantSwitch(sw) {
				return Point{switchCmp, v}
			}
			return Point{caseValue, v}
		case *ast.TypeSwitchStmt:
			// Code positioned at a type switch case runs once the clause
			// is chosen (its tests are placed by chargeCaseTest).
			return Point{atBodyStart, cc}
		}
	}
	return Point{atBodyStart, cc}
}

// constantSwitch reports whether an expression switch compares its tag
// with constants only, and the tag can be read again in a clause: it is a
// variable or a field, or the switch has no init statement, so that the
// rewritten switch can bind the tag to a variable first (tagVar). Its
// comparisons are then charged in the clauses (see placeSwitches), and the
// compiler keeps its jump tables and binary searches.
func (c *funcCtx) constantSwitch(sw *ast.SwitchStmt) bool {
	if sw.Tag == nil || sw.Init != nil && !pureOperand(sw.Tag) {
		return false
	}
	for _, s := range sw.Body.List {
		for _, v := range s.(*ast.CaseClause).List {
			if tv, ok := c.info.Types[v]; !ok || tv.Value == nil {
				return false
			}
		}
	}
	return true
}

// pureOperand reports whether e is a variable or a chain of field
// selections on one (no calls, no indexing, no pointer dereference).
func pureOperand(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return true
	case *ast.ParenExpr:
		return pureOperand(e.X)
	case *ast.SelectorExpr:
		return pureOperand(e.X)
	}
	return false
}

// enclosing returns the innermost node of type T on the path to pos for
// which ok(T) holds.
func enclosing[T ast.Node](c *funcCtx, pos token.Pos, ok func(T) bool) (T, bool) {
	var zero T
	for _, n := range c.pathTo(pos) {
		if t, is := n.(T); is && ok(t) {
			return t, true
		}
	}
	return zero, false
}

func contains(n ast.Node, pos token.Pos) bool {
	return n != nil && n.Pos() <= pos && pos < n.End()
}

// commentKind splits a go/ssa block comment ("for.body") into the construct
// ("for") and the part of it ("body").
func commentKind(comment string) (kind, part string) {
	if i := strings.LastIndexByte(comment, '.'); i > 0 {
		return comment[:i], comment[i+1:]
	}
	return comment, ""
}

// land places b's weight at its landing point and reports the point, or
// reports false if b has no landing point of its own.
func (c *funcCtx) land(b *ssa.BasicBlock, p *FuncPlan, w int64) (Point, bool) {
	pos := blockPos(b)
	if b.Index == 0 {
		return c.put(p, Point{atFuncEntry, c.body}, w)
	}
	if at, ok, handled := c.landRangeFunc(b, p, w, pos); handled {
		return at, ok
	}
	if at, ok, handled := c.landStructured(b, p, w, pos); handled {
		return at, ok
	}
	if !pos.IsValid() {
		if at, ok := c.landConstTest(b, p, w); ok {
			return at, true
		}
		return c.landUnpositioned(b, p, w)
	}
	if pos == c.body.Rbrace && !c.isFuncBody() {
		if at, ok := c.returningDone(b, p, w); ok {
			return at, true
		}
	}
	return c.landAt(p, pos, w)
}

// landStructured lands the blocks go/ssa names after the statement they
// belong to (its Comment: "for.body", "rangeindex.loop", "if.then",
// "switch.next", …) where the statement gives them a place: a loop's body
// or condition, a branch, a clause. handled is false for the blocks it
// leaves to the position rules.
func (c *funcCtx) landStructured(b *ssa.BasicBlock, p *FuncPlan, w int64, pos token.Pos) (at Point, ok, handled bool) {
	kind, part := commentKind(b.Comment)
	switch kind {
	case "for":
		return c.landFor(b, p, w, pos, part)
	case "rangeindex", "rangeiter", "rangechan", "rangeint":
		return c.landRange(b, p, w, pos, kind, part)
	case "if":
		return c.landIf(b, p, w, pos, part)
	case "switch", "typeswitch", "select":
		return c.landClause(b, p, w, pos, kind, part)
	case "recover":
		// Runs only when a deferred call recovered a panic: not placed.
		c.approx = append(c.approx, fmt.Sprintf("%s: recover block (weight %d) is not counted", c.fn, w))
		return elsewhere, false, true
	}
	return Point{}, false, false
}

// landFor lands a for statement's body at its start and its condition's
// block on the condition; its post statement's weight is placed by
// mergeLoops.
func (c *funcCtx) landFor(b *ssa.BasicBlock, p *FuncPlan, w int64, pos token.Pos, part string) (Point, bool, bool) {
	f, ok := c.forStmt(b, pos)
	if !ok {
		return Point{}, false, false
	}
	switch part {
	case "body":
		at, ok := c.put(p, Point{atBodyStart, f.Body}, w)
		return at, ok, true
	case "loop":
		at, ok := c.put(p, Point{tickExpr, f.Cond}, w)
		return at, ok, true
	case "post":
		c.posts[f] += w // placed by mergeLoops
		return elsewhere, false, true
	}
	return Point{}, false, false
}

// landRange lands a range loop's body at its start and its header where
// control passes through it.
func (c *funcCtx) landRange(b *ssa.BasicBlock, p *FuncPlan, w int64, pos token.Pos, kind, part string) (Point, bool, bool) {
	r, ok := c.rangeStmt(b, pos, kind)
	if !ok {
		return Point{}, false, false
	}
	switch part {
	case "body":
		at, ok := c.put(p, Point{atBodyStart, r.Body}, w)
		return at, ok, true
	case "loop":
		if kind == "rangeint" {
			// The increment after each iteration (target of continue).
			c.chargeAfterIteration(p, r, r.Body, w)
			return elsewhere, false, true
		}
		// The header runs before every iteration and once more on
		// normal exit: charge it at the body start and after the
		// loop, and take it back at each break.
		at := Point{atBodyStart, r.Body}
		p.add(at, w)
		p.add(Point{afterStmt, r}, w)
		for _, br := range branchesTo(r, token.BREAK, c.labels) {
			p.add(Point{beforeStmt, br}, -w)
		}
		return at, true, true
	case "done":
		if !pos.IsValid() && !terminates(b) {
			// Runs where the loop ends, normally or by a break: found
			// through the loop's body, where the positions of the
			// blocks before it may all be outside the loop (a
			// loop header whose comparisons have none).
			at, ok := c.put(p, Point{afterStmt, c.listStmt(r)}, w)
			return at, ok, true
		}
	}
	return Point{}, false, false
}

// landIf lands the then and else branches of an if statement at their
// start (an else if on its condition).
func (c *funcCtx) landIf(b *ssa.BasicBlock, p *FuncPlan, w int64, pos token.Pos, part string) (Point, bool, bool) {
	if part != "then" && part != "else" {
		return Point{}, false, false
	}
	var ifs *ast.IfStmt
	var ok bool
	if pos.IsValid() {
		ifs, ok = enclosing(c, pos, func(s *ast.IfStmt) bool {
			return (part == "then" && contains(s.Body, pos)) || (part == "else" && contains(s.Else, pos))
		})
	} else if cp := testPos(b); cp.IsValid() {
		// An empty branch (a jump): the if statement whose condition
		// the test before it evaluates.
		ifs, ok = enclosing(c, cp, func(s *ast.IfStmt) bool { return contains(s.Cond, cp) })
	}
	if !ok {
		return Point{}, false, false
	}
	var at Point
	if part == "then" {
		at = Point{atBodyStart, ifs.Body}
	} else if blk, isBlock := ifs.Else.(*ast.BlockStmt); isBlock {
		at = Point{atBodyStart, blk}
	} else {
		at = Point{tickExpr, ifs.Else.(*ast.IfStmt).Cond}
	}
	p.add(at, w)
	return at, true, true
}

// testPos returns the position of the condition of the If that ends a
// predecessor of b, the test that leads to it (NoPos if none has one).
func testPos(b *ssa.BasicBlock) token.Pos {
	for _, pr := range b.Preds {
		if p := ifPos(pr); p.IsValid() {
			return p
		}
	}
	return token.NoPos
}

// ifPos returns the position of the condition of the If that ends b, or
// NoPos.
func ifPos(b *ssa.BasicBlock) token.Pos {
	if len(b.Instrs) > 0 {
		if test, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If); ok {
			return test.Cond.Pos()
		}
	}
	return token.NoPos
}

// landClause lands a switch, type switch or select clause's body at its
// start, and the tests between clauses on the cases (chargeCaseTest) or,
// where nothing matched, on what runs then (noMatch).
func (c *funcCtx) landClause(b *ssa.BasicBlock, p *FuncPlan, w int64, pos token.Pos, kind, part string) (Point, bool, bool) {
	if part == "body" {
		var cl ast.Node
		ok := false
		if kind == "typeswitch" {
			// The test that jumps here names the clause. (The first
			// position of a body that captures the switch's variable
			// is the variable's, in the switch's header.)
			cl, ok = c.clauseOfTest(b, kind)
		}
		if !ok {
			cl, ok = c.clause(pos)
		}
		if !ok && !pos.IsValid() {
			cl, ok = c.clauseOfTest(b, kind)
		}
		if ok {
			at, ok := c.put(p, Point{atBodyStart, cl}, w)
			return at, ok, true
		}
	}
	if part == "next" {
		if kind != "switch" && c.chargeCaseTest(b, p, kind, w) {
			return elsewhere, false, true
		}
		if pos.IsValid() {
			return Point{}, false, false
		}
		if kind == "switch" {
			// The test of a constant case of a tagless switch: an If
			// on a constant, after the test of the case before it.
			if v, ok := c.constantCaseAfter(b); ok {
				at := Point{tickExpr, v}
				c.ticked[v] = true
				p.add(at, w)
				return at, true, true
			}
		}
		// The test of a case that starts with a constant operand
		// (bint(7%4 == 0 && a > 1) > 0): the case's.
		if at, ok := c.landConstTest(b, p, w); ok {
			return at, true, true
		}
		// The default clause or, with no default, what runs after the
		// statement when nothing matched (the done block is fused here
		// only if no clause falls out to it).
		if at, ok := c.noMatch(b, kind); ok {
			p.add(at, w)
			return at, true, true
		}
	}
	return Point{}, false, false
}

// landConstTest lands a block that only tests a constant (7%4 == 0 && a >
// 1 as a case expression): where buildSSA found the constant.
func (c *funcCtx) landConstTest(b *ssa.BasicBlock, p *FuncPlan, w int64) (Point, bool) {
	cp := c.constTestPos(b)
	if !cp.IsValid() || len(b.Instrs) != 1 {
		return Point{}, false
	}
	return c.landAt(p, cp, w)
}

// landUnpositioned lands a block with no source position that the
// statement rules left: an implicit return at the end of the body, or the
// block after a statement (its "done" block).
func (c *funcCtx) landUnpositioned(b *ssa.BasicBlock, p *FuncPlan, w int64) (Point, bool) {
	if terminates(b) {
		if _, isRet := b.Instrs[len(b.Instrs)-1].(*ssa.Return); isRet {
			if at, ok := c.returningDone(b, p, w); ok {
				return at, true
			}
			at := Point{atFuncEnd, c.body}
			if !c.isFuncBody() {
				at = Point{atBodyEnd, c.body} // a range-over-func body falling off its end
			}
			p.add(at, w)
			return at, true
		}
	}
	if kind, part := commentKind(b.Comment); part == "done" && len(b.Preds) > 0 {
		if s, ok := c.doneOf(b, kind); ok {
			return c.put(p, Point{afterStmt, s}, w)
		}
	}
	return Point{}, false
}

// returningDone lands a statement's done block that returns, and has no
// position (or, in a range-over-func body, only its closing brace's):
// right after the statement, where it runs. The return may be a continue
// behind a test of a constant (select {…}; if 2%2 == 0 { continue L }),
// where the body's end is never reached; go/ssa positions the body's
// implicit continue and such a block alike.
func (c *funcCtx) returningDone(b *ssa.BasicBlock, p *FuncPlan, w int64) (Point, bool) {
	kind, part := commentKind(b.Comment)
	if part != "done" || len(b.Preds) == 0 || !terminates(b) {
		return Point{}, false
	}
	if _, isRet := b.Instrs[len(b.Instrs)-1].(*ssa.Return); !isRet {
		return Point{}, false
	}
	if s, ok := c.doneOf(b, kind); ok {
		return c.put(p, Point{afterStmt, s}, w)
	}
	return Point{}, false
}

// landAt lands a block at the statement or expression its position names
// (generic), except for the weights placed by later steps: for statements'
// post statements (mergeLoops) and comparisons with constant case values
// (placeSwitches).
func (c *funcCtx) landAt(p *FuncPlan, pos token.Pos, w int64) (Point, bool) {
	if pos == c.body.Rbrace {
		// Code positioned at the closing brace: falling off the end of a
		// range-over-func body (the implicit continue).
		return c.put(p, Point{atBodyEnd, c.body}, w)
	}
	at, ok := c.generic(pos)
	if !ok {
		return Point{}, false
	}
	switch at.Kind {
	case postOf:
		c.posts[at.Node.(*ast.ForStmt)] += w // placed by mergeLoops
		return elsewhere, false
	case switchCmp:
		c.cmps[at.Node] += w // placed by placeSwitches
		return elsewhere, false
	case tickExpr:
		c.ticked[at.Node] = true
	}
	p.add(at, w)
	return at, true
}

// testOf returns the type switch test or select of a block that decides
// which clause runs.
func testOf(b *ssa.BasicBlock) ssa.Instruction {
	if t := assertTested(b); t != nil {
		return t
	}
	for _, instr := range b.Instrs {
		switch instr := instr.(type) {
		case *ssa.TypeAssert:
			if instr.CommaOk {
				return instr
			}
		case *ssa.Select:
			return instr
		case *ssa.BinOp:
			if ex, ok := instr.X.(*ssa.Extract); ok {
				if sel, ok := ex.Tuple.(*ssa.Select); ok {
					return sel
				}
			}
			if nilCase(b) == instr {
				return instr
			}
		}
	}
	return nil
}

// endingIf returns the If that ends b, or nil.
func endingIf(b *ssa.BasicBlock) *ssa.If {
	if len(b.Instrs) == 0 {
		return nil
	}
	test, _ := b.Instrs[len(b.Instrs)-1].(*ssa.If)
	return test
}

// assertTested returns the comma-ok type assertion whose ok the If that
// ends b tests, if any: a type switch's test, which an earlier comma-ok
// assertion in the same block ("_, ok := u.(T)" before the switch) is
// not.
func assertTested(b *ssa.BasicBlock) *ssa.TypeAssert {
	test := endingIf(b)
	if test == nil {
		return nil
	}
	ex, ok := test.Cond.(*ssa.Extract)
	if !ok || ex.Index != 1 {
		return nil
	}
	t, ok := ex.Tuple.(*ssa.TypeAssert)
	if !ok || !t.CommaOk {
		return nil
	}
	return t
}

// nilCase returns the comparison of a type switch's operand with nil
// that ends b (the test of "case nil", positioned on the nil), or nil.
func nilCase(b *ssa.BasicBlock) *ssa.BinOp {
	test := endingIf(b)
	if test == nil {
		return nil
	}
	bin, ok := test.Cond.(*ssa.BinOp)
	if !ok || bin.Op != token.EQL || bin.Block() != b || !bin.Pos().IsValid() || !types.IsInterface(bin.X.Type()) {
		return nil
	}
	if k, ok := bin.Y.(*ssa.Const); !ok || !k.IsNil() {
		return nil
	}
	return bin
}

// put charges w at the landing point at of a block and reports it.
func (c *funcCtx) put(p *FuncPlan, at Point, w int64) (Point, bool) {
	p.add(at, w)
	return at, true
}

// isFuncBody reports whether c's body is a function body (not the body of
// a range-over-func loop, whose end does not return).
func (c *funcCtx) isFuncBody() bool {
	return c.fn.Synthetic == ""
}

// elsewhere is what land returns for a block whose weight it placed at
// points that are not the block's own landing.
var elsewhere = Point{Kind: placedElsewhere}
