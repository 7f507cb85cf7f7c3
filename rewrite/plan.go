package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/ssa"
)

// A FuncPlan is the instrumentation of one function: where its blocks'
// weights are charged, where checks go, and how its stack entry is kept.
type FuncPlan struct {
	Fn     *ssa.Function
	Name   string // pprof-style name, e.g. "pkg.(*T).M.func1"
	Line   int    // declaration line
	Body   *ast.BlockStmt
	Leaf   bool // calls no function: pushes its identifier only when it samples
	Defers bool // has defer statements: restores the stack depth in a deferred call
	// RangeExits are the return and branch statements that stand inside
	// range-over-func loop bodies nested in Body, with the number of such
	// loops around each (rangeFuncExits).
	RangeExits map[ast.Stmt]int
	Weights    []int64 // each block's weight (Weight)
	Charged    []int64 // what is charged for each block (hoistWeights)
	Total      int64   // sum of block weights

	Charges map[Point]int64 // net amount charged at each point
	Checks  map[Point]bool  // points with a granularity check before their charge
	// Loose are the checks that mark no change of calling context (loop
	// headers, blocks that call): in exact mode they leave the sample to
	// the next check that does, an entry or a return (counter.SL).
	Loose map[Point]bool
	Final map[Point]bool // points with a check after their charge (blocks that return or panic)
	// Local: the function adds its charges to a local variable, which the
	// compiler keeps in a register, and flushes it into the goroutine's
	// count at its checks (see localOK).
	Local  bool
	Flush  map[Point]bool // points of blocks that call or may block: a local function flushes there
	Approx []string       // blocks whose weight is placed approximately
	order  []Point        // points in first-use order, for deterministic output
	// Lazy: the function pushes itself at PushAt, not at entry (see
	// lazyPush); the return statements at the positions in NoPop, and its
	// implicit return if NoEndPop, follow no push and restore nothing.
	Lazy     bool
	PushAt   Point
	NoPop    map[token.Pos]bool
	NoEndPop bool
	// LateEntry: the function's entry check moves to PushAt, before its
	// push, and its paths that never push are small leaves' (see
	// lateEntry).
	LateEntry bool
	// PopByCount: the function pushes at entry and pops by decrementing
	// the depth where it returns (counter.Pop), keeping no saved depth
	// (see "Pops" in the package documentation).
	PopByCount bool
}

func (p *FuncPlan) add(at Point, n int64) {
	if _, ok := p.Charges[at]; !ok {
		p.order = append(p.order, at)
	}
	p.Charges[at] += n
}

// touch makes at a point of the plan even if nothing is charged there.
func (p *FuncPlan) touch(at Point) {
	if _, ok := p.Charges[at]; !ok {
		p.order = append(p.order, at)
		p.Charges[at] += 0
	}
}

