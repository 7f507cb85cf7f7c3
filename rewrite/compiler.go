package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The compiler's inliner charges every call in a function against a budget
// of 80 nodes; a call to a function that is not inlined costs 57. The
// checks and charges kprof inserts would tip many small functions over the
// budget, and a function that is no longer inlined changes the program
// (escape analysis then moves what it returns to the heap: tests that
// count allocations fail). Coverage instrumentation has the same problem,
// which the compiler solves by treating coverage counter updates as free
// (isAtomicCoverageCounterUpdate in inl.go). kprof builds a compiler whose
// inliner treats calls into package counter the same way; the generated
// code is that of the stock compiler.

// inlinerPatches are the edits to cmd/compile/internal/inline/inl.go: the
// inliner's cost visitor skips what kprof inserted — calls into package
// counter, the ifs around its checks, the stack-depth bookkeeping, the
// conditions and switches evaluated again only to choose a charge, kprof's
// variables — and costs only the user's code inside (case values, return
// results), so that a function is inlined where the plain build inlines it
// (TestInliningAsPlain).
var inlinerPatches = []struct{ old, new string }{
	{
		old: "\tres := InlineCall(callerfn, n, fn, inlIndex)\n\n\tif res == nil {\n\t\tbase.FatalfAt(n.Pos(), \"inlining call to %v failed\", fn)\n\t}\n",
		new: "\tres := InlineCall(callerfn, n, fn, inlIndex)\n\n\tif res == nil {\n\t\tbase.FatalfAt(n.Pos(), \"inlining call to %v failed\", fn)\n\t}\n\tkprofFold(callerfn, n, res, parent)\n",
	},
	{
		old: "\tbudget := inlineBigFunctionNodes\n",
		new: "\tbudget := inlineBigFunctionNodes + kprofNodes(fn)\n",
	},
	{
		old: "\nopSwitch:\n\tswitch n.Op() {\n",
		new: "\n\tif user, ok := kprofInserted(n); ok {\n" +
			"\t\tir.Visit(n, func(x ir.Node) {\n\t\t\tif x, ok := x.(*ir.Name); ok && x.Class == ir.PAUTO {\n\t\t\t\tv.usedLocals.Add(x)\n\t\t\t}\n\t\t})\n" +
			"\t\tfor _, u := range user {\n\t\t\tif v.do(u) {\n\t\t\t\treturn true\n\t\t\t}\n\t\t}\n" +
			"\t\treturn false\n\t}\nopSwitch:\n\tswitch n.Op() {\n",
	},
}

