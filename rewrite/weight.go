package rewrite

import (
	"go/types"
	"strings"

	"github.com/kprof/kprof/cost"

	"golang.org/x/tools/go/ssa"
)

// Counted reports whether an instruction counts towards the metric (see the
// package documentation, "What is counted").
func Counted(instr ssa.Instruction) bool {
	switch instr.(type) {
	case *ssa.Phi, *ssa.DebugRef:
		return false
	}
	return true
}

// Weight returns the number of counted instructions of b.
func Weight(b *ssa.BasicBlock) int64 { return WeightBy(b, nil) }

// WeightBy returns the weight of b in the metric of table t: the sum of
// its counted instructions' weights (cost.Table.Weight), or their number
// if t is nil (the instruction metric).
//
// Under a table, the blocks go/ssa adds to a function for its
// range-over-func loops to resume after the iterator returns (comment
// "rangefunc.resume…") weigh the table's scale per instruction: they are
// charged at the loop's exit statements inside the body, one block's
// weight added and another's subtracted, and a net charge there must not
// be negative (a check after it would not fire, and exact mode would
// leave the charge to the next context sampled). Nets of equal weights
// per instruction have the signs of the instruction metric's.
func WeightBy(b *ssa.BasicBlock, t *cost.Table) int64 {
	var n int64
	uniform := t == nil || strings.HasPrefix(b.Comment, "rangefunc.resume")
	for _, instr := range b.Instrs {
		if !Counted(instr) {
			continue
		}
		if uniform {
			n++
		} else {
			n += t.Weight(instr)
		}
	}
	if t != nil && uniform {
		n *= t.Scale
	}
	return n
}

// hasCall reports whether b calls, starts or defers a function that is not
// a builtin.
func hasCall(b *ssa.BasicBlock) bool { return callsBut(b, nil) }

// callsOut reports whether b calls a function that may run instrumented
// code below the caller: any call but of a builtin or of a function of an
// inert package (Options.Inert) that is passed no value through which it
// could call back. A quiet function (quietFuncs) samples in its own name,
// with its caller on the stack: a call to one calls out.
func callsOut(b *ssa.BasicBlock, inert func(string) bool) bool {
	return callsBut(b, func(c *ssa.CallCommon) bool { return inertCall(c, inert) })
}

// isLeaf reports whether no block of fn calls out (callsOut).
func isLeaf(fn *ssa.Function, inert func(string) bool) bool {
	for _, b := range fn.Blocks {
		if callsOut(b, inert) {
			return false
		}
	}
	return true
}

// callsBut reports whether b calls, starts or defers a function other
// than a builtin or one for which skip reports true.
func callsBut(b *ssa.BasicBlock, skip func(*ssa.CallCommon) bool) bool {
	for _, instr := range b.Instrs {
		switch instr := instr.(type) {
		case *ssa.Call:
			if _, builtin := instr.Call.Value.(*ssa.Builtin); !builtin && (skip == nil || !skip(&instr.Call)) {
				return true
			}
		case *ssa.Go, *ssa.Defer:
			return true
		}
	}
	return false
}

// quietCall returns the longest path of the function c calls statically
// if that is quiet (see quietFuncs), and -1 otherwise.
func quietCall(c *ssa.CallCommon, quiet map[*ssa.Function]int64) int64 {
	if n, ok := quiet[staticFunc(c)]; ok {
		return n
	}
	return -1
}

// checkedCall reports whether c statically calls a function of checked.
func checkedCall(c *ssa.CallCommon, checked map[*ssa.Function]bool) bool {
	return checked[staticFunc(c)]
}

// staticFunc returns the function c calls statically (the generic
// function for an instance, as it is instrumented once), or nil.
func staticFunc(c *ssa.CallCommon) *ssa.Function {
	if c.IsInvoke() {
		return nil
	}
	f := c.StaticCallee()
	if f != nil && f.Origin() != nil {
		f = f.Origin()
	}
	return f
}

// inertCall reports whether c statically calls a function of an inert
// package with no argument that holds a function or interface value.
func inertCall(c *ssa.CallCommon, inert func(string) bool) bool {
	if inert == nil || c.IsInvoke() {
		return false
	}
	f := c.StaticCallee()
	if f == nil || f.Object() == nil || f.Object().Pkg() == nil || !inert(f.Object().Pkg().Path()) {
		return false
	}
	seen := make(map[types.Type]bool)
	for _, a := range c.Args {
		if mayCallBack(a.Type(), seen) {
			return false
		}
	}
	return true
}

// promptCall reports whether c calls a function of an inert package
// (inertCall) that returns promptly: not one that may stop the goroutine
// (mayStop).
func promptCall(c *ssa.CallCommon, inert func(string) bool) bool {
	return inertCall(c, inert) && !mayStop(c)
}

// mayStop reports whether c may call a function of package runtime or of
// the sync packages: one that ends the goroutine (runtime.Goexit) or waits
// for others (a lock, a WaitGroup), where a goroutine may stay until the
// program exits. A function that accumulates its charges flushes them
// before such a call, so that the exit's profile has them.
func mayStop(c *ssa.CallCommon) bool {
	f := c.StaticCallee()
	if f == nil || f.Object() == nil || f.Object().Pkg() == nil {
		return true
	}
	switch f.Object().Pkg().Path() {
	case "runtime", "sync", "internal/sync", "internal/synctest":
		return true
	}
	return false
}

// mayCallBack reports whether a value of type t holds, or points to, a
// function or interface value (a type parameter might).
func mayCallBack(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "internal/abi" {
		// The type descriptors and their parts: their function fields
		// (Type.Equal, a map type's Hasher) hold functions the compiler
		// generates, never instrumented code. reflect passes them to
		// internal/abi's accessors (t.t.Kind()) on every call.
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Signature, *types.Interface, *types.TypeParam:
		return true
	case *types.Pointer:
		return mayCallBack(u.Elem(), seen)
	case *types.Slice:
		return mayCallBack(u.Elem(), seen)
	case *types.Array:
		return mayCallBack(u.Elem(), seen)
	case *types.Chan:
		return mayCallBack(u.Elem(), seen)
	case *types.Map:
		return mayCallBack(u.Key(), seen) || mayCallBack(u.Elem(), seen)
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if mayCallBack(u.Field(i).Type(), seen) {
				return true
			}
		}
	case *types.Tuple:
		for i := 0; i < u.Len(); i++ {
			if mayCallBack(u.At(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// terminates reports whether b ends the function (return or panic).
func terminates(b *ssa.BasicBlock) bool {
	if len(b.Instrs) == 0 {
		return false
	}
	switch b.Instrs[len(b.Instrs)-1].(type) {
	case *ssa.Return, *ssa.Panic:
		return true
	}
	return false
}

// panics reports whether b ends in a panic.
func panics(b *ssa.BasicBlock) bool {
	if len(b.Instrs) == 0 {
		return false
	}
	_, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Panic)
	return ok
}

// loopHeaders returns the blocks that are targets of a back edge (an edge
// to a dominator).
func loopHeaders(fn *ssa.Function) map[*ssa.BasicBlock]bool {
	h := make(map[*ssa.BasicBlock]bool)
	for _, b := range fn.Blocks {
		for _, s := range b.Succs {
			if s.Dominates(b) {
				h[s] = true
			}
		}
	}
	return h
}
