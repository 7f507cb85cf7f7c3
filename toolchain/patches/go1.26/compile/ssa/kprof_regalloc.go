//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside regalloc.go.

package ssa

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
	case "github.com/kprof/kprof/counter.SE", "github.com/kprof/kprof/counter.sl", "github.com/kprof/kprof/counter.SK", "github.com/kprof/kprof/counter.S", "github.com/kprof/kprof/counter.SED":
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
		if !kprofHasReg(s.allocatable, r) || st.v == nil || kprofHasReg(done, r) {
			continue
		}
		vi := &s.values[st.v.ID]
		if vi.uses == nil || vi.rematerializeable {
			continue
		}
		done = kprofUnion(done, vi.regs)
		// Through a copy in the same register (no instruction): the
		// stack allocator takes a value's store as its spill, and the
		// value may have one of its own. A narrow integer is saved and
		// restored as a whole register, so that the register holds
		// after the call exactly what it held before: restored as a
		// load of its own type, it would be taken for a value the load
		// extended (arm64's code generation then drops the extension
		// of every use, also where the slow path joins the fast one,
		// on which the register holds the value as it came).
		t := st.v.Type
		if (t.IsInteger() || t.IsBoolean()) && t.Size() < s.f.Config.RegSize {
			t = s.f.Config.Types.UInt64
			if s.f.Config.RegSize == 4 {
				t = s.f.Config.Types.UInt32
			}
		}
		cp := s.curBlock.NewValue1(call.Pos, OpCopy, t, st.c)
		s.setOrig(cp, st.v)
		s.f.setHome(cp, &s.registers[r])
		spill := s.curBlock.NewValue1(call.Pos, OpStoreReg, t, cp)
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
		ld := s.curBlock.NewValue1(call.Pos, OpLoadReg, sv.spill.Type, sv.spill)
		s.setOrig(ld, sv.v)
		s.assignReg(sv.r, sv.v, ld)
	}
}