// inlinerCode is appended to inl.go. The names of kprof's variables are
// the rewriter's (edit.go).
const inlinerCode = `
const (
	kprofLocalName = "` + localVar + `"
	kprofDepthName = "` + depthVar + `"
	kprofTagName   = "` + tagVar + `"
	kprofResultPrefix = "` + namedResultVar + `"
	kprofLatePrefix = "` + lateVar + `"
	kprofBodyDepthPrefix = "` + bodyDepthVar + `"
)

// kprofLocal reports whether x is the variable in which kprof accumulates
// a function's charges.
func kprofLocal(x ir.Node) bool {
	return x != nil && x.Op() == ir.ONAME && x.Sym() != nil && x.Sym().Name == kprofLocalName
}

// kprofCallee returns the name of the function of package counter that x
// calls, if x is such a call.
func kprofCallee(x ir.Node) (string, bool) {
	const pkg = "` + CounterPath + `"
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
// last flush keeps its charges in the count.
func kprofFold(callerfn *ir.Func, call *ir.CallExpr, res *ir.InlinedCallExpr, parent int) {
	name, counter := kprofCallee(call)
	if counter {
		kprofCounterInl[res] = call
		if (name == "C" || name == "D") && len(call.Args) > 0 && ir.Any(call.Args[0], kprofLocal) {
			kprofFlushed[res] = true
		}
		if name != "T" || len(res.ReturnVars) != 1 {
			return
		}
	}
	if parent >= 0 {
		// Inside an inlined body, whose returns are assignments and
		// jumps by now: which calls follow its last flush is no longer
		// visible (a leaf's results are not wrapped in Of).
		return
	}
	if kp := kprofAccumulator(callerfn, call); kp != nil {
		kprofCands = append(kprofCands, kprofCand{callerfn, res, kp})
	}
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
// in fn, and fn's accumulator kp.
type kprofCand struct {
	fn  *ir.Func
	res *ir.InlinedCallExpr
	kp  *ir.Name
}

var (
	kprofCands      []kprofCand
	kprofCounterInl = map[*ir.InlinedCallExpr]*ir.CallExpr{} // inlined calls of package counter: the call
	kprofFlushed    = map[*ir.InlinedCallExpr]bool{}         // inlined flushes: counter.C(_kp), counter.D(_kp + n)
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
// never flushes.
func KprofFoldLate() {
	for _, c := range kprofCands {
		var charges []*ir.InlinedCallExpr
		if _, tick := kprofCounterInl[c.res]; tick {
			charges = []*ir.InlinedCallExpr{c.res}
		} else if !kprofOnlyCharges(c.res.Body, &charges) || len(charges) == 0 {
			continue
		}
		if kprofCallsAfter(c.fn, c.res) {
			continue
		}
		for _, r := range charges {
			// counter.C(n) and T(n) subtract n from the count (T then
			// returns true): they add n to the accumulator, an int64 too.
			add := ir.NewAssignOpStmt(r.Pos(), ir.OADD, c.kp, kprofCounterInl[r].Args[0])
			add.SetTypecheck(1)
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
	}
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
// here (InlLocal); its flushes, counter.C(_kp), fold like charges.
func kprofOnlyCharges(body ir.Nodes, charges *[]*ir.InlinedCallExpr) bool {
	ok := true
	var visit func(x ir.Node) bool
	visit = func(x ir.Node) bool {
		switch x.Op() {
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

// kprofCallsAfter reports whether, once inlining is done, a call that
// might not return normally (any call but package counter's and
// intrinsics), or a panic, may run after call, in fn's own code, before fn
// next flushes its accumulator: in call's statement, or in the statements
// that follow it in the same basic block. (kprof flushes at the start of
// each block that calls, so a statement that starts a new block ends the
// search.)
func kprofCallsAfter(fn *ir.Func, call ir.Node) bool {
	found, after := kprofSearch(fn.Body, call, false)
	return !found || after // not found: assume the worst
}

// kprofSearch looks for call in list and reports whether it found it and,
// if so, whether a call or a panic may follow it before a flush (see
// kprofCallsAfter). atEnd is what falling off the end of list means: true
// in a plain block, whose parent the search does not go back to.
func kprofSearch(list []ir.Node, call ir.Node, atEnd bool) (found, after bool) {
	for i, st := range list {
		if !ir.Any(st, func(y ir.Node) bool { return y == call }) {
			continue
		}
		head, bodies, block := kprofParts(st)
		for _, b := range bodies {
			if found, after := kprofSearch(b, call, false); found {
				return true, after
			}
		}
		if b, ok := st.(*ir.BlockStmt); ok {
			if found, after := kprofSearch(b.List, call, true); found {
				return true, after
			}
		}
		if kprofCalls(head, call) {
			return true, true
		}
		if !block {
			return true, false
		}
		for _, next := range list[i+1:] {
			if kprofFlushes(next) {
				return true, false
			}
			head, _, block := kprofParts(next)
			if kprofCalls(head, nil) {
				return true, true
			}
			if !block {
				return true, false
			}
		}
		return true, atEnd
	}
	return false, false
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
			if _, ok := kprofCallee(y); !ok && !kprofRuntimeState(y) && !(y.Op() == ir.OCALLFUNC && ir.IsIntrinsicCall(y.(*ir.CallExpr))) {
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
		// the tag variable whose clauses only charge.
		sw := n.(*ir.SwitchStmt)
		if len(sw.Init()) > 0 || sw.Tag == nil || sw.Tag.Op() != ir.ONAME {
			break
		}
		for _, c := range sw.Cases {
			if !kprofOnly(c.Body) || ir.Any(c, kprofCall) {
				return nil, false
			}
		}
		return nil, true
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
		if len(x.Init()) == 0 && !ir.Any(x.Cond, kprofCall) && kprofOnly(x.Body) && kprofOnly(x.Else) {
			// A branch tick: a condition with no call evaluated again
			// to choose a charge.
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
`

// The compiler marks every inlined call with an inline mark: a
// zero-size pseudo-instruction that becomes a real NOP when no other
// instruction sits at the call's source position. The runtime needs a mark
// only for an inlined body that owns at least one instruction (its PC leads
// the traceback back to the caller); the marks of bodies with no
// instruction are left out of the function's inline tree anyway. kprof's
// fast paths inline through st() and runtime.KprofState, whose bodies
// compile to nothing (g is a register): without this patch most charges
// and checks carried a NOP, a fifth of kprof's overhead. The patch makes
// the marks of instructionless bodies zero-size, in every function, and
// moves the NOPs of inlined calls of package counter whose bodies have
// instructions (a check and its slow path) to the end of the function
// (kprofCounterMark).
var ssagenPatches = []struct{ old, new string }{
	{
		old: "\t\t// Any unmatched inline marks now need to be added to the inlining tree (and will generate a nop instruction).\n\t\tfor _, p := range inlMarkList {\n\t\t\tif p.As != obj.ANOP {\n",
		new: "\t\tkprofUsed := kprofInlineIndexes(s.pp.Text, inlMarks)\n" +
			"\t\t// Any unmatched inline marks now need to be added to the inlining tree (and will generate a nop instruction).\n\t\tfor _, p := range inlMarkList {\n" +
			"\t\t\tif p.As != obj.ANOP && !kprofUsed[inlMarks[p]] {\n\t\t\t\tkprofZeroSize(p)\n\t\t\t}\n" +
			"\t\t\tif p.As != obj.ANOP && kprofCounterMark(inlMarks[p]) {\n\t\t\t\tnop := Arch.Ginsnop(s.pp)\n\t\t\t\tnop.Pos = p.Pos\n\t\t\t\tinlMarks[nop] = inlMarks[p]\n\t\t\t\tkprofZeroSize(p)\n\t\t\t\tp = nop\n\t\t\t}\n" +
			"\t\t\tif p.As != obj.ANOP {\n",
	},
}

