// Command recursion is the kprof evaluation workload for deep recursion
// that returns and descends again: a recursive-descent parser over deeply
// nested input, and a recursive structural comparison of what it built —
// the shapes where a profiler that walks the whole stack at each sample
// becomes quadratic in the depth.
//
// Each round generates a document nested depth levels deep (lists of
// numbers and one nested list each, "[3,[1,4,[…]],1]"), parses it twice,
// compares the two trees element by element, changes one leaf deep down
// and compares again (a difference found only at the bottom), and hashes
// the tree, all recursively.
//
// Usage: recursion [-n units]. Each unit of -n is 4 rounds at depth
// 20,000. The program prints one deterministic checksum line.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const (
	roundsPerUnit = 4
	depth         = 20_000
)

// value is a number or a list.
type value struct {
	num  int64
	list []*value
}

// generate writes a document nested depth levels deep.
func generate(buf []byte, seed uint64) []byte {
	x := seed | 1
	next := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	for d := 0; d < depth; d++ {
		buf = append(buf, '[')
		for k := next() % 3; k > 0; k-- {
			buf = strconv.AppendUint(buf, next()%1000, 10)
			buf = append(buf, ',')
		}
	}
	buf = append(buf, '0')
	for d := 0; d < depth; d++ {
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, next()%1000, 10)
		buf = append(buf, ']')
	}
	return buf
}

// parser is a recursive-descent parser: value → number | '[' value {',' value} ']'.
type parser struct {
	src []byte
	pos int
}

func (p *parser) value() (*value, error) {
	if p.pos >= len(p.src) {
		return nil, fmt.Errorf("unexpected end at %d", p.pos)
	}
	if p.src[p.pos] == '[' {
		p.pos++
		return p.list()
	}
	return p.number()
}

func (p *parser) list() (*value, error) {
	v := &value{}
	for {
		e, err := p.value()
		if err != nil {
			return nil, err
		}
		v.list = append(v.list, e)
		if p.pos >= len(p.src) {
			return nil, fmt.Errorf("unterminated list")
		}
		c := p.src[p.pos]
		p.pos++
		if c == ']' {
			return v, nil
		}
		if c != ',' {
			return nil, fmt.Errorf("unexpected %q at %d", c, p.pos-1)
		}
	}
}

func (p *parser) number() (*value, error) {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if start == p.pos {
		return nil, fmt.Errorf("number expected at %d", start)
	}
	n, err := strconv.ParseInt(string(p.src[start:p.pos]), 10, 64)
	return &value{num: n}, err
}

// equal compares two values structurally, recursively.
func equal(a, b *value) bool {
	if (a.list == nil) != (b.list == nil) || len(a.list) != len(b.list) {
		return false
	}
	if a.list == nil {
		return a.num == b.num
	}
	for i := range a.list {
		if !equal(a.list[i], b.list[i]) {
			return false
		}
	}
	return true
}

// hash folds a value into h, recursively.
func hash(v *value, h uint64) uint64 {
	if v.list == nil {
		return (h ^ uint64(v.num)) * 0x100000001b3
	}
	h = (h ^ '[') * 0x100000001b3
	for _, e := range v.list {
		h = hash(e, h)
	}
	return (h ^ ']') * 0x100000001b3
}

// deepest returns the innermost list's first number.
func deepest(v *value) *value {
	for {
		last := v.list[len(v.list)-2] // the nested list precedes the closing number
		if last.list == nil {
			return v.list[0]
		}
		v = last
	}
}

func main() {
	n := flag.Int("n", 25, "problem size: units of 4 rounds")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "recursion: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	sum := fnv.New64a()
	var buf []byte
	same, differ := 0, 0
	for r := 0; r < *n*roundsPerUnit; r++ {
		buf = generate(buf[:0], uint64(r)+1)
		a, err := (&parser{src: buf}).value()
		if err != nil {
			fmt.Fprintln(os.Stderr, "recursion:", err)
			os.Exit(1)
		}
		b, _ := (&parser{src: buf}).value()
		if equal(a, b) {
			same++
		}
		deepest(b).num++
		if !equal(a, b) {
			differ++
		}
		fmt.Fprintf(sum, "%d %x\n", r, hash(a, 0xcbf29ce484222325))
	}
	if same != *n*roundsPerUnit || differ != same {
		fmt.Fprintf(os.Stderr, "recursion: %d equal, %d different after a change; want %d\n", same, differ, *n*roundsPerUnit)
		os.Exit(1)
	}
	fmt.Printf("recursion n=%d rounds=%d depth=%d checksum=%016x\n", *n, same, depth, sum.Sum64())
}
