//go:build kprofpatch

// Code kprof adds to the compiler's package inline (cmd/compile/internal/inline), beside inl.go.

package inline

import (
	"cmd/compile/internal/ir"
	"cmd/compile/internal/types"
	"cmp"
	"go/constant"
	"slices"
	"strings"
)

const (
	kprofLocalName       = "_kp"
	kprofDepthName       = "_kd"
	kprofTagName         = "_kt"
	kprofResultPrefix    = "_kq"
	kprofLatePrefix      = "_kv"
	kprofBodyDepthPrefix = "_kb"
)

// kprofLocal reports whether x is the variable in which kprof accumulates
// a function's charges.
func kprofLocal(x ir.Node) bool {
	return x != nil && x.Op() == ir.ONAME && x.Sym() != nil && x.Sym().Name == kprofLocalName
}

// kprofCallee returns the name of the function of package counter that x
// calls, if x is such a call.
func kprofCallee(x ir.Node) (string, bool) {
	const pkg = "github.com/kprof/kprof/counter"
	call, ok := x.(*ir.CallExpr)
	if !ok || call.Op() != ir.OCALLFUNC {
		return "", false
	}
	if f, ok := call.Fun.(*ir.Name); ok && f.Class == ir.PFUNC && f.Sym().Pkg.Path == pkg {
		return f.Sym().Name, true
	}
	if call.Fun.Op() == ir.OMETHEXPR {
		if m := ir.MethodExprName(call.Fun); m != nil && m.Sym().Pkg.Path == pkg {
			return "Of", true
		}
	}
	return "", false
}

// kprofTick reports whether x is a tick: a call of counter.T, TC, TCL,
// TCW or TCLW.
func kprofTick(x ir.Node) bool {
	name, ok := kprofCallee(x)
	return ok && (name == "T" || name == "TC" || name == "TCL" || name == "TCW" || name == "TCLW")
}

// kprofLate holds the calls evaluated after their function's last flush of
// its accumulator: in return results and panic arguments. kprofScanned
// holds the functions whose bodies were searched for them, and whether
// they call package counter (kprof instrumented them).
var (
	kprofLate    = map[ir.Node]bool{}
	kprofScanned = map[*ir.Func]bool{}
)

// kprofScan searches fn's body for late calls and reports whether it calls
// package counter.
func kprofScan(fn *ir.Func) bool {
	counted, ok := kprofScanned[fn]
	if ok {
		return counted
	}
	mark := func(x ir.Node) {
		ir.Visit(x, func(y ir.Node) {
			if y.Op() == ir.OCALLFUNC {
				kprofLate[y] = true
			}
		})
	}
	ir.VisitList(fn.Body, func(x ir.Node) {
		switch x.Op() {
		case ir.ORETURN, ir.OPANIC:
			mark(x)
		case ir.OAS, ir.OAS2, ir.OAS2FUNC:
			// "{ _kq0 = f(); counter.Pop(); return }" (rewrite's
			// emitNamedReturn): the results are evaluated after the
			// final flush. Any assignment to a result counts.
			if kprofAssigns(x, nil) {
				mark(x)
			}
		case ir.OCALLFUNC:
			name, ok := kprofCallee(x)
			counted = counted || ok
			if ok && (name == "Of" || strings.HasPrefix(name, "R")) {
				mark(x)
			}
		}
	})
	kprofScanned[fn] = counted
	return counted
}

// kprofFold notes the calls of package counter that kprof's late fold
// needs (KprofFoldLate), and records fold candidates: an inlined call in
// callerfn's own code (parent, the call's inline tree index, is -1) —
// a tick (counter.T) or a body that may only charge (a small leaf: no
// check, no push) — whose charges could go from the goroutine's count to
// callerfn's accumulator, where callerfn's next check or flush takes
// them, as it took them from the count. A call evaluated after callerfn's
// last flush keeps its charges in the count. An inlined call inside a body
// inlined into callerfn is a candidate too, for that body's accumulator.
func kprofFold(callerfn *ir.Func, call *ir.CallExpr, res *ir.InlinedCallExpr, parent int) {
	kprofMerges.fns[callerfn] = true
	name, counter := kprofCallee(call)
	if counter {
		kprofCounterInl[res] = call
		if name == "CQ" && len(call.Args) == 1 && len(res.ReturnVars) == 1 {
			kprofQuietFlushes = append(kprofQuietFlushes, kprofCand{fn: callerfn, res: res})
		}
		if (name == "C" || name == "D") && len(call.Args) > 0 && ir.Any(call.Args[0], kprofLocal) {
			kprofFlushed[res] = true
		}
		if name != "T" || len(res.ReturnVars) != 1 {
			return
		}
	}
	if parent >= 0 {
		// Inside an inlined body: its own accumulator, if it has one,
		// is known once inlining is done (kprofInlined).
		kprofCands = append(kprofCands, kprofCand{fn: callerfn, res: res})
		return
	}
	if kp := kprofAccumulator(callerfn, call); kp != nil {
		kprofCands = append(kprofCands, kprofCand{callerfn, res, kp})
	}
}

