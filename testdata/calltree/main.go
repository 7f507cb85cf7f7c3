// Command calltree is the shape that makes exact mode slowest on code
// kprof was not written for (RoaringBitmap's tests through
// bits-and-blooms/bitset): a loop whose every iteration calls a small
// tree of small functions, Flip → Set → extendSet → wordsNeeded → Cap,
// and wordsIndex, none of them a leaf the compiler leaves alone in
// kprof's build. Every call costs exact mode two crossings into the
// agent; BenchmarkCallTree measures it against KPROF_MODE=off.
package main

import (
	"flag"
	"fmt"

	"github.com/kprof/kprof/testdata/internal/hwm"
)

type bitSet struct {
	length uint
	set    []uint64
}

const (
	wordMask     = 63
	log2WordSize = 6
)

func capacity() uint { return ^uint(0) }

func wordsNeeded(i uint) int {
	if i > capacity()-wordMask {
		return int(capacity() >> log2WordSize)
	}
	return int((i + wordMask) >> log2WordSize)
}

func wordsIndex(i uint) uint { return i & wordMask }

func (b *bitSet) extendSet(i uint) {
	if i >= capacity() {
		panic("capacity exceeded")
	}
	n := wordsNeeded(i + 1)
	switch {
	case b.set == nil:
		b.set = make([]uint64, n)
	case cap(b.set) >= n:
		b.set = b.set[:n]
	case len(b.set) < n:
		s := make([]uint64, n, 2*n)
		copy(s, b.set)
		b.set = s
	}
	b.length = i + 1
}

func (b *bitSet) set1(i uint) {
	if i >= b.length {
		b.extendSet(i)
	}
	b.set[i>>log2WordSize] |= 1 << wordsIndex(i)
}

func (b *bitSet) flip(i uint) {
	if i >= b.length {
		b.set1(i)
		return
	}
	b.set[i>>log2WordSize] ^= 1 << wordsIndex(i)
}

func flipRange(b *bitSet, from, to int) {
	for i := from; i < to; i++ {
		b.flip(uint(i))
	}
}

func main() {
	n := flag.Int("n", 1000000, "bits flipped per round (growing), then half of them again")
	rounds := flag.Int("rounds", 10, "rounds")
	peak := flag.Bool("hwm", false, "print the peak resident set (Linux's VmHWM) at the end")
	flag.Parse()
	ones := 0
	for r := 0; r < *rounds; r++ {
		var b bitSet
		flipRange(&b, 0, *n)
		flipRange(&b, *n/2, *n)
		for _, w := range b.set {
			for ; w != 0; w &= w - 1 {
				ones++
			}
		}
	}
	fmt.Println(ones)
	if *peak {
		hwm.Print()
	}
}
