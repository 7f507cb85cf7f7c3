// Checks of inlined small leaves in a row, which kprof's compiler merges
// into one (toolchain/patches/go1.26/compile/inline, kprofMerge): four
// loads of a word ORed in a loop's condition (unicode/utf8's
// ValidString), getters added up in a comparison, leaves with their own
// accumulator (a constant branch), leaves in consecutive statements, and
// the shapes that cut a chain: a call between two leaves, the right
// operand of && and ||, a leaf in a branch.
package main

const wide = true

// word is a small leaf whose constant branch gives it an accumulator.
func word(s []byte) uint64 {
	if !wide {
		return uint64(s[0]) | uint64(s[1])<<8
	}
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// ascii reports whether s is ASCII, 32 bytes at a time where it can.
func ascii(s []byte) bool {
	for len(s) > 32 && ((word(s)|word(s[8:]))|(word(s[16:])|word(s[24:])))&0x8080808080808080 == 0 {
		s = s[32:]
	}
	for _, c := range s {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

type point struct{ x, y int }

func (p point) X() int { return p.x }
func (p point) Y() int { return p.y }

// closer counts the points closer to the origin, along the axes, than
// the point after them.
func closer(ps []point) int {
	n := 0
	for i := 1; i < len(ps); i++ {
		if ps[i-1].X()+ps[i-1].Y() < ps[i].X()+ps[i].Y() {
			n++
		}
	}
	return n
}

func sq(x int) int { return x * x }

// less compares in its result, after its final check: the getters'
// checks charge the count, not an accumulator.
//
//go:noinline
func less(a, b point) bool {
	return a.X()+a.Y() < b.X()+b.Y()
}

// norm calls leaves in consecutive statements between its push and its
// pop, where nothing follows to flush an accumulator.
//
//go:noinline
func norm(x, y, z int) int {
	a := sq(x)
	b := sq(y)
	c := sq(z)
	return a + b + c
}

// norms sums squares in consecutive statements.
func norms(v [][3]int) int {
	t := 0
	for _, p := range v {
		a := sq(p[0])
		b := sq(p[1])
		c := sq(p[2])
		t += a + b + c
	}
	return t
}

//go:noinline
func opaque(x int) int { return x ^ 5 }

// cut has a call between two leaves, leaves on both sides of && and ||,
// and a leaf in a branch.
func cut(xs []int) int {
	n := 0
	for _, x := range xs {
		n += sq(x) + opaque(x) + sq(x+1)
		if sq(x) > 10 && sq(x+2) > 40 || sq(x+3) < 5 {
			n++
		}
		if x%3 == 0 {
			n += sq(n%100) % 7
		}
		n += sq(x % 5)
	}
	return n
}

func generic[T ~int | ~int64](a, b T) T {
	return a*2 + b
}

// mixed calls a generic leaf and a method leaf in one expression.
func mixed(ps []point) int {
	t := 0
	for i := 1; i < len(ps); i++ {
		t += generic(ps[i].X(), ps[i-1].Y()) + wrap(generic(int64(ps[i].Y()), 3)).int()
	}
	return t
}

type wrap int64

func (w wrap) int() int { return int(w) }

func main() {
	buf := make([]byte, 1000)
	for i := range buf {
		buf[i] = byte('a' + i%26)
	}
	n := 0
	for r := 0; r < 30; r++ {
		if ascii(buf[r:]) {
			n++
		}
	}
	buf[700] = 0xc3
	for r := 0; r < 30; r++ {
		if ascii(buf[r:]) {
			n++
		}
	}
	ps := make([]point, 300)
	for i := range ps {
		ps[i] = point{i % 17, i % 23}
	}
	n += closer(ps)
	for i := 1; i < len(ps); i++ {
		if less(ps[i], ps[i-1]) {
			n += norm(i, n%7, 3)
		}
	}
	v := make([][3]int, 200)
	xs := make([]int, 200)
	for i := range v {
		v[i] = [3]int{i, i + 1, i % 9}
		xs[i] = i * 7 % 31
	}
	n += norms(v) % 1000
	n += cut(xs) % 1000
	n += mixed(ps) % 1000
	println(n)
}
