package overlap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strings"
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
// allocate more than a constant times len(b).
type decoder struct {
	b   []byte
	off int
	// section and item name what is being read, for error messages.
	section string
	item    int // -1 when the section has no items
}

func (d *decoder) errorf(off int, format string, args ...any) error {
	what := d.section
	if d.item >= 0 {
		what = fmt.Sprintf("%s %d", d.section, d.item)
	}
	return fmt.Errorf("%w at byte offset %d: %s: %s", ErrCorrupt, off, what, fmt.Sprintf(format, args...))
}

func (d *decoder) enter(section string) { d.section, d.item = section, -1 }

func (d *decoder) uvarint(field string) (uint64, error) {
	x, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		return 0, d.errorf(d.off, "unexpected end of data reading %s", field)
	case n < 0:
		return 0, d.errorf(d.off, "%s overflows 64 bits", field)
	case n > 1 && d.b[d.off+n-1] == 0:
		return 0, d.errorf(d.off, "%s is not a minimal varint", field)
	}
	d.off += n
	return x, nil
}

// int64 reads a non-negative int64.
func (d *decoder) int64(field string) (int64, error) {
	off := d.off
	x, err := d.uvarint(field)
	if err == nil && x > math.MaxInt64 {
		err = d.errorf(off, "%s %d overflows int64", field, x)
	}
	return int64(x), err
}

// int reads a non-negative int.
func (d *decoder) int(field string) (int, error) {
	off := d.off
	x, err := d.uvarint(field)
	if err == nil && x > math.MaxInt {
		err = d.errorf(off, "%s %d overflows int", field, x)
	}
	return int(x), err
}

// count reads the number of elements of a table whose elements take at least
// minSize bytes each, and rejects a count the rest of the input cannot hold.
func (d *decoder) count(field string, minSize int) (int, error) {
	off := d.off
	x, err := d.uvarint(field)
	if err != nil {
		return 0, err
	}
	if rest := len(d.b) - d.off; x > uint64(rest/minSize) {
		return 0, d.errorf(off, "%s %d is more than the %d remaining bytes can hold", field, x, rest)
	}
	return int(x), nil
}

