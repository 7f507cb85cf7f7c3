// The paper's Figure 4 in Go: sqSum(0, 40) sums 41 squares.
//
// In exact mode kprof counts main.sq's 2 instructions in each of its
// 12,300,000 calls and main.sqSum's 250 in each of its 300,000 (an entry
// of 1, 42 loop headers of 2, 41 call blocks of 4 and a return of 1).
package main

const rounds = 300000 // the oracle runs 300

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
	for i := 0; i < rounds; i++ {
		s += sqSum(0, 40)
	}
	println(s)
}
