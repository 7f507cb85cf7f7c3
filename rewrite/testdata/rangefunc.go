// Package rangefunc returns from inside range-over-func loop bodies. The
// function leaves only once the iterators return, so it restores its stack
// depth in a deferred call (counter.R); where the return stands, the
// iterators' frames are still on the stack, and each final check samples
// with the stack cut at the function, or the enclosing loop body, whose
// block it charges (counter.SD). The outer loop body checks in its own name
// before it calls the inner loop's iterator.
package rangefunc

func count(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				return
			}
		}
	}
}

func pairs(n, want int) (int, int) {
	for a := range count(n) {
		for b := range count(n) {
			if a*b == want {
				return a, b
			}
		}
	}
	return -1, -1
}