// kprofInlined returns the accumulator of the inlined body that holds res
// in its own code, if that body has one and no call may follow res in it
// before it flushes (kprofSearch; falling off the body's end counts as a
// call), and res is not evaluated after its last flush: in an assignment
// to its results (an inlined return statement's, which follows its final
// check) or a panic's argument.
func kprofInlined(fn *ir.Func, res ir.Node) *ir.Name {
	enc := kprofEnclosing(fn, res)
	if enc == nil {
		return nil
	}
	var kp *ir.Name
	late := false
	kprofOwn(enc.Body, func(x ir.Node) {
		switch x.Op() {
		case ir.ONAME:
			if n := x.(*ir.Name); kp == nil && kprofLocal(n) && n.InlLocal() && n.Type().Kind() == types.TINT64 {
				kp = n
			}
		case ir.OAS, ir.OAS2, ir.OAS2FUNC:
			if kprofAssigns(x, enc.ReturnVars) && ir.Any(x, func(y ir.Node) bool { return y == res }) {
				late = true
			}
		case ir.OPANIC:
			if ir.Any(x, func(y ir.Node) bool { return y == res }) {
				late = true
			}
		}
	})
	if kp == nil || late {
		return nil
	}
	if found, after, open := kprofSearch(enc.Body, res); !found || after || open {
		return nil
	}
	return kp
}

// kprofEnclosing returns the inlined call whose body holds res in its own
// code (not in a body inlined into it), or nil.
func kprofEnclosing(fn *ir.Func, res ir.Node) *ir.InlinedCallExpr {
	var enc, found *ir.InlinedCallExpr
	var visit func(x ir.Node) bool
	visit = func(x ir.Node) bool {
		if x == res {
			found = enc
			return true
		}
		r, ok := x.(*ir.InlinedCallExpr)
		if !ok {
			return ir.DoChildren(x, visit)
		}
		for _, y := range r.Init() { // the arguments: the caller's code
			if visit(y) {
				return true
			}
		}
		outer := enc
		enc = r
		for _, y := range r.Body {
			if visit(y) {
				return true
			}
		}
		enc = outer
		return false
	}
	for _, x := range fn.Body {
		if visit(x) {
			break
		}
	}
	return found
}

// kprofOwn calls f for each node of list in its own code: not in the
// bodies of calls inlined into it.
func kprofOwn(list ir.Nodes, f func(ir.Node)) {
	var visit func(x ir.Node) bool
	visit = func(x ir.Node) bool {
		f(x)
		if r, ok := x.(*ir.InlinedCallExpr); ok {
			for _, y := range r.Init() {
				visit(y)
			}
			return false
		}
		return ir.DoChildren(x, visit)
	}
	for _, x := range list {
		visit(x)
	}
}

// kprofAssigns reports whether assignment x assigns one of vars, a
// result parameter or a result kprof named (rewrite's namedResultVar: in an
// inlined body, a local by then).
func kprofAssigns(x ir.Node, vars []ir.Node) bool {
	var lhs []ir.Node
	switch x := x.(type) {
	case *ir.AssignStmt:
		lhs = []ir.Node{x.X}
	case *ir.AssignListStmt:
		lhs = x.Lhs
	}
	for _, l := range lhs {
		if n, ok := l.(*ir.Name); ok && (n.Class == ir.PPARAMOUT || n.Sym() != nil && kprofNumbered(n.Sym().Name, kprofResultPrefix)) {
			return true
		}
		for _, v := range vars {
			if l == v {
				return true
			}
		}
	}
	return false
}

// kprofNested reports whether c lies inside a body inlined into its
// function (see kprofCand).
func kprofNested(c kprofCand) int {
	if c.kp == nil {
		return 1
	}
	return 0
}

// kprofAccumulator returns fn's accumulator, if fn has one and call, in
// fn's own code, is evaluated before fn's last flush (not in a return
// statement's results or a panic's argument: kprofScan).
func kprofAccumulator(fn *ir.Func, call ir.Node) *ir.Name {
	var kp *ir.Name
	for _, d := range fn.Dcl {
		if d.Class == ir.PAUTO && kprofLocal(d) && !d.InlLocal() && !d.InlFormal() {
			kp = d
			break
		}
	}
	// A user's variable of that name in code kprof did not instrument
	// (-pkgs) is left alone.
	if kp == nil || kp.Type().Kind() != types.TINT64 || !kprofScan(fn) || kprofLate[call] {
		return nil
	}
	return kp
}

// A kprofCand is a fold candidate (see kprofFold): the inlined call res
// in fn, and fn's accumulator kp (nil: res is inside a body inlined into
// fn, whose accumulator KprofFoldLate looks for: kprofInlined).
type kprofCand struct {
	fn  *ir.Func
	res *ir.InlinedCallExpr
	kp  *ir.Name
}

