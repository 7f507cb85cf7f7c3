package cost

import (
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Classes are the instruction classes a table weighs, in table order.
var Classes = []string{
	"int.arith",      // + - & | ^ &^ << >> on integers, unary - ^ !
	"int.mul",        // * on integers
	"int.div",        // / % on integers by a variable
	"int.divconst",   // / % on integers by a constant
	"int.cmp",        // comparisons of integers, booleans, pointers, channels
	"float.arith",    // + - * on floats, unary -
	"float.div",      // / on floats
	"float.cmp",      // comparisons of floats
	"complex",        // arithmetic and comparisons of complex numbers
	"string.cmp",     // comparisons of strings
	"string.concat",  // + on strings
	"value.cmp",      // == != of interfaces, arrays and structs
	"load",           // *p
	"store",          // *p = v
	"local.load",     // a load from a local variable (a register, mostly)
	"local.store",    // a store to a local variable
	"local.addr",     // the address of a field or constant element of a local variable
	"recv",           // <-ch
	"fieldaddr",      // &x.f
	"field",          // x.f of a struct value
	"indexaddr",      // &a[i] of a slice, array pointer or array: bounds-checked
	"index",          // a[i] of an array value or a string: bounds-checked
	"slice",          // a[i:j]
	"convert.num",    // conversions between numeric types
	"convert.string", // string(b), []byte(s), []rune(s), string(r)
	"changetype",     // conversions that change no representation
	"iface.make",     // a pointer-shaped or constant value to an interface
	"iface.box",      // any other value to an interface: may allocate
	"iface.change",   // an interface to another interface type
	"assert.type",    // x.(T) with T a concrete type
	"assert.iface",   // x.(I) with I an interface
	"extract",        // one result of a tuple
	"call.static",    // a call of a function known statically
	"call.inline",    // a call the compiler inlines (known from its -m diagnostics)
	"call.uncounted", // a static call of code the build does not count (the runtime's packages): its time
	"call.closure",   // a call of a function value
	"call.invoke",    // a call of an interface method
	"call.builtin",   // len, cap, min, max and the like
	"call.append",    // append(s, t...): a copy (growth charged as the class only)
	"append.value",   // append(s, v, …) of listed values (growth charged as the class only)
	"call.copy",      // copy, clear
	"go",             // go statement
	"defer",          // defer statement
	"rundefers",      // deferred calls run at return
	"panic",          // panic
	"alloc.local",    // a variable that may live on the stack
	"alloc.heap",     // a heap allocation: per object
	"alloc.byte",     // per byte of a heap allocation of a constant size
	"make.slice",     // make([]T, …)
	"make.map",       // make(map…)
	"make.chan",      // make(chan…)
	"make.closure",   // a closure with free variables
	"map.lookup",     // m[k]
	"map.update",     // m[k] = v
	"range",          // the start of a range over a map or string
	"next",           // one step of a range over a map or string
	"send",           // ch <- v
	"select",         // select statement
	"jump",           // unconditional branch
	"if",             // conditional branch
	"return",         // return
	"return.inline",  // return from a function the compiler can inline
	"other",          // anything else (and classes a table leaves out)
}

var sizes = types.SizesFor("gc", "amd64")

// Classify returns the class of a counted instruction (see package
// rewrite, "What is counted") and, for a heap allocation of a constant
// size, its size in bytes.
func Classify(instr ssa.Instruction) (class string, bytes int64) { return classify(instr, nil, nil) }

// classify is Classify with the compiler's escape analysis, if esc is
// not nil (an allocation it keeps on the stack weighs alloc.local, a call
// it inlines call.inline), and the packages the build does not count, if
// uncounted is not nil (Table.WithUncounted).
func classify(instr ssa.Instruction, esc *Escapes, uncounted *uncountedCode) (class string, bytes int64) {
	if esc != nil && onStack(instr, esc) || appendsValues(instr) {
		return "alloc.local", 0
	}
	switch in := instr.(type) {
	case *ssa.BinOp:
		return binOp(in), 0
	case *ssa.UnOp:
		switch in.Op {
		case token.MUL:
			if local(in.X) {
				return "local.load", 0
			}
			return "load", 0
		case token.ARROW:
			return "recv", 0
		}
		switch kind(in.Type()) {
		case kFloat:
			return "float.arith", 0
		case kComplex:
			return "complex", 0
		}
		return "int.arith", 0
	case *ssa.Store:
		if local(in.Addr) {
			return "local.store", 0
		}
		return "store", 0
	case *ssa.FieldAddr:
		if local(in.X) {
			return "local.addr", 0
		}
		return "fieldaddr", 0
	case *ssa.Field:
		return "field", 0
	case *ssa.IndexAddr:
		if _, ok := in.Index.(*ssa.Const); ok && local(in.X) {
			return "local.addr", 0
		}
		return "indexaddr", 0
	case *ssa.Index:
		return "index", 0
	case *ssa.Slice:
		return "slice", 0
	case *ssa.SliceToArrayPointer:
		return "slice", 0
	case *ssa.Convert:
		from, to := in.X.Type().Underlying(), in.Type().Underlying()
		if isString(from) || isString(to) {
			return "convert.string", 0
		}
		if isNumeric(from) && isNumeric(to) {
			return "convert.num", 0
		}
		return "changetype", 0
	case *ssa.MultiConvert:
		return "convert.num", 0
	case *ssa.ChangeType:
		return "changetype", 0
	case *ssa.MakeInterface:
		if _, ok := in.X.(*ssa.Const); ok || pointerShaped(in.X.Type()) {
			return "iface.make", 0
		}
		return "iface.box", 0
	case *ssa.ChangeInterface:
		return "iface.change", 0
	case *ssa.TypeAssert:
		if types.IsInterface(in.AssertedType) {
			return "assert.iface", 0
		}
		return "assert.type", 0
	case *ssa.Extract:
		return "extract", 0
	case *ssa.Call:
		if esc != nil && esc.inlinedCall(in) {
			if uncounted != nil && uncountedCall(&in.Call, uncounted) && callsBodiless(in.Call.StaticCallee(), uncounted.goroot) {
				return "call.uncounted", 0 // a wrapper of uncounted code
			}
			return "call.inline", 0
		}
		if uncounted != nil && uncountedCall(&in.Call, uncounted) {
			return "call.uncounted", 0
		}
		return callClass(&in.Call), 0
	case *ssa.Go:
		return "go", 0
	case *ssa.Defer:
		return "defer", 0
	case *ssa.RunDefers:
		return "rundefers", 0
	case *ssa.Panic:
		return "panic", 0
	case *ssa.Alloc:
		if !in.Heap {
			return "alloc.local", 0
		}
		return "alloc.heap", sizeof(deref(in.Type()))
	case *ssa.MakeSlice:
		if n, ok := in.Len.(*ssa.Const); ok {
			if c, ok := in.Cap.(*ssa.Const); ok && c.Value != nil && n.Value != nil {
				if k, exact := constant.Int64Val(c.Value); exact && k >= 0 {
					return "make.slice", k * sizeof(in.Type().Underlying().(*types.Slice).Elem())
				}
			}
		}
		return "make.slice", 0
	case *ssa.MakeMap:
		return "make.map", 0
	case *ssa.MakeChan:
		return "make.chan", 0
	case *ssa.MakeClosure:
		return "make.closure", 0
	case *ssa.Lookup:
		if _, ok := in.X.Type().Underlying().(*types.Map); ok {
			return "map.lookup", 0
		}
		return "index", 0
	case *ssa.MapUpdate:
		return "map.update", 0
	case *ssa.Range:
		return "range", 0
	case *ssa.Next:
		return "next", 0
	case *ssa.Send:
		return "send", 0
	case *ssa.Select:
		return "select", 0
	case *ssa.Jump:
		return "jump", 0
	case *ssa.If:
		return "if", 0
	case *ssa.Return:
		if esc != nil && esc.inlinableFunc(in.Parent()) {
			return "return.inline", 0
		}
		return "return", 0
	}
	return "other", 0
}

// Weight returns what the instruction weighs in t: its class's weight,
// plus alloc.byte per byte of a heap allocation of a constant size, but
// for a slice that make allocates where the table has the runtime charge
// its bytes (see "Run-time charges"). It is at least 1.
func (t *Table) Weight(instr ssa.Instruction) int64 {
	c, n := classify(instr, t.esc, t.uncounted)
	w := t.Class(c)
	if _, perByte := t.Growth(); n > 0 && !(perByte > 0 && makesSlice(instr)) {
		w += n * t.Class("alloc.byte")
	}
	return max(w, 1)
}

// makesSlice reports whether instr is a make of a slice: on the heap, the
// compiler calls the runtime's makeslice, whatever its size.
func makesSlice(instr ssa.Instruction) bool {
	switch in := instr.(type) {
	case *ssa.MakeSlice:
		return true
	case *ssa.Alloc:
		return in.Comment == "makeslice"
	}
	return false
}

// onStack reports whether instr is an allocation go/ssa puts on the heap
// and the compiler, by esc, on the stack.
func onStack(instr ssa.Instruction, esc *Escapes) bool {
	switch in := instr.(type) {
	case *ssa.Alloc:
		if !in.Heap || !in.Pos().IsValid() {
			return false
		}
		switch in.Comment {
		case "complit", "new", "makeslice", "slicelit":
			heap, known := esc.site(in.Pos())
			return known && !heap
		case "varargs":
			// (go/ssa gives it no position: the call it is passed to
			// has one.)
			return varargsOnStack(in, esc)
		}
		// A variable: the compiler says which it moves.
		return !esc.movedVar(in.Pos())
	case *ssa.MakeSlice:
		heap, known := esc.site(in.Pos())
		return known && !heap
	case *ssa.MakeClosure:
		// The compiler reports every closure it makes: none where it
		// inlined the literal's calls.
		if fn, ok := in.Fn.(*ssa.Function); ok && fn.Pos().IsValid() {
			heap, _ := esc.site(fn.Pos())
			return !heap
		}
	}
	return false
}

// varargsOnStack reports whether the compiler keeps the array a of a
// variadic call's arguments off the heap, as its escape analysis says.
func varargsOnStack(a *ssa.Alloc, esc *Escapes) bool {
	for _, r := range *a.Referrers() {
		sl, ok := r.(*ssa.Slice)
		if !ok {
			continue
		}
		for _, u := range *sl.Referrers() {
			call, ok := u.(ssa.CallInstruction)
			if !ok {
				continue
			}
			heap, known := esc.varargs[call.Pos()]
			return known && !heap
		}
	}
	return false
}

// appendsValues reports whether instr is the array go/ssa makes of the
// values append(s, v, …) appends: the compiler makes none, it stores the
// values in place.
func appendsValues(instr ssa.Instruction) bool {
	a, ok := instr.(*ssa.Alloc)
	if !ok || a.Comment != "varargs" {
		return false
	}
	for _, r := range *a.Referrers() {
		if sl, ok := r.(*ssa.Slice); ok {
			for _, u := range *sl.Referrers() {
				if call, ok := u.(ssa.CallInstruction); ok {
					b, ok := call.Common().Value.(*ssa.Builtin)
					return ok && b.Name() == "append"
				}
			}
		}
	}
	return false
}

// local reports whether v addresses (part of) a variable go/ssa keeps in
// the frame (an Alloc that is not Heap): go/ssa builds a struct or array
// parameter or variable as such a variable with loads and stores, where
// the compiler keeps the fields in registers.
func local(v ssa.Value) bool {
	switch v := v.(type) {
	case *ssa.Alloc:
		return !v.Heap
	case *ssa.FieldAddr:
		return local(v.X)
	case *ssa.IndexAddr:
		if _, ok := v.Index.(*ssa.Const); ok {
			return local(v.X)
		}
	}
	return false
}

func binOp(in *ssa.BinOp) string {
	k := kind(in.X.Type())
	switch in.Op {
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
		if isNil(in.X) || isNil(in.Y) {
			// err != nil: one word compared with 0.
			return "int.cmp"
		}
		switch k {
		case kFloat:
			return "float.cmp"
		case kComplex:
			return "complex"
		case kString:
			return "string.cmp"
		case kValue:
			return "value.cmp"
		}
		return "int.cmp"
	}
	switch k {
	case kFloat:
		if in.Op == token.QUO {
			return "float.div"
		}
		return "float.arith"
	case kComplex:
		return "complex"
	case kString:
		return "string.concat"
	}
	switch in.Op {
	case token.MUL:
		return "int.mul"
	case token.QUO, token.REM:
		if c, ok := in.Y.(*ssa.Const); ok {
			if powerOfTwo(c) {
				// A shift or a mask (and a sign fix-up).
				return "int.arith"
			}
			return "int.divconst"
		}
		return "int.div"
	}
	return "int.arith"
}

const (
	kInt = iota
	kFloat
	kComplex
	kString
	kValue // interface, array, struct: compared by the runtime or word by word
)

func kind(t types.Type) int {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsFloat != 0:
			return kFloat
		case u.Info()&types.IsComplex != 0:
			return kComplex
		case u.Info()&types.IsString != 0:
			return kString
		}
	case *types.Interface:
		if tp, ok := t.(*types.TypeParam); ok {
			return typeSetKind(tp)
		}
		return kValue
	case *types.Array, *types.Struct:
		return kValue
	}
	return kInt
}

