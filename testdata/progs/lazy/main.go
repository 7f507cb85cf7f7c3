// Functions that push themselves lazily: they call on some paths only, so
// they push their identifier where those paths begin, not at entry. Their
// checks sample before and after the push (counter.W tells which), their
// returns on paths without a call restore nothing, and a panic from a path
// without a push unwinds to a caller that recovers.
package main

type scanner struct {
	step  func(*scanner, byte) int
	depth int
	errs  int
}

// fail is the slow path: it loops, so it checks, and its callers are no
// leaves.
func (s *scanner) fail(c byte) int {
	s.errs++
	n := 0
	for i := byte(0); i < c%4; i++ {
		n += int(i)
	}
	return n + int(c)%7
}

// inString returns early on its common paths; only a control character
// makes it call.
func inString(s *scanner, c byte) int {
	if c == '"' {
		s.step = afterString
		return 1
	}
	if c == '\\' {
		return 2
	}
	if c < 0x20 {
		return s.fail(c)
	}
	return 0
}

func afterString(s *scanner, c byte) int {
	if c == ' ' || c == '\n' {
		return 3
	}
	s.step = inString
	return 4
}

// classify switches on an expression that is not a variable (the tag is
// bound to a variable so that its clauses can tell which value matched),
// and calls in one clause only.
func classify(data []byte, i int, s *scanner) int {
	switch data[i] + 1 {
	case '0' + 1, '1' + 1, '2' + 1, '3' + 1:
		return 1
	case 'a' + 1, 'b' + 1:
		return 2
	case '!' + 1:
		return s.fail(data[i])
	}
	return 0
}

// loopMixed calls on some iterations only: its loop header's check comes
// sometimes before, sometimes after its push.
func loopMixed(data []byte, s *scanner) int {
	n := 0
	for i := 0; i < len(data); i++ {
		if data[i] == 'x' {
			n += s.fail(data[i])
		}
		n += int(data[i] & 3)
	}
	return n
}

// untilZero's loop condition checks (a tick) before and after its push.
func untilZero(data []byte, s *scanner) int {
	i, n := 0, 0
	for i < len(data) && data[i] != 0 {
		if data[i] == '!' {
			n += s.fail(data[i])
		}
		i++
	}
	return n + i
}

// digits's loop condition checks in a tick (the loop has an empty body),
// before its push; it recurses after the loop on long runs only.
func digits(s []byte, from int) int {
	n := from
	for ; n < len(s) && s[n] >= '0' && s[n] <= '9'; n++ {
	}
	if n == from {
		return 0
	}
	if n-from > 3 && n+1 < len(s) {
		return n - from + digits(s, n+1)
	}
	return n - from
}

// depthOf recurses on one path only.
func depthOf(n int) int {
	if n <= 1 {
		return 1
	}
	if n%3 == 0 {
		return n / 3
	}
	return depthOf(n-1) + 1
}

// mustPositive panics on a path that pushes nothing.
func mustPositive(x int) int {
	if x < 0 {
		panic("negative")
	}
	if x == 0 {
		return bump(x)
	}
	return x * 2
}

func bump(x int) int {
	for i := 0; i < 3; i++ {
		x += i
	}
	return x
}

func safe(x int) (r int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return mustPositive(x)
}

func main() {
	s := &scanner{step: inString}
	data := []byte(`"ab\"x 1" "y\n" 0123 abx! x"x`)
	data = append(data, 3, 5, 'x')
	total := 0
	for round := 0; round < 300; round++ {
		for _, c := range data {
			total += s.step(s, c)
		}
		for i := range data {
			total += classify(data, i, s)
		}
		total += loopMixed(data, s)
		total += untilZero(data, s)
		total += digits([]byte("12345x6789y01z"), round%14)
		total += depthOf(round%40 + 1)
		total += safe(round%5 - 2)
	}
	println(total, s.errs)
}
