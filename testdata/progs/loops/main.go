// Loops: conditions, post statements, continue and break, labels, every
// kind of range.
package main

func main() {
	a := []int{5, -1, 3, 9, 4, 0, 7}
	s := 0
	for i := 0; i < len(a) && s < 1000; i++ {
		if a[i] < 0 {
			continue
		}
		s += a[i]
	}
	for i, v := range a {
		if v > 8 || v < 0 {
			continue
		}
		if i > 5 {
			break
		}
		s += v * i
	}
	for range 3 {
		s++
	}
	for i := range 10 {
		if i%3 == 0 {
			continue
		}
		s += i
	}
	var arr [4]int
	for i := range arr {
		arr[i] = i * i
	}
	for _, v := range &arr {
		s += v
	}
	ch := make(chan int, 5)
	for i := 0; i < 5; i++ {
		ch <- i
	}
	close(ch)
	for v := range ch {
		s += v
	}
outer:
	for i := 0; i < 5; i++ {
		for j := 0; j < 5; j++ {
			if j == 3 {
				continue outer
			}
			if i == 4 {
				break outer
			}
			s += i * j
		}
	}
	n := 0
	for n < 10 {
		n += 3
	}
	for ok := true; ok; ok = n < 20 {
		n++
	}
	m := map[int]int{1: 2, 3: 4, 5: 6}
	for k, v := range m {
		s += k * v
	}
	for range m {
		s++
	}
	q := &seq{a: a, k: 9}
	for i := 0; i < 3; i++ {
		s += q.sum()
		q.k ^= 8
	}
	s += nestedRanges(a)
	for i := range 4 {
		s += rangeIntNested(i)
	}
	for i := range 12 {
		s += rangeBeforeDone(i)
	}
	println(s, n)
}

// rangeBeforeDone: the done block of the if-else chain follows, among
// others, the header of a range loop in a switch clause, which has no
// position (its index and comparison have none): the range statement's
// stands for it. (The else if tests a constant that is false; the
// deferred closure keeps y on the heap.)
func rangeBeforeDone(a int) int {
	x, y := a%5, a%3
	if y%4 == 0 {
		switch a % 4 {
		case 1:
			for _, v := range []int{1, a, 4} {
				y += v
			}
		case 2:
			if y%3 > 1 {
				return x
			}
		}
	} else if 6%2 == 1 && a%3 < 0 {
		x++
	}
	switch {
	case 8%4 == 1 && a%7 < 2:
		defer func() { y += a }()
	}
	return x + y
}

// rangeIntNested: an integer range whose body ends in another loop.
// go/ssa fuses the range's increment and test into that loop's done
// block, so the range's own done block (a jump to the loop after it)
// follows no block of its own. (The closure keeps x on the heap: no phi
// in the done block.)
func rangeIntNested(a int) int {
	x := a % 5
	defer func() { x++ }()
	for i := range 2 {
		x += i
		for _, v := range []int{1, x, 3} {
			x += v
		}
	}
	for j := 0; j < a; j++ {
		x += j
	}
	return x
}

// nestedRanges's outer loop's done block has no position, and neither has
// its header: it is found through the loop's body.
func nestedRanges(a []int) int {
	x, y := len(a), 0
	for _, u := range []int{0, x, 0} {
		y += u
		for _, v := range []int{0, x, 3} {
			y += v
			for i := 0; i < 4; i = step(i) {
				x += i
			}
		}
	}
	for i := 0; i < 3; i++ {
		x += i
	}
	return x + y
}

func step(i int) int { return i + 1 }

// seq's loops call in their init statement and condition, right after a
// small leaf's call: each callee's entry must be its own, sampled in exact
// mode (the post statement's charge once made the count stand above what
// ran there).
type seq struct {
	a []int
	k int
}

func (q *seq) kind() int { return q.k & 7 }
func (q *seq) tag() int  { return q.k >> 3 }

func (q *seq) Len() int {
	if q.kind() == 1 {
		return len(q.a)
	}
	return q.slowLen()
}

func (q *seq) slowLen() int {
	n := 0
	for range q.a {
		n++
	}
	return n
}

func (q *seq) sum() int {
	t := q.tag()
	if t > 100 {
		return t
	}
	for i, n := 0, q.Len(); i < n; i++ {
		t += q.a[i]
	}
	if q.tag() > 100 {
		return t
	}
	for i := 0; i < q.Len(); i++ {
		t += q.a[i] * q.kind()
		if q.a[i] < 0 {
			return t
		}
	}
	return t
}