// typeSetKind returns the kind of a type parameter's values: the kind all
// the types of its constraint's type set share, or kInt where they differ
// (cmp.Ordered: the compiler stencils a body per shape, and integers are
// what most instantiations have) or the set is unrestricted (any,
// comparable: most type arguments are pointer-shaped or integers).
func typeSetKind(tp *types.TypeParam) int {
	var terms []types.Type
	var collect func(t types.Type, depth int)
	collect = func(t types.Type, depth int) {
		if depth > 8 {
			return
		}
		switch u := t.Underlying().(type) {
		case *types.Interface:
			for i := 0; i < u.NumEmbeddeds(); i++ {
				collect(u.EmbeddedType(i), depth+1)
			}
		case *types.Union:
			for i := 0; i < u.Len(); i++ {
				collect(u.Term(i).Type(), depth+1)
			}
		default:
			terms = append(terms, t)
		}
	}
	collect(tp.Constraint(), 0)
	k := kInt
	for i, t := range terms {
		tk := kInt
		if _, ok := t.Underlying().(*types.TypeParam); !ok {
			tk = kind(t)
		}
		if i > 0 && tk != k {
			return kInt
		}
		k = tk
	}
	return k
}

// powerOfTwo reports whether c is an integer constant 2^k, k ≥ 0.
func powerOfTwo(c *ssa.Const) bool {
	if c.Value == nil || c.Value.Kind() != constant.Int {
		return false
	}
	v, exact := constant.Uint64Val(c.Value)
	return exact && v != 0 && v&(v-1) == 0
}

