// Expression switches (tagged, tagless, fallthrough, default in the
// middle) and type switches (single and multiple types per clause).
package main

type shape interface{ area() int }
type sq struct{ s int }
type rect struct{ w, h int }

func (q sq) area() int   { return q.s * q.s }
func (r rect) area() int { return r.w * r.h }

func classify(x interface{}) int {
	switch v := x.(type) {
	case nil:
		return -1
	case int, int8:
		return 1
	case string:
		return len(v)
	case shape:
		return v.area()
	case bool, float64, uint:
		if v == true {
			return 3
		}
	default:
		return 100
	}
	return 0
}

func kind(x interface{}) int {
	n := 0
	switch x.(type) {
	case int:
		n = 1
	case string, []byte:
		n = 2
	}
	return n
}

func grade(n int64) int64 {
	r := int64(0)
	switch n {
	case 1, 2:
		r = 10
	case 3:
		r = 20
		fallthrough
	case 4, 5, 6:
		r += 5
	default:
		r = -1
	case 7:
		r = 7
	}
	switch {
	case n > 5 && n < 7, n == 0:
		r *= 2
	case n < 0:
		r = 0
	}
	return r
}

type tok uint16

const (
	tokA tok = 250 + iota
	tokB
	tokC
	tokD
	tokE
	tokF
	tokG
	tokH
)

// lists exercises clauses that list several integer constants, whose
// dispatch is a table (values less than 256 apart) or a switch.
func lists(b byte, i8 int8, t tok, r rune, xs []int) int {
	n := 0
	switch b {
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '+', '.', 'e', 'E':
		n++
	case ' ', '\t', '\n':
		n += 2
	}
	switch i8 {
	case -128, -1, 0, 127:
		n += 3
	case -7, 7:
		n += 4
	}
	switch t {
	case tokH, tokA, tokF, tokC: // 250..257: across a multiple of 256
		n += 5
	}
	switch r {
	case 'a', 0x10000, -3: // more than 256 apart: a switch
		n += 6
	case 'é', 'ü':
		n += 7
	}
	switch xs[len(xs)-1] % 5 { // evaluated once
	case 4, 3, 2:
		n += 8
	}
	return n
}

// emptyInner: the inner switch's clauses are empty, so go/ssa threads
// their jumps through the fallthrough to the outer case 1's body: that
// block is case 1's, not the first empty clause's whose test leads to it.
func emptyInner(a int) int {
	x, y := a%5, a%3
	for _, v := range []int{3, 1, 1} {
		y += v
		switch 5 % 4 {
		case 0:
			switch y % 4 {
			case 0:
			case 1:
			}
			fallthrough
		case 1:
			if 6%3 > 2 {
				continue
			}
			for i := 0; i < 2; i++ {
				x += i
			}
		}
	}
	return x + y
}

