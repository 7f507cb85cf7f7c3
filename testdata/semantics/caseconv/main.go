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
	fmt.Println(s)
}
