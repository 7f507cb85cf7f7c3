// Loops that clear an array or a slice, which the compiler turns into one
// clear of memory and kprof charges in bulk before the loop, and loops
// that look like them but are not.
package main

type point struct{ x, y int }

type table struct {
	codes [64]uint32
	names [8]string
	pts   [4]point
	ptrs  [4]*point
	flags [16]bool
}

func (t *table) fill(k int) {
	for i := range t.codes {
		t.codes[i] = uint32(i * k)
	}
	for i := range t.names {
		t.names[i] = "n"
	}
	for i := range t.pts {
		t.pts[i] = point{i, k}
		t.ptrs[i] = &t.pts[i]
	}
	for i := range t.flags {
		t.flags[i] = i%k == 0
	}
}

func (t *table) clear() {
	for i := range t.codes {
		t.codes[i] = 0
	}
	for i := range t.names {
		t.names[i] = ""
	}
	for i := range t.pts {
		t.pts[i] = point{}
	}
	for i, _ := range t.ptrs {
		t.ptrs[i] = nil
	}
	var i int
	for i = range t.flags {
		t.flags[i] = false
	}
	_ = i
}

func (t *table) sum() int {
	s := 0
	for _, c := range t.codes {
		s += int(c)
	}
	for _, n := range t.names {
		s += len(n)
	}
	for _, p := range t.pts {
		s += p.x + p.y
	}
	for _, p := range t.ptrs {
		if p != nil {
			s++
		}
	}
	for _, f := range t.flags {
		if f {
			s++
		}
	}
	return s
}

// notClears are loops of nearly the same shape that are not clears.
func notClears(s []int, a [8]int) int {
	for i := range s {
		s[i] = 1 // not zero
	}
	j := 0
	for i := range s {
		s[j] = 0 // not the key
		_ = i
	}
	for i := range s {
		s[i] = 0
		j++ // two statements
	}
	for i := range a {
		a[i] = 0
	}
	n := 0
	for _, v := range a {
		n += v
	}
	for _, v := range s {
		n += v
	}
	return n + j
}

func clearSlice(s []int) int {
	for i := range s {
		s[i] = 0
	}
	n := len(s)
	var empty []int
	for i := range empty {
		empty[i] = 0
	}
	return n
}

// shadowedLen hides len: its clear loop is charged as any loop.
func shadowedLen(s []int) int {
	len := 3
	for i := range s {
		s[i] = 0
	}
	return len
}

type empty struct{}

// zeroSize clears elements of size zero: nothing to clear, no bulk charge.
func zeroSize() int {
	var a [1 << 20]empty
	for i := range a {
		a[i] = empty{}
	}
	return len(a)
}

// zeroGeneric clears a slice of a type parameter.
func zeroGeneric[T ~int | ~int64](s []T) int {
	for i := range s {
		s[i] = 0
	}
	return len(s)
}

// inClosure clears in a function literal.
func inClosure(s []any) int {
	f := func() {
		for i := range s {
			s[i] = nil
		}
	}
	f()
	return len(s)
}

// places clears through a pointer to an array and in case clauses.
func places(s []int, p *[4]int) int {
	n := 0
	for i := range s {
		s[i] = 0
	}
	for i := range *p {
		(*p)[i] = 0
	}
	switch len(s) {
	case 0:
		n--
		for i := range p {
			p[i] = 0
		}
	default:
		for i := range s {
			s[i] = 0
		}
		n++
	}
	return n
}

func seq(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				return
			}
		}
	}
}

// inRangeFunc clears in a range-over-func loop body (a function of its own).
func inRangeFunc(s []int) int {
	n := 0
	for k := range seq(3) {
		for i := range s {
			s[i] = 0
		}
		n += k + len(s)
	}
	return n
}

func main() {
	t := &table{}
	total := 0
	for k := 1; k <= 5; k++ {
		t.fill(k)
		total += t.sum()
		t.clear()
		total += t.sum()
	}
	s := make([]int, 100)
	for i := range s {
		s[i] = i
	}
	total += notClears(s, [8]int{1, 2, 3, 4, 5, 6, 7, 8})
	total += clearSlice(s)
	total += clearSlice(nil)
	for _, v := range s {
		total += v
	}
	total += shadowedLen(s) + zeroSize() + zeroGeneric([]int64{1, 2, 3})
	total += inClosure([]any{1, "x", nil}) + inRangeFunc(s[:7])
	total += places(s[:10], &[4]int{1, 2, 3, 4}) + places(nil, &[4]int{})
	println(total)
}
