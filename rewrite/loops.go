package rewrite

// Loops: the headers and post statements of for and range loops, charged
// where control passes through them (body start, after the loop minus
// breaks, end of body and before continue).

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"
)

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
// them runs the header or the post statement again). The post statement
// joins only where the init statement and the condition call nothing: the
// count, taken back before the loop, stands above what ran until the body
// starts, and a check in a callee would not fire. The header's check
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
		if wp != 0 && callsIn(c.info, f.Init, f.Cond) {
			// The post statement's weight would be taken back before
			// the loop, and the count could stand above what ran while
			// the init statement or the first condition calls: a check
			// there would not fire, and at granularity 0 a callee's
			// entry would go unsampled (its instructions then the
			// caller's, and the agent's cached path stale). Charge it
			// after each iteration instead.
			c.chargeAfterIteration(p, f, f.Body, wp)
			wp = 0
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
			at := Point{beforeStmt, c.listStmt(f)}
			p.add(at, -wp)
			if p.Local {
				// Flushed, not accumulated: where the loop's body
				// flushes (flushIntoLoops), the accumulator is then
				// zero on the loop's entry as on its back edges, and
				// the compiler folds it out of the loop's check and
				// charge. Accumulated, its phi (-wp, 0) kept a register
				// and a dependent subtraction in every iteration
				// (slices.IsSorted's loop).
				p.Flush[at] = true
			}
		}
	}
}

// chargeAfterIteration charges w where each iteration of loop ends.
func (c *funcCtx) chargeAfterIteration(p *FuncPlan, loop ast.Stmt, body *ast.BlockStmt, w int64) {
	for _, at := range c.iterationEnds(loop, body) {
		p.add(at, w)
	}
}

