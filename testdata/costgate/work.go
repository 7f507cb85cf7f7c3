// Package work has a benchmark whose hot loop, built with -tags alloc,
// allocates one small object per operation: a change that barely moves
// instructions/op and moves the cost metric's ns/op-est a lot (kprof
// test -metric cost, kprof gate --unit ns/op-est).
package work

// Sum returns a checksum of xs, calling hook once.
func Sum(xs []uint32) uint32 {
	var s uint32
	for i, x := range xs {
		s = s*31 + x ^ uint32(i)
	}
	return s + hook(s)
}
