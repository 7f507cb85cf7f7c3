// A Go 1.27 program: a method with type parameters (generic methods are
// new in Go 1.27), a composite literal naming a promoted field (new in Go
// 1.27 too), and math/rand/v2, whose Rand.N is a generic method in Go
// 1.27.
package main

import "math/rand/v2"

type Box struct{ v int }

func (b Box) Map[T any](f func(int) T) T { return f(b.v) }

type inner struct{ a, b int }

type outer struct {
	inner
	c int
}

func main() {
	b := Box{21}
	s := 0
	for i := 0; i < 100; i++ {
		s += b.Map(func(x int) int { return x * i })
	}
	o := outer{a: 1, c: 2}
	r := rand.New(rand.NewPCG(1, 2))
	s += r.N(10) + o.a + o.c
	println(s)
}
