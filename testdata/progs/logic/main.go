// && and || in conditions and values, else-if chains.
package main

type flag bool

func check(a, b, c int) bool {
	return a < b && (b < c || c == 0) || a == 42
}

func sign(x int) int {
	if x > 0 {
		return 1
	} else if x < 0 {
		return -1
	} else if x == 0 && true {
		return 0
	}
	return 99
}

//go:noinline
func mix(n int) int { return n*7 + 1 }

// constOperands: go/ssa tests constant operands of && and || (3%3 != 0
// || 8 > 2) as constants, in blocks without positions; the block a
// constant test always goes to runs as often as the test does.
func constOperands(a int) int {
	x, y := a%5, a%3
	switch {
	case 3%3 != 0 || 8 > 2:
		if mix(a)%3 < 2 {
		} else if (y+mix(x))%7%2 < 2 && y%4 == 2 {
		} else {
			if mix(y)%2 != 0 {
			} else if y%3 != 0 && y%2 < 0 && 4%4 > 1 {
			}
		}
	}
	if 2 > 3 && x > 0 || y > 1 {
		x++
	}
	return x + y
}

// constChain: a test of a constant after an operand that is placed by
// the test before it (8*2+6%4 > 2 after a%4 == 0) takes its weight from
// that operand's block; 0%2 < 0 ends the chain, so g(0) never runs.
func constChain(a int) int {
	x, y := a%5, a%3
	for _, v := range []int{3, y, 0} {
		y += v
		if 7*4+0%4 != 2 {
			if a%4 == 0 && 8*2+6%4 > 2 && 0%2 < 0 && mix(0)%4 != 2 {
				break
			}
			if 3*3+0%3 != 0 || 8 > 3 {
			} else if (a+mix(x))%7%3 < 1 {
			}
		}
	}
	return x + y
}

// constLast: the last operand of the if's && is a constant, tested in a
// block without a position, so its done block's predecessors name only
// x += i, before the if: its charge goes before the inner loop, the
// statement the done block leads to.
func constLast(a int) int {
	x, y := a%5, a%3
	if mix(a)%4 < 0 {
	} else {
		for i := 0; i < 3; i++ {
			x += i
			if mix(y)%3 > 0 && 7%4 == 0 {
				return x + mix(a)
			}
			for j := 0; j < 3; j++ {
				x += j
			}
		}
	}
	return x + y
}

// constAfterOr: a constant right operand of && whose left operand is an
// ||: its block, without a position, follows the tests of both of the
// ||'s operands. (progen's small generation-3 seed 81 has the shape
// where matching by count fails.)
func constAfterOr(x int) int {
	switch {
	case (x%3 == 2 || x > 4) && 3%4 > 2:
		return 1
	case x > 2 || 2%5 > 3:
		return 2
	}
	return 0
}

// constOrAnd: constant right operands of && after an || whose one
// operand is a constant: its test, placed as that operand's tick,
// leads to the && operand's block too; and a constant first operand,
// whose test never goes there. (Alone, as here, matching by count gets
// them right too; progen's seeds 3s-9 and 3s-155 are where it did not.)
func constOrAnd(x int) int {
	switch {
	case (x%3 == 1 || 2 > 2) && 8%3 > 1:
		return 1
	case (1%3 == 2 || x*3 > 10) && 8%4 == 0:
		return 2
	}
	return 0
}

// constInArg: a && whose value is a call's argument, with an || of a
// constant and a call as its right operand. The block that tests the
// constant has no position of its own but the constant's; it evaluates
// the && operand whose || go/ssa positions, and lands there with it.
func constInArg(a int) int {
	y := a % 3
	return b2i(y < 2 && (true || sign(y) > 0))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func main() {
	s := 0
	var f flag = true
	for i := -5; i < 15; i++ {
		ok := check(i, 3, i%4)
		if flag(ok) && f {
			s++
		}
		x := i > 2 || i < -3
		if x {
			s += 2
		}
		s += sign(i-5) + constOperands(i) + constChain(i) + constLast(i) + constAfterOr(i) + constOrAnd(i) + constInArg(i)
		if g := flag(i > 0); g && f || !g {
			s += 3
		}
	}
	println(s)
}
