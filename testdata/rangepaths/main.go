// A range-over-func body samples as a leaf, in its own name, at the depth
// where parse's previous callee (strings.Index) stood: in exact mode the
// agent must not take that entry for unchanged.
package main

import (
	"fmt"
	"strings"
)

func parse(s string) int {
	n := strings.Index(s, "x")
	for f := range strings.SplitSeq(s, ",") {
		n += len(f)
	}
	return n
}

func main() {
	t := 0
	for i := 0; i < 100; i++ {
		t += parse("ab,cd,x,ef")
	}
	fmt.Println(t)
}
