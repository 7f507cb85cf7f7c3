//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside branchelim.go.

package ssa

import (
	"cmd/compile/internal/types"
	"cmd/internal/src"
	"slices"
)

// kprofElidePushes takes the stores of pushes off the fast path where
// nothing reads what they store before the function pops: the push of an
// inlined function whose calls were all inlined too (cmp.Less, which
// calls isNaN, in the loop of slices.IsSorted). A push is "if uint(d) <
// uint(len(Stack)) { Stack[d] = fn }; Depth = d+1": once kprofPromote
// keeps the depth in a register, the store of the entry is what is left
// of it in memory — a load of the buffer's length, a compare, a branch, a
// load of its address and the store, on every call. Only a call reads the
// entries (a sample happens in a slow path's call, or below a call), and
// only those below the depth it is called at. So the store moves to where
// the entry is read: before each slow path's call that runs while the
// entry is on the stack, in the slow path; and a push some other call
// may read (a real call, a panic) keeps its store.
//
// depth is the promoted depth field, with its value at each call
// (kprofField.at) and the value before the call that each load after one
// is (kprofField.same): the depth's values then relate by constant
// offsets across calls. It runs after promotion: the pushes' indexes are
// the depth's values.
func kprofElidePushes(f *Func, depth *kprofField) {
	if depth == nil || depth.at == nil {
		return
	}
	for _, m := range []map[*Value]*Value{depth.at, depth.same} {
		for k, v := range m {
			for v.Op == OpCopy {
				v = v.Args[0]
			}
			m[k] = v
		}
	}
	// The depth's values relate through reloads after calls that nothing
	// else may use (a call right after another, a loop's phi whose body
	// only calls): deadcode frees those, and with them what they were.
	// So their relations are taken first.
	sy := kprofSyms(f, depth.same)
	sy.freeze(depth)
	deadcode(f) // (promote's copies of memory would break the chains)
	var pushes []*kprofPush
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if p := kprofPushOf(v); p != nil {
				pushes = append(pushes, p)
			}
		}
	}
	if len(pushes) == 0 {
		return
	}
	for _, p := range pushes {
		if len(sy.alts(p.idx)) != 1 {
			// A push at a depth that joins several: its index may be
			// another's, under another name. (The rewrite pushes at
			// no such depth.)
			return
		}
		p.sym = sy.of(p.idx)
	}

	// Which push wrote each entry, at each memory state: the pushes at
	// the same index (root and offset of the depth's value) that reach
	// it, nil standing for "not a push of this function" (the entry as
	// the function found it, or as a callee left it).
	type entries map[kprofSym][]*Value
	byStore := make(map[*Value]*kprofPush, len(pushes))
	for _, p := range pushes {
		byStore[p.store] = p
	}
	chains, ok := kprofChains(f, nil)
	if !ok {
		return
	}
	po := f.postorder()
	in := make(map[*Block]entries, len(po))
	out := make(map[*Block]entries, len(po))
	add := func(set []*Value, v *Value) []*Value {
		if slices.Contains(set, v) {
			return set
		}
		return append(set, v)
	}
	need := make(map[*Value][]*kprofPush) // slow calls: the entries to store before them
	// live reports whether the entry at is on the stack when c is called
	// (on some path), and sure whether that is known: c's depth relates
	// to at's root.
	live := func(c *Value, at kprofSym) (live, sure bool) {
		d, ok := depth.at[c]
		if !ok {
			return true, false
		}
		ds := sy.alts(d)
		if len(ds) == 0 {
			return true, false
		}
		for _, s := range ds {
			if s.root != at.root {
				return true, false
			}
			live = live || s.off > at.off
		}
		return live, true
	}
	var visit func(b *Block, e entries, final bool) entries
	visit = func(b *Block, e entries, final bool) entries {
		cur := make(entries, len(e))
		for k, s := range e {
			cur[k] = slices.Clone(s)
		}
		for _, m := range chains[b].mems {
			if p := byStore[m]; p != nil {
				cur[p.sym] = []*Value{m}
				continue
			}
			c := kprofCallOf(m)
			if c == nil {
				continue
			}
			// A call that does not return (a failed bounds check's
			// panic) reads the entries, for the deferred calls the panic
			// runs, but only once: its entries are stored before it, as
			// a slow path's.
			slow := kprofSlow(c) || b.Kind == BlockExit
			for at, set := range cur {
				lv, sure := live(c, at)
				if !lv && sure {
					cur[at] = []*Value{nil} // the call may write there
					continue
				}
				if !final {
					continue
				}
				// An entry that no push of f reached on some path is
				// above the depth there (f's pushes are the only ones
				// at or above its entry depth that outlive a call):
				// storing p's there writes an entry nobody reads. Where
				// c's depth does not relate to the entry's index, p's
				// might be stored over a later push's at the same
				// place: p stays on the fast path.
				var ps []*Value
				for _, s := range set {
					if s != nil {
						ps = append(ps, s)
					}
				}
				if slow && sure && len(ps) == 1 && kprofAvailable(f, byStore[ps[0]], b) {
					need[c] = append(need[c], byStore[ps[0]])
					continue
				}
				for _, s := range set {
					if s != nil {
						byStore[s].bad = true
					}
				}
			}
		}
		return cur
	}
	for changed := true; changed; {
		changed = false
		for i := len(po) - 1; i >= 0; i-- {
			b := po[i]
			// A push reaches b's start if it reaches a predecessor's
			// end; nil, if some predecessor has not pushed there.
			e := make(entries)
			var outs []entries
			for _, pe := range b.Preds {
				if o, ok := out[pe.b]; ok {
					outs = append(outs, o) // (not yet visited: optimistic)
				}
			}
			for _, o := range outs {
				for k, s := range o {
					for _, v := range s {
						e[k] = add(e[k], v)
					}
				}
			}
			for k := range e {
				for _, o := range outs {
					if _, ok := o[k]; !ok {
						e[k] = add(e[k], nil)
					}
				}
			}
			if kprofSameEntries(in[b], e) && out[b] != nil {
				continue
			}
			in[b] = e
			out[b] = visit(b, e, false)
			changed = true
		}
	}
	for _, b := range f.Blocks {
		if e, ok := in[b]; ok {
			visit(b, e, true)
		}
	}

	// Store each entry before the slow paths that read it, then take the
	// pushes' stores off the fast path.
	calls := make([]*Value, 0, len(need))
	for c := range need {
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(a, b *Value) int { return int(a.ID - b.ID) })
	if len(calls) > 0 {
		// Mark the checks' branches now: once split, a slow path no
		// longer starts with its call, where likelyadjust's
		// kprofLikely looks for it (its marks stay: likelyadjust
		// guesses only where no mark is).
		kprofLikely(f)
	}
	for _, c := range calls {
		// (A push that keeps its store needs none here.)
		ps := slices.DeleteFunc(need[c], func(p *kprofPush) bool { return p.bad })
		slices.SortFunc(ps, func(a, b *kprofPush) int { return int(a.sym.off - b.sym.off) })
		for _, p := range ps {
			kprofStoreBefore(f, c, p)
		}
	}
	for _, p := range pushes {
		if !p.bad {
			p.store.copyOf(p.store.MemoryArg())
		}
	}
	f.invalidateCFG()
}

