// Ticks of && and || operands charged in the if statement's branches
// (emitBranchTicks), in functions that accumulate their charges.
package main

var sink int

func work(n int) int {
	for i := 0; i < n%5; i++ {
		sink += i
	}
	return n
}

// scan's loop tests three operands with || in a statement with no else.
func scan(s []byte) int {
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		r++
	}
	return r
}

// skip's loop condition chains two operands with &&: the body adds a
// constant, what follows the loop (which no break leaves) evaluates them
// again.
func skip(s []byte, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// find's loop has a break: its ticks stay in the condition.
func find(s []byte, c byte) int {
	i := 0
	for i < len(s) && s[i] != 0 {
		if s[i] == c {
			break
		}
		i++
	}
	return i
}

// both has an && chain with an else, and one that reads a map (its tick
// stays in the expression).
func both(xs []int, m map[int]bool) int {
	n := 0
	for i, x := range xs {
		if x > 0 && x%2 == 0 && i < len(xs)-1 {
			n += xs[i+1]
		} else {
			n--
		}
		if x < 0 || m[x] {
			n += 2
		}
	}
	return n
}

// calls accumulates no charges (a call in an operand is no statement):
// its ticks stay in the expression.
func calls(xs []int) int {
	n := 0
	for _, x := range xs {
		if x > 3 && work(x) > 4 {
			n++
		}
	}
	return n
}

func main() {
	xs := []int{1, 2, 4, 5, -1, 6}
	println(skip([]byte("a  b"), 1), find([]byte("abc"), 'b'), scan([]byte(`abc"def`)), both(xs, map[int]bool{5: true}), calls(xs))
}
