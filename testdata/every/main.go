// Command every is a deterministic program with one goroutine that works
// in three phases, for kprof's KPROF_EVERY test: it fills a slice from a
// xorshift generator, sums it, then sorts part of it by insertion, so
// that delta profiles of successive stretches of its instructions show
// one phase after the other.
package main

func fill(n int) []uint64 {
	xs := make([]uint64, n)
	x := uint64(88172645463325252)
	for i := range xs {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		xs[i] = x
	}
	return xs
}

func checksum(xs []uint64) uint64 {
	var s uint64
	for i, x := range xs {
		s = s*31 + x ^ uint64(i)
	}
	return s
}

func insertionSort(xs []uint64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func main() {
	xs := fill(200000)
	c := checksum(xs)
	s := xs[:2000]
	insertionSort(s)
	println(c, s[0], s[len(s)-1])
}