// planFunc computes the plan of fn, whose statements are those of body (for
// a range-over-func yield function, body is the loop body).
func planFunc(file *ast.File, info *types.Info, labels map[ast.Stmt]string, fn *ssa.Function, body *ast.BlockStmt, opts *Options, facts *funcFacts) *FuncPlan {
	quiet := facts.quiet
	c := &funcCtx{fn: fn, body: body, file: file, info: info, labels: labels, ticked: map[ast.Node]bool{}, posts: map[*ast.ForStmt]int64{}, cmps: map[ast.Node]int64{}}
	p := &FuncPlan{
		Fn:      fn,
		Body:    body,
		Charges: make(map[Point]int64),
		Checks:  make(map[Point]bool),
		Loose:   make(map[Point]bool),
		Final:   make(map[Point]bool),
		Flush:   make(map[Point]bool),
		Leaf:    isLeaf(fn, opts.Inert, quiet),
	}
	yield := fn.Synthetic == "range-over-func yield"
	// calls reports whether b calls a function that is neither quiet
	// nor an inert package's that returns promptly (promptCall: not
	// runtime.Goexit, a lock's wait…): a block whose only calls
	// go to such functions needs no check or flush for them (they cannot
	// sample; quiet ones leave their charges in the count, inert ones
	// count nothing).
	calls := func(b *ssa.BasicBlock) bool {
		return callsBut(b, func(c *ssa.CallCommon) bool {
			return quietCall(c, quiet) >= 0 || promptCall(c, opts.Inert)
		})
	}
	// Paper §5.2 checks before calls, so that the caller's instructions
	// are not sampled in a callee. Here a callee that pushes itself
	// first checks on entry (counter.SE), in the caller's context; one
	// that does not push (a small leaf, an inert or uninstrumented
	// function) leaves what is pending to the caller's next check, in
	// the caller's context too. So a call needs no check before it,
	// except in a range-over-func body, which does not push itself.
	// What remains is the time bound: a block that calls a function of
	// this package that checks on entry is bounded by that check and,
	// after the callee returns, by its return check (addMaxPathChecks);
	// other calls are not known to check.
	cuts := func(b *ssa.BasicBlock) bool {
		for _, instr := range b.Instrs {
			if c, ok := instr.(*ssa.Call); ok && checkedCall(&c.Call, facts.checked) {
				return true
			}
		}
		return false
	}
	// A return inside a range-over-func loop body leaves the function only
	// once the iterator has returned: the stack depth is restored then, in
	// a deferred call (counter.R), not where the return stands.
	p.RangeExits = rangeFuncExits(body, info)
	p.Defers = hasDeferStmt(body) || p.returnsInRange()
	headers := loopHeaders(fn)

	landed := make(map[*ssa.BasicBlock]Point)
	var pending []*ssa.BasicBlock
	p.Weights, p.Charged = weights(fn)
	for _, w := range p.Weights {
		p.Total += w
	}
	for _, b := range fn.Blocks {
		w := p.Charged[b.Index]
		at, ok := c.land(b, p, w)
		switch {
		case ok:
			landed[b] = at
		case at.Kind == placedElsewhere:
		case w != 0:
			pending = append(pending, b)
		}
	}
	// Blocks without a source landing take their weight from neighbours by
	// flow conservation: a block all of whose predecessors jump only to it
	// executes exactly as often as they do together; a block that is the
	// only predecessor of its only successor executes as often as that one.
	for changed := true; changed && len(pending) > 0; {
		changed = false
		rest := pending[:0]
		for _, b := range pending {
			if c.distribute(b, p, landed) {
				changed = true
				continue
			}
			rest = append(rest, b)
		}
		pending = rest
	}
	pending = c.matchOperands(p, pending, landed)
	var pushed map[*ssa.BasicBlock]bool // Lazy: the blocks after the push
	if !p.Leaf && !yield && !p.Defers {
		out := func(b *ssa.BasicBlock) bool { return callsOut(b, opts.Inert, quiet) }
		if at, after, ok := lazyPush(fn, landed, out); ok {
			p.Lazy, p.PushAt, pushed = true, at, after
			p.NoPop, p.NoEndPop = noPops(fn, after)
		}
	}
	// (RangeExits' checks sample with the stack cut at the saved depth.)
	p.PopByCount = !p.Leaf && !yield && !p.Defers && !p.Lazy && len(p.RangeExits) == 0 && !opts.ExactPops
	for _, b := range pending {
		p.Approx = append(p.Approx, fmt.Sprintf("%s block %d (%s): weight %d not placed", fn, b.Index, b.Comment, p.Charged[b.Index]))
	}
	p.Approx = append(p.Approx, c.approx...)

	// Checks (paper §5.2): terminating blocks, loop headers, the entry;
	// then MaxPath (see cuts for calls).
	// A loop-free leaf whose longest path stays within SmallLeaf gets no
	// check: the check's call to the slow path would cost it its
	// inlining (and with it, often, stack allocation of what it returns);
	// its instructions are sampled at the caller's next check.
	_, small := smallLeaf(fn, p.Leaf, p.Charged, opts)
	// (A small leaf of one block charges once, where it returns:
	// nothing to accumulate.)
	p.Local = fn.Synthetic == "" && localOK(fn, landed, calls) && !(small && terminates(fn.Blocks[0]))
	if small && p.Local {
		// A small leaf that accumulates its charges flushes them where
		// it returns or panics. Its branches then only add to a
		// register, which kprof's compiler can turn into conditional
		// moves (branchelimPatches; math/big's divWW: a subtraction
		// from the count in memory in each branch of "if r1 != 0 {
		// qq++; r0 -= d }" kept the branch, which mispredicted);
		// inlined into a function that accumulates too, its sum goes to
		// that function's variable (kprofFold).
		for _, b := range fn.Blocks {
			if at, ok := landed[b]; ok && terminates(b) {
				p.Flush[at] = true
				p.touch(at)
			}
		}
	}
	if !small {
		// What quiet callees run counts towards MaxPath.
		pathW := withQuietCallees(fn, p.Charged, quiet)
		p.LateEntry = p.Lazy && p.Local && !facts.checked[fn] && lateEntry(fn, pushed, pathW, headers, calls, opts)
		// unpushed reports whether b lies on a path of a late-entry
		// function that never pushes: such a path is a small leaf's.
		unpushed := func(b *ssa.BasicBlock) bool { return p.LateEntry && !pushed[b] }
		need := make(map[*ssa.BasicBlock]bool)
		cut := make(map[*ssa.BasicBlock]bool) // blocks that enter a function that checks
		for _, b := range fn.Blocks {
			if _, ok := landed[b]; !ok {
				continue
			}
			callCheck := yield && calls(b)
			cut[b] = cuts(b)
			// The entry check settles what the caller charged before the
			// call (checks come before their block's charge), so that it
			// is not sampled in this function.
			// A function that accumulates its charges locally flushes
			// them at checks, so it checks before it may block, too.
			if terminates(b) && !unpushed(b) || callCheck || headers[b] || b.Index == 0 && !p.LateEntry || p.Local && blocks(b) {
				need[b] = true
			}
			if calls(b) || blocks(b) || terminates(b) && unpushed(b) {
				p.Flush[landed[b]] = true
				p.touch(landed[b])
			}
		}
		if p.Local {
			flushIntoLoops(fn, headers, landed, p)
		}
		addMaxPathChecks(fn, pathW, landed, need, cut, int64(opts.MaxPath))
		// Checks at loop headers, MaxPath checks and the checks of
		// blocks that call are loose: in exact mode, what is pending
		// there is sampled by a callee's entry check (in the caller's
		// context) or by this function's next check. (MaxPath checks
		// of blocks that do not call, inside a return or panic
		// statement, are not: one in an expression evaluated after the
		// statement's check would leave its count to the caller.)
		late := lateStmts(body)
		strict := make(map[Point]bool)
		for b := range need {
			maxPath := !headers[b] && !calls(b) && !blocks(b)
			if maxPath && late(landed[b].Node) || terminates(b) || b.Index == 0 {
				strict[landed[b]] = true
			}
		}
		for b := range need {
			if at := landed[b]; !strict[at] {
				p.Loose[at] = true
			}
			// A check normally comes before the block's charge: what is
			// pending was run by this function since its previous check
			// (or, at entry, by the caller). A block that returns or
			// panics is checked after its charge, so that its own
			// instructions are not left for the caller's next check.
			at := landed[b]
			p.touch(at)
			if !terminates(b) || b.Index == 0 {
				p.Checks[at] = true
			}
			if terminates(b) {
				p.Final[at] = true
			}
			if yield && calls(b) {
				// A range-over-func body does not push itself: a
				// callee's entry check would sample what the body
				// charged in the iterator's name. It charges, then
				// checks in its own, before it calls.
				p.Final[at] = true
			}
		}
	}
	if !small {
		// What this function (or loop body) charges where a break or
		// continue leaves a nested range-over-func loop body is sampled
		// there, with the stack cut at it (check.inRange), not left for
		// the check of an iterator still on the stack.
		for st, depth := range p.RangeExits {
			if br, ok := st.(*ast.BranchStmt); ok && depth > 0 {
				if at := (Point{beforeStmt, br}); p.Charges[at] != 0 {
					p.Final[at] = true
				}
			}
		}
	}
	if yield && !small {
		// A range-over-func loop body does not push itself: the entry
		// check of an iterator it calls would sample what the body ran
		// before the call in the name of the body's own caller. It
		// checks in its own name before each nested range-over-func
		// loop, as before its other calls.
		for _, r := range c.rangeStmts("rangefunc") {
			at := Point{beforeStmt, c.listStmt(r)} // (before its label, if it has one)
			p.Final[at] = true
			p.touch(at)
		}
	}
	c.mergeLoops(p) // after the checks: the header's check moves too
	c.placeSwitches(p)
	return p
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
	kind, part := commentKind(b.Comment)
	switch kind {
	case "for":
		f, ok := c.forStmt(b, pos)
		if !ok {
			break
		}
		switch part {
		case "body":
			return c.put(p, Point{atBodyStart, f.Body}, w)
		case "loop":
			return c.put(p, Point{tickExpr, f.Cond}, w)
		case "post":
			c.posts[f] += w // placed by mergeLoops
			return elsewhere, false
		}
	case "rangeindex", "rangeiter", "rangechan", "rangeint":
		r, ok := c.rangeStmt(b, pos, kind)
		if !ok {
			break
		}
		switch part {
		case "body":
			return c.put(p, Point{atBodyStart, r.Body}, w)
		case "loop":
			if kind == "rangeint" {
				// The increment after each iteration (target of continue).
				c.chargeAfterIteration(p, r, r.Body, w)
				return elsewhere, false
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
			return at, true
		}
	case "if":
		if part == "then" || part == "else" {
			ifs, ok := enclosing(c, pos, func(s *ast.IfStmt) bool {
				return (part == "then" && contains(s.Body, pos)) || (part == "else" && contains(s.Else, pos))
			})
			if !ok {
				break
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
			return at, true
		}
	case "switch", "typeswitch", "select":
		if part == "body" {
			cl, ok := c.clause(pos)
			if !ok && !pos.IsValid() {
				cl, ok = c.clauseOfTest(b, kind)
			}
			if ok {
				return c.put(p, Point{atBodyStart, cl}, w)
			}
		}
		if part == "next" {
			if kind != "switch" && c.chargeCaseTest(b, p, kind, w) {
				return elsewhere, false
			}
			if !pos.IsValid() {
				// The default clause or, with no default, what runs after
				// the statement when nothing matched (the done block is
				// fused here only if no clause falls out to it).
				if at, ok := c.noMatch(b, kind); ok {
					p.add(at, w)
					return at, true
				}
			}
		}
	case "recover":
		// Runs only when a deferred call recovered a panic: not placed.
		c.approx = append(c.approx, fmt.Sprintf("%s: recover block (weight %d) is not counted", c.fn, w))
		return elsewhere, false
	}
	if !pos.IsValid() {
		if terminates(b) {
			if _, isRet := b.Instrs[len(b.Instrs)-1].(*ssa.Return); isRet {
				at := Point{atFuncEnd, c.body}
				if !c.isFuncBody() {
					at = Point{atBodyEnd, c.body} // a range-over-func body falling off its end
				}
				p.add(at, w)
				return at, true
			}
		}
		if (part == "done") && len(b.Preds) > 0 {
			if s, ok := c.doneOf(b, kind); ok {
				return c.put(p, Point{afterStmt, s}, w)
			}
		}
		return Point{}, false
	}
	if pos == c.body.Rbrace {
		// Code positioned at the closing brace: falling off the end of a
		// range-over-func body (the implicit continue).
		return c.put(p, Point{atBodyEnd, c.body}, w)
	}
	at, ok := c.generic(pos)
	if !ok {
		return Point{}, false
	}
	if at.Kind == postOf {
		c.posts[at.Node.(*ast.ForStmt)] += w // placed by mergeLoops
		return elsewhere, false
	}
	if at.Kind == switchCmp {
		c.cmps[at.Node] += w // placed by placeSwitches
		return elsewhere, false
	}
	if at.Kind == tickExpr {
		c.ticked[at.Node] = true
	}
	p.add(at, w)
	return at, true
}

// elsewhere is what land returns for a block whose weight it placed at
// points that are not the block's own landing.
var elsewhere = Point{Kind: placedElsewhere}

// testOf returns the type switch test or select of a block that decides
// which clause runs.
func testOf(b *ssa.BasicBlock) ssa.Instruction {
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
		}
	}
	return nil
}

