package work

import (
	"sync/atomic"
	"testing"
)

var (
	data = make([]byte, 1000)
	sink uint64
	acc  atomic.Uint64
)

func BenchmarkChecksum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = Checksum(data, 1)
	}
}

// BenchmarkChecksumSetup is BenchmarkChecksum after an expensive setup
// that ResetTimer leaves out: the two report the same instructions/op.
func BenchmarkChecksumSetup(b *testing.B) {
	t := Table(5000)
	sink = t[len(t)-1]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = Checksum(data, 1)
	}
}

func BenchmarkLoop(b *testing.B) {
	t := Table(2000)
	sink = t[0]
	for b.Loop() {
		sink = Checksum(data[:500], 2)
	}
}

// BenchmarkPaused stops the timer for work inside the loop.
func BenchmarkPaused(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sink = Checksum(data, 5)
		b.StartTimer()
		sink = Checksum(data[:100], 1)
	}
}

func BenchmarkParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			acc.Add(Checksum(data[:200], 1))
		}
	})
}

func BenchmarkSub(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(map[int]string{10: "n=10", 100: "n=100"}[n], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = uint64(len(Grow(nil, n)))
			}
		})
	}
}

// BenchmarkParallelLazy sets up a table in each goroutine the first time
// that goroutine runs an iteration (as a parser taken from a pool warms
// up): its instructions/op depend on how many of RunParallel's goroutines
// run at least one iteration, which kprof makes independent of timing.
func BenchmarkParallelLazy(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var t []uint64
		for pb.Next() {
			if t == nil {
				t = Table(300)
			}
			acc.Add(t[len(t)-1] + Checksum(data[:50], 1))
		}
	})
}
