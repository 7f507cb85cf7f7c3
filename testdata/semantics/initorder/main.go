// Package main checks that kprof keeps the order in which a package's
// variables initialize. fd and names are declared first and their
// initializers call functions of this package (which kprof instruments);
// b and c, declared later, call only fmt, which reaches fd and names
// through String methods (no dependency in the spec's sense). The spec
// initializes fd and names first, so b and c see them set.
package main

import "fmt"

var fd = mk()

func mk() string { return "abc" }

type T struct{}

func (*T) String() string { return fd }

var b = fmt.Sprint(&T{})

func main() {
	fmt.Printf("b=%q c=%q\n", b, c)
}
