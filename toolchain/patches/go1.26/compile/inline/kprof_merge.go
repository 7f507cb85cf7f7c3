//go:build kprofpatch

// Code kprof adds to the compiler's package inline (cmd/compile/internal/inline), beside inl.go.

package inline

import (
	"cmd/compile/internal/base"
	"cmd/compile/internal/ir"
	"cmd/compile/internal/typecheck"
	"cmd/compile/internal/types"
	"go/constant"
)

// kprofMerge merges the checks of small leaves folded into one
// accumulator (KprofFoldLate) that follow one another with nothing
// between them that reads or changes the count: four inlined word calls
// in unicode/utf8's ValidString loop, two getters in a comparison. A
// folded check is "kp += a; if Count <= kp { SED(kp, f, n, self); kp =
// 0 }", and between two such checks the count stays as it is and the
// accumulator only grows (charges of at least 0): where the last check
// of such a chain does not fire, none before it would have. So the
// checks but the last keep only their charges, and the last one's slow
// path takes the accumulator back to what it was before the chain and
// runs the checks in their order, with the charges between them: the
// same calls of the slow paths with the same counts, only later — after
// user code that the agent does not see (no call, no push, no change of
// the count between). The last check's own slow path then runs without
// its test: SED with a count above the accumulator only charges it,
// which is what keeping it in the accumulator does. Checks that charge
// the count itself, where no accumulator takes them (a leaf in a return's
// result, or in a function with nothing after it to flush one), merge
// the same way (cutCount). A chain is cut by
// anything else: a call (intrinsics apart), code of package counter that
// was not folded, any other use of the accumulator, a branch (each arm
// of an if, a loop's condition and body, the right operand of && and ||
// are chains of their own), a label or a jump, and a charge below 0.
//
// The profiles are those of the unmerged code for every run in which no
// runtime error (an index out of range) panics inside a chain: where one
// does, the checks before it have not sampled, and what they would have
// taken goes to the next sample's context (an accumulator's charges are
// lost there anyway; package rewrite's doc: "exact for every run in
// which no runtime error unwinds a frame").
type kprofMerger struct {
	checks  map[*ir.IfStmt]kprofFolded          // folded leaf checks
	charges map[*ir.InlinedCallExpr]kprofFolded // folded charges (counter.C, T)
	targets map[*ir.Name]bool                   // the accumulators folded into
	// consts holds the values of the other accumulators (a small
	// leaf's own, inlined) where the walk knows them: a leaf's check
	// charges "_kp + n".
	consts map[*ir.Name]int64
	chain  []kprofStep
	fns    map[*ir.Func]bool // the functions inlined into since the last run
}

// A kprofFolded is a folded check k or charge: it adds arg to accumulator
// kp.
type kprofFolded struct {
	kp  *ir.Name
	arg ir.Node
	k   kprofCheck
}

// A kprofStep is a check or a charge of a chain, adding a; a check's if
// statement is (*list)[i], and its slow path's arguments read the
// accumulators of subst, whose values they then had.
type kprofStep struct {
	kprofFolded
	a     int64
	check bool
	list  *ir.Nodes
	i     int
	subst map[*ir.Name]int64
}

var kprofMerges = kprofMerger{
	checks:  map[*ir.IfStmt]kprofFolded{},
	charges: map[*ir.InlinedCallExpr]kprofFolded{},
	targets: map[*ir.Name]bool{},
	consts:  map[*ir.Name]int64{},
	fns:     map[*ir.Func]bool{},
}

// foldedCheck notes the check k, folded into kp.
func (m *kprofMerger) foldedCheck(k kprofCheck, kp *ir.Name) {
	r := k.ifs.Cond.(*ir.InlinedCallExpr)
	m.checks[k.ifs] = kprofFolded{kp: kp, arg: kprofCounterInl[r].Args[0], k: k}
	m.targets[kp] = true
}

