// Closures, function values, nested closures.
package main

func adder() func(int) int {
	sum := 0
	return func(x int) int {
		sum += x
		return sum
	}
}

func apply(fs []func(int) int, x int) int {
	r := 0
	for _, f := range fs {
		r += f(x)
	}
	return r
}

func main() {
	a := adder()
	fs := []func(int) int{
		a,
		func(x int) int { return x * 2 },
		func(x int) int {
			g := func(y int) int { return y - x }
			return g(10)
		},
	}
	s := 0
	for i := 0; i < 50; i++ {
		s += apply(fs, i)
	}
	println(s)
}
