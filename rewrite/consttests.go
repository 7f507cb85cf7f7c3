package rewrite

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// Tests of constants.
//
// go/ssa tests a constant condition (if debug, 6%4 > 2 as an operand of
// && or ||, a tagless switch's constant case) with an If whose Cond is a
// *ssa.Const: no instruction, so no position. The planner finds where
// blocks go from positions, and a block that ends in such a test tells
// nothing of where it leaves. buildSSA recovers the positions: while
// go/ssa builds the package, each constant condition that go/ssa tests on
// its own (a leaf of its cond's recursion through parentheses, !, && and
// ||) stands for a constant of its own, its index, so that the If that
// tests it names it; afterwards each such If gets its constant back.
// go/ssa never folds a constant condition (it keeps "if false" for
// fidelity to the source), so the blocks and instructions are those of
// BuildSSA.

// buildSSA is BuildSSA, which also returns the position of the condition
// of every If that tests a constant, where it is known.
func buildSSA(in *Input) (*ssa.Package, map[*ssa.If]token.Pos) {
	leaves, undo := markConstConds(in)
	spkg := BuildSSA(in)
	undo()
	if len(leaves) == 0 {
		return spkg, nil
	}
	pos := make(map[*ssa.If]token.Pos)
	for fn := range ssautil.AllFunctions(spkg.Prog) {
		for _, b := range fn.Blocks {
			t := endingIf(b)
			if t == nil {
				continue
			}
			k, ok := t.Cond.(*ssa.Const)
			if !ok || k.Value == nil || k.Value.Kind() != constant.Int {
				continue
			}
			i, exact := constant.Int64Val(k.Value)
			if !exact || i < 0 || i >= int64(len(leaves)) {
				continue
			}
			l := leaves[i]
			t.Cond = ssa.NewConst(l.value, k.Type())
			pos[t] = l.pos
		}
	}
	return spkg, pos
}

// A constLeaf is a constant condition that go/ssa tests on its own.
type constLeaf struct {
	pos   token.Pos
	value constant.Value
}

// markConstConds finds the constant conditions that go/ssa tests on its
// own (if and for conditions, tagless switch cases, the left operand of a
// && or || whose value is used, and the operands of && and || within
// them) and records, in in.Info, the index of each in leaves as its
// value. The returned function restores in.Info.
func markConstConds(in *Input) (leaves []constLeaf, undo func()) {
	info := in.Info
	var marked []ast.Expr
	var was []types.TypeAndValue
	// structural holds the && and || that cond recurses through.
	structural := make(map[ast.Expr]bool)
	var cond func(e ast.Expr)
	cond = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.ParenExpr:
			cond(x.X)
			return
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				structural[x] = true
				cond(x.X)
				cond(x.Y)
				return
			}
		case *ast.UnaryExpr:
			if x.Op == token.NOT {
				cond(x.X)
				return
			}
		}
		tv, ok := info.Types[e]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.Bool {
			return
		}
		leaves = append(leaves, constLeaf{e.Pos(), tv.Value})
		marked = append(marked, e)
		was = append(was, tv)
		tv.Value = constant.MakeInt64(int64(len(leaves) - 1))
		info.Types[e] = tv
	}
	for _, f := range in.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.IfStmt:
				cond(s.Cond)
			case *ast.ForStmt:
				if s.Cond != nil {
					cond(s.Cond)
				}
			case *ast.SwitchStmt:
				if s.Tag == nil {
					for _, cl := range s.Body.List {
						for _, e := range cl.(*ast.CaseClause).List {
							cond(e)
						}
					}
				}
			case *ast.BinaryExpr:
				// A && or || whose value is used (go/ssa's
				// logicalBinop) tests its left operand; one that is
				// constant as a whole is a constant.
				if (s.Op == token.LAND || s.Op == token.LOR) && !structural[s] && info.Types[s].Value == nil {
					structural[s] = true
					cond(s.X)
				}
			}
			return true
		})
	}
	return leaves, func() {
		for i, e := range marked {
			info.Types[e] = was[i]
		}
	}
}
