package rewrite

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/kprof/kprof/cost"

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
	Weights    []int64 // each block's weight in the metric (WeightBy)
	Charged    []int64 // what is charged for each block (hoistWeights)
	Total      int64   // sum of block weights
	// Counts are Charged in instructions, whatever the metric: the
	// thresholds that place checks and decide small leaves (MaxPath,
	// SmallLeaf, quiet functions) are numbers of instructions, so a
	// function is planned alike under every metric and only the amounts
	// it charges differ.
	Counts []int64

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
	Local bool
	Flush map[Point]bool // points of blocks that call or may block: a local function flushes there
	// QuietFlush holds the points where a local function flushes only
	// because the block calls a quiet function (counter.CQ, which
	// kprof's compiler drops where it folds the callees): not in Flush.
	QuietFlush map[Point]bool
	Approx     []string // blocks whose weight is placed approximately
	order      []Point  // points in first-use order, for deterministic output
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
	// ExitEntry are the final checks that also stand for the function's
	// entry check: where a small leaf that accumulates, or a path of a
	// late-entry function that never pushes, returns or panics. Nothing
	// was checked or flushed since entry there, so one test of the count
	// after the flush of all the function ran takes the caller's pending
	// instructions (in the caller's context, counting the call) and then
	// the function's own (counter.SED).
	ExitEntry map[Point]bool
	// PopByCount: the function pushes at entry and pops by decrementing
	// the depth where it returns (counter.Pop), keeping no saved depth
	// (see "Pops" in the package documentation).
	PopByCount bool
	broken     error // the first invariant the plan breaks (Options.CheckPlans)
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
// a range-over-func yield function, body is the loop body). Planning is a
// sequence of steps, each a method of planner: land every block's weight
// (landing.go, distribute.go), decide the push (lazy.go), decide whether
// charges accumulate locally, place the checks (checks.go; paper §5.2 and
// MaxPath, maxpath.go) and the checks where range-over-func bodies are
// left, then move loop headers' charges (loops.go) and lay out switch
// dispatch (switches.go). With Options.CheckPlans the plan checker
// (plancheck.go) verifies the checks before loops move them, and the
// finished plan's tables.
func planFunc(file *ast.File, info *types.Info, labels map[ast.Stmt]string, fn *ssa.Function, body *ast.BlockStmt, opts *Options, facts *funcFacts) *FuncPlan {
	pl := newPlanner(file, info, labels, fn, body, opts, facts)
	pl.landBlocks()
	pl.planPush()
	small := pl.planLocal()
	pl.placeChecks(small)
	pl.rangeExitChecks()
	if opts.CheckPlans {
		pl.p.broken = pl.checkBlocks()
	}
	pl.c.mergeLoops(pl.p) // after the checks: the header's check moves too
	pl.c.placeSwitches(pl.p)
	if opts.CheckPlans && pl.p.broken == nil {
		pl.p.broken = pl.p.checkTables()
	}
	return pl.p
}

// planner is the state of one function's planning, shared by its steps.
type planner struct {
	c       *funcCtx
	p       *FuncPlan
	fn      *ssa.Function
	body    *ast.BlockStmt
	opts    *Options
	facts   *funcFacts
	yield   bool // fn is a range-over-func loop body
	calls   func(*ssa.BasicBlock) bool
	cuts    func(*ssa.BasicBlock) bool
	headers map[*ssa.BasicBlock]bool
	landed  map[*ssa.BasicBlock]Point
	pending []*ssa.BasicBlock        // blocks whose weight is not placed
	pushed  map[*ssa.BasicBlock]bool // Lazy: the blocks after the push
	// Set by placeChecks for the plan checker (check.go): the weights
	// MaxPath bounds, the blocks that call a function that checks, and
	// whether the function's exits stand for its entry check.
	pathW      []int64
	cut        map[*ssa.BasicBlock]bool
	smallLocal bool
}

func newPlanner(file *ast.File, info *types.Info, labels map[ast.Stmt]string, fn *ssa.Function, body *ast.BlockStmt, opts *Options, facts *funcFacts) *planner {
	quiet := facts.quiet
	c := &funcCtx{fn: fn, body: body, file: file, info: info, labels: labels, ticked: map[ast.Node]bool{}, posts: map[*ast.ForStmt]int64{}, cmps: map[ast.Node]int64{}, consts: facts.consts}
	p := &FuncPlan{
		Fn:         fn,
		Body:       body,
		Charges:    make(map[Point]int64),
		Checks:     make(map[Point]bool),
		Loose:      make(map[Point]bool),
		Final:      make(map[Point]bool),
		Flush:      make(map[Point]bool),
		QuietFlush: make(map[Point]bool),
		ExitEntry:  make(map[Point]bool),
		Leaf:       isLeaf(fn, opts.Inert),
	}
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
	return &planner{
		c: c, p: p, fn: fn, body: body, opts: opts, facts: facts,
		yield:   fn.Synthetic == rangeYield,
		calls:   calls,
		cuts:    cuts,
		headers: loopHeaders(fn),
		landed:  make(map[*ssa.BasicBlock]Point),
	}
}

