package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// Ticks charged in the branches.
//
// The operands of && and || are blocks of their own, charged by a tick in
// the expression (counter.T): a subtraction from the goroutine's count,
// even in a function that accumulates its charges in a register, since an
// expression cannot add to a local variable (see check.tick). Consecutive
// subtractions from the count wait on each other, so a tick in a hot
// condition costs far more than its one instruction.
//
// For an if statement whose condition is a chain of one operator over
// cheap pure operands (variables, fields, indexing of slices, arrays and
// strings, comparisons, arithmetic, len and cap), in a function that
// accumulates its charges, the branches know which operands ran: when
// c1 || c2 || c3 is false, all of them; when it is true, c2 ran if c1 was
// false, c3 if c2 was false too — which the branch evaluates again (the
// operands have no effect, and nothing ran since). Each branch then adds
// the operands' weights to the accumulator: the common branch, whichever
// it is, usually adds a constant. An if statement without else gets one.

// branchChain is the condition of an if statement whose ticks go to its
// branches, or of a for statement whose ticks go to its body and to what
// follows it (a loop no break leaves: only the condition leads there).
type branchChain struct {
	stmt     ast.Stmt // *ast.IfStmt or *ast.ForStmt
	cond     ast.Expr
	op       token.Token // token.LOR or token.LAND
	operands []ast.Expr  // c1 … ck, in evaluation order
	ticks    []int64     // what the tick of operand i charges (ticks[0] is unused)
}

// branchChains returns the if statements of p's function whose operand
// ticks can go to their branches, in source order.
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
			if ch := f.branchChain(p, n, n.Cond); ch != nil && (ch.op == token.LOR || !f.declares(n.Init, ch.operands)) {
				// (What follows a loop evaluates an && chain again: not
				// with the variables of the loop's init statement.)
				chains = append(chains, ch)
			}
		}
		return true
	})
	return chains
}

// branchChain returns s's condition cond as a chain whose ticks can go to
// the branches, or nil.
func (f *fileEmitter) branchChain(p *FuncPlan, s ast.Stmt, cond ast.Expr) *branchChain {
	b, ok := cond.(*ast.BinaryExpr)
	if !ok || b.Op != token.LOR && b.Op != token.LAND {
		return nil
	}
	ch := &branchChain{stmt: s, cond: cond, op: b.Op}
	var flatten func(e ast.Expr)
	flatten = func(e ast.Expr) {
		if b, ok := e.(*ast.BinaryExpr); ok && b.Op == ch.op {
			flatten(b.X)
			ch.operands = append(ch.operands, b.Y)
			return
		}
		ch.operands = append(ch.operands, e)
	}
	flatten(b)
	for i, e := range ch.operands {
		if !f.cheapPure(e) {
			return nil
		}
		if i > 0 {
			at := Point{tickExpr, e}
			if p.Checks[at] || p.Final[at] {
				return nil
			}
		}
	}
	ch.ticks = make([]int64, len(ch.operands))
	return ch
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
// receive, no map index, no && or || (whose operands carry ticks of their
// own), no function literal or type assertion.
func (f *fileEmitter) cheapPure(e ast.Expr) bool {
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
		case *ast.FuncLit, *ast.TypeAssertExpr, *ast.CompositeLit:
			ok = false
		case *ast.UnaryExpr:
			if n.Op == token.ARROW || n.Op == token.AND {
				ok = false
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				ok = false
			}
		case *ast.IndexExpr:
			if tv, found := f.info.Types[n.X]; !found || isMap(tv.Type) {
				ok = false
			}
		case *ast.IndexListExpr, *ast.SliceExpr:
			ok = false
		}
		return ok
	})
	return ok
}

func isMap(t types.Type) bool {
	_, ok := t.Underlying().(*types.Map)
	return ok
}

// emitBranchTicks adds to the branches of ch's if statement what its
// operands' ticks charged.
func (f *fileEmitter) emitBranchTicks(ch *branchChain) {
	var all int64
	for _, t := range ch.ticks[1:] {
		all += t
	}
	if all == 0 {
		return
	}
	// The branch where every operand ran: false for ||, true for &&.
	static := fmt.Sprintf("%s += %d; ", localVar, all)
	// The other: operand i ran if operand i-1 ran and did not decide.
	var nested string
	for i := len(ch.operands) - 1; i >= 1; i-- {
		cond := f.text(ch.operands[i-1])
		if ch.op == token.LOR {
			cond = "!(" + cond + ")"
		}
		body := nested
		if ch.ticks[i] != 0 {
			body = fmt.Sprintf("%s += %d; %s", localVar, ch.ticks[i], nested)
		}
		if body == "" {
			continue
		}
		nested = fmt.Sprintf("if %s { %s}; ", cond, body)
	}
	thenText, elseText := nested, static
	if ch.op == token.LAND {
		thenText, elseText = static, nested
	}
	if loop, ok := ch.stmt.(*ast.ForStmt); ok {
		if thenText != "" {
			f.insert(loop.Body.Lbrace+1, rankTick, thenText)
		}
		if elseText != "" {
			f.insert(loop.End(), rankTick, "; "+elseText)
		}
		return
	}
	s := ch.stmt.(*ast.IfStmt)
	if thenText != "" {
		f.insert(s.Body.Lbrace+1, rankTick, thenText)
	}
	if elseText == "" {
		return
	}
	if s.Else == nil {
		f.insert(s.Body.Rbrace+1, rankElse, " else { "+strings.TrimSuffix(elseText, " ")+" }")
		return
	}
	f.insert(s.Else.(*ast.BlockStmt).Lbrace+1, rankTick, elseText)
}