// ssagenCode is appended to ssagen/ssa.go.
const ssagenCode = `
// kprofZeroSize makes the inline mark p a zero-size NOP that marks nothing,
// as genssa does with the marks it moves onto other instructions.
func kprofZeroSize(p *obj.Prog) {
	p.As = obj.ANOP
	p.Pos = src.NoXPos
	p.From = obj.Addr{}
	p.To = obj.Addr{}
}

// kprofCounterMark reports whether the inline mark of inline tree index ix
// marks a call of package counter. Such a mark needs no place of its own
// in the code (nothing unwinds the stack at its position: the slow paths
// inside the inlined body are calls with positions of their own), so it
// moves from the fast path, where it was a NOP executed at every check,
// to the end of the function, where it is never executed: only its
// address and position matter (the inline tree's parent PC).
func kprofCounterMark(ix int32) bool {
	f := base.Ctxt.InlTree.InlinedFunction(int(ix))
	return f != nil && strings.HasPrefix(f.Name, "` + CounterPath + `.")
}

// kprofInlineIndexes returns the inline tree indexes that some instruction
// of the function (other than an inline mark) lies in, with their ancestors.
func kprofInlineIndexes(text *obj.Prog, marks map[*obj.Prog]int32) map[int32]bool {
	used := make(map[int32]bool)
	for p := text; p != nil; p = p.Link {
		if _, ok := marks[p]; ok || !p.Pos.IsKnown() {
			continue
		}
		for ix := base.Ctxt.InnermostPos(p.Pos).Base().InliningIndex(); ix >= 0 && !used[int32(ix)]; ix = base.Ctxt.InlTree.Parent(ix) {
			used[int32(ix)] = true
		}
	}
	return used
}
`

// regallocPatches split the live ranges of values at the calls of the
// checks' slow paths (counter.SE, S, SED and SK, and sl, SL's). A call
// clobbers the registers, so the register allocator keeps a value that
// lives across one in its stack slot: it stores it once, where
// the store dominates all its reloads, and with a reload in the slow path
// right after a function's entry check (or a loop's), that is where the
// value is defined — on every call, or every iteration, on the fast path
// (float arguments in mtrt: stack-slot moves were 39 % of its extra
// instructions). Around these calls the patched allocator stores the live
// registers' values itself, in the slow path, to slots of their own, and
// reloads them into the same registers after it: the values stay in
// registers, and the allocator's own spills stay where the program's real
// calls need them. The collector and stack copying see the slots as any
// spill slot. Around S and SED (returns and other checks) since the
// checks of loops compare with memory (their slow path no longer shares
// the count's load): callgrind -n 1 (go run ./bench/overhead), own code,
// mtrt 1.175× → 1.144×, javac 1.534× → 1.508×, json 1.477× → 1.463×;
// exact mode, which samples at every return, json +0.6 %, mtrt -0.7 %.
var regallocPatches = []struct{ old, new string }{
	{
		old: "\t\t\t// Dump any registers which will be clobbered\n\t\t\tif s.doClobber && v.Op.IsCall() {\n",
		new: "\t\t\tkprofSplit := kprofSlow(v)\n\t\t\tvar kprofSaved []kprofSave\n\t\t\tif kprofSplit {\n\t\t\t\tkprofSaved = s.kprofSaveRegs(v)\n\t\t\t}\n\t\t\t// Dump any registers which will be clobbered\n\t\t\tif s.doClobber && v.Op.IsCall() {\n",
	},
	{
		old: "\t\t\tb.Values = append(b.Values, v)\n\t\t\ts.dropIfUnused(v)\n\t\t}\n",
		new: "\t\t\tb.Values = append(b.Values, v)\n\t\t\ts.dropIfUnused(v)\n\t\t\tif kprofSplit {\n\t\t\t\ts.kprofRestoreRegs(v, kprofSaved)\n\t\t\t}\n\t\t}\n",
	},
	{
		old: "\t\t\tif opcodeTable[v.Op].call {\n\t\t\t\t// Function call clobbers all the registers but SP and SB.\n",
		new: "\t\t\tif opcodeTable[v.Op].call && !kprofSlow(v) {\n\t\t\t\t// Function call clobbers all the registers but SP and SB.\n",
	},
	{
		old: "\t\t\t\tif opcodeTable[v.Op].call {\n\t\t\t\t\tif numCalls != nil {\n",
		new: "\t\t\t\tif opcodeTable[v.Op].call && !kprofSlow(v) {\n\t\t\t\t\tif numCalls != nil {\n",
	},
	{
		old: "\tfor _, v := range b.Values {\n\t\tif opcodeTable[v.Op].call {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n",
		new: "\tfor _, v := range b.Values {\n\t\tif opcodeTable[v.Op].call && !kprofSlow(v) {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n",
	},
}

