package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// Ticks charged in the branches.
//
// The operands of && and || are blocks of their own, charged by a tick in
// the expression (counter.T): a subtraction from the goroutine's count,
// even in a function that accumulates its charges in a register, since an
// expression cannot add to a local variable (see check.tick) — unless
// kprof's compiler moves it there (KprofFoldLate), which it cannot do
// when a call follows in the same block. Consecutive subtractions from
// the count wait on each other, so a tick in a hot condition costs far
// more than its one instruction.
//
// For an if statement whose condition combines operands with && and ||,
// in a function that accumulates its charges, the branches know which
// operands ran when the operands are cheap and pure (variables, fields,
// indexing of slices, arrays and strings, comparisons, arithmetic, len and
// cap; the last operand need only have no effect): each branch retraces
// the condition's evaluation, knowing its outcome, and adds the weights of
// the operands that ran to the accumulator. When c1 || c2 || c3 is false,
// all of them ran: the branch adds a constant; when it is true, c2 ran if
// c1 was false, c3 if c2 was false too — which the branch evaluates again
// (the operands have no effect, and nothing ran since). An operand is
// evaluated again only where the outcome does not tell whether the next
// one ran. An if statement without else gets one.

// branchChain is the condition of an if statement whose ticks go to its
// branches, or of a for statement whose ticks go to its body and to what
// follows it (a loop no break leaves: only the condition leads there).
type branchChain struct {
	stmt  ast.Stmt // *ast.IfStmt or *ast.ForStmt
	cond  ast.Expr
	rhs   []ast.Expr         // the right operand of each && and || in cond, whose tick goes to the branches
	ticks map[ast.Expr]int64 // what the tick of each of rhs charges
}

// branchChains returns the if and for statements of p's function whose
// operand ticks can go to their branches, in source order.
func (f *fileEmitter) branchChains(p *FuncPlan) []*branchChain {
	if !p.Local {
		return nil
	}
	var chains []*branchChain
	inspectOwn(f.info, p.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if n.Else != nil {
				if _, ok := n.Else.(*ast.BlockStmt); !ok {
					break // else if: its condition opens the else branch
				}
			}
			if ch := f.branchChain(p, n, n.Cond); ch != nil {
				chains = append(chains, ch)
			}
		case *ast.ForStmt:
			if n.Cond == nil || len(branchesTo(n, token.BREAK, f.labels)) > 0 {
				break
			}
			if ch := f.branchChain(p, n, n.Cond); ch != nil {
				chains = append(chains, ch)
			}
		}
		return true
	})
	return chains
}

// maxBranchText bounds the text a branch adds, and maxBranchLeaves the
// operands of a condition whose ticks go to the branches: retracing
// copies what follows an operand into both arms of its if, so the text
// can grow exponentially with the operands ((a && b) || (c && d) || …).
const (
	maxBranchText   = 600
	maxBranchLeaves = 8
)

// branchChain returns s's condition cond as a chain whose ticks can go to
// the branches, or nil.
func (f *fileEmitter) branchChain(p *FuncPlan, s ast.Stmt, cond ast.Expr) *branchChain {
	if !isLogical(cond) {
		return nil
	}
	ch := &branchChain{stmt: s, cond: cond, ticks: map[ast.Expr]int64{}}
	var leaves []ast.Expr
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		if b, ok := ast.Unparen(e).(*ast.BinaryExpr); ok && isLogical(b) {
			walk(b.X)
			ch.rhs = append(ch.rhs, b.Y)
			walk(b.Y)
			return
		}
		leaves = append(leaves, e)
	}
	walk(cond)
	if len(leaves) > maxBranchLeaves {
		return nil
	}
	for i, e := range leaves {
		if i < len(leaves)-1 && !f.cheapPure(e) || !f.effectFree(e) {
			return nil
		}
	}
	for _, e := range ch.rhs {
		at := Point{tickExpr, e}
		if p.Checks[at] || p.Final[at] {
			return nil
		}
	}
	for _, out := range []outcome{outTrue, outFalse} {
		g := ch.gen(f, true)
		if len(g.sim(cond, out, "", "")) > maxBranchText {
			return nil
		}
		for _, e := range g.evaluated {
			if strings.Contains(f.text(e), "\n") {
				return nil // evaluated again on one line
			}
		}
		if loop, ok := s.(*ast.ForStmt); ok && out == outFalse && f.declares(loop.Init, g.evaluated) {
			// What follows the loop evaluates operands again: not
			// with the variables of the loop's init statement.
			return nil
		}
	}
	return ch
}

// isLogical reports whether e (parentheses aside) is an && or ||.
func isLogical(e ast.Expr) bool {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	return ok && (b.Op == token.LAND || b.Op == token.LOR)
}

// An outcome is what a branch knows of a condition's value.
type outcome int

const (
	outFalse outcome = iota
	outTrue
	outUnknown
)

// tickGen writes the statements with which a branch retraces the
// evaluation of a condition and charges the operands that ran.
type tickGen struct {
	f         *fileEmitter
	ticks     map[ast.Expr]int64
	dummy     bool       // every tick charges 1: the shape of the text, before the weights are known
	evaluated []ast.Expr // the operands the text evaluates again
}

func (ch *branchChain) gen(f *fileEmitter, dummy bool) *tickGen {
	return &tickGen{f: f, ticks: ch.ticks, dummy: dummy}
}