// iterationEnds returns the points where each iteration of loop ends: the
// end of its body and before every continue that targets it.
func (c *funcCtx) iterationEnds(loop ast.Stmt, body *ast.BlockStmt) []Point {
	ends := []Point{{atBodyEnd, body}}
	for _, cont := range branchesTo(loop, token.CONTINUE, c.labels) {
		ends = append(ends, Point{beforeStmt, cont})
	}
	return ends
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
		// A test that goes to a body or to b is the loop's first test,
		// before the first iteration (an integer range's latch may be
		// fused into the block that ends its body: a nested loop's done
		// block, which names no part of this loop).
		for _, pr := range b.Preds {
			if len(pr.Succs) == 2 && pr.Succs[1] == b && pr.Succs[0].Comment == body {
				bodyBlock = pr.Succs[0]
			}
		}
		if bodyBlock != nil {
			break
		}
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

// doneOf finds the statement after which a *.done block without a position
// runs, from the positions of its predecessors.
func (c *funcCtx) doneOf(b *ssa.BasicBlock, kind string) (ast.Stmt, bool) {
	// Control reaches a statement's done block only from inside the
	// statement: where each direct predecessor leaves (its last position)
	// lies in it. The innermost statement of the kind that holds them all
	// is the one (a block that evaluates a nested statement's header
	// begins before it: its first position would name an outer one).
	// A predecessor that ends in a test of a constant leaves from that
	// test (leavePos); where buildSSA did not find the test's expression,
	// the predecessor does not tell (its last position may lie before
	// the statement the test begins: y += n; if 2%4 == 1 || x > 0 { … }).
	var last []token.Pos
	tell := 0
	for _, pr := range b.Preds {
		pp := c.passPos(pr, 3)
		if _, isConst := constTest(pr); isConst && !pp.IsValid() {
			continue
		}
		tell++
		if pp.IsValid() {
			last = append(last, pp)
		}
	}
	if tell > 0 && len(last) == tell {
		for _, n := range c.pathTo(last[0]) {
			if s := stmtOfKind(c.info, n, kind); s != nil && holdsAll(s, last) {
				// Unless a labeled break leaves it for b: then b is
				// the done block of the statement around it that the
				// break names (go/ssa drops the inner statement's
				// empty done block).
				for _, pr := range b.Preds {
					if t := c.labeledExit(pr, b); t != nil && stmtOfKind(c.info, t, kind) != nil && t.Pos() <= s.Pos() && s.End() <= t.End() {
						s = t
					}
				}
				// A test of a constant has no position: its block's
				// last position may lie before the statement it
				// begins (y += n; if 2%4 == 1 { … }).
				if t := c.stmtBefore(s, kind, slices.Max(last), succPos(b)); t != nil {
					s = t
				}
				return c.listStmt(s), true
			}
		}
	}
	// Positions of the nearest predecessors that have one.
	var positions []token.Pos
	seen := map[*ssa.BasicBlock]bool{b: true}
	// (Only along edges that a test of a constant leaves live, from
	// code that runs: the entry block's if true goto then else done
	// does not lead to done.)
	live := func(to *ssa.BasicBlock) []*ssa.BasicBlock {
		var from []*ssa.BasicBlock
		for _, pr := range to.Preds {
			if slices.Contains(liveSuccs(pr), to) && c.reachable(pr) {
				from = append(from, pr)
			}
		}
		return from
	}
	frontier := live(b)
	direct := false // positions from b's own predecessors
	for depth := 0; depth < 4 && len(positions) == 0 && len(frontier) > 0; depth++ {
		direct = depth == 0
		var next []*ssa.BasicBlock
		for _, pr := range frontier {
			if seen[pr] {
				continue
			}
			seen[pr] = true
			// (In a range-over-func body, go/ssa positions the store
			// to its jump variable, which opens the body's first
			// block, at the closing brace: not where the block is.)
			if pp := blockPos(pr); pp.IsValid() && !(pp == c.body.Rbrace && !c.isFuncBody()) {
				positions = append(positions, pp)
			}
			next = append(next, live(pr)...)
		}
		frontier = next
	}
	if !direct {
		if t := c.afterConstDone(b, kind, positions); t != nil {
			return c.listStmt(t), true
		}
	}
	for _, pp := range positions {
		for _, n := range c.pathTo(pp) {
			s := stmtOfKind(c.info, n, kind)
			// With the positions of b's own predecessors, the statement
			// is the innermost that ends after all of them (some
			// evaluate its header, with the code before it): go/ssa
			// threads the jumps of a nested statement's empty clause
			// and done block to the done block of the one around it.
			// Further back, the blocks before the statement come in.
			if s != nil && (!direct || endsAfter(s, positions)) {
				// The blocks found may be those before a nested
				// statement whose test has no position (a constant
				// condition, or a constant operand of its && or ||):
				// where b leads into s, after them, b's statement lies
				// in between.
				if t := c.stmtBefore(s, kind, slices.Max(positions), succPos(b)); t != nil {
					s = t
				}
				// An else-if is not in a statement list: use the
				// outermost if.
				return c.listStmt(s), true
			}
		}
	}
	// No statement of its kind holds them: they are all before b's
	// statement, whose test has no position, in the same list.
	if len(positions) > 0 {
		from := slices.Max(positions)
		path := c.pathTo(from)
		for _, n := range path {
			if blk, ok := n.(*ast.BlockStmt); ok {
				if t := c.stmtBefore(blk, kind, from, succPos(b)); t != nil {
					return c.listStmt(t), true
				}
				break
			}
		}
	}
	return nil, false
}

// passPos is leavePos, but for a block that only jumps on (an empty
// clause, which go/ssa gives no position), where control left the
// predecessor that led to it, following at most depth such blocks back:
// the block lies in the statement of the test that chose it.
func (c *funcCtx) passPos(b *ssa.BasicBlock, depth int) token.Pos {
	if pp := c.leavePos(b); pp.IsValid() || depth == 0 || !onlyJumps(b) {
		return pp
	}
	for _, pr := range b.Preds {
		if pp := c.passPos(pr, depth-1); pp.IsValid() {
			return pp
		}
	}
	return token.NoPos
}

// leavePos returns where control leaves b: its last position, or for
// the blocks that dispatch on how a range-over-func loop's body left
// (which have none) the range statement's.
func (c *funcCtx) leavePos(b *ssa.BasicBlock) token.Pos {
	// (A test of a constant: its expression's, if buildSSA found it; the
	// block's other positions come before the test.)
	if _, isConst := constTest(b); isConst {
		return c.constTestPos(b)
	}
	if pp := lastPos(b); pp.IsValid() {
		return pp
	}
	// (A select's dispatch on the index of its case: the select's.)
	if t := testOf(b); t != nil && t.Pos().IsValid() {
		return t.Pos()
	}
	// (A range loop's header, or its first test where go/ssa fused it
	// into the block before the loop: their index and comparison have
	// none; the range statement's.)
	for _, s := range b.Succs {
		if kind, part := commentKind(s.Comment); part == "body" && strings.HasPrefix(kind, "range") && kind != "rangefunc" {
			if r, ok := c.rangeStmt(s, token.NoPos, kind); ok {
				return r.For
			}
		}
	}
	switch b.Comment {
	case "rangefunc.resume.ready.check", "rangefunc.resume.ready":
		if r, ok := c.rangeFuncByRank(b); ok {
			return r.For
		}
	}
	return token.NoPos
}

// afterConstDone returns b's statement where b's only predecessor is
// another statement's done block that ends in b's statement's test of a
// constant (for … { … }; if 7%3 < 2 { goto L }): the statement of kind
// that follows that one and ends before where b leads. positions are
// those of the blocks before the predecessor, inside its statement.
func (c *funcCtx) afterConstDone(b *ssa.BasicBlock, kind string, positions []token.Pos) ast.Stmt {
	if len(b.Preds) != 1 {
		return nil
	}
	if _, isConst := constTest(b.Preds[0]); !isConst {
		return nil
	}
	pk, part := commentKind(b.Preds[0].Comment)
	next := succPos(b)
	if part != "done" || !next.IsValid() {
		return nil
	}
	for _, pp := range positions {
		path := c.pathTo(pp)
		for i, n := range path {
			t := stmtOfKind(c.info, n, pk)
			if t == nil || t.End() > next {
				continue
			}
			// The statement list around t.
			for _, m := range path[i+1:] {
				switch list := m.(type) {
				case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
					return c.stmtBefore(list.(ast.Stmt), kind, t.End(), next)
				}
			}
			return nil
		}
	}
	return nil
}

// succPos returns the first position where control goes from b: that of
// its successor, through blocks that have none and jump on (a test of a
// constant, which has none either, jumps to the successor it leaves live).
func succPos(b *ssa.BasicBlock) token.Pos {
	for depth := 0; depth < 4; depth++ {
		succs := liveSuccs(b)
		if len(succs) != 1 {
			break
		}
		b = succs[0]
		if p := blockPos(b); p.IsValid() {
			return p
		}
	}
	return token.NoPos
}

// stmtBefore returns, when the position next lies inside s after from,
// the statement of kind inside s that begins after from and ends before
// next, the outermost of the last to end; otherwise nil.
func (c *funcCtx) stmtBefore(s ast.Stmt, kind string, from, next token.Pos) ast.Stmt {
	if !next.IsValid() || next <= from || next <= s.Pos() || next >= s.End() {
		return nil
	}
	var best ast.Stmt
	ast.Inspect(s, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if t := stmtOfKind(c.info, n, kind); t != nil && t != s && t.Pos() > from && t.End() <= next {
			if best == nil || t.End() > best.End() {
				best = t
			}
			return false // (its own are inside it: not the outermost)
		}
		return true
	})
	return best
}