// regallocCode is appended to ssa/regalloc.go.
const regallocCode = `
// kprofSlow reports whether v calls one of package counter's slow paths.
func kprofSlow(v *Value) bool {
	if !opcodeTable[v.Op].call {
		return false
	}
	ac, ok := v.Aux.(*AuxCall)
	if !ok || ac.Fn == nil {
		return false
	}
	switch ac.Fn.Name {
	case "` + CounterPath + `.SE", "` + CounterPath + `.sl", "` + CounterPath + `.SK", "` + CounterPath + `.S", "` + CounterPath + `.SED":
		return true
	}
	return false
}

// kprofSave is a register whose value a slow path's call saved.
type kprofSave struct {
	r        register
	v, spill *Value
}

// kprofSaveRegs stores the values the registers hold that are used after
// the call v, each once, to slots of their own (rematerializable ones
// apart). (NewValue1 places a value in the block being allocated, after
// what is there so far.)
func (s *regAllocState) kprofSaveRegs(call *Value) []kprofSave {
	var saved []kprofSave
	var done regMask
	for r := register(0); r < s.numRegs; r++ {
		st := s.regs[r]
		if !s.allocatable.contains(r) || st.v == nil || done.contains(r) {
			continue
		}
		vi := &s.values[st.v.ID]
		if vi.uses == nil || vi.rematerializeable {
			continue
		}
		done |= vi.regs
		// Through a copy in the same register (no instruction): the
		// stack allocator takes a value's store as its spill, and the
		// value may have one of its own.
		cp := s.curBlock.NewValue1(call.Pos, OpCopy, st.v.Type, st.c)
		s.setOrig(cp, st.v)
		s.f.setHome(cp, &s.registers[r])
		spill := s.curBlock.NewValue1(call.Pos, OpStoreReg, st.v.Type, cp)
		s.setOrig(spill, st.v)
		saved = append(saved, kprofSave{r, st.v, spill})
	}
	return saved
}

// kprofRestoreRegs reloads the values kprofSaveRegs saved into the
// registers they were in.
func (s *regAllocState) kprofRestoreRegs(call *Value, saved []kprofSave) {
	for _, sv := range saved {
		if s.values[sv.v.ID].uses == nil || s.regs[sv.r].v != nil {
			continue
		}
		ld := s.curBlock.NewValue1(call.Pos, OpLoadReg, sv.v.Type, sv.spill)
		s.setOrig(ld, sv.v)
		s.assignReg(sv.r, sv.v, ld)
	}
}
`

// branchelimPatches keep the compiler's if-conversion (branchelim.go) as
// it decides for the plain code: the values of kprof's accumulator (_kp:
// a charge in a branch, and its phi where the branches join) do not count
// against its limits. Without this, a diamond whose branches charge
// differently had one phi more than in the plain build, and a branch body
// one value more, and lost its conditional moves (the plain build of
// math/big's divWW turns "if r1 != 0 { qq++; r0 -= d }" into conditional
// moves; kprof's kept a branch, which mispredicted). kprof's own diamonds,
// a branch tick's retraced condition, become conditional moves too.
var branchelimPatches = []struct{ old, new string }{
	{
		old: "\tchange := true\n\tfor change {\n\t\tchange = false\n\t\tfor _, b := range f.Blocks {\n\t\t\tchange = elimIf(f, loadAddr, b) || elimIfElse(f, loadAddr, b) || change\n",
		new: "\tkp := kprofAccumulator(f)\n\tchange := true\n\tfor change {\n\t\tchange = false\n\t\tfor _, b := range f.Blocks {\n\t\t\tchange = elimIf(f, loadAddr, b, kp) || elimIfElse(f, loadAddr, b, kp) || change\n",
	},
	{
		old: "func elimIf(f *Func, loadAddr *sparseSet, dom *Block) bool {\n",
		new: "func elimIf(f *Func, loadAddr *sparseSet, dom *Block, kp map[ID]bool) bool {\n",
	},
	{
		old: "\tif len(simple.Values) > maxfuseinsts || !canSpeculativelyExecute(simple) {\n",
		new: "\tif len(simple.Values)-kprofIn(simple, kp) > maxfuseinsts || !canSpeculativelyExecute(simple) {\n",
	},
	{
		old: "func elimIfElse(f *Func, loadAddr *sparseSet, b *Block) bool {\n",
		new: "func elimIfElse(f *Func, loadAddr *sparseSet, b *Block, kp map[ID]bool) bool {\n",
	},
	{
		old: "\tif !isLeafPlain(yes) || len(yes.Values) > 1 || !canSpeculativelyExecute(yes) {\n",
		new: "\tif !isLeafPlain(yes) || len(yes.Values)-kprofIn(yes, kp) > 1 || !canSpeculativelyExecute(yes) {\n",
	},
	{
		old: "\tif !isLeafPlain(no) || len(no.Values) > 1 || !canSpeculativelyExecute(no) {\n",
		new: "\tif !isLeafPlain(no) || len(no.Values)-kprofIn(no, kp) > 1 || !canSpeculativelyExecute(no) {\n",
	},
	{
		old: "\tif !shouldElimIfElse(no, yes, post, f.Config.arch) {\n",
		new: "\tif !shouldElimIfElse(no, yes, post, f.Config.arch, kp) {\n",
	},
	{
		old: "func shouldElimIfElse(no, yes, post *Block, arch string) bool {\n",
		new: "func shouldElimIfElse(no, yes, post *Block, arch string, kp map[ID]bool) bool {\n",
	},
	{
		old: "\t\tfor _, v := range post.Values {\n\t\t\tif v.Op == OpPhi {\n\t\t\t\t// Each phi results in CondSelect",
		new: "\t\tfor _, v := range post.Values {\n\t\t\tif kp[v.ID] {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tif v.Op == OpPhi {\n\t\t\t\t// Each phi results in CondSelect",
	},
}

