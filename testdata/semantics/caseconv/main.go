// Switch case values of another type than the tag's, which need only be
// comparable with it: interface values against a concrete tag (goja
// switches on a float against its Value variables), another interface,
// a pointer type against an error tag, and untyped constants and nil,
// which take the tag's type.
package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
)

type value interface{ num() float64 }

type float float64

func (f float) num() float64 { return float64(f) }

var posInf, negInf value = float(1), float(-1)

type myErr struct{}

func (*myErr) Error() string { return "mine" }

var errMine = &myErr{}

func floats(f float) int {
	switch f {
	case posInf:
		return 1
	case negInf:
		return 2
	case 0:
		return 3
	}
	return 0
}

func readers(rw io.ReadWriter, r io.Reader) int {
	switch rw {
	case r:
		return 4
	case nil:
		return 5
	}
	return 0
}

func errs(err error) int {
	switch err {
	case errMine:
		return 6
	case io.EOF:
		return 7
	case nil:
		return 8
	}
	return 0
}

// body's case value is of an unexported type of another package
// (http.noBody), which the rewrite cannot name: the tag's type serves.
func body(r io.ReadCloser) int {
	switch r {
	case nil:
		return 9
	case http.NoBody:
		return 3
	}
	return 4
}

type node struct{ next *node }

var root = &node{}

// isRoot's case value has a type whose name a parameter shadows.
func isRoot(n any, node *node) int {
	switch n {
	case node:
		return 1
	case root:
		return 2
	}
	return 0
}

func main() {
	s := 0
	for i := 0; i < 9; i++ {
		s += floats(float(i%3 - 1))
	}
	f, err := os.CreateTemp("", "caseconv")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	s += readers(f, f) + readers(nil, f) + readers(f, os.Stdin)
	for _, err := range []error{errMine, io.EOF, nil, errors.New("other")} {
		s += errs(err)
	}
	s += body(nil) + body(http.NoBody) + body(io.NopCloser(f))
	s += isRoot(root, nil) + isRoot(root, root) + isRoot(3, root)
	fmt.Println(s)
}