// foldedCharge notes the charge r (counter.C or T), folded into kp.
func (m *kprofMerger) foldedCharge(r *ir.InlinedCallExpr, kp *ir.Name) {
	m.charges[r] = kprofFolded{kp: kp, arg: kprofCounterInl[r].Args[0]}
	m.targets[kp] = true
}

// eval returns the value of x, an int64 expression of constants and
// accumulators whose values are known, adding those it reads to subst.
func (m *kprofMerger) eval(x ir.Node, subst map[*ir.Name]int64) (int64, bool) {
	switch x.Op() {
	case ir.OLITERAL:
		if !ir.IsConst(x, constant.Int) {
			return 0, false
		}
		return constant.Int64Val(x.Val())
	case ir.ONAME:
		n := x.(*ir.Name)
		v, ok := m.consts[n]
		if ok && subst != nil {
			subst[n] = v
		}
		return v, ok
	case ir.OADD, ir.OSUB:
		b := x.(*ir.BinaryExpr)
		u, ok1 := m.eval(b.X, subst)
		v, ok2 := m.eval(b.Y, subst)
		if x.Op() == ir.OSUB {
			v = -v
		}
		return u + v, ok1 && ok2
	case ir.OCONVNOP, ir.OCONV:
		return m.eval(x.(*ir.ConvExpr).X, subst)
	}
	return 0, false
}

// plain reports whether x reads nothing but constants, globals and the
// accumulators of subst (a slow path's arguments, evaluated later).
func kprofPlain(x ir.Node, subst map[*ir.Name]int64) bool {
	return !ir.Any(x, func(y ir.Node) bool {
		n, ok := y.(*ir.Name)
		if !ok {
			return false
		}
		if _, known := subst[n]; known {
			return false
		}
		return n.Class != ir.PEXTERN && n.Class != ir.PFUNC
	})
}

// run merges the chains of the functions inlined into, then forgets what
// was noted.
func (m *kprofMerger) run() {
	for fn := range m.fns {
		m.list(&fn.Body, nil)
		m.cut()
		clear(m.consts)
	}
	clear(m.checks)
	clear(m.charges)
	clear(m.targets)
	clear(m.fns)
	m.chain = nil
}

// cut ends the chain, merging it if it holds two checks or more.
func (m *kprofMerger) cut() {
	c := m.chain
	m.chain = nil
	for len(c) > 0 && !c[len(c)-1].check {
		c = c[:len(c)-1]
	}
	n := 0
	for _, s := range c {
		if s.check {
			n++
		}
	}
	if n < 2 {
		return
	}
	last := c[len(c)-1]
	pos := last.k.ifs.Pos()
	if base.Flag.LowerM > 1 {
		base.WarnfAt(pos, "kprof: one check for %d inlined leaves", n)
	}
	if last.kp == nil {
		m.cutCount(c)
		return
	}
	kp := last.kp
	lit := func(a int64) ir.Node { return ir.NewBasicLit(pos, kp.Type(), constant.MakeInt64(a)) }
	op := func(o ir.Op, a int64) ir.Node {
		s := ir.NewAssignOpStmt(pos, o, kp, lit(a))
		s.SetTypecheck(1)
		return s
	}
	total := int64(0)
	for _, s := range c {
		total += s.a
	}
	replay := ir.Nodes{op(ir.OSUB, total)}
	for _, s := range c[:len(c)-1] {
		if !s.check {
			replay.Append(op(ir.OADD, s.a))
			continue
		}
		// The check moves to the replay, reading the values the
		// accumulators it read had; in its place, its charge.
		m.substitute(s.k.ifs, s.subst)
		replay.Append(s.k.ifs)
		(*s.list)[s.i] = op(ir.OADD, s.a)
	}
	replay.Append(op(ir.OADD, last.a))
	replay.Append(last.k.ifs.Body...)
	last.k.ifs.Body = replay
}

