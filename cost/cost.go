// Package cost is kprof's cost metric (kprof build -metric cost): a table
// of weights that charges each go/ssa instruction what it costs on a
// target platform, so that a deterministic profile estimates where CPU
// time goes (paper §10, "cross-profiling").
//
// # Weights
//
// A weight is an integer number of picoseconds (ps), so that counts stay
// exact integers: a profile of the cost metric counts picoseconds, and
// reports divide by 1000 to show nanoseconds. Every instruction the
// instruction metric counts (package rewrite, "What is counted") weighs at
// least 1 ps and no other does: a block charges something under one
// metric exactly where it does under the other, so the instrumented code
// keeps its shape.
//
// An instruction's weight is that of its class (Classify), by kind and
// operand type: integer and floating-point arithmetic, division,
// comparisons, loads and stores, bounds-checked indexing, conversions,
// static, closure, interface and builtin calls, allocation, map, channel
// and string operations, and so on (Classes lists them). A heap allocation
// whose size is a constant (new(T), &T{…}) adds "alloc.byte" ps per byte
// to its class's weight; sizes are those of the gc compiler for 64-bit
// platforms. The runtime charges the bytes of allocations whose size it
// computes (below).
//
// # Run-time charges
//
// Some sizes are known only at run time, and only the runtime knows
// whether some allocations go to the heap. Where append grows a slice,
// the runtime charges the goroutine that appends "append.grow" ps plus
// "append.byte" ps per byte of the new capacity (kprof's runtime patch, in
// growslice: the capacity is known only there, after the allocator's size
// classes), and so it does where a slice appended in a stack buffer moves
// to the heap as it escapes. Where the runtime allocates on the heap the
// bytes of make([]T, n) (of any n: the compiler calls the runtime for
// every make that escapes), of strings.Builder's and bytes' growth
// (internal/bytealg.MakeNoZero), of a string concatenation, or of a
// conversion between a string and a byte or rune slice, it charges
// "append.byte" ps per byte (a result the compiler keeps in a stack
// buffer charges nothing).
//
// These two are not instruction classes: a table may set them to 0, which
// charges nothing, and then a constant-size make adds its bytes to its
// class's weight as other allocations do (the tests that compare counts
// with the go/ssa interpreter do, as it cannot grow slices as the runtime
// does). kprof calibrate sets them to the weights of a heap allocation and
// of its bytes. They are charged where the code that allocates is not
// package runtime's, so that counts stay deterministic; the allocations
// of other packages kprof does not count (internal/runtime/maps as a map
// grows, a package -pkgs leaves out) go to the counted code that called
// them. In exact mode, the next check takes them: a charge made after a
// function's last check goes to its caller — every charge in a small leaf
// (a loop-free function that calls nothing but builtins, which has no
// checks of its own: func last(n int) []int { s := make([]int, n); return
// append(s, 1) } has both charged to its caller), and an allocation in a
// return statement's results (return a + b).
//
// # Tables
//
// A table is a text file, one setting or class a line ("#" starts a
// comment):
//
//	name linux-amd64
//	scale 420
//	int.arith 180
//	alloc.heap 14000
//	…
//
// name identifies the table in profiles (with a hash of its contents,
// Ident); scale is what an average instruction costs, in ps: the agent's
// default granularity and jitter are the instruction metric's times scale,
// so that a program samples about as often under either metric. A class a
// table leaves out weighs what "other" does. Default is the table kprof
// ships for linux/amd64, calibrated on the machine kprof is developed on
// (see Calibrate in package cost/calibrate and kprof calibrate).
package cost

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Growth classes: the runtime's charges for append's growth and for the
// bytes of allocations it sizes (see "Run-time charges"); a table may set
// them to 0.
const (
	GrowClass     = "append.grow" // ps per growth
	GrowByteClass = "append.byte" // ps per byte of the new capacity, or of a run-time sized allocation
)

// Metric is the name profiles of the cost metric carry (profile.Meta.Metric).
const Metric = "cost"

// Unit is the unit of weights.
const Unit = "picoseconds"

// classifyVersion numbers the ways of classifying instructions: a table's
// weights mean something else under another (Ident). 2: allocations the
// compiler keeps on the stack weigh alloc.local (Escapes). 3: calls the
// compiler inlines and returns of functions it can inline have classes of
// their own; comparisons with nil weigh int.cmp; type parameters' values
// are classified by their type sets. 4: calls of uncounted code weigh
// call.uncounted (WithUncounted). 5: the runtime charges the bytes of
// every slice make puts on the heap, not its class ("Run-time charges");
// an inlined call of a function of uncounted code that wraps assembly
// weighs call.uncounted.
const classifyVersion = 5

// A Table holds the weight of every class.
type Table struct {
	Name    string           // identifies the table in profiles
	Scale   int64            // ps of an average instruction
	Weights map[string]int64 // by class; absent classes weigh Weights["other"]
	esc     *Escapes         // the package's, if known (WithEscapes)
	// uncounted is the code the build does not count (WithUncounted).
	uncounted *uncountedCode
}

