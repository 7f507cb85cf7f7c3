// Package main has //line directives without a column, as ragel and
// goyacc write them in the code they generate: kprof's own position
// comments must not give the compiler a column it refuses (0), and the
// positions the program reports stay the directives'.
package main

import (
	"fmt"
	"path/filepath"
	"runtime"
)

func classify(n int) string {
//line grammar.y:42
	if n%2 == 0 {
		_, file, line, _ := runtime.Caller(0)
		if n == 0 {
			fmt.Println(filepath.Base(file), line)
		}
		return "even"
	}
	return "odd"
}

func main() {
	s := 0
	for i := 0; i < 10; i++ {
		if classify(i) == "even" {
			s += i
		}
	}
	fmt.Println(s)
}