var (
	kprofCands        []kprofCand
	kprofQuietFlushes []kprofCand                              // flushes before quiet calls (counter.CQ)
	kprofCounterInl   = map[*ir.InlinedCallExpr]*ir.CallExpr{} // inlined calls of package counter: the call
	kprofFlushed      = map[*ir.InlinedCallExpr]bool{}         // inlined flushes: counter.C(_kp), counter.D(_kp + n)
)

// KprofFoldLate folds the candidates that no call may follow before their
// function's next flush (kprofCallsAfter), once the inliner is done with
// the package, so that what follows each is known: a call left is a call.
// (Folded there, the charges would be lost when that call panics and the
// panic unwinds the function, or calls runtime.Goexit or os.Exit.) A
// tick becomes "_kp += n; true"; a leaf's body folds when, its own
// inlined callees included, it only charges (counter.C, ticks) and
// returns normally — one that panics (or calls what might not return)
// would leave its charges in an accumulator that the unwinding frame
// never flushes. Then the flushes before quiet calls whose callees all
// folded go (kprofDropQuietFlushes).
func KprofFoldLate() {
	// The candidates in their functions' own code first: an inlined
	// body that folds as a whole takes the bodies inlined into it along.
	slices.SortStableFunc(kprofCands, func(a, b kprofCand) int {
		return cmp.Compare(kprofNested(a), kprofNested(b))
	})
	folded := map[*ir.InlinedCallExpr]bool{}
	for _, c := range kprofCands {
		var charges []*ir.InlinedCallExpr
		var checks []kprofCheck
		if _, tick := kprofCounterInl[c.res]; tick {
			charges = []*ir.InlinedCallExpr{c.res}
		} else if !kprofOnlyCharges(c.res.Body, &charges, &checks) || len(charges)+len(checks) == 0 {
			continue
		}
		if c.kp == nil {
			if c.kp = kprofInlined(c.fn, c.res); c.kp == nil {
				continue
			}
		} else if kprofCallsAfter(c.fn, c.res) {
			continue
		}
		for _, k := range checks {
			k.fold(c.kp)
			kprofMerges.foldedCheck(k, c.kp)
		}
		for _, r := range charges {
			// counter.C(n) and T(n) subtract n from the count (T then
			// returns true): they add n to the accumulator, an int64 too.
			add := ir.NewAssignOpStmt(r.Pos(), ir.OADD, c.kp, kprofCounterInl[r].Args[0])
			add.SetTypecheck(1)
			kprofMerges.foldedCharge(r, c.kp)
			r.Body = ir.Nodes{add}
			if len(r.ReturnVars) == 0 {
				// A charge, a statement: its parameter's binding goes too.
				r.SetInit(nil)
			} else {
				rv := r.ReturnVars[0]
				ret := ir.NewAssignStmt(r.Pos(), rv, ir.NewBasicLit(r.Pos(), rv.Type(), constant.MakeBool(true)))
				ret.SetTypecheck(1)
				r.Body.Append(ret)
			}
		}
		folded[c.res] = true
	}
	kprofDropQuietFlushes(folded)
	kprofMerges.run()
	kprofCands = nil
	clear(kprofCounterInl)
	clear(kprofFlushed)
}

// kprofOnlyCharges reports whether body, once inlining is done, only
// charges and returns normally: it calls nothing but package counter's C
// and T, inlined (which it adds to charges), intrinsics (math/bits'
// LeadingZeros in math/big's nlz), and functions
// inlined into it whose bodies do the same; it neither panics nor starts
// or defers a function; and it does not use the caller's accumulator. A
// small leaf that accumulates its charges uses its own variable, inlined
// here (InlLocal); its flushes, counter.C(_kp), fold like charges, and
// so do its checks where it returns (kprofLeafCheck), which it adds to
// checks: they compare the count with the caller's accumulator.
func kprofOnlyCharges(body ir.Nodes, charges *[]*ir.InlinedCallExpr, checks *[]kprofCheck) bool {
	ok := true
	var visit func(x ir.Node) bool
	visit = func(x ir.Node) bool {
		switch x.Op() {
		case ir.OIF:
			if k, is := kprofLeafCheck(x.(*ir.IfStmt)); is {
				*checks = append(*checks, k)
				return false // what the check does is known
			}
		case ir.OINLCALL:
			r := x.(*ir.InlinedCallExpr)
			if call, counter := kprofCounterInl[r]; counter {
				switch name, _ := kprofCallee(call); {
				case name == "C" && len(call.Args) == 1 && len(r.ReturnVars) == 0,
					name == "T" && len(call.Args) == 1 && len(r.ReturnVars) == 1:
					*charges = append(*charges, r)
				default:
					ok = false
				}
				return !ok // what the counter's body does is known
			}
		case ir.OCALLFUNC:
			if ir.IsIntrinsicCall(x.(*ir.CallExpr)) {
				break // an instruction or a few (bits.Len64), as for kprofCallsAfter
			}
			ok = false
			return true
		case ir.OPANIC, ir.OCALLINTER, ir.OCALLMETH, ir.OGO, ir.ODEFER:
			ok = false
			return true
		case ir.ONAME:
			if kprofLocal(x) && !x.(*ir.Name).InlLocal() {
				ok = false
				return true
			}
		}
		return ir.DoChildren(x, visit)
	}
	for _, x := range body {
		if visit(x) {
			break
		}
	}
	return ok
}

