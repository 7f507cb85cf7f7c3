// 10,000 goroutines each run the same work; with -seq the same work runs
// in one goroutine. No instruction may be lost: the work's instructions are
// the same either way and the profile's total is the sum of its contexts.
package main

import (
	"flag"
	"fmt"
	"sync"
)

//go:noinline
func work(i int) int {
	s := 0
	for j := 0; j < 100; j++ {
		s += (i + j) % 7
	}
	return s
}

func main() {
	seq := flag.Bool("seq", false, "run the work in one goroutine")
	flag.Parse()
	const n = 10000
	results := make([]int, n)
	if *seq {
		for i := 0; i < n; i++ {
			results[i] = work(i)
		}
	} else {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = work(i)
			}()
		}
		wg.Wait()
	}
	total := 0
	for _, r := range results {
		total += r
	}
	fmt.Println(total)
}
