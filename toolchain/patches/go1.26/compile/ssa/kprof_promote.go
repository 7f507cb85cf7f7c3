//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside branchelim.go.

package ssa

import (
	"cmd/compile/internal/base"
	"cmd/compile/internal/types"
	"cmd/internal/src"
	"strings"
)

// kprofPromote keeps the fields of the running goroutine's g that kprof's
// inlined counter code updates (the count, the reified stack's depth) in
// registers between calls: a charge, a check, a push and a pop become
// register arithmetic instead of read-modify-writes of memory, each of
// which waited for the one before it (a chain of store-to-load forwards
// through the loop of every instrumented function that inlines a call).
//
// Nothing but a call reads or writes those fields: package counter's
// inlined code reaches them through the g register only (kprofFields
// checks that no other access and no address of them escapes), its slow
// paths are calls, and so are the runtime's entries that read them. So
// the field is loaded at the function's entry, stored before every call
// (when it changed since it was loaded) and at every return, and loaded
// again after every call; the loads and stores of the function become
// the values they load and store (SSA construction over the blocks, one
// phi per join).
//
// What it changes that is observable: a goroutine that another reads
// while it runs (the agent's profiles of running programs, which stop
// the world or claim other goroutines' counts at exit) shows what it had
// stored at its last call, not what it ran since; and a runtime error
// that unwinds the function (a nil dereference) leaves what it charged
// since its last call uncounted — as the local accumulator of package
// rewrite already does. It returns the values it made and those it gave
// the field, for branchelim (kprofAccumulator).
//
// Only fields that a loop of f updates on its fast path are kept in
// registers (kprofLooping).
func kprofPromote(f *Func) map[ID]bool {
	if len(kprofFields(f)) == 0 {
		return nil
	}
	if len(f.postorder()) != len(f.Blocks) {
		deadcode(f) // (every predecessor of a join gives its phi an argument)
	}
	fields := kprofLooping(f, kprofFields(f))
	if len(fields) == 0 {
		return nil
	}
	chains, ok := kprofChains(f, fields)
	if !ok {
		return nil
	}
	made := make(map[ID]bool)
	var depth *kprofField
	for _, fl := range fields {
		if fl.kprofIsDepth() {
			fl.at, fl.same = make(map[*Value]*Value), make(map[*Value]*Value)
			depth = fl
		}
		fl.promote(f, chains, made)
	}
	copyelim(f)
	for _, fl := range fields {
		if fl != depth {
			kprofFoldCharges(f, fl, made)
		}
	}
	kprofElidePushes(f, depth)
	return made
}

// kprofOuter returns the position of the outermost inlined call that holds
// pos, in the compiled function's own code (pos itself if it is there), as
// a position that is no statement.
func kprofOuter(pos src.XPos) src.XPos {
	if !pos.IsKnown() {
		return pos
	}
	ix := base.Ctxt.InnermostPos(pos).Base().InliningIndex()
	if ix < 0 {
		return pos.WithNotStmt()
	}
	for p := base.Ctxt.InlTree.Parent(ix); p >= 0; p = base.Ctxt.InlTree.Parent(ix) {
		ix = p
	}
	return base.Ctxt.InlTree.CallPos(ix).WithNotStmt()
}

// A kprofField is a field of g, at offset off, that f's inlined counter
// code loads and stores, and nothing else in f reaches.
type kprofField struct {
	off            int64
	typ            *types.Type // the field's type (loads and stores agree)
	gTyp, addrType *types.Type // of GetG and of the field's address
	loads, stores  []*Value
	// For the stack's depth (pushes and pops store it): its value at
	// each call, once promoted, and the values it is loaded again after
	// a call that are the value before the call (kprofElidePushes): a
	// function that returns normally leaves the depth as it found it
	// (rewrite/doc.go, "Pops"), the slow paths' calls too; not a push or
	// a pop of package counter that the compiler did not inline
	// (kprofMovesDepth). (The load after the call stays: keeping the
	// value instead would keep it live across the call, a spill.)
	at, same map[*Value]*Value
	// The phis promote made for it.
	phis []*Value
}