// A kprofCheck is a small leaf's check where it returns, inlined: "if
// D(a) { SED(0, callee, n, self) }" with D inlined (r) — its body
// subtracts a from the count (sub) and compares the count with 0 (le) —
// and SED not (sed).
type kprofCheck struct {
	ifs *ir.IfStmt
	sub *ir.AssignOpStmt
	le  *ir.BinaryExpr
	sed *ir.CallExpr
}

// kprofLeafCheck reports whether x is a small leaf's check (kprofCheck).
func kprofLeafCheck(x *ir.IfStmt) (kprofCheck, bool) {
	k := kprofCheck{ifs: x}
	r, ok := x.Cond.(*ir.InlinedCallExpr)
	if !ok || len(x.Else) != 0 || len(x.Body) != 1 || len(r.ReturnVars) != 1 {
		return k, false
	}
	if call, counter := kprofCounterInl[r]; !counter || len(call.Args) != 1 {
		return k, false
	} else if name, _ := kprofCallee(call); name != "D" {
		return k, false
	}
	if k.sed, ok = x.Body[0].(*ir.CallExpr); !ok || k.sed.Op() != ir.OCALLFUNC || len(k.sed.Args) != 4 {
		return k, false
	}
	if name, _ := kprofCallee(k.sed); name != "SED" || !kprofZero(k.sed.Args[0]) {
		return k, false
	}
	ir.Any(r, func(y ir.Node) bool {
		switch y.Op() {
		case ir.OASOP:
			if as := y.(*ir.AssignOpStmt); as.AsOp == ir.OSUB && k.sub == nil {
				k.sub = as
			}
		case ir.OLE:
			if le := y.(*ir.BinaryExpr); kprofZero(le.Y) && k.le == nil {
				k.le = le
			}
		}
		return false
	})
	return k, k.sub != nil && k.le != nil && k.sub.X.Type().Kind() == types.TINT64
}

// kprofZero reports whether x is the integer constant 0.
func kprofZero(x ir.Node) bool {
	return ir.IsConst(x, constant.Int) && constant.Sign(x.Val()) == 0
}

// fold moves the check's charge to the caller's accumulator kp: "kp +=
// a; Count <= kp" (the caller's next check or flush charges it), and its
// slow path charges kp first and clears it: "SED(kp, callee, n, self);
// kp = 0".
func (k kprofCheck) fold(kp *ir.Name) {
	k.sub.X, k.sub.AsOp = kp, ir.OADD
	k.le.Y = kp
	k.sed.Args[0] = kp
	reset := ir.NewAssignStmt(k.sed.Pos(), kp, ir.NewBasicLit(k.sed.Pos(), kp.Type(), constant.MakeInt64(0)))
	reset.SetTypecheck(1)
	k.ifs.Body.Append(reset)
}

// kprofNodes returns the number of nodes of fn's body that kprof
// inserted: IsBigFunc does not count them, so that instrumentation does
// not make a function "big", where the inliner inlines only the
// cheapest calls.
func kprofNodes(fn *ir.Func) int {
	n := 0
	var visit func(x ir.Node) bool
	visit = func(x ir.Node) bool {
		if user, ok := kprofInserted(x); ok {
			ir.Any(x, func(ir.Node) bool { n++; return false })
			for _, u := range user {
				ir.Any(u, func(ir.Node) bool { n--; return false })
				visit(u) // what kprof inserted inside the user's code
			}
			return false
		}
		return ir.DoChildren(x, visit)
	}
	ir.DoChildren(fn, visit)
	return n
}

// kprofCallsAfter reports whether, once inlining is done, call, in fn's
// own code, may be evaluated where what it charges to fn's accumulator
// would not be flushed: a call that might not return normally (any call
// but package counter's and intrinsics), or a panic, may run after it,
// in call's statement or in the statements that follow it in the same
// basic block (kprof flushes at the start of each block that calls); or
// fn may return after it with no flush between — call stands after the
// final check of the path it is on (the check of a block that returns
// comes at the block's start, before its statements).
func kprofCallsAfter(fn *ir.Func, call ir.Node) bool {
	found, after, open := kprofSearch(fn.Body, call)
	return !found || after || open // not found: assume the worst
}