// clauseOfTest finds the clause a body block without a position belongs
// to from the test in its predecessor: a type switch test's position is
// its clause's case keyword; a select body follows its index comparison.
func (c *funcCtx) clauseOfTest(b *ssa.BasicBlock, kind string) (ast.Node, bool) {
	for _, pr := range b.Preds {
		switch kind {
		case "typeswitch":
			if ta, ok := testOf(pr).(*ssa.TypeAssert); ok {
				if cl, ok := enclosing(c, ta.Pos(), func(cl *ast.CaseClause) bool { return cl.Case == ta.Pos() }); ok {
					return cl, true
				}
			}
		case "switch":
			// The comparison that jumps here on true is a case value of
			// the clause.
			if len(pr.Succs) == 2 && pr.Succs[0] == b {
				if pp := blockPos(pr); pp.IsValid() {
					if cl, ok := enclosing(c, pp, func(cl *ast.CaseClause) bool {
						for _, v := range cl.List {
							if contains(v, pp) {
								return true
							}
						}
						return false
					}); ok {
						return cl, true
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
	return nil, false
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

// distribute places the weight of a block without a landing point on its
// neighbours when flow conservation makes that exact.
func (c *funcCtx) distribute(b *ssa.BasicBlock, p *FuncPlan, landed map[*ssa.BasicBlock]Point) bool {
	w := p.Charged[b.Index]
	// All predecessors jump only to b and are landed.
	if len(b.Preds) > 0 {
		ok := true
		for _, pr := range b.Preds {
			if _, l := landed[pr]; !l || len(pr.Succs) != 1 {
				ok = false
				break
			}
		}
		if ok {
			for _, pr := range b.Preds {
				p.add(landed[pr], w)
			}
			landed[b] = landed[b.Preds[0]]
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

// mergeLoops gives each three-clause for loop one charge per iteration
// instead of three (condition, body, post statement): a charge is a
// read-modify-write of one memory word, and consecutive ones wait on each
// other. The header runs once per iteration plus once at the normal exit,
// and the post statement once less than the header, so with b body
// entries, e exits through the condition and k breaks:
//
//	header·(b+e) + post·(b+e−1) = (header+post)·b          at the body start
//	                            + (header+post)·(e+k)      after the loop
//	                            − (header+post)·k          at each break
//	                            − post                     before the loop
//
// which stays exact whatever leaves the body (return, goto, panic: none of
// them runs the header or the post statement again). The header's check
// moves to the body start, which also runs once per iteration.
func (c *funcCtx) mergeLoops(p *FuncPlan) {
	var loops []*ast.ForStmt
	ast.Inspect(c.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt:
			loops = append(loops, n)
		}
		return true
	})
	for _, f := range loops {
		head := Point{tickExpr, f.Cond}
		body := Point{atBodyStart, f.Body}
		wp := c.posts[f]
		_, hasHead := p.Charges[head]
		_, hasBody := p.Charges[body]
		if f.Cond == nil || !hasHead || !hasBody || isTerminating(f) {
			if wp != 0 {
				c.chargeAfterIteration(p, f, f.Body, wp)
			}
			continue
		}
		w := p.Charges[head] + wp
		p.Charges[head] = 0
		if p.Checks[head] {
			loose := p.Loose[head] && (!p.Checks[body] || p.Loose[body])
			delete(p.Checks, head)
			delete(p.Loose, head)
			p.Checks[body] = true
			if loose {
				p.Loose[body] = true
			} else {
				delete(p.Loose, body)
			}
		}
		p.add(body, w)
		p.add(Point{afterStmt, c.listStmt(f)}, w)
		for _, br := range branchesTo(f, token.BREAK, c.labels) {
			p.add(Point{beforeStmt, br}, -w)
		}
		if wp != 0 {
			p.add(Point{beforeStmt, c.listStmt(f)}, -wp)
		}
	}
}

// chargeAfterIteration charges w where each iteration of loop ends: at the
// end of its body and before every continue that targets it.
func (c *funcCtx) chargeAfterIteration(p *FuncPlan, loop ast.Stmt, body *ast.BlockStmt, w int64) {
	p.add(Point{atBodyEnd, body}, w)
	for _, cont := range branchesTo(loop, token.CONTINUE, c.labels) {
		p.add(Point{beforeStmt, cont}, w)
	}
}

// forStmt finds the for statement a for.* block belongs to.
func (c *funcCtx) forStmt(b *ssa.BasicBlock, pos token.Pos) (*ast.ForStmt, bool) {
	_, part := commentKind(b.Comment)
	match := func(f *ast.ForStmt, pos token.Pos) bool {
		switch part {
		case "body":
			return contains(f.Body, pos)
		case "loop":
			return f.Cond != nil && contains(f.Cond, pos)
		case "post":
			return f.Post != nil && contains(f.Post, pos)
		}
		return false
	}
	if pos.IsValid() {
		if f, ok := enclosing(c, pos, func(f *ast.ForStmt) bool { return match(f, pos) }); ok {
			return f, true
		}
	}
	// No position of its own: find the loop from the body the block leads
	// to (loop header) or comes from (post).
	// A predecessor of a body is its loop's header; the successors of a
	// header or body, and the predecessors of a post statement, are in
	// the loop's body.
	type neighbour struct {
		b      *ssa.BasicBlock
		header bool
	}
	var near []neighbour
	if part != "post" {
		for _, s := range b.Succs {
			near = append(near, neighbour{s, false})
		}
	}
	for _, pr := range b.Preds {
		near = append(near, neighbour{pr, part == "body" && pr.Comment == "for.loop"})
	}
	for _, nb := range near {
		np := blockPos(nb.b)
		if !np.IsValid() {
			continue
		}
		f, ok := enclosing(c, np, func(f *ast.ForStmt) bool {
			in := contains(f.Body, np)
			if nb.header {
				in = contains(f.Cond, np)
			}
			return in && (part != "loop" || f.Cond != nil) && (part != "post" || f.Post != nil)
		})
		if ok {
			return f, true
		}
	}
	return nil, false
}

// rangeStmt finds the range statement a range*.* block belongs to. The
// builder makes one body block per range statement, in source order, and
// never removes it from reachable code: body blocks are matched with range
// statements of their kind by rank; loop and done blocks through the body
// they lead to or come from. Positions decide when the ranks disagree.
func (c *funcCtx) rangeStmt(b *ssa.BasicBlock, pos token.Pos, kind string) (*ast.RangeStmt, bool) {
	_, part := commentKind(b.Comment)
	body := kind + ".body"
	var bodyBlock *ssa.BasicBlock
	switch {
	case part == "body":
		bodyBlock = b
	case part == "loop" && len(b.Succs) > 0 && b.Succs[0].Comment == body:
		bodyBlock = b.Succs[0]
	default:
		for _, pr := range b.Preds {
			if pr.Comment == body {
				bodyBlock = pr
			} else if pr.Comment == kind+".loop" && len(pr.Succs) > 0 && pr.Succs[0].Comment == body {
				bodyBlock = pr.Succs[0]
			}
		}
	}
	if bodyBlock != nil {
		if r, ok := c.rangeByRank(bodyBlock, kind); ok {
			return r, true
		}
	}
	candidates := []token.Pos{pos}
	for _, s := range b.Succs {
		candidates = append(candidates, blockPos(s))
	}
	for _, pr := range b.Preds {
		candidates = append(candidates, blockPos(pr))
	}
	for _, cp := range candidates {
		if !cp.IsValid() {
			continue
		}
		r, ok := enclosing(c, cp, func(r *ast.RangeStmt) bool {
			return rangeKind(c.info, r) == kind && (contains(r.Body, cp) || contains(r.X, cp))
		})
		if ok {
			return r, true
		}
	}
	return nil, false
}

// rangeByRank matches a range body block with the range statement of the
// same rank among those of its kind in this function.
func (c *funcCtx) rangeByRank(bodyBlock *ssa.BasicBlock, kind string) (*ast.RangeStmt, bool) {
	return byRank(c.fn, bodyBlock, c.rangeStmts(kind))
}

// rangeStmts lists the range statements of a kind whose blocks belong to
// this function, in source order (the bodies of range-over-func loops are
// functions of their own).
func (c *funcCtx) rangeStmts(kind string) []*ast.RangeStmt {
	var stmts []*ast.RangeStmt
	ast.Inspect(c.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.RangeStmt:
			k := rangeKind(c.info, n)
			if k == kind {
				stmts = append(stmts, n)
			}
			if k == "rangefunc" && n.Body != c.body {
				return false
			}
		}
		return true
	})
	return stmts
}

// byRank returns the statement whose rank among stmts is the rank of b
// among the blocks with b's comment: go/ssa makes those blocks in source
// order. It fails if the numbers disagree (a block was optimized away).
func byRank(fn *ssa.Function, b *ssa.BasicBlock, stmts []*ast.RangeStmt) (*ast.RangeStmt, bool) {
	rank, count := -1, 0
	for _, ob := range fn.Blocks {
		if ob.Comment == b.Comment {
			if ob == b {
				rank = count
			}
			count++
		}
	}
	if count != len(stmts) || rank < 0 {
		return nil, false
	}
	return stmts[rank], true
}

// rangeKind returns the go/ssa block-comment prefix of a range statement.
func rangeKind(info *types.Info, r *ast.RangeStmt) string {
	t := info.TypeOf(r.X)
	if t == nil {
		return ""
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if u.Info()&types.IsString != 0 {
			return "rangeiter"
		}
		return "rangeint"
	case *types.Map:
		return "rangeiter"
	case *types.Chan:
		return "rangechan"
	case *types.Signature:
		return "rangefunc"
	case *types.Interface: // type parameter: core type decides; treat like its core
		return ""
	}
	return "rangeindex"
}

// clause returns the case or comm clause whose body (or case list) holds pos.
func (c *funcCtx) clause(pos token.Pos) (ast.Node, bool) {
	for _, n := range c.pathTo(pos) {
		switch n.(type) {
		case *ast.CaseClause, *ast.CommClause:
			return n, true
		}
	}
	return nil, false
}

// doneOf finds the statement after which a *.done block without a position
// runs, from the positions of its predecessors.
func (c *funcCtx) doneOf(b *ssa.BasicBlock, kind string) (ast.Stmt, bool) {
	// Positions of the nearest predecessors that have one.
	var positions []token.Pos
	seen := map[*ssa.BasicBlock]bool{b: true}
	frontier := b.Preds
	for depth := 0; depth < 4 && len(positions) == 0 && len(frontier) > 0; depth++ {
		var next []*ssa.BasicBlock
		for _, pr := range frontier {
			if seen[pr] {
				continue
			}
			seen[pr] = true
			if pp := blockPos(pr); pp.IsValid() {
				positions = append(positions, pp)
			}
			next = append(next, pr.Preds...)
		}
		frontier = next
	}
	for _, pp := range positions {
		for _, n := range c.pathTo(pp) {
			var s ast.Stmt
			switch n := n.(type) {
			case *ast.ForStmt:
				if kind == "for" {
					s = n
				}
			case *ast.RangeStmt:
				if kind == rangeKind(c.info, n) {
					s = n
				}
			case *ast.IfStmt:
				if kind == "if" {
					s = n
				}
			case *ast.SwitchStmt:
				if kind == "switch" {
					s = n
				}
			case *ast.TypeSwitchStmt:
				if kind == "typeswitch" {
					s = n
				}
			case *ast.SelectStmt:
				if kind == "select" {
					s = n
				}
			}
			if s != nil {
				// An else-if is not in a statement list: use the outermost if.
				return c.listStmt(s), true
			}
		}
	}
	return nil, false
}

// listStmt returns s or, for an else-if, the outermost if statement of its
// chain (the one that is an element of a statement list).
func (c *funcCtx) listStmt(s ast.Stmt) ast.Stmt {
	path := c.pathTo(s.Pos())
	for i, n := range path {
		if n != s {
			continue
		}
		for j := i; j+1 < len(path); j++ {
			if st, ok := path[j].(ast.Stmt); ok && inList(path[j+1], st) {
				return st
			}
		}
	}
	return s
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
		if ta == nil {
			return false
		}
		sw, ok := enclosing(c, ta.Pos(), func(*ast.TypeSwitchStmt) bool { return true })
		if !ok {
			return false
		}
		// ta.Pos() is the case keyword of the clause being tested; which of
		// its types is tested is the rank of b among the tests of that clause.
		var clauses []*ast.CaseClause
		for _, s := range sw.Body.List {
			clauses = append(clauses, s.(*ast.CaseClause))
		}
		ci := -1
		for i, cl := range clauses {
			if cl.Case == ta.Pos() {
				ci = i
			}
		}
		if ci < 0 {
			return false
		}
		rank := 0
		for _, ob := range c.fn.Blocks {
			if ob == b {
				break
			}
			if ob.Comment == "typeswitch.next" && len(ob.Instrs) > 0 {
				if t, ok := ob.Instrs[0].(*ssa.TypeAssert); ok && t.Pos() == ta.Pos() {
					rank++
				}
			}
		}
		if ci == firstNonDefault(clauses) {
			rank++ // the clause's first test is in the block before the switch's first next
		}
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
		if sel == nil {
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
			if ob.Comment == "select.next" && testsSelect(ob, sel) {
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

// branchesTo returns the break or continue statements (tok) inside loop's
// body that leave or continue loop, in source order.
func branchesTo(loop ast.Stmt, tok token.Token, labels map[ast.Stmt]string) []*ast.BranchStmt {
	var label string
	var body *ast.BlockStmt
	switch l := loop.(type) {
	case *ast.ForStmt:
		body = l.Body
	case *ast.RangeStmt:
		body = l.Body
	}
	if lbl, ok := labels[loop]; ok {
		label = lbl
	}
	var out []*ast.BranchStmt
	var walk func(n ast.Node, depth int)
	walk = func(n ast.Node, nested int) {
		ast.Inspect(n, func(m ast.Node) bool {
			if m == n {
				return true
			}
			switch m := m.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ForStmt, *ast.RangeStmt:
				walk(m, nested+1)
				return false
			case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				if tok == token.BREAK {
					walk(m, nested+1)
					return false
				}
			case *ast.BranchStmt:
				if m.Tok != tok {
					return true
				}
				if m.Label == nil && nested == 0 || m.Label != nil && m.Label.Name == label && label != "" {
					out = append(out, m)
				}
			}
			return true
		})
	}
	walk(body, 0)
	sort.Slice(out, func(i, j int) bool { return out[i].Pos() < out[j].Pos() })
	return out
}

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

// hasDeferStmt reports whether body (not nested function literals) defers.
func hasDeferStmt(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.DeferStmt:
			found = true
		}
		return !found
	})
	return found
}

// addMaxPathChecks adds checks so that no path runs more than maxPath
// instructions without one. Checked blocks restart the count, and so do the
// blocks of cut after their own weight (they call a function that checks
// on entry and on return); loop headers already carry checks, so the
// unchecked part of the graph is acyclic.
func addMaxPathChecks(fn *ssa.Function, weights []int64, landed map[*ssa.BasicBlock]Point, need, cut map[*ssa.BasicBlock]bool, maxPath int64) {
	if maxPath <= 0 {
		return
	}
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
		if need[b] {
			acc[b] = weights[b.Index]
			continue
		}
		if in+weights[b.Index] > maxPath {
			if _, ok := landed[b]; ok {
				need[b] = true
				acc[b] = weights[b.Index]
				continue
			}
		}
		if cut[b] {
			// The callee's entry check comes at most the block's
			// weight after the block starts, and after the callee's
			// return check at most that much of the block runs.
			acc[b] = weights[b.Index]
			continue
		}
		acc[b] = in + weights[b.Index]
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

// matchOperands places the blocks that evaluate an operand of && or || with
// no positioned instruction (a variable, !v): they are matched, in order,
// with the operands of this function that no positioned block claimed.
// It returns the blocks it could not place.
func (c *funcCtx) matchOperands(p *FuncPlan, pending []*ssa.BasicBlock, landed map[*ssa.BasicBlock]Point) []*ssa.BasicBlock {
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
	// Constant operands usually leave no block (a jump the builder
	// threads away); they count only if the numbers say so.
	var operands, withConst []ast.Expr
	inspectOwn(c.info, c.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if (n.Op == token.LAND || n.Op == token.LOR) && !c.ticked[n.Y] {
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
		p.add(at, p.Charged[b.Index])
		landed[b] = at
	}
	return rest
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
		at := Point{beforeStmt, c.listStmt(r)}
		p.add(at, w)
		if b.Comment == "rangefunc.resume.ready" {
			for _, e := range c.exitStmts(r) {
				p.add(Point{beforeStmt, e}, -w)
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

// inspectOwn calls f, as ast.Inspect does, for the nodes of body that
// belong to its function: not those of function literals, nor the bodies
// of range-over-func loops inside it, which are functions of their own.
func inspectOwn(info *types.Info, body *ast.BlockStmt, f func(ast.Node) bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.RangeStmt:
			if n.Body != body && rangeKind(info, n) == "rangefunc" {
				return false
			}
		}
		return f(n)
	})
}

// lateStmts returns a function that reports whether n lies inside one of
// body's return statements or panic calls (not inside a function literal:
// those are planned on their own).
func lateStmts(body *ast.BlockStmt) func(ast.Node) bool {
	type span struct{ pos, end token.Pos }
	var spans []span
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			spans = append(spans, span{n.Pos(), n.End()})
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && id.Name == "panic" {
				spans = append(spans, span{n.Pos(), n.End()})
			}
		}
		return true
	})
	return func(n ast.Node) bool {
		if n == nil {
			return true
		}
		for _, sp := range spans {
			if sp.pos <= n.Pos() && n.Pos() < sp.end {
				return true
			}
		}
		return false
	}
}

// weights returns the SSA weight of each of fn's blocks, and what is
// charged where once weights are hoisted (hoistWeights).
func weights(fn *ssa.Function) (w, charged []int64) {
	w = make([]int64, len(fn.Blocks))
	for _, b := range fn.Blocks {
		w[b.Index] = Weight(b)
	}
	return w, hoistWeights(fn, w)
}

// flushIntoLoops makes the blocks that enter a loop that flushes the
// accumulator (a block of the loop calls or waits) flush it too, where
// they land at a statement. The accumulator is then zero on the loop's
// entry as on its back edges, where the loop's flush left it so unless
// the body charges more after it, and the compiler drops a flush of a
// constant zero: a read-modify-write of the count per iteration for one
// before the loop (math/big's divWVW, whose loop calls divWW, once
// reciprocalWord before it no longer made it flush).
func flushIntoLoops(fn *ssa.Function, headers map[*ssa.BasicBlock]bool, landed map[*ssa.BasicBlock]Point, p *FuncPlan) {
	for _, h := range fn.Blocks {
		if !headers[h] {
			continue
		}
		loop := naturalLoop(h)
		if !zeroOnBackEdges(h, loop, landed, p) {
			continue
		}
		for _, pr := range h.Preds {
			at, ok := landed[pr]
			if !ok || loop[pr.Index] || terminates(pr) {
				continue
			}
			switch at.Kind {
			case atFuncEntry, beforeStmt, afterStmt, atBodyStart, atFuncEnd, atBodyEnd:
				p.Flush[at] = true
				p.touch(at)
			}
		}
	}
}

// zeroOnBackEdges reports whether the accumulator is zero on every back
// edge of the loop of h: a block of the loop flushes it, every back edge
// leaves from a block that one dominates, and no block after it in the
// loop charges the accumulator again (unless it flushes too).
func zeroOnBackEdges(h *ssa.BasicBlock, loop []bool, landed map[*ssa.BasicBlock]Point, p *FuncPlan) bool {
	var latches, blocks []*ssa.BasicBlock
	for _, pr := range h.Preds {
		if loop[pr.Index] {
			latches = append(latches, pr)
		}
	}
	for _, b := range h.Parent().Blocks {
		if loop[b.Index] {
			blocks = append(blocks, b)
		}
	}
next:
	for _, f := range blocks {
		if at, ok := landed[f]; !ok || !p.Flush[at] {
			continue
		}
		for _, l := range latches {
			if !f.Dominates(l) {
				continue next
			}
		}
		for _, b := range blocks {
			if b == f || !f.Dominates(b) {
				continue
			}
			if at, ok := landed[b]; ok && p.Charges[at] != 0 && !p.Flush[at] {
				continue next
			}
		}
		return true
	}
	return false
}

// lateEntry reports whether fn, which pushes itself lazily after the
// blocks in pushed, can check on entry only where it pushes. Its other
// paths are then a small leaf's: no check, their charges accumulated and
// flushed where they return or panic, sampled at the caller's next check
// (in exact mode, the caller's context), and only the calls that reach the
// push count in exact mode. That needs those paths short (within
// SmallLeaf, quiet callees included: pathW), loop-free, and without calls
// or waits, so that nothing is flushed before the late entry check, which
// then samples only what the caller left pending, in the caller's context,
// as an entry check would. (json's scanner states, regexp's inputString.step:
// a fast path that returns, an error path that calls.)
func lateEntry(fn *ssa.Function, pushed map[*ssa.BasicBlock]bool, pathW []int64, headers map[*ssa.BasicBlock]bool, calls func(*ssa.BasicBlock) bool, opts *Options) bool {
	if opts.SmallLeaf <= 0 {
		return false
	}
	exits := false
	w := make([]int64, len(fn.Blocks)) // the paths that never push (no block follows a pushed one)
	for _, b := range fn.Blocks {
		if pushed[b] {
			continue
		}
		if headers[b] || calls(b) || blocks(b) {
			return false
		}
		w[b.Index] = pathW[b.Index]
		exits = exits || terminates(b)
	}
	return exits && longestPath(fn, w) <= int64(opts.SmallLeaf)
}

// mayEnterLate reports whether fn may check on entry only where it pushes
// (FuncPlan.LateEntry): a function that is not a leaf, some of whose exits
// no call precedes. It over-approximates lateEntry, which needs the
// function's plan: a function it holds for does not count as checking on
// entry (funcFacts.checked).
func mayEnterLate(fn *ssa.Function, out func(*ssa.BasicBlock) bool, opts *Options) bool {
	if opts.SmallLeaf <= 0 || len(fn.Blocks) == 0 {
		return false
	}
	seen := make(map[*ssa.BasicBlock]bool)
	var reach func(b *ssa.BasicBlock) bool
	reach = func(b *ssa.BasicBlock) bool {
		if seen[b] || out(b) {
			return false
		}
		seen[b] = true
		if terminates(b) {
			return true
		}
		for _, s := range b.Succs {
			if reach(s) {
				return true
			}
		}
		return false
	}
	return reach(fn.Blocks[0])
}

// smallLeaf reports whether fn, if a leaf, is small: loop-free, with a
// longest path (returned) of at most SmallLeaf instructions. A small leaf
// gets no check, so that the compiler can still inline it.
func smallLeaf(fn *ssa.Function, leaf bool, charged []int64, opts *Options) (int64, bool) {
	if !leaf || len(loopHeaders(fn)) > 0 {
		return 0, false
	}
	n := longestPath(fn, charged)
	return n, n <= int64(opts.SmallLeaf)
}

// localOK reports whether a function can accumulate its charges in a local
// variable: every block that calls, may block or leaves the function is
// landed at a statement, where its check flushes the variable before the
// call, the wait or the exit. (A charge is a read-modify-write of the
// goroutine's count in memory, and consecutive ones wait on each other; a
// local variable lives in a register.) Runtime errors leave the frame
// without a flush: what the function accumulated since its last check is
// then not counted.
func localOK(fn *ssa.Function, landed map[*ssa.BasicBlock]Point, calls func(*ssa.BasicBlock) bool) bool {
	for _, b := range fn.Blocks {
		if !calls(b) && !blocks(b) && !terminates(b) {
			continue
		}
		at, ok := landed[b]
		if !ok {
			return false
		}
		switch at.Kind {
		case atFuncEntry, beforeStmt, afterStmt, atBodyStart, atFuncEnd, atBodyEnd:
		default:
			return false
		}
	}
	return true
}
