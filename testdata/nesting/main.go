// A value nested -depth deep, encoded the way encoding/asn1 encodes
// (tag, length, contents), -reps times in each of -par goroutines that run
// at once: each level's encoder asks its contents for their length, which
// walks every level below it. Each of the depth levels of the encoder's
// recursion starts another recursion as deep as what is left, so the
// calling contexts are about depth²/2 — 50 million for asn1's own nesting
// limit test, at depth 10,000.
package main

import (
	"flag"
	"fmt"
	"sync"

	"github.com/kprof/kprof/testdata/internal/hwm"
)

type value struct {
	tag  byte
	kids []*value
}

func nest(depth int) *value {
	v := &value{tag: 1}
	for i := 1; i < depth; i++ {
		v = &value{tag: byte(i%30 + 1), kids: []*value{v}}
	}
	return v
}

// length is the length of v's encoding: it walks everything below v.
func length(v *value) int {
	n := 2
	for _, k := range v.kids {
		n += length(k)
	}
	return n
}

// encode appends v's encoding to b.
func encode(b []byte, v *value) []byte {
	n := 0
	for _, k := range v.kids {
		n += length(k)
	}
	b = append(b, v.tag, byte(n))
	for _, k := range v.kids {
		b = encode(b, k)
	}
	return b
}

// checksum folds an encoding into one number.
func checksum(b []byte) uint32 {
	var h uint32 = 2166136261
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

func main() {
	depth := flag.Int("depth", 2000, "nesting depth")
	reps := flag.Int("reps", 1, "encodings per goroutine")
	par := flag.Int("par", 1, "goroutines encoding at once")
	peak := flag.Bool("hwm", false, "print the peak resident set (Linux's VmHWM) at the end")
	flag.Parse()
	v := nest(*depth)
	sums := make([]uint32, *par)
	var wg sync.WaitGroup
	for i := range *par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range *reps {
				sums[i] ^= checksum(encode(nil, v))
			}
		}()
	}
	wg.Wait()
	fmt.Println(sums)
	if *peak {
		hwm.Print()
	}
}
