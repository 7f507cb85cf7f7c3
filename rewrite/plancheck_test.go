package rewrite

import (
	"go/ast"
	"maps"
	"strings"
	"testing"

	"golang.org/x/tools/go/ssa"
)

const checkSrc = `package p

func loop(xs []int, c chan int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	c <- s
	return s
}

func leaf(x int) int { return x + 1 }

func branch(a, b int) int {
	x := a * b
	if a > b {
		x += a * a
	}
	return x
}
`

// TestPlanChecker breaks each invariant of a correct plan in turn and
// checks that the plan checker names it.
func TestPlanChecker(t *testing.T) {
	in, out := instrument(t, "p.go", []byte(checkSrc))
	if len(out.Plans) == 0 {
		t.Fatal("no plans")
	}
	funcs := map[string]*ssa.Function{}
	for _, p := range out.Plans {
		funcs[p.Fn.Name()] = p.Fn
	}
	// replan makes the plan of the function named name again, up to its
	// checks, with MaxPath maxPath.
	replan := func(name string, maxPath int) *planner {
		fn := funcs[name]
		facts := packageFacts([][]*ssa.Function{{fn}}, DefaultOptions)
		opts := DefaultOptions
		opts.MaxPath = maxPath
		pl := newPlanner(in.Files[0], in.Info, map[ast.Stmt]string{}, fn, fn.Syntax().(*ast.FuncDecl).Body, &opts, facts)
		pl.landBlocks()
		pl.planPush()
		pl.placeChecks(pl.planLocal())
		pl.rangeExitChecks()
		return pl
	}
	for name := range funcs {
		if err := replan(name, DefaultOptions.MaxPath).checkBlocks(); err != nil {
			t.Fatalf("correct plan of %s: %v", name, err)
		}
	}
	block := func(pl *planner, pred func(*ssa.BasicBlock) bool) Point {
		for _, b := range pl.fn.Blocks {
			if at, ok := pl.landed[b]; ok && pred(b) {
				return at
			}
		}
		t.Fatal("no such block")
		return Point{}
	}
	tests := []struct {
		name   string
		fn     string
		break_ func(pl *planner)
		want   string
	}{
		{"final", "loop", func(pl *planner) { delete(pl.p.Final, block(pl, terminates)) }, "no check after its charge"},
		{"header", "loop", func(pl *planner) {
			delete(pl.p.Checks, block(pl, func(b *ssa.BasicBlock) bool { return pl.headers[b] }))
		}, "heads a loop"},
		{"entry", "loop", func(pl *planner) {
			delete(pl.p.Checks, block(pl, func(b *ssa.BasicBlock) bool { return b.Index == 0 }))
		}, "entry"},
		{"flush", "loop", func(pl *planner) { clear(pl.p.Flush) }, "does not flush"},
		// The branch's body, between the entry's check and the
		// return's, is a path of more than one instruction.
		{"maxpath", "branch", func(pl *planner) { pl.opts.MaxPath = 1 }, "more than MaxPath (1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := replan(tt.fn, DefaultOptions.MaxPath)
			tt.break_(pl)
			err := pl.checkBlocks()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkBlocks = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestPlanTables breaks the agreement of a finished plan's tables in turn.
func TestPlanTables(t *testing.T) {
	_, out := instrument(t, "p.go", []byte(checkSrc))
	tests := []struct {
		name   string
		break_ func(p *FuncPlan)
		want   string
	}{
		{"weights", func(p *FuncPlan) { p.Weights = p.Weights[1:] }, "weights"},
		{"total", func(p *FuncPlan) { p.Total++ }, "total"},
		{"order", func(p *FuncPlan) { p.order = p.order[1:] }, "points in order"},
		{"stray check", func(p *FuncPlan) { p.Checks[Point{Kind: atFuncEnd, Node: p.Body}] = true }, "not a point of the plan"},
		{"lazy", func(p *FuncPlan) { p.Lazy, p.PushAt = true, Point{} }, "lazily"},
		{"pop by count", func(p *FuncPlan) { p.PopByCount, p.Defers = true, true }, "pops by count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range out.Plans {
				if err := p.checkTables(); err != nil {
					t.Fatalf("%s: correct plan: %v", p.Name, err)
				}
			}
			p := *out.Plans[0]
			p.Checks = maps.Clone(p.Checks)
			tt.break_(&p)
			if err := p.checkTables(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkTables = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