// cutCount merges chain c of checks that charge the count itself (not
// folded: "if D(a) { SED(0, f, n, self) }", D inlined), with the charges
// of the count between them (counter.C, T). The checks but the last
// keep their charges (D, its result unused); the last one's slow path
// calls the slow paths of all of them in order, each charging first
// (SED's k) what takes the count to what it was at its check: the first
// gives back what was charged after it, the others charge what was
// charged since the one before. A slow path called with the count above
// 0 only charges k.
func (m *kprofMerger) cutCount(c []kprofStep) {
	last := c[len(c)-1]
	total := int64(0)
	for _, s := range c {
		total += s.a
	}
	var replay ir.Nodes
	seen, prev := int64(0), int64(-1) // the charges so far, and up to the check before
	for j, s := range c {
		seen += s.a
		if !s.check {
			continue
		}
		k := seen - prev
		if prev < 0 {
			k = -(total - seen)
		}
		prev = seen
		sed := s.k.sed
		sed.Args[0] = ir.NewBasicLit(sed.Pos(), sed.Args[0].Type(), constant.MakeInt64(k))
		if j < len(c)-1 {
			m.substitute(s.k.sed, s.subst)
			keep := typecheck.Stmt(ir.NewAssignStmt(s.k.ifs.Pos(), ir.BlankNode, s.k.ifs.Cond))
			(*s.list)[s.i] = keep
			replay.Append(sed)
			continue
		}
		replay.Append(last.k.ifs.Body...)
	}
	last.k.ifs.Body = replay
}

// substitute replaces, in x, the accumulators of subst with the values
// they had.
func (m *kprofMerger) substitute(x ir.Node, subst map[*ir.Name]int64) {
	var edit func(y ir.Node) ir.Node
	edit = func(y ir.Node) ir.Node {
		if n, ok := y.(*ir.Name); ok {
			if v, known := subst[n]; known {
				return ir.NewBasicLit(y.Pos(), y.Type(), constant.MakeInt64(v))
			}
			return y
		}
		ir.EditChildren(y, edit)
		return y
	}
	ir.EditChildren(x, edit)
}

// step adds a check or a charge of f to the chain, or cuts it.
func (m *kprofMerger) step(f kprofFolded, check bool, list *ir.Nodes, i int) {
	s := kprofStep{kprofFolded: f, check: check, list: list, i: i, subst: map[*ir.Name]int64{}}
	var ok bool
	s.a, ok = m.eval(f.arg, s.subst)
	if check {
		for _, x := range f.k.sed.Args[1:] {
			ok = ok && kprofPlain(x, s.subst)
		}
		ok = ok && kprofPlain(f.arg, s.subst) && list != nil
	}
	if !ok || s.a < 0 {
		m.cut()
		return
	}
	if len(m.chain) > 0 && m.chain[0].kp != s.kp {
		m.cut()
	}
	if len(m.chain) == 0 && !s.check {
		return // charges before a chain's first check are not its own
	}
	m.chain = append(m.chain, s)
}

// set notes v as kp's value, or that its value is unknown.
func (m *kprofMerger) set(kp *ir.Name, v int64, known bool) {
	if known {
		m.consts[kp] = v
	} else {
		delete(m.consts, kp)
	}
}

// branch walks a part of the code that runs conditionally or repeatedly:
// a chain of its own, where the accumulators' values are unknown (a loop's
// body is also entered from its end) and after which they are.
func (m *kprofMerger) branch(walk func()) {
	m.cut()
	clear(m.consts)
	walk()
	m.cut()
	clear(m.consts)
}

// list walks the statements of list in their order. ret is the label an
// inlined body's returns jump to, if its only jump to it is its last
// statement's (the label follows): that jump and that label join
// nothing.
func (m *kprofMerger) list(list *ir.Nodes, ret *types.Sym) {
	for i, x := range *list {
		m.stmt(list, i, x, ret)
	}
}

