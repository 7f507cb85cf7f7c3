// Command rangereturn returns from range-over-func loop bodies deep in the
// stack (below 70 frames of recursion, beyond the reified stack's first
// buffer) while the iterator still runs after its yield returned false, and
// breaks out of a labeled range-over-func loop nested in another's body.
package main

func count(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				x := 0
				for j := 0; j < 3000; j++ {
					x += j
				}
				sink += x
				return
			}
		}
	}
}

var sink int

func first(n int) int {
	for a := range count(n) {
		if a == 2 {
			return a
		}
	}
	return -1
}

func deep(d int) int {
	if d == 0 {
		return first(5)
	}
	return deep(d-1) + 1
}

func labeled(n int) int {
	s := 0
	for a := range count(n) {
	Inner:
		for b := range count(n) {
			if b > a {
				break Inner
			}
			s += b
		}
	}
	return s
}

func main() {
	s := 0
	for i := 0; i < 3; i++ {
		s += deep(70)
	}
	println(s, labeled(5), sink)
}
