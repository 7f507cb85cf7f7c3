//go:build kprofpatch

// Code kprof adds to the compiler's package ssa (cmd/compile/internal/ssa), beside branchelim.go.

package ssa

// kprofAccumulator returns the values kprof's accumulator takes in f: those
// assigned to a variable of its name (constants apart), those of the g
// fields kprofPromote keeps in registers (promoted), and the phis that
// join them.
func kprofAccumulator(f *Func, promoted map[ID]bool) map[ID]bool {
	kp := promoted
	for slot, vs := range f.NamedValues {
		if slot.N == nil || slot.N.Sym() == nil || slot.N.Sym().Name != "_kp" {
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
