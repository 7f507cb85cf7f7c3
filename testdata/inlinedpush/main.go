// Command inlinedpush checks a sorted slice with a generic comparison that
// pushes itself (it calls a small leaf, as cmp.Less calls isNaN), inlined
// with the loop into main, a function that calls: kprof's compiler keeps
// the depth in a register there and stores the comparison's stack entry
// only in the slow paths that read it (kprofElidePushes,
// TestCountInRegisters). main's two calls in a row leave a reload of the
// depth that nothing uses, which the compiler's dead-code pass frees:
// before the elision took the depth's relations first, that lost them, and
// every push of main stayed on the fast path (slices.IsSorted inlined into
// a benchmark: twice as slow). "inlinedpush N R" checks N ints R times
// (1000 and 100 without arguments).
package main

import (
	"fmt"
	"os"
	"strconv"
)

type ordered interface {
	~int | ~int64 | ~float64 | ~string
}

func isNaN[T ordered](x T) bool { return x != x }

func less[T ordered](x, y T) bool { return (isNaN(x) && !isNaN(y)) || x < y }

func isSorted[T ordered](x []T) bool {
	for i := len(x) - 1; i > 0; i-- {
		if less(x[i], x[i-1]) {
			return false
		}
	}
	return true
}

func main() {
	size, rounds := 1000, 100
	if len(os.Args) == 3 {
		size, _ = strconv.Atoi(os.Args[1])
		rounds, _ = strconv.Atoi(os.Args[2])
	}
	x := make([]int, size)
	for i := range x {
		x[i] = i
	}
	n := 0
	for r := 0; r < rounds; r++ {
		if isSorted(x) {
			n++
		}
	}
	fmt.Fprintln(os.Stderr, n)
}
