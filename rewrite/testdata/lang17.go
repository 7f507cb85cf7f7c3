// lang: go1.7
//
// A file of a module that declares go 1.7 (go.mod files of that time
// still build): what kprof inserts must compile without type aliases
// (go1.9) or generics, as TestGolden checks.
package main

type counter struct{ n int }

func (c *counter) add(k int) { c.n += k }

func sum(xs []int) int {
	var c counter
	for _, x := range xs {
		c.add(x)
	}
	return c.n
}

func main() { println(sum([]int{1, 2, 3})) }