// isNil reports whether v is the constant nil.
func isNil(v ssa.Value) bool {
	c, ok := v.(*ssa.Const)
	return ok && c.IsNil()
}

func isString(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

func isNumeric(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsNumeric != 0
}

// pointerShaped reports whether a value of type t fits an interface's data
// word without an allocation.
func pointerShaped(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Chan, *types.Signature:
		return true
	case *types.Basic:
		return u.Kind() == types.UnsafePointer
	case *types.TypeParam:
		return false
	}
	return false
}

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// sizeof returns the size of t, or 0 where the gc sizes cannot compute
// one (a type parameter's, in a generic body).
func sizeof(t types.Type) (n int64) {
	defer func() {
		if recover() != nil {
			n = 0
		}
	}()
	return sizes.Sizeof(t)
}

// uncountedCall reports whether c statically calls a function of a
// package the build does not count.
func uncountedCall(c *ssa.CallCommon, uncounted *uncountedCode) bool {
	fn := c.StaticCallee()
	if fn == nil || c.IsInvoke() {
		return false
	}
	if fn.Origin() != nil {
		fn = fn.Origin()
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok || obj.Pkg() == nil {
		return false // (a wrapper or a function literal: counted code)
	}
	path := obj.Pkg().Path()
	return uncounted.pkg(path) && !intrinsicPackages[path]
}

// intrinsicPackages are packages whose functions the gc compiler replaces
// by machine instructions (cmd/compile's intrinsics: bits.Mul64 is a
// MULQ), or inlines, without a report from -m: a call of them is no call.
var intrinsicPackages = map[string]bool{
	"math/bits":               true,
	"sync/atomic":             true,
	"internal/runtime/atomic": true,
	"internal/runtime/sys":    true,
	"internal/runtime/math":   true,
	"unsafe":                  true,
}

// spread reports whether the append c appends a slice (append(s, t...),
// append(b, str...)) rather than listed values: go/ssa passes listed
// values as a slice it allocates (a "varargs" Alloc), or nil for none.
func spread(c *ssa.CallCommon) bool {
	if len(c.Args) < 2 {
		return false
	}
	switch v := c.Args[1].(type) {
	case *ssa.Const:
		return !v.IsNil()
	case *ssa.Slice:
		a, ok := v.X.(*ssa.Alloc)
		return !ok || a.Comment != "varargs"
	}
	return true
}

func callClass(c *ssa.CallCommon) string {
	if c.IsInvoke() {
		return "call.invoke"
	}
	switch v := c.Value.(type) {
	case *ssa.Builtin:
		switch v.Name() {
		case "append":
			if !spread(c) {
				return "append.value"
			}
			return "call.append"
		case "copy", "clear":
			return "call.copy"
		}
		return "call.builtin"
	case *ssa.Function:
		return "call.static"
	case *ssa.MakeClosure:
		return "call.static"
	}
	return "call.closure"
}
