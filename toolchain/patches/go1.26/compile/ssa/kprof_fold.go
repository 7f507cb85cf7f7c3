//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside branchelim.go.

package ssa

// kprofFoldCharges shortens the chain of dependent arithmetic on the
// promoted count (fl). Each charge subtracts from the count, and each check
// compares it: once promote keeps the count in a register, a loop's
// iteration is a chain of subtractions, one per charge, each waiting for
// the one before — slices.IsSorted's loop, with cmp.Less and isNaN inlined,
// ran six, and its speed was that chain's. But where a check does not
// fire, the count after it is the count before it minus constants; only
// where the check's slow path joins (a sample resets the count) does a phi
// make a new value. So at such a join, the fast path's argument, r - k,
// becomes r, the slow path's argument s becomes s + k, and the phi's uses
// take the new phi minus k: the fast path carries the same register
// through, late opt folds the constants, and the checks compare the
// count as it was with constants (x - k <= y is x <= y + k: the count
// stays far from overflow). An iteration then subtracts once.
func kprofFoldCharges(f *Func, fl *kprofField, made map[ID]bool) {
	if len(fl.phis) == 0 {
		return
	}
	slow := kprofSlowBlocks(f)
	if len(slow) == 0 {
		return
	}
	tight := kprofCallFreeLoops(f)
	kprofEvenAccumulators(f, fl, slow, tight, made)
	for _, p := range fl.phis {
		if p.Op != OpPhi || p.Block == nil || !tight[p.Block] {
			continue
		}
		b := p.Block
		var root *Value
		var off int64
		fast, cold := 0, 0
		ok := true
		for i, a := range p.Args {
			if slow[b.Preds[i].b] {
				cold++
				continue
			}
			r, k := kprofOffset(a)
			if fast == 0 {
				root, off = r, k
			} else if r != root || k != off {
				ok = false
			}
			fast++
		}
		if !ok || fast == 0 || cold == 0 || off == 0 || root == p {
			continue
		}
		for i, a := range p.Args {
			if slow[b.Preds[i].b] {
				pb := b.Preds[i].b
				c := pb.NewValue0I(a.Pos, OpConst64, a.Type, -off)
				p.SetArg(i, pb.NewValue2(a.Pos, OpAdd64, a.Type, a, c))
				made[c.ID], made[p.Args[i].ID] = true, true
			} else {
				p.SetArg(i, root)
			}
		}
		q := b.NewValue2(p.Pos, OpAdd64, p.Type, p, b.NewValue0I(p.Pos, OpConst64, p.Type, off))
		made[q.ID], made[q.Args[1].ID] = true, true
		kprofReplaceUses(f, p, q)
	}
	// The checks compare the count before the constants.
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			switch v.Op {
			case OpLeq64, OpLess64:
			default:
				continue
			}
			if !kprofCheck(v.Pos) {
				continue
			}
			for i := range 2 {
				r, k := kprofOffset(v.Args[i])
				if k == 0 || r.Type != fl.typ {
					continue
				}
				// a + k ≤ b is a ≤ b - k; a ≤ b + k is a - k ≤ b.
				o := v.Args[1-i]
				c := b.NewValue0I(v.Pos, OpConst64, o.Type, -k)
				v.SetArg(1-i, b.NewValue2(v.Pos, OpAdd64, o.Type, o, c))
				made[c.ID], made[v.Args[1-i].ID] = true, true
				v.SetArg(i, r)
				break
			}
		}
	}
}

// kprofCallFreeLoops returns the blocks of f's loops that call nothing but
// slow paths (a call that does not return, a failed bounds check's panic,
// ends a block with no successor, which is in no loop). Only there is a chain of charges carried from one
// iteration to the next (a call stores the count and loads it again); in
// other code, folding the charges costs an addition before each call,
// whose store needs the count as it is.
func kprofCallFreeLoops(f *Func) map[*Block]bool {
	ln := f.loopnest()
	if len(ln.loops) == 0 {
		return nil
	}
	calls := make(map[*loop]bool)
	for _, b := range f.Blocks {
		l := ln.b2l[b.ID]
		if l == nil {
			continue
		}
		for _, v := range b.Values {
			if opcodeTable[v.Op].call && !kprofSlowCall(v) {
				for ; l != nil; l = l.outer {
					calls[l] = true
				}
				break
			}
		}
	}
	tight := make(map[*Block]bool)
	for _, b := range f.Blocks {
		if l := ln.b2l[b.ID]; l != nil && !calls[l] {
			tight[b] = true
		}
	}
	return tight
}

// kprofOffset returns v as a root value plus a constant.
func kprofOffset(v *Value) (*Value, int64) {
	off := int64(0)
	for {
		w, d, ok := kprofStep(v)
		if !ok {
			return v, off
		}
		v, off = w, off+d
	}
}

