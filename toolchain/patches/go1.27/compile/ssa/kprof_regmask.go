//go:build kprofpatch

// The register masks of cmd/compile/internal/ssa for kprof_regalloc.go: a struct with methods from Go 1.27 on.

package ssa

func kprofHasReg(m regMask, r register) bool { return m.hasReg(r) }

func kprofUnion(a, b regMask) regMask { return a.union(b) }