// kprofMovesDepth reports whether the call c may return with another
// depth than it was called at: a call of package counter's that was not
// inlined (a push or a pop compiled without inlining) other than its slow
// paths, which leave the depth as they found it.
func kprofMovesDepth(c *Value) bool {
	ac, ok := c.Aux.(*AuxCall)
	if !ok || ac.Fn == nil || kprofSlow(c) {
		return false
	}
	return strings.HasPrefix(ac.Fn.Name, "github.com/kprof/kprof/counter.")
}

// kprofIsDepth reports whether fl is the stack's depth: pushes and pops
// store it.
func (fl *kprofField) kprofIsDepth() bool {
	for _, st := range fl.stores {
		switch kprofCounterFunc(st.Pos) {
		case "P", "PushAt", "Pop":
			return true
		}
	}
	return false
}

// kprofGAddr returns the offset from the g register of the address p, if p
// is an offset from GetG.
func kprofGAddr(p *Value) (int64, bool) {
	off := int64(0)
	for {
		switch p.Op {
		case OpCopy, OpNilCheck:
			p = p.Args[0]
		case OpOffPtr:
			off += p.AuxInt
			p = p.Args[0]
		case OpGetG:
			return off, true
		default:
			return 0, false
		}
	}
}

// kprofFields returns the fields of g that f may keep in registers: every
// access is a load or a store of the same 8-byte integer type, at a
// position in code inlined from package counter, at least one of them a
// store, and no address from the g register reaches anything but loads'
// and stores' addresses (an escaping address could reach any field).
func kprofFields(f *Func) []*kprofField {
	byOff := make(map[int64]*kprofField)
	var order []int64
	bad := make(map[int64]bool) // offsets accessed otherwise
	var gTyp *types.Type
	field := func(off int64, v *Value, t, addrType *types.Type) *kprofField {
		fl := byOff[off]
		if fl == nil {
			fl = &kprofField{off: off, typ: t, addrType: addrType}
			byOff[off] = fl
			order = append(order, off)
		}
		if !t.IsInteger() || t.Size() != 8 || !types.Identical(fl.typ, t) || kprofCounterFunc(v.Pos) == "" {
			bad[off] = true
		}
		return fl
	}
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if v.Op == OpGetG {
				gTyp = v.Type
			}
			for i, a := range v.Args {
				off, ok := kprofGAddr(a)
				if !ok {
					continue
				}
				switch {
				case v.Op == OpCopy || v.Op == OpNilCheck || v.Op == OpOffPtr:
					// Part of an address: its own uses are checked.
				case v.Op == OpLoad && i == 0:
					fl := field(off, v, v.Type, a.Type)
					fl.loads = append(fl.loads, v)
				case v.Op == OpStore && i == 0:
					t, _ := v.Aux.(*types.Type)
					if t == nil {
						return nil
					}
					fl := field(off, v, t, a.Type)
					fl.stores = append(fl.stores, v)
				default:
					return nil // an address escapes
				}
			}
		}
		for _, c := range b.ControlValues() {
			if _, ok := kprofGAddr(c); ok {
				return nil
			}
		}
	}
	if gTyp == nil {
		return nil
	}
	var out []*kprofField
	for _, off := range order {
		fl := byOff[off]
		if bad[off] || len(fl.stores) == 0 {
			continue
		}
		// No other access may overlap this field's 8 bytes.
		overlap := false
		for _, o := range order {
			if o != off && o < off+8 && off < o+byOff[o].typ.Size() {
				overlap = true
			}
		}
		if overlap {
			continue
		}
		fl.gTyp = gTyp
		out = append(out, fl)
	}
	return out
}

// kprofLooping returns the fields that f updates in a loop on the fast
// path: stores of them in a loop, not in SLK's body (the exact mode's
// shortcut of a loop header's slow path). A register pays off where a
// loop would chain read-modify-writes of the field through memory; in a
// loop that only reads it (its checks compare the count with a function's
// local accumulator), it would be one more register live across the loop,
// and the loop's other values would spill (compress/flate's findMatch).
func kprofLooping(f *Func, fields []*kprofField) []*kprofField {
	if len(fields) == 0 {
		return nil
	}
	ln := f.loopnest()
	var out []*kprofField
	for _, fl := range fields {
		for _, st := range fl.stores {
			if ln.b2l[st.Block.ID] != nil && kprofCounterFunc(st.Pos) != "SLK" {
				out = append(out, fl)
				break
			}
		}
	}
	return out
}

