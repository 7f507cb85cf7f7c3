// Panics and recover, re-panics, errors as panic values, and finally an
// uncaught panic: exit status 2 and a stack trace at the original lines.
package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

var errBoom = errors.New("boom")

func mayPanic(i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered: %v", r)
		}
	}()
	if i%3 == 0 {
		panic(errBoom)
	}
	if i%3 == 1 {
		var m map[string]int
		m["x"] = 1 // runtime error
	}
	return nil
}

func rethrow() (s string) {
	defer func() {
		r := recover()
		s = fmt.Sprint("outer caught: ", r)
	}()
	func() {
		defer func() {
			r := recover()
			panic(fmt.Sprint("again: ", r))
		}()
		panic("first")
	}()
	return "unreachable"
}

func main() {
	for i := 0; i < 4; i++ {
		fmt.Println(i, mayPanic(i))
	}
	fmt.Println(rethrow())
	if len(os.Args) > 1 && os.Args[1] == "fatal" {
		// A fatal error, not a panic: nothing can recover it.
		var mu sync.Mutex
		mu.Unlock()
	}
	if len(os.Args) > 1 {
		var p *struct{ x int }
		fmt.Println(p.x) // nil dereference: uncaught
	}
}
