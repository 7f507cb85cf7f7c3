package rewrite

// Checks: where granularity checks go (paper §5.2) — at entry (or, for
// small leaves and late-entry paths, where they return), at loop headers,
// where blocks return or panic, before blocks that may block in a function
// that accumulates, where range-over-func bodies are left — and which of
// them are loose in exact mode. MaxPath adds the rest (maxpath.go).

import (
	"go/ast"
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// placeChecks places the checks (paper §5.2): blocks that return or panic,
// loop headers, the entry; then MaxPath (see cuts for calls); and the
// flushes of a function that accumulates. A small leaf (small) that
// accumulates checks where it returns or panics only (ExitEntry), so that
// its instructions are sampled in its own name and its calls counted,
// with one test of the count per call.
func (pl *planner) placeChecks(small bool) {
	p, fn, opts, facts := pl.p, pl.fn, pl.opts, pl.facts
	quiet, calls, cuts, headers, landed, pushed, yield, body := facts.quiet, pl.calls, pl.cuts, pl.headers, pl.landed, pl.pushed, pl.yield, pl.body
	// What quiet callees run counts towards MaxPath.
	pathW := withQuietCallees(fn, p.Counts, quiet)
	// A check that stands for the entry check where a path returns
	// (ExitEntry) needs no check before it on that path: the paths must
	// be within MaxPath, and all they charge accumulated.
	exitEntryOK := opts.SmallLeaf <= opts.MaxPath
	p.LateEntry = p.Lazy && p.Local && exitEntryOK && !facts.checked[fn] && !pl.exprChargesOn(func(b *ssa.BasicBlock) bool { return !pushed[b] }) && lateEntry(fn, pushed, pathW, headers, calls, opts)
	// unpushed reports whether b lies on a path of a late-entry
	// function that never pushes, or of a small leaf that accumulates:
	// no check precedes it, and its exits check for the entry too.
	smallLocal := small && p.Local && exitEntryOK && !pl.exprChargesOn(func(*ssa.BasicBlock) bool { return true }) && !anyBlock(fn, blocks)
	unpushed := func(b *ssa.BasicBlock) bool { return p.LateEntry && !pushed[b] || smallLocal }
	need := make(map[*ssa.BasicBlock]bool)
	cut := make(map[*ssa.BasicBlock]bool) // blocks that enter a function that checks
	for _, b := range fn.Blocks {
		if _, ok := landed[b]; !ok {
			if yield && pl.bodyCalls(b) {
				pl.postCallChecks(b)
			}
			continue
		}
		callCheck := yield && pl.bodyCalls(b)
		cut[b] = cuts(b)
		// The entry check settles what the caller charged before the
		// call (checks come before their block's charge), so that it
		// is not sampled in this function.
		// A function that accumulates its charges locally flushes
		// them at checks, so it checks before it may block, too.
		if terminates(b) || callCheck || headers[b] || b.Index == 0 && !p.LateEntry && !smallLocal || p.Local && blocks(b) {
			need[b] = true
		}
		if terminates(b) && unpushed(b) {
			p.ExitEntry[landed[b]] = true
		}
		// An accumulating function flushes before a quiet call too,
		// where a statement can (not in an expression): the callee's
		// check, in the count, would otherwise not see what the
		// function accumulated, and the function's own checks, which
		// do, would always fire first — the callee would never be
		// sampled (a quiet callee that kprof's compiler inlines and
		// folds compares the count with the accumulator itself).
		if calls(b) || blocks(b) || terminates(b) && unpushed(b) {
			p.Flush[landed[b]] = true
			p.touch(landed[b])
		} else if p.Local && callsQuiet(b, quiet) && landed[b].Kind != tickExpr && landed[b].Kind != caseValue {
			p.QuietFlush[landed[b]] = true
			p.touch(landed[b])
		}
	}
	if p.Local {
		flushIntoLoops(fn, headers, landed, p)
	}
	addMaxPathChecks(fn, pathW, landed, need, cut, int64(opts.MaxPath))
	pl.pathW, pl.cut, pl.smallLocal = pathW, cut, smallLocal
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
		if yield && pl.bodyCalls(b) {
			// A range-over-func body does not push itself: a
			// callee's entry check would sample what the body
			// charged in the iterator's name. It charges, then
			// checks in its own, before it calls.
			p.Final[at] = true
		}
	}
	if yield {
		pl.tickCallChecks()
	}
}

// tickCallChecks makes the ticks of a range-over-func body that a call in
// the same statement or operand follows check after their charge, in the
// body's name: the statement's or operand's check comes before them (x >
// 2 && x < 5 as a call's argument), and the callee's entry check would
// otherwise sample the tick's instructions in the iterator's name.
func (pl *planner) tickCallChecks() {
	p := pl.p
	for _, b := range pl.fn.Blocks {
		at, ok := pl.landed[b]
		if !ok || at.Kind != tickExpr || p.Final[at] {
			continue
		}
		pos := at.Node.Pos()
		seen := map[*ssa.BasicBlock]bool{b: true}
		work := []*ssa.BasicBlock{b}
		for len(work) > 0 && !p.Final[at] {
			x := work[len(work)-1]
			work = work[:len(work)-1]
			for _, s := range x.Succs {
				sat, ok := pl.landed[s]
				inside := ok && contains(sat.Node, pos)
				if seen[s] || !ok || !inside && sat.Kind != tickExpr {
					continue // (another statement: it checks before its calls)
				}
				seen[s] = true
				if pl.bodyCalls(s) {
					if inside {
						// Its check came before the tick: the
						// statement's, or an operand's that holds
						// it (bint(y > 1 || a > 2) > 0 as an
						// operand).
						p.touch(at)
						p.Final[at] = true
						break
					}
					continue // a later operand's, which checks first
				}
				work = append(work, s)
			}
		}
	}
}

// postCallChecks places the checks a range-over-func body needs before
// a for statement's post statement that calls (block b, whose weight the
// loop's charges carry: it lands at no point of its own). go/ssa fuses
// the post statement into the body's last block only where the body is
// one block; after a switch or an if it is a block of its own, whose call
// would otherwise find the body's instructions pending and sample them in
// the iterator's name. The check goes where each iteration ends: at the
// end of the loop's body and before each continue that targets it.
func (pl *planner) postCallChecks(b *ssa.BasicBlock) {
	c, p := pl.c, pl.p
	for _, instr := range b.Instrs {
		pos := instr.Pos()
		if !pos.IsValid() {
			continue
		}
		f, ok := enclosing(c, pos, func(f *ast.ForStmt) bool { return f.Post != nil && contains(f.Post, pos) })
		if !ok {
			continue
		}
		for _, at := range c.iterationEnds(f, f.Body) {
			p.touch(at)
			p.Final[at] = true
		}
		return
	}
}

// rangeExitChecks places the checks where a break or continue leaves a
// nested range-over-func loop body, and, in a loop body, before each
// nested range-over-func loop.
func (pl *planner) rangeExitChecks() {
	c, p := pl.c, pl.p
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
	if pl.yield {
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

// callsQuiet reports whether b calls a quiet function.
func callsQuiet(b *ssa.BasicBlock, quiet map[*ssa.Function]int64) bool {
	for _, instr := range b.Instrs {
		if c, ok := instr.(ssa.CallInstruction); ok && quietCall(c.Common(), quiet) >= 0 {
			return true
		}
	}
	return false
}