// add returns the charge of the tick of right operand y followed by rest,
// which may begin with a charge of its own: one charge of the sum.
func (g *tickGen) add(y ast.Expr, rest string) string {
	n := g.ticks[y]
	if g.dummy {
		n = 1
	}
	prefix := localVar + " += "
	if after, ok := strings.CutPrefix(rest, prefix); ok {
		if num, tail, ok := strings.Cut(after, "; "); ok {
			if m, err := strconv.ParseInt(num, 10, 64); err == nil {
				n += m
				rest = tail
			}
		}
	}
	if n == 0 {
		return rest
	}
	return fmt.Sprintf("%s%d; %s", prefix, n, rest)
}

// sim returns statements that charge the operands of e that ran, given
// what is known of e's value, followed by then if e was true and by els if
// it was false.
func (g *tickGen) sim(e ast.Expr, out outcome, then, els string) string {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok || !isLogical(b) {
		switch {
		case out == outTrue:
			return then
		case out == outFalse, then == els:
			return els
		}
		g.evaluated = append(g.evaluated, e)
		cond := g.f.text(e)
		switch {
		case then == "":
			return fmt.Sprintf("if !(%s) { %s}; ", cond, els)
		case els == "":
			return fmt.Sprintf("if %s { %s}; ", cond, then)
		}
		return fmt.Sprintf("if %s { %s} else { %s}; ", cond, then, els)
	}
	if b.Op == token.LAND {
		switch out {
		case outTrue:
			return g.sim(b.X, outTrue, g.add(b.Y, g.sim(b.Y, outTrue, then, "")), "")
		case outFalse:
			return g.sim(b.X, outUnknown, g.add(b.Y, g.sim(b.Y, outFalse, "", els)), els)
		}
		return g.sim(b.X, outUnknown, g.add(b.Y, g.sim(b.Y, outUnknown, then, els)), els)
	}
	switch out {
	case outTrue:
		return g.sim(b.X, outUnknown, then, g.add(b.Y, g.sim(b.Y, outTrue, then, "")))
	case outFalse:
		return g.sim(b.X, outFalse, "", g.add(b.Y, g.sim(b.Y, outFalse, "", els)))
	}
	return g.sim(b.X, outUnknown, then, g.add(b.Y, g.sim(b.Y, outUnknown, then, els)))
}

// declares reports whether statement s declares a variable that one of
// exprs uses.
func (f *fileEmitter) declares(s ast.Stmt, exprs []ast.Expr) bool {
	if s == nil {
		return false
	}
	defined := make(map[types.Object]bool)
	ast.Inspect(s, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && f.info.Defs[id] != nil {
			defined[f.info.Defs[id]] = true
		}
		return true
	})
	uses := false
	for _, e := range exprs {
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && defined[f.info.Uses[id]] {
				uses = true
			}
			return !uses
		})
	}
	return uses
}

// cheapPure reports whether e has no effect and costs a few instructions
// to evaluate again: no call (but conversions, len and cap), no channel
// receive, no map index, no slice expression, no && or || (whose operands
// carry ticks of their own), no function literal, composite literal or
// type assertion.
func (f *fileEmitter) cheapPure(e ast.Expr) bool { return f.pure(e, true) }

// effectFree reports whether evaluating e changes nothing that another
// expression could observe (a runtime error aside): no call (but
// conversions, len and cap), no channel receive, no function literal, no
// && or ||.
func (f *fileEmitter) effectFree(e ast.Expr) bool { return f.pure(e, false) }

// pure is cheapPure if cheap, else effectFree.
func (f *fileEmitter) pure(e ast.Expr, cheap bool) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if tv, found := f.info.Types[n.Fun]; found && tv.IsType() {
				break
			}
			if id, isID := ast.Unparen(n.Fun).(*ast.Ident); isID {
				if b, isB := f.info.Uses[id].(*types.Builtin); isB && (b.Name() == "len" || b.Name() == "cap") {
					break
				}
			}
			ok = false
		case *ast.FuncLit:
			ok = false
		case *ast.TypeAssertExpr, *ast.CompositeLit, *ast.IndexListExpr, *ast.SliceExpr:
			if cheap {
				ok = false
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				ok = false
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				ok = false
			}
		case *ast.IndexExpr:
			if tv, found := f.info.Types[n.X]; !found || cheap && isMap(tv.Type) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

func isMap(t types.Type) bool {
	_, ok := t.Underlying().(*types.Map)
	return ok
}

// emitBranchTicks adds what the ticks of ch's operands charged to the
// branches of its if statement, or to the body of its for statement and
// to what follows the loop.
func (f *fileEmitter) emitBranchTicks(ch *branchChain) {
	thenText := ch.gen(f, false).sim(ch.cond, outTrue, "", "")
	elseText := ch.gen(f, false).sim(ch.cond, outFalse, "", "")
	if loop, ok := ch.stmt.(*ast.ForStmt); ok {
		if thenText != "" {
			f.Insert(loop.Body.Lbrace+1, rankTick, thenText)
		}
		if elseText != "" {
			f.Insert(loop.End(), rankTick, "; "+elseText)
		}
		return
	}
	s := ch.stmt.(*ast.IfStmt)
	if thenText != "" {
		f.Insert(s.Body.Lbrace+1, rankTick, thenText)
	}
	if elseText == "" {
		return
	}
	if s.Else == nil {
		f.Insert(s.Body.Rbrace+1, rankElse, " else { "+strings.TrimSuffix(elseText, " ")+" }")
		return
	}
	f.Insert(s.Else.(*ast.BlockStmt).Lbrace+1, rankTick, elseText)
}
