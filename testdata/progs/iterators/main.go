// Range-over-func iterators with break and early return.
package main

func count(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				return
			}
		}
	}
}

func firstOver(n, limit int) int {
	for v := range count(n) {
		if v*v > limit {
			return v
		}
	}
	return -1
}

func main() {
	s := 0
	for v := range count(10) {
		if v == 7 {
			break
		}
		if v%2 == 0 {
			continue
		}
		s += v
	}
	s += firstOver(100, 50)
	println(s)
}