// kprofSameEntries reports whether a and b map the same indexes to the
// same sets of pushes.
func kprofSameEntries[S ~map[kprofSym][]*Value](a, b S) bool {
	if len(a) != len(b) {
		return false
	}
	for k, s := range a {
		t, ok := b[k]
		if !ok || len(s) != len(t) {
			return false
		}
		for _, v := range s {
			if !slices.Contains(t, v) {
				return false
			}
		}
	}
	return true
}

// A kprofPush is the store of a push's entry, "if uint(idx) <
// uint(len(Stack)) { Stack[idx] = fn }", inlined from counter.P or PushAt.
type kprofPush struct {
	store *Value // Store {uintptr} (AddPtr base (Lsh idx 3)) (Convert fn mem) mem
	idx   *Value
	cond  *Value // Less64U idx (Load len)
	sym   kprofSym
	bad   bool // some call other than a slow path's may read the entry
}

// kprofPushOf returns the push whose entry v stores, if v is one.
func kprofPushOf(v *Value) *kprofPush {
	if v.Op != OpStore {
		return nil
	}
	if fn := kprofCounterFunc(v.Pos); fn != "P" && fn != "PushAt" {
		return nil
	}
	a := v.Args[0]
	if a.Op != OpAddPtr || a.Args[0].Op != OpLoad || v.Args[1].Op != OpConvert {
		return nil
	}
	if !kprofOffsets(a.Args[0].Args[0]) {
		return nil
	}
	sh := a.Args[1]
	switch sh.Op {
	case OpLsh64x64, OpLsh32x32, OpLsh64x32, OpLsh32x64:
	default:
		return nil
	}
	if !sh.Args[1].isGenericIntConst() {
		return nil
	}
	idx := sh.Args[0]
	// The bounds test that guards it: the nearest dominating If, through
	// blocks of one predecessor.
	for b := v.Block; len(b.Preds) == 1; {
		p := b.Preds[0].b
		if p.Kind == BlockIf {
			c := p.Controls[0]
			if (c.Op == OpLess64U || c.Op == OpLess32U) && c.Args[0] == idx && p.Succs[0].b == b &&
				c.Args[1].Op == OpLoad && kprofOffsets(c.Args[1].Args[0]) {
				return &kprofPush{store: v, idx: idx, cond: c}
			}
			return nil
		}
		if p.Kind != BlockPlain {
			return nil
		}
		b = p
	}
	return nil
}

