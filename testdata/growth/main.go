// Command growth appends to slices that grow and prints how often they
// grew and the bytes of their new capacities: kprof's cost metric charges
// each growth append.grow plus append.byte per byte of the new capacity
// to the function that appends (TestCostGrowth).
package main

import "fmt"

// grown holds the new capacity of each growth, in bytes: an array, so
// that recording one grows nothing.
var (
	grown  [256]int
	ngrown int
)

// The slices are stored here as they grow, so that they are on the heap
// from the start: the compiler keeps a slice that does not escape in a
// buffer on the stack until it outgrows it (growing within it allocates
// nothing and is not charged, but changes the capacity).
var (
	keepInts   []int64
	keepPoints []point
)

// ints appends n ints to a slice.
//
//go:noinline
func ints(n int) []int64 {
	var s []int64
	for i := 0; i < n; i++ {
		c := cap(s)
		s = append(s, int64(i))
		keepInts = s
		if cap(s) != c {
			grown[ngrown] = cap(s) * 8
			ngrown++
		}
	}
	return s
}

type point struct{ x, y, z float64 }

// points appends several values at once.
//
//go:noinline
func points(n int) []point {
	s := make([]point, 0, 3)
	for i := 0; i < n; i++ {
		c := cap(s)
		s = append(s, point{1, 2, 3}, point{float64(i), 0, 0})
		keepPoints = s
		if cap(s) != c {
			grown[ngrown] = cap(s) * 24
			ngrown++
		}
	}
	return s
}

// noGrowth appends within the capacity it made.
//
//go:noinline
func noGrowth(n int) []byte {
	b := make([]byte, 0, n)
	for i := 0; i < n; i++ {
		b = append(b, byte(i))
	}
	return b
}

func main() {
	total := len(ints(3000)) + len(points(700)) + len(noGrowth(5000))
	bytes := 0
	for _, b := range grown[:ngrown] {
		bytes += b
	}
	fmt.Println(total, ngrown, bytes)
}
