// Function literals keep their names (main.f.func1, …) in a module that
// declares a language version below go1.18, where kprof cannot tick a
// switch's case values with its generic helpers: runtime.Caller,
// runtime.FuncForPC and stack traces name the closures as go build does.
package main

import (
	"fmt"
	"runtime"
	"strings"
)

type op int

func code(s string) op { return op(len(s)) }

// name returns the name of the function that calls it.
func name() string {
	pc, _, _, _ := runtime.Caller(1)
	return runtime.FuncForPC(pc).Name()
}

func eval(o op, a, b int) (int, string) {
	var who string
	switch o {
	case code("+"), code("++"):
		who = func() string { return name() }()
		return a + b, who
	case code("---"):
		who = func() string { return name() }()
		return a - b, who
	}
	f := func() string { return name() }
	return 0, f()
}

// kind switches on a string's value with case values that call.
func kind(s string) string {
	switch s {
	case strings.ToUpper(s), strings.ToLower("X"):
		return func() string { return "same case: " + name() }()
	}
	return func() string { return "mixed case: " + name() }()
}

func main() {
	for _, o := range []op{code("+"), code("---"), code("????")} {
		n, who := eval(o, 7, 3)
		fmt.Println(n, who)
	}
	fmt.Println(kind("ABC"), kind("x"), kind("aBc"))
	defer func() {
		r := recover()
		buf := make([]byte, 1<<12)
		n := runtime.Stack(buf, false)
		for _, l := range strings.Split(string(buf[:n]), "\n") {
			if strings.HasPrefix(l, "main.") {
				fmt.Println(r, l[:strings.IndexByte(l, '(')])
			}
		}
	}()
	switch code("!") {
	case code(""), code("?"):
		func() { panic("in " + name()) }()
	}
}
