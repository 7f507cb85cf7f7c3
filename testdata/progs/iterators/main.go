// Range-over-func iterators with break and early return.
package main

func count(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				return
			}
		}
	}
}

func firstOver(n, limit int) int {
	for v := range count(n) {
		if v*v > limit {
			return v
		}
	}
	return -1
}

// pairs returns from inside two nested range-over-func loops: both
// iterators are on the stack when it returns.
func pairs(n, want int) (int, int) {
	for a := range count(n) {
		for b := range count(n) {
			if a*b == want {
				return a, b
			}
		}
	}
	return -1, -1
}

// search has named results and a deferred call; it returns from the loop
// body with a call in its result.
func search(n, limit int) (found int, tries int) {
	defer func() { tries++ }()
	for v := range count(n) {
		tries++
		if v*v*v > limit {
			return square(v), tries
		}
	}
	return -1, tries
}

func square(x int) int { return x * x }

// skipper continues the outer loop from inside the inner loop's body: for
// the outer body that is its own continue, not an exit of the loop.
func skipper(n int) int {
	s := 0
Outer:
	for a := range count(n) {
		for b := range count(n) {
			if b > a {
				continue Outer
			}
			s += b
		}
	}
	return s
}

// breaker leaves both loops from the inner body, and the inner loop alone.
func breaker(n int) int {
	s := 0
Outer:
	for b := range count(n) {
		for c := range count(n) {
			if b+c > 5 {
				break Outer
			}
			if c == 1 {
				break
			}
			s += c
		}
	}
	return s
}

// gotoInBody: the if's done block in a range-over-func body has a
// predecessor without a position (the constant operand 8%4 > 1) and the
// body's first block, whose first positioned instruction (the store to
// the loop's jump variable) go/ssa places at the closing brace.
func gotoInBody(a int) int {
	x, y := a%5, a%3
	for v := range count(3) {
		y += v
		if y%3 < 0 && 8%4 > 1 && a%4 > 0 {
			goto next
		}
		if 0%2 != 1 || a*4+y > 0 {
			return x + a
		}
	next:
		x++
	}
	return x + y
}

// postCalls: a loop inside a range-over-func body whose post statement
// calls and whose body ends in a switch (or an if), so that go/ssa keeps
// the post statement in a block of its own. The body checks before it,
// at the end of the loop's body and before each continue; without those
// checks the call found the body's instructions pending and sampled
// them in the iterator's context.
func postCalls(a int) int {
	x := 0
	for v := range count(4) {
		for i := 0; i < 3; i = bump(i) {
			x += i
			if i == a%3 {
				continue
			}
			switch a % 4 {
			case 0:
			case 1:
				x++
			case 2:
			}
		}
		x += v
	}
	return x
}

func bump(i int) int { return i + 1 }

func ready(n int) chan int {
	if n%2 == 0 {
		return nil
	}
	c := make(chan int, 1)
	c <- n % 7
	return c
}

// constContinue: the body's continue stands behind a test of constants,
// so the body's end is never reached; go/ssa positions the continue's
// block, the select's done block, at the body's closing brace, as it
// does the implicit continue at the end.
func constContinue(a int) int {
	x, y := a%5, a%3
L:
	for v := range count(a % 4) {
		y += v
		select {
		case w := <-ready(a + v):
			x += w
		default:
		}
		if 2%2 == 0 && 6%3 < 1 {
			continue L
		}
	}
	return x + y
}

// resumeDone: the ends of a select nested in another's case jump to the
// outer select's done block, and so do the blocks that dispatch on how
// the range-over-func loop in its default left, which have no position:
// the done block is the outer select's, after it, not the inner's.
func resumeDone(a int) int {
	x, y := a%5, a%3
	select {
	case v := <-ready(a):
		x += v
		select {
		case w := <-ready(a + 2):
			x += w
		default:
			y++
		}
	default:
		for v := range count(x) {
			y += v
		}
	}
	for i := range 3 {
		x += i
	}
	return x + y
}

// deadCaseRange: a case that never matches (its test is of constants)
// holds a range-over-func loop, whose resume blocks, which never run,
// jump to the switch's done block, where the integer range's increment
// is too; that block goes after the outer switch, not after the switch
// nested in the other case (where positions before it pointed, for want
// of the resume blocks' own).
func deadCaseRange(a int) int {
	x, y := a%5, a%3
	for i := range 1 {
		x += i
		switch {
		case 1%4 < 0 && 0%3 != 2:
			for v := range count(y) {
				y += v
			}
		case x%3 != 2:
			switch y % 4 {
			case 0:
			case 1:
			case 2, 3:
			}
		}
	}
	return x + y
}

// emptyClauses: in a range-over-func body, a switch's done block (which
// returns to the iterator) follows empty clauses of a type switch nested
// in one of its clauses: blocks that only jump, with no position. Where
// control left them is where their tests did, in the switch.
func emptyClauses(a int) int {
	x, y := a%5, a%3
	for v := range count(a % 4) {
		y += v
		switch {
		case x > 1:
			switch t := any(a).(type) {
			case int, string:
				_ = t
			case nil:
				y++
			default:
			}
		case y < 0:
			switch {
			case y%3 != 2 && square(a) > 1:
			}
		}
	}
	return x + y
}