// branchelimCode is appended to ssa/branchelim.go.
const branchelimCode = `
// kprofAccumulator returns the values kprof's accumulator takes in f: those
// assigned to a variable of its name (constants apart), and the phis that
// join them.
func kprofAccumulator(f *Func) map[ID]bool {
	var kp map[ID]bool
	for slot, vs := range f.NamedValues {
		if slot.N == nil || slot.N.Sym() == nil || slot.N.Sym().Name != "` + localVar + `" {
			continue
		}
		if kp == nil {
			kp = make(map[ID]bool)
		}
		for _, v := range vs {
			// Not a constant: the compiler shares one among all its
			// uses, the program's included.
			if !v.isGenericIntConst() {
				kp[v.ID] = true
			}
		}
	}
	for changed := kp != nil; changed; {
		changed = false
		for _, b := range f.Blocks {
			for _, v := range b.Values {
				if v.Op != OpPhi || kp[v.ID] {
					continue
				}
				for _, a := range v.Args {
					if kp[a.ID] {
						kp[v.ID] = true
						changed = true
						break
					}
				}
			}
		}
	}
	return kp
}

// kprofIn returns how many of b's values are the accumulator's.
func kprofIn(b *Block, kp map[ID]bool) int {
	n := 0
	for _, v := range b.Values {
		if kp[v.ID] {
			n++
		}
	}
	return n
}
`

// compilerPatch is one file of the compiler that kprof edits.
type compilerPatch struct {
	file  string // under GOROOT/src/cmd/compile/internal
	edits []struct{ old, new string }
	code  string // appended
}

// interleavedPatches run kprof's late fold (KprofFoldLate) when the
// inliner is done with a package or a function.
var interleavedPatches = []struct{ old, new string }{
	{
		old: "\tfor _, fn := range typecheck.Target.Funcs {\n\t\tinlState[fn].unparenthesize()\n\t}\n",
		new: "\tfor _, fn := range typecheck.Target.Funcs {\n\t\tinlState[fn].unparenthesize()\n\t}\n\tinline.KprofFoldLate()\n",
	},
	{
		old: "\t\ts.fixpoint()\n\t\ts.unparenthesize()\n",
		new: "\t\ts.fixpoint()\n\t\ts.unparenthesize()\n\t\tinline.KprofFoldLate()\n",
	},
}

// fuseComparisonsPatches mend a miscompile of Go 1.26's fuseComparisons
// (ssa/fuse_comparisons.go), which turns "if x || y" into "if x | y" when
// y's block can run speculatively, and so removes the edge from x's block
// to the successor both share, with its arguments of that successor's
// phis: when the phis took another value from x's block than from y's,
// every path then takes y's. Since Go 1.26 lets inlining markers run
// speculatively (go.dev/issue/74915), a function inlined into y that
// assigns a variable of the caller reaches this — stock Go 1.26.8
// compiles
//
//	x := i > 2 || (func() bool { n += 2; return true }() && i < -3)
//	if x { … }
//
// in a loop so that n += 2 runs whether or not i > 2 — and so do kprof's
// ticks folded into the accumulator (KprofFoldLate). The patch fuses only
// when the shared successor's phis agree on the two edges.
var fuseComparisonsPatches = []struct{ old, new string }{
	{
		old: "\t\t// Logically combine the control values for p and b.\n",
		new: "\t\tif !kprofPhisAgree(p.Succs[i], b.Succs[i]) {\n\t\t\treturn false\n\t\t}\n\n\t\t// Logically combine the control values for p and b.\n",
	},
}

// fuseComparisonsCode is appended to ssa/fuse_comparisons.go.
const fuseComparisonsCode = `
// kprofPhisAgree reports whether the phis of the block that edges e1 and
// e2 enter take the same value along both.
func kprofPhisAgree(e1, e2 Edge) bool {
	for _, v := range e1.b.Values {
		if v.Op == OpPhi && v.Args[e1.i] != v.Args[e2.i] {
			return false
		}
	}
	return true
}
`

