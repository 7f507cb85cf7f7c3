package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

var (
	// ErrCorrupt is wrapped by the errors of Parse for input that is not a
	// well-formed profile file: not a kprof profile at all, truncated,
	// damaged, or the encoding of a profile that fails CheckValid.
	ErrCorrupt = errors.New("corrupt kprof profile")
	// ErrVersion is wrapped by the errors of Parse for a file written in a
	// newer format version than this package reads.
	ErrVersion = errors.New("unsupported kprof profile format version")
)

// Parse reads a profile in the kprof file format from r. It rejects anything
// but a valid profile's canonical encoding (see the package comment) with an
// error wrapping ErrCorrupt or ErrVersion; the profile it returns is valid
// and canonical.
func Parse(r io.Reader) (*Profile, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	return decode(b)
}

// ParseFile reads a profile from the named file, as Parse.
func ParseFile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// decoder reads the file format from b. Every read checks what it reads
// against the bytes that remain, so no count in the file makes the decoder
// allocate more than a bounded multiple of len(b). The first error sticks:
// after it, reads return zero values and loops end.
type decoder struct {
	b   []byte
	off int
	err error
	// section and item name what is being read, for error messages.
	section string
	item    int // -1 when the section has no items
}

func decode(b []byte) (*Profile, error) {
	d := &decoder{b: b}
	p := d.profile()
	if d.err != nil {
		return nil, d.err
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return p, nil
}

// fail records a corruption found at byte offset off, unless an earlier error
// was recorded.
func (d *decoder) fail(off int, format string, args ...any) {
	if d.err != nil {
		return
	}
	what := d.section
	if d.item >= 0 {
		what = fmt.Sprintf("%s %d", d.section, d.item)
	}
	d.err = fmt.Errorf("%w at byte offset %d: %s: %s", ErrCorrupt, off, what, fmt.Sprintf(format, args...))
}

func (d *decoder) enter(section string) { d.section, d.item = section, -1 }

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	x, n := uvarint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail(d.off, "unexpected end of data reading %s", field)
		return 0
	case n < 0:
		d.fail(d.off, "%s overflows 64 bits", field)
		return 0
	case n > 1 && d.b[d.off+n-1] == 0:
		d.fail(d.off, "%s is not a minimal varint", field)
		return 0
	}
	d.off += n
	return x
}

// uint reads a varint no larger than limit.
func (d *decoder) uint(field string, limit uint64, typ string) uint64 {
	off := d.off
	x := d.uvarint(field)
	if x > limit {
		d.fail(off, "%s %d overflows %s", field, x, typ)
		return 0
	}
	return x
}

// int64 reads a non-negative int64.
func (d *decoder) int64(field string) int64 {
	return int64(d.uint(field, math.MaxInt64, "int64"))
}

// int reads a non-negative int.
func (d *decoder) int(field string) int {
	return int(d.uint(field, math.MaxInt, "int"))
}

// count reads the number of elements of a table whose elements take at least
// minSize bytes each, and rejects a count the rest of the input cannot hold.
func (d *decoder) count(field string, minSize int) int {
	off := d.off
	x := d.uvarint(field)
	if rest := len(d.b) - d.off; x > uint64(rest/minSize) {
		d.fail(off, "%s %d is more than the %d remaining bytes can hold", field, x, rest)
		return 0
	}
	return int(x)
}

