// Package work is what the benchmarks of kprof's gate tests measure.
package work

// pad is extra work per checksum; the gate test raises it to add about
// 1 % to BenchmarkChecksum and checks that the gate catches it.
const pad = 0

// Checksum is FNV-1a over data, rounds times.
func Checksum(data []byte, rounds int) uint64 {
	h := uint64(14695981039346656037)
	for r := 0; r < rounds; r++ {
		for _, c := range data {
			h ^= uint64(c)
			h *= 1099511628211
		}
	}
	for i := 0; i < pad; i++ {
		h += uint64(i)
	}
	return h
}

// Table builds a lookup table: the expensive setup of a benchmark.
func Table(n int) []uint64 {
	t := make([]uint64, n)
	for i := range t {
		t[i] = Checksum([]byte{byte(i), byte(i >> 8)}, 3)
	}
	return t
}

// Grow appends n items: its work per call is the same for every n, but
// the first call of a benchmark also allocates.
func Grow(s []int, n int) []int {
	for i := 0; i < n; i++ {
		s = append(s, i)
	}
	return s
}
