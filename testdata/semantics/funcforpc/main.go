// runtime.FuncForPC of return addresses finds what plain Go finds: logrus
// finds its own package so (the first function whose name contains
// "getCaller" among runtime.Callers' PCs), and code that names its caller
// does. Here the calls return into functions whose loops keep kprof's
// count in a register: the instruction a call returns to is then kprof's
// reload of the count, which must not name an inlined function (sync.Once's
// Do, which calls doSlow last) where plain Go names the function it returns
// into. (Which function FuncForPC names for a return address inside inlined
// code is the next instruction's, kprof's or not: the frame logrus finds
// may be getCaller's closure where plain Go finds getCaller.)
package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

var (
	once   sync.Once
	frames []string
)

func isNaN(x int) bool { return x != x }

func less(x, y int) bool { return (isNaN(x) && !isNaN(y)) || x < y }

// sorted is slices.IsSorted: an inlined comparison that pushes itself in
// a loop (cmd/kprof's TestCountInRegisters disassembles it).
//
//go:noinline
func sorted(s []int) bool {
	for i := len(s) - 1; i > 0; i-- {
		if less(s[i], s[i-1]) {
			return false
		}
	}
	return true
}

// getCaller is logrus's: runtime.Callers, inlined, ends with its call.
func getCaller(s []int) (string, bool) {
	found := ""
	ok := true
	once.Do(func() {
		ok = sorted(s)
		for i := len(s) - 1; i > 0; i-- {
			if less(s[i], s[i-1]) {
				ok = false
			}
		}
		pcs := make([]uintptr, 25)
		_ = runtime.Callers(0, pcs)
		// The frames from doSlow out (the first two, runtime.Callers
		// inlined into the closure, name runtime.Callers or the
		// closure: see the package comment).
		for _, pc := range pcs[2:] {
			if pc != 0 {
				frames = append(frames, runtime.FuncForPC(pc).Name())
			}
		}
		for _, pc := range pcs {
			if pc == 0 {
				break
			}
			if name := runtime.FuncForPC(pc).Name(); strings.Contains(name, "getCaller") {
				found = name
				break
			}
		}
	})
	for i := len(s) - 1; i > 0; i-- {
		if less(s[i], s[i-1]) {
			ok = false
		}
	}
	return found, ok
}

// callerName names the function its caller's call returns to.
//
//go:noinline
func callerName() string {
	pcs := make([]uintptr, 1)
	_ = runtime.Callers(2, pcs)
	return runtime.FuncForPC(pcs[0]).Name()
}

// last calls callerName last; it is inlined into its callers.
func last(x int) string {
	if x > 0 {
		return callerName()
	}
	return ""
}

func main() {
	s := []int{1, 2, 3, 5, 8, 13}
	// What logrus takes from the name: its package.
	name, ok := getCaller(s)
	fmt.Println(name != "", strings.Split(name, ".")[0], ok)
	fmt.Println(frames)
	for i := range 3 {
		n := 0
		for j := len(s) - 1; j > 0; j-- {
			if less(s[j], s[j-1]) {
				n++
			}
		}
		fmt.Println(i, n, last(i+1), callerName())
	}
}