// stmt walks statement x, (*list)[i].
func (m *kprofMerger) stmt(list *ir.Nodes, i int, x ir.Node, ret *types.Sym) {
	if x == nil {
		return
	}
	m.inits(x)
	switch x := x.(type) {
	case *ir.IfStmt:
		if f, ok := m.checks[x]; ok {
			m.step(f, true, list, i)
			return
		}
		if k, ok := kprofLeafCheck(x); ok {
			r := x.Cond.(*ir.InlinedCallExpr)
			m.step(kprofFolded{arg: kprofCounterInl[r].Args[0], k: k}, true, list, i)
			return
		}
		m.expr(x.Cond)
		m.branch(func() { m.list(&x.Body, nil) })
		m.branch(func() { m.list(&x.Else, nil) })
		return
	case *ir.ForStmt:
		m.branch(func() { m.expr(x.Cond) })
		m.branch(func() { m.list(&x.Body, nil) })
		m.branch(func() { m.stmt(nil, 0, x.Post, nil) })
		return
	case *ir.RangeStmt:
		m.expr(x.X)
		m.branch(func() { m.list(&x.Body, nil) })
		return
	case *ir.SwitchStmt:
		m.cut()
		for _, c := range x.Cases {
			m.branch(func() { m.list(&c.Body, nil) })
		}
		return
	case *ir.SelectStmt:
		m.cut()
		for _, c := range x.Cases {
			m.branch(func() { m.list(&c.Body, nil) })
		}
		return
	case *ir.BlockStmt:
		m.list(&x.List, ret)
		return
	case *ir.BranchStmt:
		if x.Op() == ir.OGOTO && ret != nil && x.Label == ret {
			return // (the body's only jump to ret, its last statement)
		}
	case *ir.LabelStmt:
		if ret != nil && x.Label == ret {
			return
		}
	case *ir.AssignOpStmt:
		if kp, ok := x.X.(*ir.Name); ok && kprofLocal(kp) {
			if m.targets[kp] {
				if x.AsOp != ir.OADD {
					m.cut()
					return
				}
				m.step(kprofFolded{kp: kp, arg: x.Y}, false, nil, 0)
				return
			}
			u, known := m.consts[kp]
			v, ok := m.eval(x.Y, nil)
			if x.AsOp == ir.OSUB {
				v = -v
			}
			m.set(kp, u+v, known && ok && (x.AsOp == ir.OADD || x.AsOp == ir.OSUB))
			return
		}
		m.expr(x.X)
		m.expr(x.Y)
		return
	case *ir.AssignStmt:
		if kp, ok := x.X.(*ir.Name); ok && kprofLocal(kp) && !m.targets[kp] {
			if x.Y == nil {
				m.set(kp, 0, true)
			} else {
				v, ok := m.eval(x.Y, nil)
				m.set(kp, v, ok)
			}
			return
		}
		m.expr(x.X)
		m.expr(x.Y)
		return
	case *ir.AssignListStmt:
		for _, y := range x.Lhs {
			m.expr(y)
		}
		for _, y := range x.Rhs {
			m.expr(y)
		}
		return
	case *ir.Decl:
		if kprofLocal(x.X) && !m.targets[x.X] {
			m.consts[x.X] = 0
		}
		return
	case *ir.InlinedCallExpr, *ir.CallExpr:
		m.expr(x)
		return
	case *ir.ReturnStmt:
		for _, y := range x.Results {
			m.expr(y)
		}
	case *ir.InlineMarkStmt:
		return
	}
	// Anything else ends the chain; after a label or a jump, the
	// accumulators' values are those of another path too.
	m.cut()
	clear(m.consts)
}

// inits walks x's init statements.
func (m *kprofMerger) inits(x ir.Node) {
	if x.Op() == ir.OINLCALL {
		return // (expr walks them)
	}
	init := x.Init()
	m.list(&init, nil)
}