// kprofStoreBefore stores p's entry before the call c, under p's bounds
// test, ahead of the stores of promoted fields that go right before c
// (which stay right before the call): c's block splits there into the
// test, the store and the rest.
func kprofStoreBefore(f *Func, c *Value, p *kprofPush) {
	b := c.Block
	first := c
	for m := c.MemoryArg(); m.Op == OpStore && m.Block == b; m = m.MemoryArg() {
		if _, ok := kprofGAddr(m.Args[0]); !ok {
			break
		}
		first = m
	}
	mem := first.MemoryArg()

	// The values that must follow: first and what depends on it in b.
	after := map[*Value]bool{first: true}
	for changed := true; changed; {
		changed = false
		for _, v := range b.Values {
			if after[v] || v.Op == OpPhi {
				continue
			}
			for _, a := range v.Args {
				if after[a] {
					after[v] = true
					changed = true
					break
				}
			}
		}
	}
	rest := f.NewBlock(b.Kind)
	rest.Pos = c.Pos
	rest.Likely = b.Likely
	rest.Aux, rest.AuxInt = b.Aux, b.AuxInt
	b.Aux, b.AuxInt = nil, 0
	rest.CopyControls(b)
	b.ResetControls()
	for i, e := range b.Succs {
		rest.Succs = append(rest.Succs, e)
		e.b.Preds[e.i] = Edge{rest, i}
	}
	b.Succs = b.Succs[:0]
	kept := b.Values[:0]
	for _, v := range b.Values {
		if after[v] {
			v.Block = rest
			rest.Values = append(rest.Values, v)
		} else {
			kept = append(kept, v)
		}
	}
	clear(b.Values[len(kept):])
	b.Values = kept

	// The test, as the push made it, on the buffer as it is now.
	pos := c.Pos
	st := p.store
	addr := st.Args[0]
	ld := addr.Args[0]   // the buffer's address
	ln := p.cond.Args[1] // its length
	length := b.NewValue2(pos, OpLoad, ln.Type, kprofGAddrAt(b, pos, ln.Args[0], mem), mem)
	test := b.NewValue2(pos, p.cond.Op, p.cond.Type, p.idx, length)
	b.Kind = BlockIf
	b.SetControl(test)
	b.Likely = BranchLikely
	put := f.NewBlock(BlockPlain)
	put.Pos = pos
	b.AddEdgeTo(put)
	b.AddEdgeTo(rest)
	put.AddEdgeTo(rest)

	sh := addr.Args[1]
	base := put.NewValue2(pos, OpLoad, ld.Type, kprofGAddrAt(put, pos, ld.Args[0], mem), mem)
	off := put.NewValue2(pos, sh.Op, sh.Type, p.idx, put.NewValue0I(pos, sh.Args[1].Op, sh.Args[1].Type, sh.Args[1].AuxInt))
	off.AuxInt = sh.AuxInt
	at := put.NewValue2(pos, OpAddPtr, addr.Type, base, off)
	fn := st.Args[1]
	val := put.NewValue2(pos, OpConvert, fn.Type, fn.Args[0], mem)
	stored := put.NewValue3A(pos, OpStore, types.TypeMem, st.Aux, at, val, mem)
	phi := rest.NewValue2(pos, OpPhi, types.TypeMem, mem, stored)
	first.SetArg(len(first.Args)-1, phi)
}

