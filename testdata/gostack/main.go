// Two goroutines, one after the other, each recursing -depth deep from
// its own function (first, second) and back, -reps times: the second
// usually runs on the runtime g the first left, with the first's stack
// buffer. Sampled, both must lose the same frames (a push beyond a
// goroutine's buffer is lost until a sample grows it), so that the two
// subtrees are the same and the profile does not depend on which g a
// goroutine got.
package main

import (
	"flag"
	"fmt"
)

func down(n int) int {
	if n == 0 {
		return 0
	}
	return down(n-1) + 1
}

func first(depth, reps int) int {
	s := 0
	for range reps {
		s += down(depth)
	}
	return s
}

func second(depth, reps int) int {
	s := 0
	for range reps {
		s += down(depth)
	}
	return s
}

func main() {
	depth := flag.Int("depth", 3000, "recursion depth")
	reps := flag.Int("reps", 20, "recursions per goroutine")
	flag.Parse()
	total := 0
	for _, f := range []func(int, int) int{first, second} {
		done := make(chan int)
		go func() { done <- f(*depth, *reps) }()
		total += <-done
	}
	fmt.Println(total)
}
