// runtime.Goexit runs deferred calls and ends only its goroutine.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

func deep(n int, log *[]string) {
	defer func() { *log = append(*log, fmt.Sprint("unwind ", n)) }()
	if n == 0 {
		runtime.Goexit()
	}
	deep(n-1, log)
}

func main() {
	var wg sync.WaitGroup
	var log []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		deep(3, &log)
		log = append(log, "not reached")
	}()
	wg.Wait()
	fmt.Println(log)
	// After a Goexit the program goes on normally.
	s := 0
	for i := 0; i < 10; i++ {
		s += i
	}
	fmt.Println(s)
}