// uncountedCode is the code a build does not count: pkg reports whether
// it leaves a package's code uncounted; goroot is the GOROOT of its
// toolchain, where the source of those packages is.
type uncountedCode struct {
	pkg    func(pkgPath string) bool
	goroot string
}

// WithUncounted returns t for a build that does not count the code of the
// packages for which uncounted reports true (the runtime and the packages
// it depends on, always), with the toolchain in goroot: a static call of
// one of their functions weighs call.uncounted, the time of the code it
// runs, which nothing else charges; so does one the compiler inlines of a
// function that wraps a function without a body (assembly), which is
// read from their source (in goroot, for the standard library's
// packages; "" leaves those wrappers call.inline).
func (t *Table) WithUncounted(uncounted func(pkgPath string) bool, goroot string) *Table {
	u := *t
	u.uncounted = &uncountedCode{uncounted, goroot}
	return &u
}

// WithEscapes returns t for a package whose compiler escape analysis is
// esc: allocations the compiler keeps on the stack weigh alloc.local.
func (t *Table) WithEscapes(esc *Escapes) *Table {
	u := *t
	u.esc = esc
	return &u
}

//go:embed linux_amd64.txt
var defaultTable []byte

// Default returns the table kprof ships (linux/amd64).
func Default() *Table {
	t, err := Parse(defaultTable)
	if err != nil {
		panic("cost: the embedded table: " + err.Error())
	}
	return t
}

// Parse reads a table in the text format of the package documentation.
// Every class must be one of Classes, every weight a positive integer, and
// name, scale and "other" must be present.
func Parse(data []byte) (*Table, error) {
	t := &Table{Weights: make(map[string]int64)}
	known := make(map[string]bool)
	for _, c := range Classes {
		known[c] = true
	}
	growth := map[string]bool{GrowClass: true, GrowByteClass: true}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"class weight\", got %q", line, strings.TrimSpace(s))
		}
		key, val := f[0], f[1]
		if key == "name" {
			if t.Name != "" {
				return nil, fmt.Errorf("line %d: a second name", line)
			}
			t.Name = val
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if growth[key] && err == nil && n == 0 {
			// (Growth may be left uncharged.)
		} else if err != nil || n < 1 || n > 1e12 {
			low := 1
			if growth[key] {
				low = 0
			}
			return nil, fmt.Errorf("line %d: %s %q: want an integer number of picoseconds from %d to 10^12", line, key, val, low)
		}
		switch {
		case key == "scale":
			t.Scale = n
		case known[key] || growth[key]:
			if _, dup := t.Weights[key]; dup {
				return nil, fmt.Errorf("line %d: class %s given twice", line, key)
			}
			t.Weights[key] = n
		default:
			return nil, fmt.Errorf("line %d: unknown class %q (kprof calibrate writes a complete table)", line, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	switch {
	case t.Name == "":
		return nil, fmt.Errorf("no name line")
	case t.Scale == 0:
		return nil, fmt.Errorf("no scale line")
	case t.Weights["other"] == 0:
		return nil, fmt.Errorf("no weight for class other")
	}
	return t, nil
}

// Format writes t in the text format Parse reads, classes in the order of
// Classes.
func (t *Table) Format() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "name %s\nscale %d\n", t.Name, t.Scale)
	for _, c := range append(Classes[:len(Classes):len(Classes)], GrowClass, GrowByteClass) {
		if w, ok := t.Weights[c]; ok {
			fmt.Fprintf(&b, "%s %d\n", c, w)
		}
	}
	return b.Bytes()
}

// Ident identifies t in profiles (profile.Meta.MetricTable): its name and
// the first 16 hex digits of the SHA-256 of its canonical form (Format
// without comments, so that two tables with equal weights are one) and of
// classifyVersion.
func (t *Table) Ident() string {
	keys := make([]string, 0, len(t.Weights))
	for k := range t.Weights {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	fmt.Fprintf(h, "classify %d\nname %s\nscale %d\n", classifyVersion, t.Name, t.Scale)
	for _, k := range keys {
		fmt.Fprintf(h, "%s %d\n", k, t.Weights[k])
	}
	return t.Name + "@" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Growth returns what the runtime charges for append's growth: ps per
// growth and per byte of the new capacity (0, 0: nothing). A table that
// leaves them out charges nothing.
func (t *Table) Growth() (obj, perByte int64) {
	return t.Weights[GrowClass], t.Weights[GrowByteClass]
}

// Missing returns the classes t gives no weight, in the order of Classes
// (they weigh "other"), and the growth classes it leaves out (nothing
// charged): a table written by an older kprof lacks the classes added
// since.
func (t *Table) Missing() []string {
	var miss []string
	for _, c := range append(Classes[:len(Classes):len(Classes)], GrowClass, GrowByteClass) {
		if _, ok := t.Weights[c]; !ok && c != "other" {
			miss = append(miss, c)
		}
	}
	return miss
}

// Class returns the weight of class c.
func (t *Table) Class(c string) int64 {
	if w, ok := t.Weights[c]; ok {
		return w
	}
	return t.Weights["other"]
}