// constFirst: tagless switches whose later case starts with a constant
// operand inside a call (b2i(7%4 == 0 && a > 1)). The block that tests it
// has no position but the constant's: it is the case's test, not what
// runs when nothing matched, nor left unplaced.
func constFirst(a int) int {
	x := a % 5
	if x > 10 {
		x++
	} else {
		switch {
		case b2i(a > 3) > 0:
			x += 2
		case b2i(7%4 == 0 && a > 1) > 0:
			x += 3
		}
	}
	switch {
	case a > 100:
		x++
	case b2i(7%4 == 0 && a > 1) > 3:
		x--
	}
	return x
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func main() {
	xs := []interface{}{nil, 1, int8(2), "hello", sq{3}, rect{2, 5}, true, false, 2.5, uint(3), []int{1}, 'x'}
	s := 0
	for _, x := range xs {
		s += classify(x) + kind(x) + nilCases(x) + defaultSwitch(x, len(xs)+s%3) + emptyInner(s) + constFirst(s%7)
	}
	for i := int64(-1); i < 9; i++ {
		s += int(grade(i))
	}
	for i := 0; i < 300; i++ {
		s += lists(byte(i), int8(i), tokA+tok(i%10)-1, rune(i*37-3), []int{i, i / 3})
	}
	for _, r := range []rune{'a', 0x10000, -3, 'é', 'ü'} {
		s += lists('E', -128, tokH, r, []int{4})
	}
	for i := 0; i < 12; i++ {
		s += nested(rune('u'+i%3), i) + constantOperand(i-6)
		s += constantChain(i, i%3) + innerDone(i)
		s += assertedBefore(box(i+1), i) + assertedInInit(box(i+2), i) + assertedInClause(box(i), i)
		s += breakOut([]int{i, i + 3, i * 5, 7}) + guardless(i) + fallInto(i)
		s += fallOnly(i) + fallOnly(i+1)*3
	}
	println(s)
}

// constantOperand's first case ends in a constant operand: its body
// follows that operand's test, which has no position.
func constantOperand(a int) int {
	n := 0
	switch {
	case a > 0 && 3%2 == 1:
		n = 1
	case a < -5:
		n = 2
	}
	return n
}

// nilCases tests nil among types: go/ssa compares with nil, positioned on
// the nil, where it asserts the others, positioned on the case keyword.
func nilCases(x interface{}) int {
	n := 0
	switch v := x.(type) {
	case int, string:
		_ = v
		n++
	case nil:
		n += 2
	default:
	}
	switch x.(type) {
	case bool, nil, sq:
		n += 3
	case rect:
	}
	switch t := x.(type) {
	case int:
		// (A closure captures t: the body begins with t's allocation,
		// positioned in the switch's header.)
		f := func() int { return t + 1 }
		n += f()
	case nil, string:
		n--
	}
	return n
}

// defaultSwitch's default clause begins with another type switch: go/ssa
// fuses it into the block of the last test, which asserts another value.
func defaultSwitch(u interface{}, i int) int {
	n := 0
	switch t := u.(type) {
	case int:
		n += t
	case string:
		n += len(t)
	default:
		switch w := box(i).(type) {
		case int:
			n += w
		case string:
			n -= len(w)
		}
	}
	return n
}

// constantChain's inner switch has two constant tests in a row, the
// first after other code in its block: go/ssa keeps both as Ifs on
// constants, without positions, and the second's block is found from the
// first.
func constantChain(a, y int) int {
	x := a % 5
	switch a % 4 {
	case 0:
		x++
	case 2, 3:
		x += a
		switch {
		case 4%2 != 2:
		case (5%2 != 0 || flag(a)):
		case x*1+y%2 > 0:
		}
		y -= a
	}
	return x + y
}

// innerDone's inner switch ends in empty clauses, so its done block holds
// only a jump, whose first predecessor begins before the switch (with the
// loop's body); the defer keeps its weight from moving to that block.
func innerDone(a int) (r int) {
	x, y := a%5, a%3
	switch {
	case y%4 > 0:
		defer func() { y += len(pick(nil, a)) }()
	case 4*1+y%2 < 2:
		for _, v := range []int{1, x, 4} {
			y += v
			switch y % 4 {
			case 1:
				fallthrough
			case 2:
			}
			for k := 0; k < int(flagInt(k)); k++ {
				x += k
			}
		}
	}
	return x + y
}

func flagInt(i int) int8 {
	if flag(i) {
		return 2
	}
	return 1
}

// flag is a call in a case expression of a switch that begins a clause's
// body: that test runs in the enclosing clause's block.
func flag(i int) bool { return i%4 == 1 }

func nested(verb rune, i int) int {
	n := 0
	switch verb {
	case 'v':
		switch {
		case flag(i):
			for k := 0; k < i; k++ {
				n += k
			}
		case flag(i + 1):
			n--
		}
	case 'u':
		switch v := box(i).(type) {
		case int:
			n += v
		case string:
			n += len(v)
		}
	case 'w':
		ch := make(chan int, 1)
		ch <- i
		select {
		case v := <-pick(ch, i):
			n += v
		default:
			n++
		}
	}
	return n
}

func box(i int) interface{} {
	if i%3 == 0 {
		return "abc"
	}
	return i
}

func pick(ch chan int, i int) chan int {
	if i%2 == 0 {
		return ch
	}
	return nil
}

// assertedBefore asserts in the block that tests the type switch's first
// case, before it: the switch's test is the assertion the block's branch
// reads, not the first one.
func assertedBefore(u interface{}, i int) int {
	n := 0
	_, isS := u.(string)
	switch w := box(i).(type) {
	case int:
		n += w
	case string:
		n += len(w)
	}
	if isS {
		n++
	}
	return n
}

// assertedInInit asserts in the switch's init, and its bodies capture the
// switch's variable.
func assertedInInit(u interface{}, i int) int {
	n := 0
	switch _, ok := u.(string); w := box(i).(type) {
	case int:
		if ok {
			n++
		}
		n += func() int { return w * 2 }()
	case string:
		n += len(w)
	}
	return n
}

// assertedInClause holds such a switch in a clause of another.
func assertedInClause(u interface{}, i int) int {
	n := 0
	switch i % 2 {
	case 0:
		_, isS := u.(string)
		switch w := box(i).(type) {
		case int:
			n += w
		case string:
			n += len(w)
		}
		if isS {
			n += 3
		}
	default:
		n--
	}
	return n
}

// breakOut leaves an inner switch for the done block of the labeled one
// around it: go/ssa drops the inner switch's empty done block, so every
// jump to the outer's done comes from inside the inner one, and the
// outer's done charge goes after the outer switch, which the breaks skip
// to, not after the inner one.
func breakOut(xs []int) int {
	g := 0
	for _, v := range xs {
	L:
		switch {
		case v == 7:
			continue
		default:
			switch v % 4 {
			case 0:
				g++
				if v > 4 {
					break L
				}
				g += 2
			case 1:
				g--
				continue
			case 2:
				g += 3
				break L
			}
		}
		for k := 0; k < 2; k++ {
			g++
		}
	}
	return g
}

// guardless: a type switch that binds no variable, on a call, with a
// clause that lists several types. What the clause's types after the
// first charge needs the guard's value again: kprof binds it (the
// tests ran for int and string alike when nothing named it).
func guardless(i int) int {
	n := 0
	switch box(i).(type) {
	case int, string:
		n++
	case nil:
		n += 2
	default:
	}
	return n
}

// fallInto: a clause ends in a tagless switch whose first clause is
// empty, and falls through into a clause whose body's first block only
// jumps (its loop's init is a constant). go/ssa threads the empty
// clause's body, and the inner switch's done block, to that block: the
// tests of both switches lead to it, and it is the second clause's.
// (The closure keeps x on the heap.)
func fallInto(i int) int {
	x, y := i%5, i%3
	c := func(d int) { x += d }
	c(1)
	switch (x + i) % 7 % 4 {
	case 0:
		switch {
		case (x+1)%3 != 0:
		case 3%4 == 2:
		case y*3+y%3 == 1 && (sq{y}).area() > 7 && 2%3 < 0:
		}
		fallthrough
	case 1:
		for j := 0; j < 4; j = step(j) {
			x += j
		}
		switch z := i % 3; z % 4 {
		case 0:
			x += z
		case 1, 2:
		}
	case 2, 3:
		y--
	default:
		x, y = y%11, x%13+3
	}
	return x + y
}

func step(j int) int { return j + 1 }

// fallOnly: a clause that only falls through has no block of its own
// (go/ssa threads its test to the next clause's body); the body, here an
// if on a constant, is the clause that the case values 2 and 3 test,
// and costs the same from both.
func fallOnly(i int) int {
	x, y := i%5, i%3
	switch (y + i) % 7 % 4 {
	case 1:
		fallthrough
	case 2, 3:
		if 3%4 != 2 {
			return x + y*2
		}
	case 0:
		fallthrough
	default:
		for j := 0; j < step(2); j = step(j) {
			if x%3 == 0 {
				continue
			}
			x++
		}
	}
	return x + y
}