// kprofGAddrAt rebuilds a, a chain of offsets from GetG, in block b on
// memory mem.
func kprofGAddrAt(b *Block, pos src.XPos, a *Value, mem *Value) *Value {
	var offs []*Value
	for ; a.Op != OpGetG; a = a.Args[0] {
		offs = append(offs, a)
	}
	x := b.NewValue1(pos, OpGetG, a.Type, mem)
	for i := len(offs) - 1; i >= 0; i-- {
		x = b.NewValue1I(pos, OpOffPtr, offs[i].Type, offs[i].AuxInt, x)
	}
	return x
}

// A kprofSym is a value of the depth as a root value plus an offset.
type kprofSym struct {
	root *Value
	off  int64
}

// kprofSymbols relates the depth's values: each is one of a few roots
// plus an offset. A sum of a value and a constant is that value's plus
// the constant, a phi is one of its arguments' (a loop's whose body
// pushes and pops, one that joins a path that pushed lazily and one that
// did not), and any other value is a root of its own.
type kprofSymbols struct {
	phis map[*Value][]kprofSym
	same map[*Value]*Value // loads after calls: the value before the call
	// frozen holds what the values of the depth's maps (kprofField.at,
	// same) were before deadcode may have freed them (freeze).
	frozen map[*Value][]kprofSym
}

// freeze records the alternatives of the values depth's maps name, while
// they are all alive. (A phi's are kept by the phi: sy.phis.)
func (sy *kprofSymbols) freeze(depth *kprofField) {
	frozen := make(map[*Value][]kprofSym)
	for _, m := range []map[*Value]*Value{depth.at, depth.same} {
		for k, v := range m {
			frozen[v] = sy.alts(v)
			if k.Op == OpLoad {
				frozen[k] = sy.alts(k)
			}
		}
	}
	sy.frozen = frozen
}

// kprofMaxAlts bounds the values a phi may be one of; a phi with more is
// a root of its own.
const kprofMaxAlts = 4

func kprofSyms(f *Func, same map[*Value]*Value) *kprofSymbols {
	sy := &kprofSymbols{phis: make(map[*Value][]kprofSym), same: same}
	var phis []*Value
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if v.Op == OpPhi && v.Type.IsInteger() {
				phis = append(phis, v)
				sy.phis[v] = nil // (not known yet: no alternative)
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, v := range phis {
			old := sy.phis[v]
			if len(old) == 1 && old[0].root == v {
				continue // a root of its own, for good
			}
			alts := slices.Clone(old)
			for _, a := range v.Args {
				for _, s := range sy.alts(a) {
					if s.root != v && !slices.Contains(alts, s) {
						alts = append(alts, s)
					}
				}
			}
			if len(alts) > kprofMaxAlts {
				alts = []kprofSym{{v, 0}}
			}
			if len(alts) != len(old) {
				sy.phis[v] = alts
				changed = true
			}
		}
	}
	return sy
}

// alts returns the values v may be (none: a phi not known yet).
func (sy *kprofSymbols) alts(v *Value) []kprofSym {
	off := int64(0)
	for {
		if ss, ok := sy.frozen[v]; ok {
			out := make([]kprofSym, len(ss))
			for i, s := range ss {
				out[i] = kprofSym{s.root, s.off + off}
			}
			return out
		}
		if w, d, ok := kprofStep(v); ok {
			v, off = w, off+d
			continue
		}
		switch v.Op {
		case OpLoad:
			if w, ok := sy.same[v]; ok {
				v = w
				continue
			}
		case OpPhi:
			if ss, ok := sy.phis[v]; ok {
				out := make([]kprofSym, len(ss))
				for i, s := range ss {
					out[i] = kprofSym{s.root, s.off + off}
				}
				return out
			}
		}
		return []kprofSym{{v, off}}
	}
}

// of returns v as one root plus an offset: a phi that may be one of
// several is a root of its own.
func (sy *kprofSymbols) of(v *Value) kprofSym {
	if ss := sy.alts(v); len(ss) == 1 {
		return ss[0]
	}
	return kprofSym{v, 0}
}

// kprofOffsets reports whether a is offsets from GetG only.
func kprofOffsets(a *Value) bool {
	for ; a.Op == OpOffPtr; a = a.Args[0] {
	}
	return a.Op == OpGetG
}

// kprofAvailable reports whether the values p stores are available in b:
// its index and the function.
func kprofAvailable(f *Func, p *kprofPush, b *Block) bool {
	sd := f.Sdom()
	return sd.IsAncestorEq(p.idx.Block, b) && sd.IsAncestorEq(p.store.Args[1].Args[0].Block, b)
}