// expr walks expression x in the order Go evaluates it.
func (m *kprofMerger) expr(x ir.Node) {
	if x == nil {
		return
	}
	switch x.Op() {
	case ir.OINLCALL:
		r := x.(*ir.InlinedCallExpr)
		init := r.Init()
		m.list(&init, nil)
		if f, ok := m.charges[r]; ok {
			m.step(f, false, nil, 0)
			return
		}
		if call, counter := kprofCounterInl[r]; counter {
			// A charge of the count (not folded), or a cut.
			name, _ := kprofCallee(call)
			if len(call.Args) == 1 && (name == "C" && len(r.ReturnVars) == 0 || name == "T" && len(r.ReturnVars) == 1) {
				m.step(kprofFolded{arg: call.Args[0]}, false, nil, 0)
				return
			}
			m.cut()
			return
		}
		m.list(&r.Body, kprofReturnLabel(r.Body))
		return
	case ir.OANDAND, ir.OOROR:
		l := x.(*ir.LogicalExpr)
		m.expr(l.X)
		m.branch(func() { m.expr(l.Y) })
		return
	case ir.ONAME:
		if m.targets[x.(*ir.Name)] {
			m.cut()
		}
		return
	case ir.OCALLFUNC:
		call := x.(*ir.CallExpr)
		m.inits(x)
		for _, a := range call.Args {
			m.expr(a)
		}
		if !ir.IsIntrinsicCall(call) || call.Fun.Sym() == nil || call.Fun.Sym().Pkg.Path == "runtime" {
			m.cut()
		}
		return
	case ir.OLITERAL, ir.ONIL, ir.OTYPE, ir.OLINKSYMOFFSET, ir.OMETHEXPR, ir.OCLOSURE:
		return
	case ir.OADD, ir.OSUB, ir.OMUL, ir.ODIV, ir.OMOD, ir.OAND, ir.OOR, ir.OXOR, ir.OANDNOT,
		ir.OLSH, ir.ORSH, ir.OEQ, ir.ONE, ir.OLT, ir.OLE, ir.OGT, ir.OGE,
		ir.ONEG, ir.OPLUS, ir.OBITNOT, ir.ONOT, ir.OCONV, ir.OCONVNOP, ir.OPAREN,
		ir.OINDEX, ir.OSLICE, ir.OSLICESTR, ir.OSLICEARR, ir.OSLICE3, ir.OSLICE3ARR,
		ir.ODOT, ir.ODOTPTR, ir.ODEREF, ir.OADDR, ir.OLEN, ir.OCAP, ir.OMIN, ir.OMAX,
		ir.OREAL, ir.OIMAG, ir.OCOMPLEX, ir.OSTRUCTLIT, ir.OARRAYLIT, ir.OSLICELIT,
		ir.OCOMPLIT, ir.OKEY, ir.OSTRUCTKEY, ir.OCHECKNIL:
		m.inits(x)
		ir.DoChildren(x, func(y ir.Node) bool {
			m.expr(y)
			return false
		})
		return
	}
	m.cut()
}

// kprofReturnLabel returns the label an inlined body's returns jump to,
// if the body ends with it and jumps to it only in its last statement
// before it.
func kprofReturnLabel(body ir.Nodes) *types.Sym {
	if len(body) < 2 || body[len(body)-1].Op() != ir.OLABEL {
		return nil
	}
	label := body[len(body)-1].(*ir.LabelStmt).Label
	jumps := 0
	for _, x := range body {
		ir.Visit(x, func(y ir.Node) {
			if b, ok := y.(*ir.BranchStmt); ok && b.Label == label {
				jumps++
			}
		})
	}
	prev := body[len(body)-2]
	if b, ok := prev.(*ir.BlockStmt); ok && len(b.List) > 0 {
		prev = b.List[len(b.List)-1]
	}
	if b, ok := prev.(*ir.BranchStmt); jumps != 1 || !ok || b.Op() != ir.OGOTO || b.Label != label {
		return nil
	}
	return label
}