// A kprofChain is a block's memory states in the order they take effect,
// and the memory live at the block's start (nil: the chain starts with a
// memory phi or the entry's initial memory).
type kprofChain struct {
	mems []*Value
	in   *Value
}

// kprofPrevMem returns the memory state m follows: its memory argument,
// or its call's or tuple op's for a selection of one.
func kprofPrevMem(m *Value) *Value {
	switch m.Op {
	case OpPhi, OpInitMem:
		return nil
	case OpSelectN, OpSelect1:
		return m.Args[0].MemoryArg()
	}
	return m.MemoryArg()
}

// kprofChains orders every block's memory states: values of type memory,
// and calls whose memory no selection takes (a tail call's). It reports
// false if some block's do not make one chain, or a load of a promoted
// field uses a memory state that is neither in its block's chain nor
// live at its start.
func kprofChains(f *Func, fields []*kprofField) (map[*Block]*kprofChain, bool) {
	selected := make(map[*Value]bool)
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if (v.Op == OpSelectN || v.Op == OpSelect1) && v.Type == types.TypeMem {
				selected[v.Args[0]] = true
			}
		}
	}
	chains := make(map[*Block]*kprofChain, len(f.Blocks))
	for _, b := range f.Blocks {
		var mems []*Value
		for _, v := range b.Values {
			if v.Type == types.TypeMem || v.Type.IsMemory() && opcodeTable[v.Op].call && !selected[v] {
				mems = append(mems, v)
			}
		}
		ch := &kprofChain{}
		chains[b] = ch
		if len(mems) == 0 {
			continue
		}
		next := make(map[*Value]*Value, len(mems))
		in := make(map[*Value]bool, len(mems))
		for _, m := range mems {
			in[m] = true
		}
		var first *Value
		for _, m := range mems {
			p := kprofPrevMem(m)
			if p != nil && in[p] {
				if next[p] != nil {
					return nil, false
				}
				next[p] = m
				continue
			}
			if first != nil {
				return nil, false
			}
			first = m
			ch.in = p
		}
		for m := first; m != nil; m = next[m] {
			ch.mems = append(ch.mems, m)
		}
		if len(ch.mems) != len(mems) {
			return nil, false
		}
	}
	for _, b := range f.Blocks {
		// A return's results are its own (the store goes before them).
		if b.Kind == BlockRet {
			c := b.Controls[0]
			if c.Type != types.TypeMem && (c.Block != b || c.Uses != 1) {
				return nil, false
			}
		}
	}
	for _, fl := range fields {
		for _, v := range fl.loads {
			ch := chains[v.Block]
			m := v.Args[1]
			if m.Block != v.Block && len(ch.mems) > 0 && m != ch.in {
				return nil, false
			}
		}
	}
	return chains, true
}

// kprofCallOf returns the call whose memory m is, if m is a call's.
func kprofCallOf(m *Value) *Value {
	if m.Op == OpSelectN || m.Op == OpSelect1 {
		m = m.Args[0]
	}
	if opcodeTable[m.Op].call {
		return m
	}
	return nil
}