// fusedRangeTest: in a range-over-func body, the done block of a switch
// follows, among others, the test before an integer range's first
// iteration, which go/ssa fuses into the clause's block: it has no
// position (0 < 3 compares constants); the range statement's stands
// for it.
func fusedRangeTest(a int) int {
	x, y := a%5, a%3
	for v := range count(5) {
		y += v
		switch y % 5 {
		case 1:
			for i := range 3 {
				x += i
			}
		case 2:
			if y > 2 {
				continue
			}
			switch y % 3 {
			case 1:
			}
		}
		if 2%3 == 1 || y > 3 {
			continue
		}
	}
	return x + y
}

// panicThrough: a panic in a range-over-func body leaves the loop through
// the iterator and is recovered by the function literal around the loop.
// The blocks that run after the iterator returns (its resume checks)
// never run then: they are charged after the loop and at its exits, not
// before it.
func panicThrough(a int) int {
	hits := 0
	for x := range count(6) {
		func() {
			defer func() {
				if recover() != nil {
					hits++
				}
			}()
			for y := range count(6) {
				if x+y == a {
					panic(y)
				}
			}
		}()
		for y := range count(6) {
			if x*y == a {
				return hits + x
			}
		}
	}
	return hits
}

// tickArg: in range-over-func bodies, && and || operands (ticks) that a
// call in the same statement follows, in a return's results too. The statement checks before them,
// so each checks after its charge, in the body's name: the callee's entry
// check would sample them in the iterator's.
func tickArg(n int) int {
	r := 0
	for x := range count(n) {
		r += b2i(x > 2 && x < 5)
		if x%2 > 2 || b2i(x%4 == 0 || r > 2) > 0 {
			// (The operand that calls checks before it, and the
			// tick in the call's argument after.)
			r++
		}
		for y := range count(n) {
			r += b2i(x > y && y > 1 || x == 3)
			if y == 2 && x == 3 {
				// (Its results are evaluated before the final check:
				// of the function's type, not the body's bool.)
				return r + b2i(x > 4 || y < x)
			}
		}
	}
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// caseCalls: in a range-over-func body, case values and case expressions
// that call, after comparisons and && and || operands whose charges must
// not be pending when the callee samples (a guard: it agreed with the
// oracle before the checks of tickArg came).
func caseCalls(n int) (r int) {
	for x := range count(n) {
		switch x {
		case 1, double(x) - 3, 7:
			r++
		case double(x + 1):
			r += 2
		}
		switch {
		case x > 2 && double(x) < 9:
			r += 3
		case x == 1 || x == 5:
			r += b2i(x > 3 || x < 1)
		}
	}
	return r
}

func double(x int) int { return x * 2 }

func main() {
	s := 0
	for i := range 4 {
		s += gotoInBody(i) + postCalls(i) + constContinue(i) + resumeDone(i) + deadCaseRange(i) + emptyClauses(i) + fusedRangeTest(i)
	}
	for i := range 9 {
		s += panicThrough(i) + tickArg(i) + caseCalls(i)
	}
	for v := range count(10) {
		if v == 7 {
			break
		}
		if v%2 == 0 {
			continue
		}
		s += v
	}
	s += firstOver(100, 50)
	a, b := pairs(20, 42)
	f, t := search(30, 1000)
	s += a + b + f + t + skipper(6) + breaker(8) + ticked(12) + shadowed(12)
	println(s)
}

type pt struct{ x, y int }

func (p pt) sum() int { return p.x + p.y }

// ticked's body charges a block that calls in a case expression, a
// tick: it checks after the charge, so that the call does not find the
// body's instructions pending, and a function literal in the body is a
// function of its own, not a body.
func ticked(n int) int {
	s := 0
	for v := range count(n) {
		s += v
		if (pt{v, s}).sum()%3 == 1 {
			goto next
		}
		switch {
		case (s+pt{v, 1}.sum())%2 == 0:
			s++
		}
		s += func() int { return square(v) % 5 }()
	next:
		s--
		// Case values that call: each value's block is charged and
		// checked before the value's calls.
		switch v % 3 {
		case square(v) % 3:
			s += 2
		case (pt{v, s}).sum() % 3:
			s -= 2
		case square(s+1) % 3:
			s *= 2
		}
	}
	return s
}

// shadowed's locals hide the predeclared int64 and uint8, which the text
// of a case value's tick and of a dispatch table must not name.
func shadowed(n int) int {
	s := 0
	int64, uint8 := 2, 3
	for v := range count(n) {
		s += v
		switch v % 3 {
		case 0:
			s++
		case square(s) % 3:
			s += int64
		}
		switch v {
		case 1, 2, 3, 4:
			s += uint8
		case 5:
			s--
		}
	}
	return s
}
