// Command recoverpops recovers panics raised several frames below the
// recovering function, through functions without defer statements (which
// pop their stack entry by decrementing the depth and skip their pops when
// a panic unwinds them). Every context after a recovery must be as if no
// frame had been skipped: after sits directly under main.main.
package main

import "fmt"

var sink int

//go:noinline
func deep(n int) int {
	if n == 0 {
		panic("boom")
	}
	return deep(n-1) + 1
}

func mid(n int) int {
	x := deep(n)
	return x * 2
}

func safe(n int) (r int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return mid(n)
}

func after(i int) int {
	s := 0
	for j := 0; j < i; j++ {
		s += j
	}
	return s
}

func main() {
	for i := 0; i < 100; i++ {
		sink += safe(i % 5)
		sink += after(i)
	}
	fmt.Println(sink)
}
