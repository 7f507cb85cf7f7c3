// A program to profile with the custom agent in pkgagent.
package main

import (
	"fmt"
	"strings"
)

func main() {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "%d,", i%97)
	}
	fmt.Println(len(strings.Split(b.String(), ",")))
}
