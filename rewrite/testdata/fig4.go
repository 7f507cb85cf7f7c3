// Package fig4 is the paper's Figure 4 in Go: sq is a leaf, sqSum a loop
// with an explicit exit, as in the paper. Unlike the paper's, sqSum is a
// leaf too: sq is small and calls nothing (quiet), so calling it is no call
// for sqSum's checks, flushes and push.
package fig4

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
