// Package fig4 is the paper's Figure 4 in Go: sq is a leaf, sqSum a loop
// with an explicit exit, as in the paper.
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