// labeledExit returns the statement that a labeled break names, where
// pr reaches b by that break: pr ends with the test of an if whose body
// begins with the break, or jumps right before it.
func (c *funcCtx) labeledExit(pr, b *ssa.BasicBlock) ast.Stmt {
	p := lastPos(pr)
	if len(pr.Instrs) == 0 || !p.IsValid() {
		return nil
	}
	path := c.pathTo(p)
	var br *ast.BranchStmt
	switch pr.Instrs[len(pr.Instrs)-1].(type) {
	case *ssa.If:
		if pr.Succs[0] != b {
			return nil
		}
		for _, n := range path {
			if ifs, ok := n.(*ast.IfStmt); ok && ifs.Cond.Pos() <= p && p < ifs.Cond.End() && len(ifs.Body.List) > 0 {
				br, _ = ifs.Body.List[0].(*ast.BranchStmt)
				break
			}
		}
	case *ssa.Jump:
		for i, n := range path {
			list, ok := stmtList(n)
			if !ok {
				continue
			}
			if i == 0 {
				break
			}
			st, ok := path[i-1].(ast.Stmt)
			if j := slices.Index(list, st); ok && j >= 0 && j+1 < len(list) {
				br, _ = list[j+1].(*ast.BranchStmt)
			}
			break
		}
	}
	if br == nil || br.Tok != token.BREAK || br.Label == nil {
		return nil
	}
	for _, n := range path {
		if ls, ok := n.(*ast.LabeledStmt); ok && ls.Label.Name == br.Label.Name {
			return ls.Stmt
		}
	}
	return nil
}

// stmtOfKind returns n if it is a statement whose done blocks go/ssa
// comments with kind ("for", "rangeindex", "if", "switch", …), or nil.
func stmtOfKind(info *types.Info, n ast.Node, kind string) ast.Stmt {
	switch n := n.(type) {
	case *ast.ForStmt:
		if kind == "for" {
			return n
		}
	case *ast.RangeStmt:
		if kind == rangeKind(info, n) {
			return n
		}
	case *ast.IfStmt:
		if kind == "if" {
			return n
		}
	case *ast.SwitchStmt:
		if kind == "switch" {
			return n
		}
	case *ast.TypeSwitchStmt:
		if kind == "typeswitch" {
			return n
		}
	case *ast.SelectStmt:
		if kind == "select" {
			return n
		}
	}
	return nil
}

// holdsAll reports whether every position of ps lies in n.
func holdsAll(n ast.Node, ps []token.Pos) bool {
	for _, p := range ps {
		if p < n.Pos() || p >= n.End() {
			return false
		}
	}
	return true
}

// lastPos returns the position of b's last instruction that has one.
func lastPos(b *ssa.BasicBlock) token.Pos {
	for i := len(b.Instrs) - 1; i >= 0; i-- {
		if _, ok := b.Instrs[i].(*ssa.Phi); ok {
			continue
		}
		if p := b.Instrs[i].Pos(); p.IsValid() {
			return p
		}
	}
	return token.NoPos
}

// endsAfter reports whether n ends after every position of ps.
func endsAfter(n ast.Node, ps []token.Pos) bool {
	for _, p := range ps {
		if p >= n.End() {
			return false
		}
	}
	return true
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
