// Program inlining has small functions of the shapes whose instrumentation
// adds user-looking code: conditions evaluated again to charge their
// operands in the branches, the dispatch of a case that lists several
// values, a switch's bound tag, results bound to temporaries or assigned
// to the function's results. kprof's
// inliner does not cost that code, so each stays inlinable as in the plain
// build (TestInliningAsPlain), and the program counts exactly
// (TestExactAgainstOracle).
package main

type span struct {
	lo, hi int
	buf    []byte
}

// inside: an && chain whose operands are charged in the branches.
func inside(s *span, i int) bool {
	if s.lo <= i && i < s.hi && i < len(s.buf) && s.buf[i] != 0 {
		return true
	}
	return s.lo == i || s.hi == i
}

// class: cases that list several values (their dispatch re-reads the tag).
func class(c byte) int {
	switch c {
	case ' ', '\t', '\n', '\r':
		return 1
	case '0', '1', '2', '3', '4':
		return 2
	case 'a', 'e', 'i', 'o', 'u':
		return 3
	}
	return 0
}

// kind: a switch on an expression, whose tag kprof binds.
func kind(s *span) int {
	switch s.buf[s.lo] & 3 {
	case 0, 1:
		return 4
	case 2:
		return 5
	}
	return 6
}

// pair: two results from a call, returned through temporaries.
func pair(s *span, i int) (int, bool) {
	if i < 0 {
		return 0, false
	}
	return split(s.hi + i)
}

func split(n int) (int, bool) {
	if n < 0 {
		panic("negative")
	}
	return n / 2, n%2 == 0
}

// clamp: an || chain with an else.
func clamp(s *span, i int) int {
	if i < s.lo || i > s.hi || s.lo > s.hi {
		i = s.lo
	} else {
		i++
	}
	return i
}

// scan: a function that accumulates its charges, with a loop condition and
// an if condition whose operands are charged in the branches.
func scan(s *span) int {
	n := 0
	for i := s.lo; i < s.hi && i < len(s.buf); i++ {
		if s.buf[i] > 100 && s.buf[i] < 200 {
			n++
		}
	}
	m, _ := split(n)
	return m
}

// digit: a function that accumulates its charges and returns a condition
// whose operand ticks come before its final check.
func digit(r int) bool {
	if r <= 0x7f {
		return '0' <= r && r <= '9'
	}
	_, even := split(r)
	return even
}

type box struct{ a, b, c, d, e int }

// widen: a result too big for registers, returned from a call through the
// function's results (which kprof names).
func widen(s *span, i int) box {
	if i < 0 {
		return box{}
	}
	return fill(s, i)
}

// fill has a loop: it checks, so widen pushes itself and pops after fill
// returns.
func fill(s *span, i int) box {
	b := box{s.lo, s.hi, i, 0, i * 2}
	for _, c := range s.buf[:4] {
		b.d += int(c)
	}
	return b
}

func main() {
	s := &span{lo: 1, hi: 40, buf: make([]byte, 48)}
	for i := range s.buf {
		s.buf[i] = byte(i*7 + 3)
	}
	sum := 0
	for round := 0; round < 50; round++ {
		for i := -2; i < 50; i++ {
			if inside(s, i) {
				sum += 3
			}
			sum += class(byte(i+'0')) + class(byte(i+'a'))
			s.lo = (i + round + 8) % 8
			sum += kind(s)
			n, even := pair(s, i)
			if even {
				sum += n
			}
			sum += clamp(s, i) + scan(s)
			b := widen(s, i)
			sum += b.a + b.e
			if digit(i*5 + 40) {
				sum++
			}
		}
	}
	println(sum)
}
