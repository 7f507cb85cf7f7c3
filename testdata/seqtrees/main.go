// Goroutines that run one after the other and make the same calling
// contexts, the shape of a benchmark's runs or of a test binary's tests:
// each of -runs goroutines, which the main goroutine waits for in turn,
// runs a recursion -n deep whose level k calls a chain k deep, about
// n²/2 contexts.
package main

import (
	"flag"
	"fmt"

	"github.com/kprof/kprof/testdata/internal/hwm"
)

// chain recurses k deep.
func chain(k int) int {
	if k == 0 {
		return 0
	}
	return chain(k-1) + 1
}

// level recurses from k to n, calling a chain k deep at each level.
func level(k, n int) int {
	if k == n {
		return 0
	}
	return chain(k) + level(k+1, n)
}

func main() {
	n := flag.Int("n", 1500, "depth of the recursion")
	runs := flag.Int("runs", 3, "goroutines, one after the other")
	peak := flag.Bool("hwm", false, "print the peak resident set (Linux's VmHWM) at the end")
	flag.Parse()
	total := 0
	for range *runs {
		done := make(chan int)
		go func() { done <- level(0, *n) }()
		total += <-done
	}
	fmt.Println(total)
	if *peak {
		hwm.Print()
	}
}
