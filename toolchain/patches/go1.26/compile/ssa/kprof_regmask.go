//go:build kprofpatch

// The register masks of cmd/compile/internal/ssa for kprof_regalloc.go: a bit set (uint64) in Go 1.26.

package ssa

func kprofHasReg(m regMask, r register) bool { return m.contains(r) }

func kprofUnion(a, b regMask) regMask { return a | b }
