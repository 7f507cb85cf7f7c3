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

// chain3 has a three-operand && chain whose branches both run often,
// with an init statement whose variable the operands read.
func chain3(xs []int) int {
	n := 0
	for i := 0; i < len(xs); i++ {
		if y := xs[i] * 3; y > 2 && y%4 != 0 && xs[i] < 40 {
			n += y
		} else if xs[i] == 7 {
			n -= 7
		}
		if xs[i] == 1 || xs[i] == 2 || xs[i] == 3 || xs[i] > 50 {
			n++
		}
	}
	return n
}

// lastName is a loop whose condition mixes && and ||: the body knows the
// condition held, what follows knows it did not.
func lastName(s string) string {
	i := len(s) - 1
	depth := 0
	for i >= 0 && (s[i] != '.' || depth != 0) {
		switch s[i] {
		case ']':
			depth++
		case '[':
			depth--
		}
		i--
	}
	work(i + 3)
	return s[i+1:]
}

type shape interface{ area() int }

type sq struct{ side int }

func (s sq) area() int { return s.side * s.side }

// trees: conditions of nested && and ||, and a last operand that is not
// cheap to evaluate again (a map index, a slice, a type assertion), which
// the branches never evaluate again.
func trees(xs []int, m map[int]int, shapes []shape) int {
	n := 0
	for i, x := range xs {
		if x > 3 || (x < -2 && i%3 == 0) {
			n++
		}
		if (x > 0 && i > 5) || (x < 0 && i < 50) || x == 0 {
			n += 2
		} else {
			n--
		}
		if i > 0 && (xs[i-1] == x || m[x] > 1) {
			n += 3
		}
		if x != 7 && len(xs[i:]) > 10 {
			n++
		}
		if len(shapes) > 0 && shapes[i%len(shapes)].(sq).side > 2 {
			n += work(i)
		}
		if x > 1 && shapes[i%len(shapes)].(sq).side < 3 {
			n += 4
		}
	}
	return n
}

var flag bool

// flip is quiet (a small leaf that calls nothing) but has an effect.
func flip() int {
	flag = !flag
	return 1
}

// flips: the last operand calls a function that changes an earlier
// operand, so the branches cannot evaluate that operand again: the
// operands keep their ticks.
func flips(xs []int) int {
	n := 0
	for _, x := range xs {
		var v any = x % 3
		if flag || flip() == v.(int) {
			n++
		}
		if flag && v.(int) == flip() {
			n += 2
		}
	}
	return n
}

//go:noinline
func mixed(n int) int { return n*7 + 1 }

// constAfter: the test of 2%4 == 1 is a constant, without a position, in
// the block of y += …: the done block of its if follows that if, not the
// outer one the block's last position lies in.
func constAfter(a int, v any) int {
	x, y := a%5, a%3
	if mixed(a)%4 < 2 {
		switch t := v.(type) {
		case string:
			y += len(t)
			if 2%4 == 1 {
				return x + mixed(y)
			}
			for i := 0; i < 2; i++ {
				x += i
			}
		}
	}
	return x + y
}

// constReturn: an if on a constant that is true always returns, and the
// if after it tests a constant first. The first if's done block has no
// position; it leads, through that constant test, into the second if,
// which places it after the first if, not after the branch around both.
func constReturn(a int) int {
	x, y := a%5, a%3
	if y > 1 {
		x++
	} else {
		y++
		if 6%4 > 1 {
			return x + a
		}
		if 6%4 == 1 || x > 1 {
		}
		x++
	}
	return x + y
}

// constFirst: an if whose condition tests a constant first ends the
// loop body's block, so that block leaves from before the if, and the
// if around the loop holds where both of the inner if's done block's
// predecessors leave; that block is placed after the inner if, in the
// loop, not after the outer if (whose loop here never runs). The
// deferred closure keeps x on the heap: the loop body's block then ends
// with the store of x += i, before the inner if.
func constFirst(a int) (r int) {
	x := a % 5
	defer func() { r += x }()
	if a%3 == 1 {
		x += x
	} else if x%4 != 0 && 0%2 > 2 {
		for i := range 3 {
			x += i
			if 3%3 > 0 || x%2 == 1 {
			} else {
			}
		}
	}
	return x
}

// constIfLoops: an if on a constant that is true, whose body ends in an
// integer range. The if's done block is the range's too; it follows the
// range's tests, without positions, and the entry block's test of the
// constant, which never goes there: the positions before it are those of
// the code before the if, not of the if's body. (The deferred closure
// keeps x on the heap.)
func constIfLoops(a int) (r int) {
	x := a % 5
	defer func() { r += x }()
	if 6%2 != 1 {
		for i := small(x) % 2; i < small(2); i++ {
			x += i
		}
		for i := range 3 {
			x += i
			switch {
			case (a%4 < 0 || 6 > 4) && 2%4 == 1:
			case a%3 != 1 && 2%2 > 1:
			}
		}
	}
	for i := range 2 {
		x += i
	}
	return x
}

// constAfterSwitch: the done block of an if on a constant that is false
// holds the integer range's increment; it follows a switch whose default
// clause ends in an if with a constant operand, which go/ssa threads
// away. Without a position for the test of 7%2 > 1, where control left
// the switch's done block told nothing, and the increment went after the
// if in the default clause (a count short on every other iteration).
func constAfterSwitch(a int) int {
	x, y := a%5, a%3
	for i := range 3 {
		x += i
		switch x {
		case 1:
		default:
			if x > 2 && 6%4 > 2 {
				break
			}
		}
		if 7%2 > 1 {
			return x + x
		}
	}
	return (x + y) % 1000
}

func small(n int) int { return n % 5 }

func main() {
	xs := make([]int, 0, 100)
	for i := 0; i < 100; i++ {
		xs = append(xs, (i*37)%61-5)
	}
	data := []byte(`ab"c\de"fgh ijk "lmn\"`)
	total := 0
	for round := 0; round < 20; round++ {
		total += skip(data, round%len(data)) + find(data, byte('a'+round%8)) + scan(data[round%len(data):]) + both(xs, map[int]bool{5: true, 12: true}) + calls(xs[:10]) + chain3(xs)
		total += len(lastName("a.b[c.d].e[f.g]")) + len(lastName("pkg.Type[x.y]")) + trees(xs, map[int]int{5: 2, 12: 1, -3: 4}, []shape{sq{1}, sq{3}, sq{round % 5}}) + flips(xs)
		total += constAfter(round, "ab") + constAfter(round, round) + constReturn(round) + constFirst(round) + constIfLoops(round)
		total += constAfterSwitch(round)
	}
	println(total)
}
