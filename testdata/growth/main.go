// Command growth appends to slices that grow and prints how often they
// grew and the bytes of their new capacities: kprof's cost metric charges
// each growth append.grow plus append.byte per byte of the new capacity
// to the function that appends (TestCostGrowth). It also makes slices,
// concatenates strings and converts strings and slices on the heap, with
// sizes known at run time, and prints the bytes of each function's: the
// runtime charges append.byte per byte of those.
package main

import (
	"fmt"
	"strings"
)

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

// Kept here, so that they escape to the heap.
var (
	keepInt32s []int32
	keepString string
	keepBytes  []byte
	keepRunes  []rune
)

// makes makes slices of n sizes, and returns their bytes.
//
//go:noinline
func makes(n int) int {
	bytes := 0
	for i := 1; i <= n; i++ {
		keepInt32s = make([]int32, i, 2*i)
		bytes += 2 * i * 4
	}
	return bytes
}

// concats concatenates strings of n lengths (longer than the 32-byte
// buffer the compiler gives a result that does not escape), and returns
// the bytes of the results.
//
//go:noinline
func concats(n int, a string) int {
	bytes := 0
	for i := 0; i < n; i++ {
		b := a[:1+i%(len(a)-1)] // (a + "" is a: nothing allocated)
		keepString = a + b
		bytes += len(a) + len(b)
		keepString = b + "|" + a + b
		bytes += 1 + len(a) + 2*len(b)
	}
	return bytes
}

// converts converts between strings and byte and rune slices, of n
// lengths from 2 bytes (a string of one byte is static), and returns the
// bytes of the results.
//
//go:noinline
func converts(n int, a string) int {
	bytes := 0
	for i := 0; i < n; i++ {
		s := a[:2+i%(len(a)-2)]
		keepBytes = []byte(s)
		keepString = string(keepBytes)
		keepRunes = []rune(s)
		keepString = string(keepRunes)
		bytes += 2*len(s) + 4*len(s) + len(s) + 3
	}
	return bytes
}

// builds grows strings.Builders (strings' own code allocates, through
// internal/bytealg.MakeNoZero), and returns the bytes of their
// capacities.
//
//go:noinline
func builds(n int) int {
	bytes := 0
	for i := 0; i < n; i++ {
		var sb strings.Builder
		sb.Grow(100 + i)
		sb.WriteString("x")
		keepString = sb.String()
		bytes += sb.Cap()
	}
	return bytes
}

func main() {
	total := len(ints(3000)) + len(points(700)) + len(noGrowth(5000))
	bytes := 0
	for _, b := range grown[:ngrown] {
		bytes += b
	}
	const a = "abcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefgh" // (no allocation of main's)
	fmt.Println(total, ngrown, bytes, makes(300), concats(500, a), converts(400, a), builds(300))
}