// kprofSearch looks for call in list and reports whether it found it and,
// if so, whether what call charges may go unflushed (see
// kprofCallsAfter: after), or whether control falls off the end of list
// after it with neither a flush nor what makes after true (open): the
// statements that follow list's own statement decide.
func kprofSearch(list []ir.Node, call ir.Node) (found, after, open bool) {
	for i, st := range list {
		if !ir.Any(st, func(y ir.Node) bool { return y == call }) {
			continue
		}
		head, bodies, block := kprofParts(st)
		if b, ok := st.(*ir.BlockStmt); ok {
			bodies = append(bodies, b.List)
		}
		for _, b := range bodies {
			found, after, open := kprofSearch(b, call)
			if !found {
				continue
			}
			if !open {
				return true, after, false
			}
			// Out of a plain block: on in the same basic block. Out
			// of a branch, a clause or a loop body (its loop header's
			// calls, if any, run first): into a new block, which
			// flushes before it calls and checks before it returns.
			if _, plain := st.(*ir.BlockStmt); plain {
				return kprofFollow(list[i+1:])
			}
			if _, loop := st.(*ir.ForStmt); loop && kprofCalls(head, nil) {
				return true, true, false
			}
			return true, false, false
		}
		if kprofCalls(head, call) {
			return true, true, false
		}
		if !block {
			// In a return statement's results, a panic's argument:
			// after the final check. In the head of an if, a loop, a
			// switch: the blocks that follow flush before they call,
			// and check (flushing) before they return.
			switch st.Op() {
			case ir.ORETURN, ir.OTAILCALL, ir.OPANIC:
				return true, true, false
			}
			return true, false, false
		}
		return kprofFollow(list[i+1:])
	}
	return false, false, false
}

// kprofFollow continues kprofSearch with the statements that follow
// call's in its basic block.
func kprofFollow(list []ir.Node) (found, after, open bool) {
	for _, next := range list {
		if kprofFlushes(next) {
			return true, false, false
		}
		head, _, block := kprofParts(next)
		if kprofCalls(head, nil) {
			return true, true, false
		}
		if b, ok := next.(*ir.BlockStmt); ok {
			// A plain block goes on in the same basic block, and what
			// it holds decides: a return inlined into the body that
			// holds call is one, "~R0 = x; goto .i0" (the source's own
			// blocks are gone by now). Skipped, a check folded after
			// the body's final check had its charges left in an
			// accumulator that no flush took.
			if _, after, open := kprofFollow(b.List); !open {
				return true, after, false
			}
			continue
		}
		if block {
			continue
		}
		switch next.Op() {
		case ir.OLABEL:
			continue // a join: the block goes on
		case ir.ORETURN, ir.OTAILCALL, ir.OPANIC, ir.OGOTO, ir.OBREAK, ir.OCONTINUE, ir.OFALL:
			// Out with no flush since call (a return's final
			// check precedes call), or on where the search does not
			// follow.
			return true, true, false
		}
		// An if, a loop, a switch: new blocks, which flush before
		// they call and check before they return.
		return true, false, false
	}
	return true, false, true
}

// kprofParts splits statement x into what runs in the basic block that
// reaches x (head), its nested statement lists, and whether the statement
// after x continues that block.
func kprofParts(x ir.Node) (head []ir.Node, bodies [][]ir.Node, block bool) {
	head = append(head, x.Init()...)
	switch x := x.(type) {
	case *ir.IfStmt:
		return append(head, x.Cond), [][]ir.Node{x.Body, x.Else}, false
	case *ir.ForStmt:
		// The condition and the post statement run in blocks of their
		// own: any call there counts.
		return append(head, x.Cond, x.Post), [][]ir.Node{x.Body}, false
	case *ir.RangeStmt:
		return append(head, x.X), [][]ir.Node{x.Body}, false
	case *ir.SwitchStmt:
		head = append(head, x.Tag)
		for _, c := range x.Cases {
			head = append(head, c.List...)
			bodies = append(bodies, c.Body)
		}
		return head, bodies, false
	case *ir.SelectStmt:
		for _, c := range x.Cases {
			head = append(head, c.Comm)
			bodies = append(bodies, c.Body)
		}
		return head, bodies, false
	case *ir.BlockStmt:
		return head, nil, true
	}
	switch x.Op() {
	case ir.OLABEL, ir.OGOTO, ir.OBREAK, ir.OCONTINUE, ir.OFALL, ir.ORETURN, ir.OTAILCALL:
		return head, nil, false
	case ir.OPANIC:
		return append(head, x), nil, false
	}
	return append(head, x), nil, true
}

// kprofCalls reports whether the nodes of xs, skip's subtree apart, call
// a function other than package counter's, or panic.
func kprofCalls(xs []ir.Node, skip ir.Node) bool {
	found := false
	var visit func(y ir.Node) bool
	visit = func(y ir.Node) bool {
		if y == nil || y == skip {
			return false
		}
		switch y.Op() {
		case ir.OCALLFUNC, ir.OCALLMETH, ir.OCALLINTER:
			if kprofOtherCall(y) {
				found = true
				return true
			}
		case ir.OPANIC:
			found = true
			return true
		}
		return ir.DoChildren(y, visit)
	}
	for _, x := range xs {
		if visit(x) {
			break
		}
	}
	return found
}

