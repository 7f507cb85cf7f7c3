// Package main checks what a goroutine-leak check (as go.uber.org/goleak
// runs after a test suite) sees of kprof's agent: nothing. It lists the
// goroutines runtime.Stack reports, leaving out os/signal's watcher, as
// goleak does (a kprof build has it, to write the profile on SIGINT), and
// prints how many there are before and after a goroutine that has ended.
package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
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
	fmt.Println("at start:", goroutines())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done() }()
	wg.Wait()
	fmt.Println("after one ended:", goroutines())
}