func (d *decoder) string(field string) string {
	off := d.off
	n := d.uvarint(field + " length")
	if rest := len(d.b) - d.off; n > uint64(rest) {
		d.fail(off, "%s length %d is more than the %d remaining bytes", field, n, rest)
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s
}

func (d *decoder) profile() *Profile {
	d.enter("header")
	if !bytes.HasPrefix(d.b, []byte(magic)) {
		if bytes.HasPrefix([]byte(magic), d.b) {
			d.fail(len(d.b), "unexpected end of data reading magic %q", magic)
		} else {
			d.fail(0, "not a kprof profile: missing magic %q", magic)
		}
		return nil
	}
	d.off = len(magic)
	off := d.off
	version := d.uvarint("format version")
	switch v := version; {
	case d.err != nil:
		return nil
	case v > formatVersion:
		d.err = fmt.Errorf("%w at byte offset %d: the file has format version %d, this kprof reads version %d or older; upgrade kprof",
			ErrVersion, off, v, formatVersion)
		return nil
	case v == 0:
		d.fail(off, "format version 0 does not exist")
		return nil
	}

	p := new(Profile)
	d.enter("meta")
	m := &p.Meta
	m.Mode = d.string("mode")
	m.Granularity = d.int64("granularity")
	m.Jitter = d.int64("jitter")
	m.Seed = d.uvarint("seed")
	m.MetricVersion = d.int("metric version")
	m.KprofVersion = d.string("kprof version")
	m.GoVersion = d.string("Go version")
	m.GOOS = d.string("GOOS")
	m.GOARCH = d.string("GOARCH")
	m.Program = d.string("program")
	if version >= 2 {
		metaOff := d.off
		m.Metric = d.string("metric")
		m.MetricTable = d.string("metric table")
		n := d.count("label count", 2)
		if n > 0 {
			m.Labels = make([]Label, n)
		}
		for i := range n {
			m.Labels[i] = Label{d.string("label key"), d.string("label value")}
		}
		if d.err == nil && m.Metric == "" && n == 0 {
			d.fail(metaOff, "format version 2 with neither a metric nor labels: such a profile is written in version 1")
		}
	}
	p.TotalInstructions = d.int64("total instructions")
	p.TotalSamples = d.int64("total samples")

	strs, strOffs := d.strings()
	funcs, funcOffs := d.funcs(strs, strOffs)
	p.Root = d.nodes(funcs, funcOffs)

	d.enter("checksum")
	if d.err != nil {
		return nil
	}
	switch rest := len(d.b) - d.off; {
	case rest < checksumSize:
		d.fail(len(d.b), "unexpected end of data reading the checksum")
	case rest > checksumSize:
		d.fail(d.off+checksumSize, "%d bytes of trailing data", rest-checksumSize)
	default:
		want := uint32At(d.b[d.off:])
		if got := checksum(d.b[:d.off]); got != want {
			d.fail(d.off, "checksum mismatch: the file says %08x, its contents give %08x", want, got)
		}
	}
	return p
}

// strings reads the string table and the offset of each string.
func (d *decoder) strings() (strs []string, offs []int) {
	d.enter("strings")
	n := d.count("string count", 1)
	strs = make([]string, n)
	offs = make([]int, n)
	for i := 0; i < n && d.err == nil; i++ {
		d.item = i
		offs[i] = d.off
		strs[i] = d.string("string")
		if i > 0 && strs[i] <= strs[i-1] {
			d.fail(offs[i], "string %q is not after string %d %q in sorted order", strs[i], i-1, strs[i-1])
		}
	}
	return strs, offs
}

// funcs reads the function table and the offset of each function.
func (d *decoder) funcs(strs []string, strOffs []int) (funcs []Func, offs []int) {
	d.enter("functions")
	n := d.count("function count", 3)
	funcs = make([]Func, n)
	offs = make([]int, n)
	used := make([]bool, len(strs))
	var prev [3]uint64 // the previous function's name index, file index and line
	for i := 0; i < n && d.err == nil; i++ {
		d.item = i
		offs[i] = d.off
		var cur [3]uint64
		for j, field := range [2]string{"name", "file"} {
			off := d.off
			if cur[j] = d.uvarint(field); cur[j] >= uint64(len(strs)) {
				d.fail(off, "%s string index %d out of range (the table has %d strings)", field, cur[j], len(strs))
				return nil, nil
			}
		}
		cur[2] = uint64(d.int("line"))
		// The string table is sorted, so index order is canonical order.
		if i > 0 && !lessTriple(prev, cur) {
			d.fail(offs[i], "not after function %d in canonical order", i-1)
		}
		prev = cur
		funcs[i] = Func{Name: strs[cur[0]], File: strs[cur[1]], Line: int(cur[2])}
		used[cur[0]], used[cur[1]] = true, true
	}
	if i := slices.Index(used, false); i >= 0 {
		d.enter("strings")
		d.item = i
		d.fail(strOffs[i], "not used by any function")
	}
	return funcs, offs
}

func lessTriple(a, b [3]uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// minNodeSize is the size of the smallest node record: five one-byte varints.
const minNodeSize = 5

// nodes reads the calling-context tree. All nodes share one allocation, and
// all child pointers another.
func (d *decoder) nodes(funcs []Func, funcOffs []int) *Node {
	d.enter("nodes")
	n := d.count("node count", minNodeSize)
	if d.err != nil {
		return nil
	}
	if n == 0 {
		d.fail(d.off, "no root node")
		return nil
	}
	nodes := make([]Node, n)
	kids := make([]*Node, n-1) // every node but the root is someone's child
	claimed := 0               // kids handed out as Children so far
	used := make([]bool, len(funcs))

	// rest reads the rest of node x after its function: counts and children.
	rest := func(x *Node) {
		x.Samples = d.int64("samples")
		x.Instructions = d.int64("instructions")
		x.Calls = d.int64("calls")
		off := d.off
		k := d.int("number of children")
		if k > len(kids)-claimed {
			d.fail(off, "%d children, but only %d of the %d nodes remain unclaimed", k, len(kids)-claimed, n)
			return
		}
		if k > 0 {
			x.Children = kids[claimed : claimed+k : claimed+k]
			claimed += k
		}
	}

	d.item = 0
	off := d.off
	if fn := d.uvarint("function"); fn != 0 {
		d.fail(off, "the root has function %d; it must have none (0)", fn)
	}
	root := &nodes[0]
	rest(root)

	type frame struct {
		n    *Node
		next int    // index of the next child to read
		last uint64 // function of the previous child
	}
	stack := []frame{{n: root}}
	count := 1 // nodes read
	for len(stack) > 0 && d.err == nil {
		top := &stack[len(stack)-1]
		if top.next == len(top.n.Children) {
			stack = stack[:len(stack)-1]
			continue
		}
		// The slot to fill is one of the n-1 kids claimed, and each filled
		// slot took one node, so count < n here.
		d.item = count
		off := d.off
		switch fn := d.uvarint("function"); {
		case d.err != nil:
		case fn == 0:
			d.fail(off, "no function; only the root may have none")
		case fn > uint64(len(funcs)):
			d.fail(off, "function %d out of range (the table has %d functions)", fn, len(funcs))
		case fn <= top.last:
			d.fail(off, "function %d follows its sibling's function %d; siblings must be distinct and in canonical order", fn, top.last)
		default:
			c := &nodes[count]
			count++
			c.Func = funcs[fn-1]
			used[fn-1] = true
			rest(c)
			top.last = fn
			top.n.Children[top.next] = c
			top.next++
			stack = append(stack, frame{n: c})
		}
	}
	if d.err != nil {
		return nil
	}
	if count != n {
		d.item = -1
		d.fail(d.off, "the tree ends after %d nodes, but the count says %d", count, n)
	}
	if i := slices.Index(used, false); i >= 0 {
		d.enter("functions")
		d.item = i
		d.fail(funcOffs[i], "not used by any node")
	}
	return root
}