// rewritegenericPatches keep a charge of a constant and a variable
// together where it is subtracted from the count: D(_kp + 3), a final
// check in a function that accumulates its charges, is then one
// subtraction from memory of the sum (LEAQ, SUBQ to memory, where the
// generic rule "x - (z + c) => (x - z) - c" made it a load, two
// subtractions and a store). Only for loads from the goroutine's g, which
// only kprof's counter reads in a program.
var rewritegenericPatches = []struct{ old, new string }{
	{
		old: "\t// match: (Sub64 x (Add64 z i:(Const64 <t>)))\n\t// cond: (z.Op != OpConst64 && x.Op != OpConst64)\n\t// result: (Sub64 (Sub64 <t> x z) i)\n\tfor {\n\t\tx := v_0\n\t\tif v_1.Op != OpAdd64 {\n\t\t\tbreak\n\t\t}\n\t\t_ = v_1.Args[1]\n\t\tv_1_0 := v_1.Args[0]\n\t\tv_1_1 := v_1.Args[1]\n\t\tfor _i0 := 0; _i0 <= 1; _i0, v_1_0, v_1_1 = _i0+1, v_1_1, v_1_0 {\n\t\t\tz := v_1_0\n\t\t\ti := v_1_1\n\t\t\tif i.Op != OpConst64 {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tt := i.Type\n\t\t\tif !(z.Op != OpConst64 && x.Op != OpConst64) {\n",
		new: "\t// match: (Sub64 x (Add64 z i:(Const64 <t>)))\n\t// cond: (z.Op != OpConst64 && x.Op != OpConst64)\n\t// result: (Sub64 (Sub64 <t> x z) i)\n\tfor {\n\t\tx := v_0\n\t\tif v_1.Op != OpAdd64 {\n\t\t\tbreak\n\t\t}\n\t\t_ = v_1.Args[1]\n\t\tv_1_0 := v_1.Args[0]\n\t\tv_1_1 := v_1.Args[1]\n\t\tfor _i0 := 0; _i0 <= 1; _i0, v_1_0, v_1_1 = _i0+1, v_1_1, v_1_0 {\n\t\t\tz := v_1_0\n\t\t\ti := v_1_1\n\t\t\tif i.Op != OpConst64 {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tt := i.Type\n\t\t\tif !(z.Op != OpConst64 && x.Op != OpConst64 && !kprofGLoad(x)) {\n",
	},
}

// rewritegenericCode is appended to ssa/rewritegeneric.go.
const rewritegenericCode = `
// kprofGLoad reports whether x loads a field of the running goroutine's g.
func kprofGLoad(x *Value) bool {
	if x.Op != OpLoad {
		return false
	}
	p := x.Args[0]
	for p.Op == OpOffPtr || p.Op == OpNilCheck {
		p = p.Args[0]
	}
	return p.Op == OpGetG
}
`

// likelyadjustPatches lay out the checks' fast paths as fall-throughs. The
// compiler guesses which side of a branch is likely from loops and calls;
// a check's two sides often tie (the code after the check calls too), and
// the layout then put the slow path right after the compare, so that every
// check's fast path was a taken jump over it. kprofLikely marks the side
// of a check that leads to a slow path of package counter unlikely, before
// the compiler's own guesses: the layout moves the slow path out of the
// way, and the fast path is a compare and a branch not taken.
var likelyadjustPatches = []struct{ old, new string }{
	{
		old: "import (\n\t\"fmt\"\n)\n",
		new: "import (\n\t\"cmd/compile/internal/base\"\n\t\"cmd/internal/src\"\n\t\"fmt\"\n)\n",
	},
	{
		old: "func likelyadjust(f *Func) {\n",
		new: "func likelyadjust(f *Func) {\n\tkprofLikely(f)\n",
	},
}

// likelyadjustCode is appended to ssa/likelyadjust.go.
const likelyadjustCode = `
// kprofLikely marks the branches of kprof's checks: a check is a block
// whose control an inlined check of package counter computed (Due, D,
// DueK, TC, …); the side that reaches a call of one of its slow paths,
// through blocks of counter code only, is unlikely.
func kprofLikely(f *Func) {
	for _, b := range f.Blocks {
		if !kprofCheckBlock(b) {
			continue
		}
		s0 := kprofReachesSlow(b.Succs[0].b, b, 4)
		s1 := kprofReachesSlow(b.Succs[1].b, b, 4)
		switch {
		case s0 && !s1:
			b.Likely = BranchUnlikely
		case s1 && !s0:
			b.Likely = BranchLikely
		}
	}
}

// kprofCounterFunc returns the name, within package counter, of the
// function inlined at pos, or "" if pos is not in an inlined function of
// package counter.
func kprofCounterFunc(pos src.XPos) string {
	if !pos.IsKnown() {
		return ""
	}
	ix := base.Ctxt.InnermostPos(pos).Base().InliningIndex()
	if ix < 0 {
		return ""
	}
	fn := base.Ctxt.InlTree.InlinedFunction(ix)
	const pkg = "` + CounterPath + `."
	if fn == nil || len(fn.Name) <= len(pkg) || fn.Name[:len(pkg)] != pkg {
		return ""
	}
	name := fn.Name[len(pkg):]
	for i := range len(name) {
		if name[i] == '[' {
			return name[:i]
		}
	}
	return name
}

// kprofCheckBlock reports whether b branches on one of package counter's
// checks.
func kprofCheckBlock(b *Block) bool {
	return len(b.Succs) == 2 && b.NumControls() > 0 && kprofCheck(b.Controls[0].Pos)
}

// kprofCheck reports whether pos is in one of package counter's checks.
func kprofCheck(pos src.XPos) bool {
	switch kprofCounterFunc(pos) {
	case "Due", "DueP", "DueK", "D", "TC", "TCL", "TCW", "TCLW", "VC", "VCW":
		return true
	}
	return false
}

// kprofReachesSlow reports whether c calls a slow path of package counter
// or leads to one within depth blocks of counter code that are not checks
// themselves (from, the check, excluded).
func kprofReachesSlow(c, from *Block, depth int) bool {
	for _, v := range c.Values {
		if kprofSlowCall(v) {
			return true
		}
	}
	if depth == 0 || c == from || c.NumControls() > 0 && kprofCheck(c.Controls[0].Pos) {
		return false
	}
	for _, v := range c.Values {
		// (The inline mark of SLK's body has its call's position.)
		if v.Op != OpInlMark && v.Op != OpPhi && v.Pos.IsKnown() && kprofCounterFunc(v.Pos) == "" {
			return false
		}
	}
	for _, e := range c.Succs {
		if e.b != from && kprofReachesSlow(e.b, from, depth-1) {
			return true
		}
	}
	return false
}

// kprofSlowCall reports whether v calls one of package counter's slow
// paths (S, SE, SED, SK, SD, sl).
func kprofSlowCall(v *Value) bool {
	if kprofSlow(v) {
		return true
	}
	if !opcodeTable[v.Op].call {
		return false
	}
	ac, ok := v.Aux.(*AuxCall)
	return ok && ac.Fn != nil && ac.Fn.Name == "` + CounterPath + `.SD"
}
`