// kprofStep returns v as w plus d, if v is a copy of w or the sum or
// difference of w and a constant.
func kprofStep(v *Value) (w *Value, d int64, ok bool) {
	switch v.Op {
	case OpCopy:
		return v.Args[0], 0, true
	case OpAdd64, OpAdd32:
		if v.Args[1].isGenericIntConst() {
			return v.Args[0], v.Args[1].AuxInt, true
		}
		if v.Args[0].isGenericIntConst() {
			return v.Args[1], v.Args[0].AuxInt, true
		}
	case OpSub64, OpSub32:
		if v.Args[1].isGenericIntConst() {
			return v.Args[0], -v.Args[1].AuxInt, true
		}
	}
	return nil, 0, false
}

// kprofReplaceUses makes every use of p but q's a use of q.
func kprofReplaceUses(f *Func, p, q *Value) {
	for _, b := range f.Blocks {
		for _, v := range b.Values {
			if v == q {
				continue
			}
			for i, a := range v.Args {
				if a == p {
					v.SetArg(i, q)
				}
			}
		}
		for i, c := range b.ControlValues() {
			if c == p {
				b.ReplaceControl(i, q)
			}
		}
	}
}

// kprofSlowBlocks returns the blocks of checks' slow paths: those a check's
// successor that leads to a slow path's call dominates.
func kprofSlowBlocks(f *Func) map[*Block]bool {
	var heads []*Block
	for _, b := range f.Blocks {
		if !kprofCheckBlock(b) {
			continue
		}
		for _, e := range b.Succs {
			if len(e.b.Preds) == 1 && kprofReachesSlow(e.b, b, 4) {
				heads = append(heads, e.b)
			}
		}
	}
	if len(heads) == 0 {
		return nil
	}
	sd := f.Sdom()
	slow := make(map[*Block]bool)
	for _, b := range f.Blocks {
		for _, h := range heads {
			if sd.IsAncestorEq(h, b) {
				slow[b] = true
				break
			}
		}
	}
	return slow
}

// kprofEvenAccumulators empties the accumulator's phis where a check's
// slow path joins in a loop that calls nothing (tight): the fast path
// brings the constant c the function accumulated, the slow path, which
// charged it with the sample, 0 (counter.SK, SED). Such a phi holds a
// register through the loop and subtracts at every charge after it (the
// register allocator may even keep the constant on the stack: slices.
// IsSorted with cmp.Less inlined into a function that calls). So each edge
// flushes what its argument holds into the count's phi (count, of field
// fl), as a flush statement would: the accumulator is 0 on every edge, and
// the fast path's count is its value minus c, which the fold below moves
// into the constants of the charges and checks after the join. (Not the
// other way, c on every edge: an inlined function's entry check compares
// the count alone, which must not stand above what ran.)
func kprofEvenAccumulators(f *Func, fl *kprofField, slow, tight map[*Block]bool, made map[ID]bool) {
	kp := kprofAccumulator(f, nil)
	if len(kp) == 0 {
		return
	}
	for _, q := range fl.phis {
		if q.Op != OpPhi || q.Block == nil || !tight[q.Block] {
			continue
		}
		b := q.Block
		for _, p := range b.Values {
			if p.Op != OpPhi || p == q || !kp[p.ID] || p.Type.Size() != 8 || len(p.Args) != len(q.Args) {
				continue
			}
			var c int64
			fast, cold, held := 0, 0, 0
			ok := true
			for i, a := range p.Args {
				if !a.isGenericIntConst() || a.AuxInt != 0 {
					held++
				}
				if slow[b.Preds[i].b] {
					cold++
					continue
				}
				if !a.isGenericIntConst() || fast > 0 && a.AuxInt != c {
					ok = false
					break
				}
				c = a.AuxInt
				fast++
			}
			if !ok || fast == 0 || cold == 0 || held == 0 {
				continue
			}
			for i, a := range p.Args {
				if a.isGenericIntConst() && a.AuxInt == 0 {
					continue
				}
				pb := b.Preds[i].b
				var n *Value
				if a.isGenericIntConst() {
					k := pb.NewValue0I(a.Pos, OpConst64, a.Type, -a.AuxInt)
					n = pb.NewValue2(a.Pos, OpAdd64, q.Type, q.Args[i], k)
					made[k.ID] = true
				} else {
					n = pb.NewValue2(a.Pos, OpSub64, q.Type, q.Args[i], a)
				}
				zero := pb.NewValue0I(a.Pos, OpConst64, a.Type, 0)
				made[n.ID], made[zero.ID] = true, true
				q.SetArg(i, n)
				p.SetArg(i, zero)
			}
		}
	}
}
