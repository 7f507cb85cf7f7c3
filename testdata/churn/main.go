// Goroutine churn: -n short goroutines, at most -alive of them at once (a
// server with a goroutine per request, in miniature). With -seq the same
// work runs in one goroutine. Each goroutine's work is the same function
// of its index, so the instructions of main.work do not depend on which
// goroutine runs it.
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kprof/kprof/testdata/internal/hwm"
)

//go:noinline
func work(i int) int64 {
	var s int64
	for j := 0; j < 10; j++ {
		s += int64((i + j) % 7)
	}
	return s
}

func main() {
	n := flag.Int("n", 100000, "goroutines")
	alive := flag.Int("alive", 100, "goroutines alive at most")
	seq := flag.Bool("seq", false, "run the work in one goroutine")
	peak := flag.Bool("hwm", false, "print the peak resident set (Linux's VmHWM) at the end")
	flag.Parse()
	var sum atomic.Int64
	if *seq {
		for i := 0; i < *n; i++ {
			sum.Add(work(i))
		}
	} else {
		sem := make(chan struct{}, *alive)
		var wg sync.WaitGroup
		for i := 0; i < *n; i++ {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sum.Add(work(i))
				<-sem
			}()
		}
		wg.Wait()
	}
	fmt.Println(sum.Load())
	if *peak {
		hwm.Print()
	}
}
