// Deep recursion that returns and descends again: two lists of -depth
// elements compared recursively, -reps times (the shape of a structural
// comparison of deep values).
package main

import (
	"flag"
	"fmt"

	"github.com/kprof/kprof/testdata/internal/hwm"
)

type list struct {
	v    int
	next *list
}

func build(n int) *list {
	var l *list
	for i := n - 1; i >= 0; i-- {
		l = &list{i % 13, l}
	}
	return l
}

// equal compares a and b element by element, one call per element.
func equal(a, b *list) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.v == b.v && equal(a.next, b.next)
}

func main() {
	depth := flag.Int("depth", 20000, "elements per list: the recursion's depth")
	reps := flag.Int("reps", 1000, "comparisons")
	peak := flag.Bool("hwm", false, "print the peak resident set (Linux's VmHWM) at the end")
	flag.Parse()
	a, b := build(*depth), build(*depth)
	same := 0
	for r := 0; r < *reps; r++ {
		if equal(a, b) {
			same++
		}
	}
	fmt.Println(same)
	if *peak {
		hwm.Print()
	}
}