func (d *decoder) string(field string) (string, error) {
	off := d.off
	n, err := d.uvarint(field + " length")
	if err != nil {
		return "", err
	}
	if rest := len(d.b) - d.off; n > uint64(rest) {
		return "", d.errorf(off, "%s length %d is more than the %d remaining bytes", field, n, rest)
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s, nil
}

func decode(b []byte) (*Profile, error) {
	d := &decoder{b: b}
	p, err := d.profile()
	if err != nil {
		return nil, err
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return p, nil
}

func (d *decoder) profile() (*Profile, error) {
	d.enter("header")
	if !strings.HasPrefix(string(d.b), magic) {
		if strings.HasPrefix(magic, string(d.b)) {
			return nil, d.errorf(len(d.b), "unexpected end of data reading magic %q", magic)
		}
		return nil, d.errorf(0, "not a kprof profile: missing magic %q", magic)
	}
	d.off = len(magic)
	off := d.off
	v, err := d.uvarint("format version")
	switch {
	case err != nil:
		return nil, err
	case v > formatVersion:
		return nil, fmt.Errorf("%w at byte offset %d: the file has format version %d, this kprof reads version %d or older; upgrade kprof",
			ErrVersion, off, v, formatVersion)
	case v == 0:
		return nil, d.errorf(off, "format version 0 does not exist")
	}

	p := new(Profile)
	d.enter("meta")
	m := &p.Meta
	for _, f := range []struct {
		name string
		read func(string) error
	}{
		{"mode", d.stringTo(&m.Mode)},
		{"granularity", d.int64To(&m.Granularity)},
		{"jitter", d.int64To(&m.Jitter)},
		{"seed", func(name string) (err error) { m.Seed, err = d.uvarint(name); return err }},
		{"metric version", func(name string) (err error) { m.MetricVersion, err = d.int(name); return err }},
		{"kprof version", d.stringTo(&m.KprofVersion)},
		{"Go version", d.stringTo(&m.GoVersion)},
		{"GOOS", d.stringTo(&m.GOOS)},
		{"GOARCH", d.stringTo(&m.GOARCH)},
		{"program", d.stringTo(&m.Program)},
		{"total instructions", d.int64To(&p.TotalInstructions)},
		{"total samples", d.int64To(&p.TotalSamples)},
	} {
		if err := f.read(f.name); err != nil {
			return nil, err
		}
	}

	strs, strOffs, err := d.strings()
	if err != nil {
		return nil, err
	}
	funcs, funcOffs, err := d.funcs(strs, strOffs)
	if err != nil {
		return nil, err
	}
	if p.Root, err = d.nodes(funcs, funcOffs); err != nil {
		return nil, err
	}

	d.enter("checksum")
	switch rest := len(d.b) - d.off; {
	case rest < checksumSize:
		return nil, d.errorf(len(d.b), "unexpected end of data reading the checksum")
	case rest > checksumSize:
		return nil, d.errorf(d.off+checksumSize, "%d bytes of trailing data", rest-checksumSize)
	}
	want := binary.LittleEndian.Uint32(d.b[d.off:])
	if got := crc32.ChecksumIEEE(d.b[:d.off]); got != want {
		return nil, d.errorf(d.off, "checksum mismatch: the file says %08x, its contents give %08x", want, got)
	}
	return p, nil
}

func (d *decoder) stringTo(s *string) func(string) error {
	return func(name string) (err error) { *s, err = d.string(name); return err }
}

func (d *decoder) int64To(x *int64) func(string) error {
	return func(name string) (err error) { *x, err = d.int64(name); return err }
}

// strings reads the string table and the offset of each string.
func (d *decoder) strings() ([]string, []int, error) {
	d.enter("strings")
	n, err := d.count("string count", 1)
	if err != nil {
		return nil, nil, err
	}
	strs := make([]string, n)
	offs := make([]int, n)
	for i := range strs {
		d.item = i
		offs[i] = d.off
		if strs[i], err = d.string("string"); err != nil {
			return nil, nil, err
		}
		if i > 0 && strs[i] <= strs[i-1] {
			return nil, nil, d.errorf(offs[i], "string %q is not after string %d %q in sorted order", strs[i], i-1, strs[i-1])
		}
	}
	return strs, offs, nil
}

// funcs reads the function table and the offset of each function.
func (d *decoder) funcs(strs []string, strOffs []int) ([]Func, []int, error) {
	d.enter("functions")
	n, err := d.count("function count", 3)
	if err != nil {
		return nil, nil, err
	}
	funcs := make([]Func, n)
	offs := make([]int, n)
	used := make([]bool, len(strs))
	var prev [3]uint64 // the previous function's name index, file index and line
	for i := range funcs {
		d.item = i
		offs[i] = d.off
		var cur [3]uint64
		for j, field := range [3]string{"name", "file", "line"} {
			off := d.off
			if cur[j], err = d.uvarint(field); err != nil {
				return nil, nil, err
			}
			if j < 2 && cur[j] >= uint64(len(strs)) {
				return nil, nil, d.errorf(off, "%s string index %d out of range (the table has %d strings)", field, cur[j], len(strs))
			}
			if j == 2 && cur[j] > math.MaxInt {
				return nil, nil, d.errorf(off, "line %d overflows int", cur[j])
			}
		}
		// The string table is sorted, so index order is canonical order.
		if i > 0 && !lessTriple(prev, cur) {
			return nil, nil, d.errorf(offs[i], "not after function %d in canonical order", i-1)
		}
		prev = cur
		funcs[i] = Func{Name: strs[cur[0]], File: strs[cur[1]], Line: int(cur[2])}
		used[cur[0]], used[cur[1]] = true, true
	}
	for i, u := range used {
		if !u {
			d.enter("strings")
			d.item = i
			return nil, nil, d.errorf(strOffs[i], "not used by any function")
		}
	}
	return funcs, offs, nil
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
func (d *decoder) nodes(funcs []Func, funcOffs []int) (*Node, error) {
	d.enter("nodes")
	n, err := d.count("node count", minNodeSize)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, d.errorf(d.off, "no root node")
	}
	nodes := make([]Node, n)
	kids := make([]*Node, n-1) // every node but the root is someone's child
	nextKid := 0
	used := make([]bool, len(funcs))

	// read reads the rest of node i after its function: counts and children.
	read := func(i int) error {
		d.item = i
		x := &nodes[i]
		var err error
		if x.Samples, err = d.int64("samples"); err != nil {
			return err
		}
		if x.Instructions, err = d.int64("instructions"); err != nil {
			return err
		}
		if x.Calls, err = d.int64("calls"); err != nil {
			return err
		}
		off := d.off
		k, err := d.int("number of children")
		if err != nil {
			return err
		}
		if k > len(kids)-nextKid {
			return d.errorf(off, "%d children, but only %d of the %d nodes remain unclaimed", k, len(kids)-nextKid, n)
		}
		if k > 0 {
			x.Children = kids[nextKid : nextKid+k : nextKid+k]
			nextKid += k
		}
		return nil
	}

	d.item = 0
	off := d.off
	fn, err := d.uvarint("function")
	if err != nil {
		return nil, err
	}
	if fn != 0 {
		return nil, d.errorf(off, "the root has function %d; it must have none (0)", fn)
	}
	if err := read(0); err != nil {
		return nil, err
	}

	type frame struct {
		n    *Node
		next int    // index of the next child to read
		last uint64 // function of the previous child
	}
	stack := []frame{{n: &nodes[0]}}
	read1 := 1 // nodes read
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.n.Children) {
			stack = stack[:len(stack)-1]
			continue
		}
		// Every child slot claimed lies in kids, which has n-1 slots, so
		// read1 < n here.
		d.item = read1
		off := d.off
		fn, err := d.uvarint("function")
		switch {
		case err != nil:
			return nil, err
		case fn == 0:
			return nil, d.errorf(off, "no function; only the root may have none")
		case fn > uint64(len(funcs)):
			return nil, d.errorf(off, "function %d out of range (the table has %d functions)", fn, len(funcs))
		case fn <= top.last:
			return nil, d.errorf(off, "function %d follows its sibling's function %d; siblings must be distinct and in canonical order", fn, top.last)
		}
		top.last = fn
		c := &nodes[read1]
		c.Func = funcs[fn-1]
		used[fn-1] = true
		if err := read(read1); err != nil {
			return nil, err
		}
		read1++
		top.n.Children[top.next] = c
		top.next++
		stack = append(stack, frame{n: c})
	}
	if read1 != n {
		d.item = -1
		return nil, d.errorf(d.off, "the tree ends after %d nodes, but the count says %d", read1, n)
	}
	for i, u := range used {
		if !u {
			d.enter("functions")
			d.item = i
			return nil, d.errorf(funcOffs[i], "not used by any node")
		}
	}
	return &nodes[0], nil
}