// layoutPatches move the checks' slow paths out of line. Marking a
// check's slow side unlikely (likelyadjustPatches) is not enough: the
// layout schedules every predecessor of a join before the join, so the
// slow path still came right after the check, its fast path still jumped
// over it. The patched layout defers the first block of a slow path
// (kprofCold) until no successor of a block laid out is left, and lays out
// the join after the check's fast side at once (kprofJoin): the slow paths
// go towards the end of the function, and a check's fast path falls
// through.
var layoutPatches = []struct{ old, new string }{
	{
		old: "\t\t// Pick a zero-degree block if we can.\n\t\tfor len(zerodegree) > 0 {\n\t\t\t// Pop an element from the tail of the queue.\n\t\t\tcid := zerodegree[len(zerodegree)-1]\n\t\t\tzerodegree = zerodegree[:len(zerodegree)-1]\n\t\t\tif !scheduled[cid] {\n",
		new: "\t\t// Pick a zero-degree block if we can.\n\t\tfor len(zerodegree) > 0 {\n\t\t\t// Pop an element from the tail of the queue.\n\t\t\tcid := zerodegree[len(zerodegree)-1]\n\t\t\tzerodegree = zerodegree[:len(zerodegree)-1]\n\t\t\tif !scheduled[cid] && kprofCold(idToBlock[cid]) {\n\t\t\t\tkprofDeferred = append(kprofDeferred, cid)\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tif !scheduled[cid] {\n",
	},
	{
		old: "\t\tif likely != nil && !scheduled[likely.ID] {\n\t\t\tbid = likely.ID\n\t\t\tcontinue\n\t\t}\n",
		new: "\t\tif likely != nil && !scheduled[likely.ID] {\n\t\t\tbid = likely.ID\n\t\t\tcontinue\n\t\t}\n\t\tif s := kprofJoin(b); s != nil && !scheduled[s.ID] {\n\t\t\tbid = s.ID\n\t\t\tcontinue\n\t\t}\n",
	},
	{
		old: "\t\t// Still nothing, pick any non-exit block.\n",
		new: "\t\t// kprof: the checks' slow paths.\n\t\tfor len(kprofDeferred) > 0 {\n\t\t\tcid := kprofDeferred[0]\n\t\t\tkprofDeferred = kprofDeferred[1:]\n\t\t\tif !scheduled[cid] {\n\t\t\t\tbid = cid\n\t\t\t\tcontinue blockloop\n\t\t\t}\n\t\t}\n\t\t// Still nothing, pick any non-exit block.\n",
	},
	{
		old: "\tvar zerodegree []ID\n",
		new: "\tvar zerodegree []ID\n\tvar kprofDeferred []ID // first blocks of slow paths (kprofCold), in the order met\n",
	},
}

// layoutCode is appended to ssa/layout.go.
const layoutCode = `
// kprofCold reports whether b is the first block of a check's slow path:
// the unlikely side of a check (kprofLikely), entered from it alone.
func kprofCold(b *Block) bool {
	slow, ok := kprofCheckSide(b)
	return ok && slow
}

// kprofJoin returns the block where a check's fast path continues if b is
// the block on its fast side, nil otherwise. The join also follows the
// slow path, laid out later: without this, it waited behind every block
// ready before it, and the fast path jumped to it.
func kprofJoin(b *Block) *Block {
	if slow, ok := kprofCheckSide(b); ok && !slow && len(b.Succs) == 1 {
		return b.Succs[0].b
	}
	return nil
}

// kprofCheckSide reports whether b is entered from a check alone (ok) and,
// if so, whether it is the check's unlikely side, its slow path (slow).
func kprofCheckSide(b *Block) (slow, ok bool) {
	if len(b.Preds) != 1 {
		return false, false
	}
	p := b.Preds[0].b
	if !kprofCheckBlock(p) || p.Likely == BranchUnknown {
		return false, false
	}
	return (p.Likely == BranchUnlikely) == (p.Succs[0].b == b), true
}
`

