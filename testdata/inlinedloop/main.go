// Command inlinedloop checks a sorted slice in a loop that the compiler
// inlines into main, a function that calls: kprof's compiler keeps the
// count in a register there (kprofPromote), and the slow path of the
// loop's check, which reads the goroutine's g again, must be laid out of
// line (TestCountInRegisters). Before kprofLikely looked through the
// runtime's accessors, it was laid out on the fast path: two taken
// branches per iteration.
package main

import (
	"fmt"
	"os"
)

func isSorted(x []int) bool {
	for i := len(x) - 1; i > 0; i-- {
		if x[i] < x[i-1] {
			return false
		}
	}
	return true
}

func main() {
	x := make([]int, 1000)
	for i := range x {
		x[i] = i
	}
	n := 0
	for r := 0; r < 100; r++ {
		if isSorted(x) {
			n++
		}
	}
	fmt.Fprintln(os.Stderr, n)
}
