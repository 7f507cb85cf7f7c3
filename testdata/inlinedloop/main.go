// Command inlinedloop checks a sorted slice in a loop that the compiler
// inlines into main, a function that calls: kprof's compiler keeps the
// count in a register there (kprofPromote), and the slow path of the
// loop's check, which reads the goroutine's g again, must be laid out of
// line (TestCountInRegisters). Before kprofLikely looked through the
// runtime's accessors, it was laid out on the fast path: two taken
// branches per iteration. "inlinedloop N R" checks N ints R times (1000
// and 100 without arguments): the timing of the closing note of the
// session that fixed it used 10000 100000.
package main

import (
	"fmt"
	"os"
	"strconv"
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
