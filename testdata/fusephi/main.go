// A miscompile of Go 1.26's compiler that kprof's compiler mends
// (rewrite.fuseComparisonsPatches): fuseComparisons turns "if x || y"
// into "if x | y" when y's block may run speculatively, dropping the
// value that x's block gave the phis of the block both branch to. A
// function inlined into y that assigns a variable of its caller then
// assigns it on every path. Each function counts the iterations in which
// its || evaluated its right operand: i runs from -5 to 14, and i > 2
// holds for 12 of the 20, so the operand runs 8 times.
package main

import (
	"fmt"
	"os"
)

//go:noinline
func assigned(n int) (ran, taken int) {
	for i := -5; i < n; i++ {
		x := i > 2 || (func() bool { ran++; return true }() && i < -3)
		if x {
			taken++
		}
	}
	return ran, taken
}

//go:noinline
func branch(n int) (ran, taken int) {
	for i := -5; i < n; i++ {
		if i > 2 || (func() bool { ran++; return true }() && i < -3) {
			taken++
		}
	}
	return ran, taken
}

//go:noinline
func result(n int) (ran, taken int) {
	for i := -5; i < n; i++ {
		if i > 2 || func() bool { ran++; return i < -3 }() {
			taken++
		} else {
			taken--
		}
	}
	return ran, taken
}

func main() {
	bad := false
	for _, c := range []struct {
		name       string
		f          func(int) (int, int)
		ran, taken int
	}{
		{"assigned", assigned, 8, 14},
		{"branch", branch, 8, 14},
		{"result", result, 8, 8},
	} {
		ran, taken := c.f(15)
		if ran != c.ran || taken != c.taken {
			fmt.Printf("%s: right operand ran %d times, branch taken %d; want %d, %d\n", c.name, ran, taken, c.ran, c.taken)
			bad = true
		}
	}
	if bad {
		os.Exit(1)
	}
	fmt.Println("ok")
}
