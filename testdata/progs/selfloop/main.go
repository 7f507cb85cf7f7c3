// A block that jumps to itself (a self-loop), entered from a block that
// charges.
package main

func count(n int) int {
	x := 0
	y := n * 3
L:
	x++
	if x < n {
		goto L
	}
	return x + y
}

func main() {
	s := 0
	for i := 1; i < 40; i++ {
		s += count(i)
	}
	println(s)
}