// kprofOtherCall reports whether call x calls a function other than
// package counter's, runtime.KprofState (the state inlined counter code
// reads) and intrinsics.
func kprofOtherCall(x ir.Node) bool {
	_, counter := kprofCallee(x)
	return !counter && !kprofRuntimeState(x) && !(x.Op() == ir.OCALLFUNC && ir.IsIntrinsicCall(x.(*ir.CallExpr)))
}

// kprofRuntimeState reports whether x calls runtime.KprofState (inlined
// package counter code reaches the goroutine's state through it).
func kprofRuntimeState(x ir.Node) bool {
	call, ok := x.(*ir.CallExpr)
	if !ok || call.Op() != ir.OCALLFUNC {
		return false
	}
	f, ok := call.Fun.(*ir.Name)
	return ok && f.Class == ir.PFUNC && f.Sym().Pkg.Path == "runtime" && f.Sym().Name == "KprofState"
}

// kprofFlushes reports whether statement x flushes the accumulator into
// the count: counter.C(_kp), or a check that charges it (if
// counter.D(_kp + n) {…}).
func kprofFlushes(x ir.Node) bool {
	if x.Op() == ir.OIF {
		x = x.(*ir.IfStmt).Cond
	}
	if r, ok := x.(*ir.InlinedCallExpr); ok {
		return kprofFlushed[r]
	}
	name, ok := kprofCallee(x)
	if !ok || name != "C" && name != "D" {
		return false
	}
	return ir.Any(x.(*ir.CallExpr).Args[0], kprofLocal)
}

// kprofVar reports whether x is one of the variables kprof declares: the
// accumulator, the saved depth, a switch's bound tag, or a return's result
// evaluated before its final check (the plain return evaluated the same
// expressions, with no variable). Not the temporaries of "return f()"
// (resultVar), which stand for the compiler's own.
func kprofVar(x ir.Node) bool {
	if x == nil || x.Op() != ir.ONAME || x.Sym() == nil {
		return false
	}
	switch name := x.Sym().Name; name {
	case kprofLocalName, kprofDepthName, kprofTagName:
		return true
	default:
		return kprofNumbered(name, kprofLatePrefix) || kprofNumbered(name, kprofBodyDepthPrefix)
	}
}

// kprofNumbered reports whether name is prefix followed by a number (the
// names kprof gives to a return's results and to saved depths).
func kprofNumbered(name, prefix string) bool {
	return strings.HasPrefix(name, prefix) && len(name) > len(prefix) &&
		strings.Trim(name[len(prefix):], "0123456789") == ""
}

// kprofResult reports whether x is a result kprof named (rewrite's
// namedResultVar prefix): the function had unnamed results.
func kprofResult(x ir.Node) bool {
	if x == nil || x.Op() != ir.ONAME || x.Sym() == nil || x.(*ir.Name).Class != ir.PPARAMOUT {
		return false
	}
	return kprofNumbered(x.Sym().Name, kprofResultPrefix)
}

// kprofDict reports whether x is the address of a generic function's
// dictionary (the instantiation of Ret1 … Ret4 passes one to Of).
func kprofDict(x ir.Node) bool {
	if x.Op() != ir.OADDR {
		return false
	}
	x = x.(*ir.AddrExpr).X
	return x.Op() == ir.ONAME && x.Sym() != nil && strings.HasPrefix(x.Sym().Name, ".dict.")
}

// kprofCall reports whether x calls, recovers or receives: user code that
// kprof never evaluates again (and a user if or switch whose bodies charge
// only, being empty, is not free).
func kprofCall(x ir.Node) bool {
	switch x.Op() {
	case ir.OCALLFUNC, ir.OCALLMETH, ir.OCALLINTER, ir.OCLOSURE, ir.ORECOVER, ir.ORECV, ir.OINLCALL:
		_, counter := kprofCallee(x)
		return !counter
	}
	return false
}

// kprofOnly reports whether every statement of list is code kprof
// inserted with no user code inside.
func kprofOnly(list []ir.Node) bool {
	for _, x := range list {
		if user, ok := kprofInserted(x); !ok || len(user) > 0 {
			return false
		}
	}
	return true
}

