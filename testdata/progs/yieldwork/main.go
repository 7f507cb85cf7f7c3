// An iterator that works between its last check and the call of yield:
// what it ran is its own, not the loop body's, in exact mode too (the
// body's first check samples what is pending in the iterator's name).
package main

func squares(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			x := i*i + 3*i + 7
			if x%5 == 0 {
				x /= 5
			}
			if !yield(x) {
				return
			}
		}
	}
}

func mod7(x int) int { return x % 7 }

func main() {
	s := 0
	for r := 0; r < 20; r++ {
		for x := range squares(100) {
			// A call and a branch: the body's block that calls lands at
			// its start too, beside the entry block.
			v := mod7(x)
			if v == 3 {
				s--
			}
			s += v
		}
	}
	println(s)
}
