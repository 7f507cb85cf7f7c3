// The paper's Figure 4 in Go.
package main

func sq(x int) int {
	return x * x
}

func sqSum(from, to int) int {
	result := 0
	for {
		if from > to {
			return result
		}
		result += sq(from)
		from++
	}
}

func main() {
	s := 0
	for i := 0; i < 300; i++ {
		s += sqSum(0, i)
	}
	println(s)
}
