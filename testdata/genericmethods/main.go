// A Go 1.27 program: a method with type parameters (generic methods are
// new in Go 1.27).
package main

type Box struct{ v int }

func (b Box) Map[T any](f func(int) T) T { return f(b.v) }

func main() {
	b := Box{21}
	s := 0
	for i := 0; i < 100; i++ {
		s += b.Map(func(x int) int { return x * i })
	}
	println(s)
}
