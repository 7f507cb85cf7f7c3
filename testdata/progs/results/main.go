// Returns whose results call functions, in functions that pop by count:
// results too big for registers (returned through the function's result
// variables, named by kprof where they have no names), more than four
// results, named results, a named result hidden by a local variable, blank
// results, conversions to interfaces, and a recursive function whose
// result is a big struct.
package main

type pos struct {
	file              string
	offset, line, col int
}

func (p pos) String() string {
	return p.file + ":" + itoa(p.line) + ":" + itoa(p.col) + "(" + itoa(p.offset) + ")"
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

type stringer interface{ String() string }

type errFar struct{ off int }

func (e *errFar) Error() string { return "far " + itoa(e.off) }

type table struct{ lines []int }

func (t *table) find(off int) int {
	i := 0
	for i < len(t.lines) && t.lines[i] <= off {
		i++
	}
	return i
}

func (t *table) at(off int) pos {
	l := t.find(off)
	return pos{"a.go", off, l, off - t.lines[max(l-1, 0)] + 1}
}

// position returns a big struct through an unnamed result.
func (t *table) position(off int) pos {
	if off < 0 {
		return pos{}
	}
	return t.at(off)
}

// named has a named big result.
func (t *table) named(off int) (p pos) {
	if off%2 == 0 {
		return t.at(off + 1)
	}
	p = t.at(off)
	return
}

// hidden hides its named result in an inner scope.
func (t *table) hidden(off int) (p pos) {
	p = t.at(off)
	if off > 3 {
		p := t.at(off - 1)
		return t.at(p.offset - 1)
	}
	return p
}

// blank has blank named results.
func (t *table) blank(off int) (_ pos, _ error) {
	if off > 5 {
		return t.at(off), &errFar{off}
	}
	return t.at(off), nil
}

// five has more than four results.
func (t *table) five(off int) (int, int, int, pos, string) {
	p := t.at(off)
	return t.find(off), p.line, p.col, t.at(off + 1), p.String()
}

// asStringer converts a big struct result to an interface.
func (t *table) asStringer(off int) stringer {
	return t.at(off)
}

// twice returns a call with several results.
func (t *table) twice(off int) (pos, pos) {
	return t.blankNil(off)
}

func (t *table) blankNil(off int) (pos, pos) {
	a, _ := t.blank(off)
	return a, t.position(off + 2)
}

// walk recurses with a big result.
func (t *table) walk(off, depth int) pos {
	if depth == 0 {
		return t.position(off)
	}
	p := t.walk(off+1, depth-1)
	return pos{p.file, p.offset + 1, p.line, p.col + depth}
}

// literal returns a big struct from a function literal.
func (t *table) literal(off int) pos {
	f := func(o int) pos {
		return t.at(o * 2)
	}
	return f(off)
}

func main() {
	t := &table{lines: []int{0, 4, 9, 15, 22, 30}}
	sum := 0
	for off := 0; off < 32; off++ {
		p := t.position(off)
		q := t.named(off)
		h := t.hidden(off)
		b, err := t.blank(off)
		n, l, c, r, s := t.five(off)
		x, y := t.twice(off)
		w := t.walk(off, off%5)
		v := t.literal(off % 16)
		sum += p.line + q.col + h.offset + b.line + n + l + c + r.col + len(s) + x.col + y.line + w.col + v.offset
		if off%8 == 0 {
			e := "nil"
			if err != nil {
				e = err.Error()
			}
			println(p.String(), q.String(), h.String(), b.String(), e, s, x.String(), y.String(), w.String(), v.String(), t.asStringer(off).String())
		}
	}
	println(sum)
}
