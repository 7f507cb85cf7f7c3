// Small leaves inlined into functions that accumulate their charges: the
// patched inliner moves the leaves' charges into the caller's accumulator,
// except where the caller has already flushed it (return results, panic
// arguments). The exact total must not change.
package main

func sq(x int) int { return x * x }

func cube(x int) int {
	if x < 0 {
		return -x * x * x
	}
	return x * x * x
}

// sumSquares calls only small leaves in its loop: their charges fold.
//
//go:noinline
func sumSquares(xs []int) int {
	s := 0
	for _, x := range xs {
		s += sq(x) + cube(x)
	}
	return s
}

// last calls a leaf in its return result, after its last flush.
//
//go:noinline
func last(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return sq(n) + cube(len(xs))
}

// inner is inlined into outer: the leaves' charges fold into inner's
// accumulator there, and outer's own charges into outer's.
func inner(x int) int {
	t := 0
	for i := 0; i < x; i++ {
		t += sq(i)
	}
	return t + cube(x)
}

func outer(xs []int) int {
	s := 0
	for _, x := range xs {
		s += inner(x) + sq(x)
	}
	return s
}

// check is a small leaf that panics: inlined into sumChecked, its charges
// must not go to sumChecked's accumulator, which the panic unwinds
// unflushed (guarded recovers).
func check(x int) int {
	if x > 190 {
		panic(x)
	}
	return x + 1
}

//go:noinline
func sumChecked(xs []int) int {
	s := 0
	for _, x := range xs {
		s += check(x)
	}
	return s
}

// guarded returns f(xs), or minus what it panicked with.
func guarded(f func([]int) int, xs []int) (s int) {
	defer func() {
		if e := recover(); e != nil {
			s = -e.(int)
		}
	}()
	return f(xs)
}

// twice is not a leaf: it calls check, which panics past 190.
//
//go:noinline
func twice(x int) int { return 2 * check(x) }

// leafThenCall calls a small leaf and then, in the same block, a function
// that may panic: folded into leafThenCall's accumulator, the leaf's
// charges would be lost when the panic unwinds it (guarded
// recovers), so they stay in the count.
//
//go:noinline
func leafThenCall(xs []int) int {
	s := 0
	for _, x := range xs {
		y := sq(x)
		s += twice(y)
	}
	return s
}

// boom panics with a leaf's result.
func boom(x int) (r int) {
	defer func() {
		if e := recover(); e != nil {
			r = e.(int) + sq(2)
		}
	}()
	for i := 0; i < x; i++ {
		if i == 3 {
			panic(cube(i))
		}
	}
	return sq(x)
}

func below(i int) bool { return i < -3 }

// orLeaf calls a small leaf in the right operand of ||: its charges fold
// into orLeaf's accumulator only when the operand is evaluated. (Go
// 1.26's stock compiler runs an assignment inlined there whether or not
// the operand is evaluated, when the result then decides a branch:
// testdata/fusephi.)
//
//go:noinline
func orLeaf(xs []int) int {
	n := 0
	for _, i := range xs {
		if i > 2 || below(i) {
			n += 100
		}
	}
	return n
}

// A state machine after encoding/json/jsontext's (Go 1.27): push is
// inlined into pushAll, and the small leaves full and bump into push's
// inlined body, where their checks fold into push's accumulator. bump
// stands after push's final check on its path (a block that returns
// checks at its start), and push's inlined return is a plain block,
// "~R0 = 0; goto .i0": bump's charges must stay in the count (folded,
// they were lost sampled and counted twice exact).
type state uint64

func (s state) full() bool { return s&3 == 3 }

func (s *state) bump() { *s += 4 }

type machine struct {
	stack []state
	last  state
}

func (m *machine) push() int {
	switch {
	case m.last.full():
		return 1
	case len(m.stack) == 64:
		return 2
	default:
		m.last.bump()
		m.stack = append(m.stack, m.last)
		return 0
	}
}

//go:noinline
func pushAll(m *machine, n int) int {
	bad := 0
	for i := 0; i < n; i++ {
		m.last = state(i % 5)
		if m.push() != 0 {
			bad++
		}
		if len(m.stack) == 64 {
			m.stack = m.stack[:0]
		}
	}
	return bad + len(m.stack)
}

func main() {
	xs := make([]int, 200)
	for i := range xs {
		xs[i] = i%17 - 8
	}
	total := 0
	for r := 0; r < 50; r++ {
		total += sumSquares(xs) + last(xs) + outer(xs[:20]) + boom(r%6) + orLeaf(xs)
	}
	ys := make([]int, 200)
	for i := range ys {
		ys[i] = i
	}
	total += guarded(sumChecked, xs) + guarded(sumChecked, ys) + guarded(leafThenCall, xs[:10]) + guarded(leafThenCall, ys)
	var m machine
	total += pushAll(&m, 2000)
	println(total)
}