// kprofInserted reports whether n is code kprof inserted, and returns the
// user's code inside it that the inliner must still cost. Besides calls of
// package counter and what surrounds them, kprof inserts statements that
// re-evaluate user conditions only to choose a charge (an if whose
// branches only charge, a switch whose clauses only charge: branch ticks
// and the dispatch of a case that lists several values), the declarations
// of its variables, and the assignments that bind a user value to one
// (a switch's tag, a return's results), which cost that value alone.
func kprofInserted(n ir.Node) ([]ir.Node, bool) {
	switch n.Op() {
	case ir.ONAME:
		if kprofVar(n) {
			return nil, true
		}
	case ir.OSWITCH:
		// The dispatch of a case that lists several values: a switch on
		// the tag variable whose clauses only charge; or of a type
		// switch's clause that lists several types, on the guard's
		// variable (one that charges, at least: the user's switch with
		// empty clauses costs what it did).
		sw := n.(*ir.SwitchStmt)
		if len(sw.Init()) > 0 || sw.Tag == nil {
			break
		}
		tag := sw.Tag
		if g, ok := tag.(*ir.TypeSwitchGuard); ok {
			if g.Tag != nil {
				break
			}
			tag = g.X
		}
		if tag.Op() != ir.ONAME {
			break
		}
		charges := false
		for _, c := range sw.Cases {
			if !kprofOnly(c.Body) || ir.Any(c, kprofCall) {
				return nil, false
			}
			charges = charges || len(c.Body) > 0
		}
		if charges {
			return nil, true
		}
	case ir.ORETURN:
		// return Ret2[A, B](_kd).Of(a, b): the compiler assigns the
		// results to temporaries in the init of the first result. Cost
		// a and b, as the plain return statement did (less the return
		// node itself).
		ret := n.(*ir.ReturnStmt)
		if len(ret.Results) == 0 {
			break
		}
		for _, in := range ret.Results[0].Init() {
			if as, ok := in.(*ir.AssignListStmt); ok && as.Op() == ir.OAS2FUNC && len(as.Rhs) == 1 {
				if name, ok := kprofCallee(as.Rhs[0]); ok && name == "Of" {
					if init := as.Rhs[0].Init(); len(init) > 0 {
						// return Of(f()): the plain return assigned
						// f's results to temporaries too.
						return init, true
					}
					user, _ := kprofInserted(as.Rhs[0])
					return user, true
				}
			}
		}
	case ir.OANDAND:
		// A tick: T(n) && (operand).
		if x := n.(*ir.LogicalExpr); kprofTick(x.X) {
			return []ir.Node{x.Y}, true
		}
	case ir.OIF:
		x := n.(*ir.IfStmt)
		if _, ok := kprofCallee(x.Cond); ok {
			return nil, true
		}
		if len(x.Init()) == 0 && !ir.Any(x.Cond, kprofCall) && kprofOnly(x.Body) && kprofOnly(x.Else) && len(x.Body)+len(x.Else) > 0 {
			// A branch tick: a condition with no call evaluated again
			// to choose a charge (the user's if with empty branches
			// costs what it did).
			return nil, true
		}
	case ir.OAS:
		as := n.(*ir.AssignStmt)
		if kprofLocal(as.X) {
			return nil, true
		}
		if kprofResult(as.X) && as.Y != nil {
			// "_kq0 = X; counter.Pop(); return" for "return X" (rewrite's
			// emitNamedReturn): cost X, as the plain return did, less
			// the return node, which the naked return costs.
			return []ir.Node{as.Y}, true
		}
		if kprofVar(as.X) {
			// Its declaration, or the value bound to it (the depth's,
			// a call of package counter, costs nothing in turn).
			if as.Y == nil {
				return nil, true
			}
			return []ir.Node{as.Y}, true
		}
		if as.Y == nil {
			break
		}
		if _, ok := kprofCallee(as.Y); ok {
			return nil, true
		}
		if ir.IsBlank(as.X) && kprofVar(as.Y) {
			return nil, true // _ = _kp, _ = _kd
		}
	case ir.OAS2, ir.OAS2FUNC:
		as := n.(*ir.AssignListStmt)
		for _, x := range as.Lhs {
			if !kprofResult(x) {
				return nil, false
			}
		}
		return as.Rhs, true // as for OAS
	case ir.OASOP:
		if kprofLocal(n.(*ir.AssignOpStmt).X) {
			return nil, true
		}
	case ir.ODCL:
		if kprofVar(n.(*ir.Decl).X) {
			return nil, true
		}
	case ir.OCALLFUNC:
		name, ok := kprofCallee(n)
		if !ok {
			break
		}
		call := n.(*ir.CallExpr)
		args := call.Args
		switch {
		case name == "Of" && len(args) > 0:
			// The receiver is the saved depth. Of(f()) with a tuple f was
			// rewritten to temporaries assigned in the call's init: cost
			// f() alone, as the plain return statement did.
			var user []ir.Node
			for _, in := range call.Init() {
				if as, ok := in.(*ir.AssignListStmt); ok {
					user = append(user, as.Rhs...)
				} else {
					user = append(user, in)
				}
			}
			if len(user) > 0 {
				return user, true
			}
			for _, a := range args[1:] {
				if !kprofDict(a) {
					user = append(user, a)
				}
			}
			return user, true
		case (strings.HasPrefix(name, "V") || strings.HasPrefix(name, "R1")) && len(args) > 0:
			return args[len(args)-1:], true
		}
		return nil, true
	}
	return nil, false
}

