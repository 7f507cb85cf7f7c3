// Package main checks what a goroutine-leak check (as go.uber.org/goleak
// runs after a test suite) sees of kprof's agent: nothing. It lists the
// goroutines runtime.Stack reports, leaving out os/signal's watcher, as
// goleak does (a kprof build has it, to write the profile on SIGINT), and
// prints how many there are before and after a goroutine that has ended.
// Like goleak, it retries for a while: a goroutine that has run its last
// deferred call may not have exited yet.
package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
)

func goroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "os/signal.") {
			continue
		}
		n++
	}
	return n
}

func main() {
	start := goroutines()
	fmt.Println("at start:", start)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done() }()
	wg.Wait()
	n := goroutines()
	for i := 0; i < 200 && n > start; i++ {
		time.Sleep(5 * time.Millisecond)
		n = goroutines()
	}
	fmt.Println("after one ended:", n)
}
