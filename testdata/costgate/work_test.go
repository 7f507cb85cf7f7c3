package work

import "testing"

var (
	data = make([]uint32, 256)
	sink uint32
)

func BenchmarkSum(b *testing.B) {
	for i := range data {
		data[i] = uint32(i * 7)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = Sum(data)
	}
}
