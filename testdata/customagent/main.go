// A program to profile with the custom agent in pkgagent: package fmt does
// most of the work, main a loop of its own (sampled at its own checks,
// whatever the phase of the constant granularity against fmt's calls).
package main

import (
	"fmt"
	"strings"
)

func main() {
	var b strings.Builder
	sum := 0
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "%d,", i%97)
		for j := 0; j < 20; j++ {
			sum += (i ^ j) % 7
		}
	}
	fmt.Println(len(strings.Split(b.String(), ",")))
	fmt.Println(sum)
}