// promote keeps fl in a register in f (see kprofPromote); made collects
// the values it made and those it gave the field.
func (fl *kprofField) promote(f *Func, chains map[*Block]*kprofChain, made map[ID]bool) {
	isLoad := make(map[*Value]bool, len(fl.loads))
	for _, v := range fl.loads {
		isLoad[v] = true
	}
	isStore := make(map[*Value]bool, len(fl.stores))
	for _, v := range fl.stores {
		isStore[v] = true
	}
	po := f.postorder()
	rpo := make([]*Block, len(po))
	for i, b := range po {
		rpo[len(po)-1-i] = b
	}

	// Whether the register holds what memory does not, at each block's
	// end: a store makes it dirty, the store before a call clean.
	dirtyOut := make(map[*Block]bool, len(rpo))
	dirtyIn := func(b *Block) bool {
		for _, e := range b.Preds {
			if dirtyOut[e.b] {
				return true
			}
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for _, b := range rpo {
			d := dirtyIn(b)
			for _, m := range chains[b].mems {
				if isStore[m] {
					d = true
				} else if kprofCallOf(m) != nil {
					d = false
				}
			}
			if d && !dirtyOut[b] {
				dirtyOut[b] = true
				changed = true
			}
		}
	}

	addr := func(b *Block, pos src.XPos, mem *Value) *Value {
		g := b.NewValue1(pos, OpGetG, fl.gTyp, mem)
		return b.NewValue1I(pos, OpOffPtr, fl.addrType, fl.off, g)
	}
	store := func(b *Block, v, cv, mem *Value) *Value {
		st := b.NewValue3A(v.Pos, OpStore, types.TypeMem, fl.typ, addr(b, v.Pos, mem), cv, mem)
		made[st.ID] = true
		return st
	}
	load := func(b *Block, pos src.XPos, mem *Value) *Value {
		ld := b.NewValue2(pos, OpLoad, fl.typ, addr(b, pos, mem), mem)
		made[ld.ID] = true
		return ld
	}
	var initMem *Value
	for _, v := range f.Entry.Values {
		if v.Op == OpInitMem {
			initMem = v
		}
	}
	first := fl.stores[0]
	if len(fl.loads) > 0 {
		first = fl.loads[0]
	}
	entryLoad := load(f.Entry, first.Pos, initMem)

	out := make(map[*Block]*Value, len(rpo))
	phis := make(map[*Block]*Value)
	for _, b := range rpo {
		var cv *Value
		switch {
		case b == f.Entry:
			cv = entryLoad
		case len(b.Preds) == 1:
			cv = out[b.Preds[0].b]
		default:
			cv = b.NewValue0(b.Pos, OpPhi, fl.typ)
			made[cv.ID] = true
			phis[b] = cv
			fl.phis = append(fl.phis, cv)
		}
		cvIn := cv
		dirty := dirtyIn(b)
		ch := chains[b]
		after := make(map[*Value]*Value, len(ch.mems))
		for _, m := range ch.mems {
			switch c := kprofCallOf(m); {
			case isStore[m]:
				cv = m.Args[1]
				if !cv.isGenericIntConst() {
					made[cv.ID] = true
				}
				m.copyOf(m.Args[2])
				dirty = true
			case c != nil:
				mem := c.MemoryArg()
				if fl.at != nil {
					fl.at[c] = cv
				}
				if dirty {
					c.SetArg(len(c.Args)-1, store(b, c, cv, mem))
					dirty = false
				}
				if m.Type == types.TypeMem {
					// The reload is the instruction the call returns
					// to: at the call's position inside an inlined
					// body, runtime.FuncForPC of the return address
					// would name that body where plain Go names the
					// function it returns into (logrus finds its own
					// package so: the closure that calls the inlined
					// runtime.Callers). kprofOuter puts it in f's own
					// code.
					before := cv
					cv = load(b, kprofOuter(c.Pos), m)
					if fl.at != nil && !kprofMovesDepth(c) {
						fl.same[cv] = before
					}
				}
			}
			after[m] = cv
		}
		for _, v := range b.Values {
			if !isLoad[v] {
				continue
			}
			if x, ok := after[v.Args[1]]; ok {
				v.copyOf(x)
			} else {
				v.copyOf(cvIn)
			}
		}
		if b.Kind == BlockRet && dirty {
			c := b.Controls[0]
			if c.Type == types.TypeMem {
				b.SetControl(store(b, c, cv, c))
			} else if n := len(c.Args); n > 0 && c.Args[n-1].Type == types.TypeMem {
				c.SetArg(n-1, store(b, c, cv, c.Args[n-1]))
			} else {
				f.Fatalf("kprof: return %s without memory", c)
			}
		}
		out[b] = cv
	}
	for b, phi := range phis {
		for _, e := range b.Preds {
			phi.AddArg(out[e.b])
		}
	}
}
