// Closures that capture loop variables, of three-clause and range loops.
// Below go1.22 every closure of a loop shares one variable (and sees its
// last value); from go1.22 on each iteration has its own. The program
// prints what it saw, so that an instrumented build must behave as the
// plain build of the same language version.
package main

func collect(n int) []func() int {
	var fs []func() int
	for i := 0; i < n; i++ {
		fs = append(fs, func() int { return i * i })
	}
	return fs
}

func collectRange(xs []int) []func() int {
	var fs []func() int
	for i, x := range xs {
		fs = append(fs, func() int { return i + x })
	}
	return fs
}

func pointers(n int) int {
	var ps []*int
	for i := 0; i < n; i++ {
		ps = append(ps, &i)
	}
	s := 0
	for _, p := range ps {
		s += *p
	}
	return s
}

func main() {
	total := 0
	for round := 0; round < 200; round++ {
		for _, f := range collect(10) {
			total += f()
		}
		for _, f := range collectRange([]int{5, 6, 7, 8}) {
			total += f()
		}
		total += pointers(round % 7)
	}
	println(total)
}