// rewriteAMD64Patches merge two charges in a row into one: where a
// caller's charge before a call is followed by the entry charge of the
// callee the compiler inlined there (or by the flush of an inlined small
// leaf), two additions of constants to the count in memory, each waiting
// for the other's store, become one. Only for fields of the running
// goroutine's g (the count; two additions to one field of g, nothing
// reading memory between them, are one whoever reads the field).
var rewriteAMD64Patches = []struct{ old, new string }{
	{
		old: "func rewriteValueAMD64_OpAMD64ADDQconstmodify(v *Value) bool {\n\tv_1 := v.Args[1]\n\tv_0 := v.Args[0]\n",
		new: "func rewriteValueAMD64_OpAMD64ADDQconstmodify(v *Value) bool {\n\tif kprofMergeCharges(v) {\n\t\treturn true\n\t}\n\tv_1 := v.Args[1]\n\tv_0 := v.Args[0]\n",
	},
}

// rewriteAMD64Code is appended to ssa/rewriteAMD64.go.
const rewriteAMD64Code = `
// kprofMergeCharges rewrites (ADDQconstmodify [c1,off] (GetG) (ADDQconstmodify
// [c2,off] (GetG) mem)), in one block, as (ADDQconstmodify [c1+c2,off]
// (GetG) mem), if nothing but v uses the inner one's memory — nothing but
// inlining marks, which name a position, and GetG, the g register: those
// then take mem, and the inner one is dead.
func kprofMergeCharges(v *Value) bool {
	m := v.Args[1]
	if m.Op != OpAMD64ADDQconstmodify || m.Block != v.Block || m.Aux != v.Aux {
		return false
	}
	if v.Args[0].Op != OpGetG || m.Args[0].Op != OpGetG {
		return false
	}
	a, b := ValAndOff(v.AuxInt), ValAndOff(m.AuxInt)
	sum := int64(a.Val()) + int64(b.Val())
	if a.Off() != b.Off() || sum != int64(int32(sum)) {
		return false
	}
	uses := int32(0)
	for _, w := range v.Block.Values {
		for _, x := range w.Args {
			if x == m {
				if w != v && w.Op != OpInlMark && w.Op != OpGetG {
					return false
				}
				uses++
			}
		}
	}
	if uses != m.Uses {
		return false // a control or another block uses it
	}
	mem := m.Args[1]
	for _, w := range v.Block.Values {
		for i, x := range w.Args {
			if x == m {
				w.SetArg(i, mem)
			}
		}
	}
	v.AuxInt = valAndOffToAuxInt(makeValAndOff(int32(sum), a.Off()))
	return true
}
`

var compilerPatches = []compilerPatch{
	{"inline/inl.go", inlinerPatches, inlinerCode},
	{"ssagen/ssa.go", ssagenPatches, ssagenCode},
	{"inline/interleaved/interleaved.go", interleavedPatches, ""},
	{"ssa/regalloc.go", regallocPatches, regallocCode},
	{"ssa/branchelim.go", branchelimPatches, branchelimCode},
	{"ssa/fuse_comparisons.go", fuseComparisonsPatches, fuseComparisonsCode},
	{"ssa/rewritegeneric.go", rewritegenericPatches, rewritegenericCode},
	{"ssa/likelyadjust.go", likelyadjustPatches, likelyadjustCode},
	{"ssa/layout.go", layoutPatches, layoutCode},
	{"ssa/rewriteAMD64.go", rewriteAMD64Patches, rewriteAMD64Code},
}

// PatchedCompiler returns the path of kprof's compiler for the toolchain
// at goroot, building it into cacheDir the first time (about half a minute).
func PatchedCompiler(goroot, goVersion, cacheDir string) (string, error) {
	replace := make(map[string]string)
	patched := make(map[string][]byte)
	hash := sha256.New()
	for _, cp := range compilerPatches {
		src := filepath.Join(goroot, "src", "cmd", "compile", "internal", filepath.FromSlash(cp.file))
		data, err := os.ReadFile(src)
		if err != nil {
			return "", fmt.Errorf("kprof: reading the compiler's %s: %v", cp.file, err)
		}
		for _, p := range cp.edits {
			if bytes.Count(data, []byte(p.old)) != 1 {
				return "", fmt.Errorf("kprof: the compiler's %s in %s does not have the shape kprof patches; kprof supports %s.x only (or build with -kprof.stockcompiler)", cp.file, goVersion, SupportedGo)
			}
			data = bytes.Replace(data, []byte(p.old), []byte(p.new), 1)
		}
		data = append(data, cp.code...)
		patched[src] = data
		hash.Write(data)
	}
	h := hash.Sum(nil)
	id := goVersion + "-" + hex.EncodeToString(h[:8])
	// The go command expects the tool to be called "compile" (-V=full).
	dir := filepath.Join(cacheDir, "compile-"+id)
	exe := filepath.Join(dir, "compile")
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, "compile-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for src, data := range patched {
		name := filepath.Join(tmp, filepath.Base(src))
		if err := os.WriteFile(name, data, 0o666); err != nil {
			return "", err
		}
		replace[src] = name
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o666); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "compile")
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), "build", "-overlay", ov, "-o", out, "cmd/compile")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOOS=", "GOARCH=", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kprof: building the patched compiler: %v\n%s", err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(out, exe); err != nil {
		return "", err
	}
	return exe, nil
}