// landBlocks gives every block's weight a landing point: its own (land),
// else its neighbours' by flow conservation (distribute), else the
// operands of && and || it evaluates (matchOperands). What is left is
// reported as approximate.
func (pl *planner) landBlocks() {
	c, p, fn := pl.c, pl.p, pl.fn
	p.Weights, p.Charged = weightsBy(fn, pl.opts.Cost)
	if pl.opts.Cost == nil {
		p.Counts = p.Charged
	} else {
		_, p.Counts = weights(fn)
	}
	for _, w := range p.Weights {
		p.Total += w
	}
	for _, b := range fn.Blocks {
		w := p.Charged[b.Index]
		at, ok := c.land(b, p, w)
		switch {
		case ok:
			pl.landed[b] = at
		case at.Kind == placedElsewhere:
		case w != 0:
			pl.pending = append(pl.pending, b)
		}
	}
	// Blocks without a source landing take their weight from neighbours by
	// flow conservation: a block all of whose predecessors jump only to it
	// executes exactly as often as they do together; a block that is the
	// only predecessor of its only successor executes as often as that one.
	// An operand's block placed by the test before it lets the blocks
	// after it (tests of constants) take their weight from it: again.
	for {
		for changed := true; changed && len(pl.pending) > 0; {
			changed = false
			rest := pl.pending[:0]
			for _, b := range pl.pending {
				if c.distribute(b, p, pl.landed) {
					changed = true
					continue
				}
				rest = append(rest, b)
			}
			pl.pending = rest
		}
		n := len(pl.pending)
		if pl.pending = c.matchOperands(p, pl.pending, pl.landed, false); len(pl.pending) == n {
			break
		}
	}
	pl.pending = c.matchOperands(p, pl.pending, pl.landed, true)
}

// planLocal decides whether the function accumulates its charges in a
// local variable (FuncPlan.Local) and reports whether it is a small leaf,
// which gets no check: a loop-free leaf whose longest path stays within
// SmallLeaf. The check's call to the slow path would cost it its inlining
// (and with it, often, stack allocation of what it returns); its
// instructions are sampled at the caller's next check.
func (pl *planner) planLocal() (small bool) {
	p, fn := pl.p, pl.fn
	_, small = smallLeaf(fn, p.Leaf, p.Counts, pl.opts)
	// (A small leaf of one block charges once, where it returns:
	// nothing to accumulate.)
	p.Local = fn.Synthetic == "" && localOK(fn, pl.landed, pl.calls) && !(small && terminates(fn.Blocks[0]))
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
			if at, ok := pl.landed[b]; ok && terminates(b) {
				p.Flush[at] = true
				p.touch(at)
			}
		}
	}
	return small
}

// resultTicks reports whether return statement r's results hold ticks
// (charges of && and || operands), which run after a final check placed
// before the statement.
func (p *FuncPlan) resultTicks(r *ast.ReturnStmt) bool {
	if len(r.Results) == 0 {
		return false
	}
	for _, at := range p.order {
		if at.Kind == tickExpr && at.Node.Pos() >= r.Results[0].Pos() && at.Node.End() <= r.End() {
			return true
		}
	}
	return false
}

// rangeYield is go/ssa's Synthetic of the function it makes of a
// range-over-func loop body.
const rangeYield = "range-over-func yield"

// returnsFrom returns the function a return statement in fn's body
// returns from: fn, or, for a range-over-func loop body (the yield
// function go/ssa makes of it), the function around the loop.
func returnsFrom(fn *ssa.Function) *ssa.Function {
	for fn.Synthetic == rangeYield && fn.Parent() != nil {
		fn = fn.Parent()
	}
	return fn
}

// bodyCalls reports whether b, in a range-over-func loop body, calls a
// function that may sample: one that calls (calls) or a quiet one. The
// body, which does not push itself, checks before such a call, in its own
// name: the callee's entry check would sample it in the iterator's.
func (pl *planner) bodyCalls(b *ssa.BasicBlock) bool {
	return pl.calls(b) || callsOut(b, pl.opts.Inert)
}

// exprChargesOn reports whether the function charges inside expressions
// (ticks of && and || operands and of case values, counter.T and V) at a
// point that a block for which on reports true lands at, or at a point no
// block lands at (an operand's share of a block without a landing:
// matchOperands). Those charges go to the goroutine's count, not to the
// accumulator (unless kprof's compiler moves them there), so a final check
// on such a path that stands for the entry check too (ExitEntry) could not
// tell the function's part of what is pending from its caller's.
func (pl *planner) exprChargesOn(on func(*ssa.BasicBlock) bool) bool {
	landedBy := make(map[Point]bool) // points some block lands at
	onPath := make(map[Point]bool)   // points a block on the path lands at
	for b, at := range pl.landed {
		landedBy[at] = true
		if on(b) {
			onPath[at] = true
		}
	}
	p := pl.p
	for _, at := range p.order {
		if (at.Kind == tickExpr || at.Kind == caseValue) && p.Charges[at] != 0 && (onPath[at] || !landedBy[at]) {
			return true
		}
	}
	return false
}

// anyBlock reports whether pred holds for a block of fn.
func anyBlock(fn *ssa.Function, pred func(*ssa.BasicBlock) bool) bool {
	for _, b := range fn.Blocks {
		if pred(b) {
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

// weights returns the number of instructions of each of fn's blocks, and
// what is charged where once weights are hoisted (hoistWeights).
func weights(fn *ssa.Function) (w, charged []int64) { return weightsBy(fn, nil) }

// weightsBy is weights in the metric of table t (WeightBy). Hoisting moves
// a block's weight only when the block weighs something, which it does
// under every metric exactly when it has a counted instruction: blocks
// move alike.
func weightsBy(fn *ssa.Function, t *cost.Table) (w, charged []int64) {
	w = make([]int64, len(fn.Blocks))
	for _, b := range fn.Blocks {
		w[b.Index] = WeightBy(b, t)
	}
	return w, hoistWeights(fn, w)
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