// kprofDropQuietFlushes drops the flushes before quiet calls ("_kp =
// CQ(_kp + n)", inlined) after which, up to the next flush in the same
// basic block, every call was inlined and folded into the accumulator
// (folded) and nothing else is called: the callees' checks compare the
// count with the accumulator themselves, and the flush, which only served
// them, becomes "_kp = _kp + n". A quiet call cannot stop its caller, so
// the flush was never needed for the counts: dropping one is exact.
func kprofDropQuietFlushes(folded map[*ir.InlinedCallExpr]bool) {
	for _, q := range kprofQuietFlushes {
		rest, ok := kprofAfter(q.fn.Body, q.res)
		if !ok || !kprofOnlyFolded(rest, folded) {
			continue
		}
		r := q.res
		keep := ir.NewAssignStmt(r.Pos(), r.ReturnVars[0], kprofCounterInl[r].Args[0])
		keep.SetTypecheck(1)
		r.Body = ir.Nodes{keep}
		r.SetInit(nil) // the parameter's binding: the argument is evaluated in keep
	}
	kprofQuietFlushes = nil
}

// kprofAfter returns the statements that follow, in its statement list,
// the statement whose own basic block holds x (not in the bodies it
// nests), searching list and the lists nested in it, bodies inlined
// into it included.
func kprofAfter(list []ir.Node, x ir.Node) ([]ir.Node, bool) {
	has := func(n ir.Node) bool { return ir.Any(n, func(y ir.Node) bool { return y == x }) }
	for i, st := range list {
		head, bodies, _ := kprofParts(st)
		for _, h := range head {
			if h == nil || !has(h) {
				continue
			}
			// The outermost inlined body on the way to x, if any.
			var in *ir.InlinedCallExpr
			ir.Any(h, func(y ir.Node) bool {
				if y == x {
					return true
				}
				if r, ok := y.(*ir.InlinedCallExpr); ok && slices.ContainsFunc(r.Body, has) {
					in = r
					return true
				}
				return false
			})
			if in != nil {
				return kprofAfter(in.Body, x)
			}
			return list[i+1:], true
		}
		if b, ok := st.(*ir.BlockStmt); ok {
			bodies = append(bodies, b.List)
		}
		for _, b := range bodies {
			if rest, ok := kprofAfter(b, x); ok {
				return rest, true
			}
		}
	}
	return nil, false
}

// kprofOnlyFolded reports whether the statements of list, up to the next
// flush or the end of their basic block, call nothing but package counter
// and intrinsics, and inline only bodies that were folded (folded) or
// that check nothing.
func kprofOnlyFolded(list []ir.Node, folded map[*ir.InlinedCallExpr]bool) bool {
	for _, next := range list {
		if kprofFlushes(next) {
			return true
		}
		head, _, block := kprofParts(next)
		if !kprofHeadFolded(head, folded) {
			return false
		}
		if b, ok := next.(*ir.BlockStmt); ok {
			if !kprofOnlyFolded(b.List, folded) {
				return false
			}
			continue
		}
		if !block {
			return true // the basic block ends
		}
	}
	return true
}

// kprofHeadFolded is kprofOnlyFolded for the nodes of one basic block.
func kprofHeadFolded(xs []ir.Node, folded map[*ir.InlinedCallExpr]bool) bool {
	ok := true
	var visit func(y ir.Node) bool
	visit = func(y ir.Node) bool {
		if y == nil {
			return false
		}
		switch y.Op() {
		case ir.OINLCALL:
			r := y.(*ir.InlinedCallExpr)
			if _, counter := kprofCounterInl[r]; counter || folded[r] {
				return false // (a folded body takes those inlined into it along)
			}
			if kprofChecks(r.Body) {
				ok = false
				return true
			}
		case ir.OCALLFUNC, ir.OCALLMETH, ir.OCALLINTER:
			if kprofOtherCall(y) {
				ok = false
				return true
			}
		case ir.OPANIC:
			ok = false
			return true
		}
		return ir.DoChildren(y, visit)
	}
	for _, x := range xs {
		if visit(x) {
			break
		}
	}
	return ok
}

// kprofChecks reports whether an inlined body checks the count: it calls
// a check or a slow path of package counter (not only charges).
func kprofChecks(body ir.Nodes) bool {
	checks := func(y ir.Node) bool {
		name, ok := kprofCallee(y)
		if !ok {
			if r, inl := y.(*ir.InlinedCallExpr); inl {
				if call, counter := kprofCounterInl[r]; counter {
					name, ok = kprofCallee(call)
				}
			}
		}
		return ok && name != "C" && name != "T" && name != "V" && name != "CQ" && name != "P" && name != "Pop"
	}
	for _, x := range body {
		if ir.Any(x, checks) {
			return true
		}
	}
	return false
}
