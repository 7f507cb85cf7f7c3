// Package profile owns kprof's profile model — a calling-context tree (CCT)
// with totals and metadata — with its file codec, its validity check, and
// merging. The measures that compare two profiles (paper §7) live beside it
// in package overlap.
//
// The package depends on the standard library only: the agent linked into
// instrumented programs uses it to write profiles.
//
// # Calling contexts and canonical order
//
// A calling context is a path from the synthetic root to a node: the stack,
// outermost function first. A node's counts belong to its context alone
// (self, not including callees). Functions are ordered by Name, then File,
// then Line (the canonical order); a tree is canonical when every node's
// children are in that order with no function twice. [Profile.Canonicalize]
// makes a tree canonical, [Node.Child] keeps it so, and everything this
// package returns ([Parse], [Merge]) is canonical. [Profile.Walk] visits
// children in stored order, which for a canonical tree is canonical order;
// [Profile.Canonical] gives a canonical view without modifying a profile. So no output
// depends on map order or on the order in which an agent happened to record
// stacks. Every traversal keeps its own stack: a CCT as deep as the profiled
// program's recursion cannot overflow the goroutine's.
//
// [Profile.CheckValid] is the one definition of a valid profile. [Profile.Write]
// refuses invalid profiles and [Parse] checks every profile it decodes, so
// code downstream of either trusts the profile without checking again.
//
// # File format
//
// A profile file (conventionally *.kprof) is written by [Profile.Write] and
// read by [Parse]. Every integer is an unsigned LEB128 varint (as
// [encoding/binary.AppendUvarint] writes it) in its shortest form; a string
// is its byte length followed by its bytes. The layout is:
//
//	magic      "KPROF"
//	version    1 or 2
//	meta       Mode (string), Granularity, Jitter, Seed, MetricVersion,
//	           KprofVersion, GoVersion, GOOS, GOARCH, Program (strings);
//	           version 2 only: Metric, MetricTable (strings), the number
//	           of Labels, then each label's Key and Value (strings)
//	totals     TotalInstructions, TotalSamples
//	strings    count, then each string: byte-wise sorted, distinct
//	functions  count, then each function: index of its Name in strings,
//	           index of its File in strings, Line; sorted in canonical
//	           order, distinct
//	nodes      count (including the root), then each node in preorder:
//	           function (0 for the root, else 1 + its index in functions),
//	           Samples, Instructions, Calls, number of children
//	checksum   FNV-1a (32 bit) of all preceding bytes, 4 bytes little-endian
//
// The encoding is canonical: children follow in canonical order (so sibling
// function indexes increase strictly), every string is used by a function and
// every function by a node, and varints are minimal. A profile therefore has
// exactly one encoding: equal profiles are written as identical bytes, and a
// profile is written in version 1 unless it has a Metric or Labels (which
// version 1 cannot hold), so a version 2 file without them is rejected and
// every file written by an older kprof stays valid, byte for byte. A
// file that parses is re-written byte for byte. The decoder accepts nothing
// else. A truncated or damaged file, a count or length larger than the rest
// of the file can hold, a count beyond int64, or a decoded profile that fails
// CheckValid is rejected with an error wrapping [ErrCorrupt] that says what is
// wrong and where: the byte offset, or for a CheckValid failure the node. A
// file of a newer format version is rejected with [ErrVersion]. Any change to
// this layout needs a new format version.
//
// Whatever the counts in a file claim, decoding allocates at most a bounded
// multiple of the file's size: each count is checked against the bytes left.
package profile

import (
	"errors"
	"fmt"
	"math"
)

// MetricVersion identifies the instruction metric (see package rewrite). A
// change of what is counted changes every profile, so it is recorded in each
// profile and compared by kprof compare.
const MetricVersion = 1

// Modes of the agent that produced a profile.
const (
	ModeSample = "sample" // sampling agent (SA): Samples and estimated Instructions
	ModeExact  = "exact"  // exact agent (JP): exact Instructions and Calls
)

// Meta describes how and where a profile was taken.
type Meta struct {
	Mode          string // ModeSample or ModeExact, or a custom agent's name
	Granularity   int64  // sampling granularity g (instructions between samples)
	Jitter        int64  // R: each granularity is g + r, r uniform in [0, R)
	Seed          uint64 // PRNG seed shared by every goroutine
	MetricVersion int    // MetricVersion of the instrumenter
	KprofVersion  string
	GoVersion     string
	GOOS, GOARCH  string
	Program       string // program name (base name of os.Args[0])
	// Metric names what the counts measure: "" for instructions (go/ssa
	// instructions, MetricVersion says which rules), or the name of a
	// weighted metric such as "cost". MetricTable identifies the table of
	// weights of a weighted metric (its name and a hash of its contents).
	// Profiles of different metrics or tables do not add up or compare
	// (see [SameMetric]).
	Metric      string
	MetricTable string
	// Labels describe the run (service, version, ...): KPROF_LABELS and
	// what the agent knows. Sorted by Key, keys distinct and non-empty.
	Labels []Label
}

// Label is a key=value pair attached to a profile.
type Label struct {
	Key, Value string
}

// MetricName returns what m's counts measure: "instructions" or the name
// of a weighted metric.
func (m *Meta) MetricName() string {
	if m.Metric == "" {
		return "instructions"
	}
	return m.Metric
}

// SampleType returns how a pprof profile names m's counts — its sample
// type and unit — and the divisor that turns a count into that unit. A
// weighted metric's counts are picoseconds, which pprof has no unit for:
// they are shown in nanoseconds, rounded.
func (m *Meta) SampleType() (typ, unit string, div int64) {
	if m.Metric == "" {
		return "instructions", "count", 1
	}
	return m.Metric, "nanoseconds", 1000
}

// describeMetric names m's metric for an error message.
func (m *Meta) describeMetric() string {
	s := fmt.Sprintf("%s (metric version %d", m.MetricName(), m.MetricVersion)
	if m.MetricTable != "" {
		s += ", table " + m.MetricTable
	}
	return s + ")"
}

// SameMetric returns nil if profiles with metadata a and b count the same
// thing, so that their counts add up and compare, and otherwise an error
// that says what differs: the metric, its version or its table of weights.
func SameMetric(a, b *Meta) error {
	if a.Metric == b.Metric && a.MetricVersion == b.MetricVersion && a.MetricTable == b.MetricTable {
		return nil
	}
	return fmt.Errorf("%w: %s and %s", ErrMetric, a.describeMetric(), b.describeMetric())
}

// ErrMetric is wrapped by the errors of [SameMetric].
var ErrMetric = errors.New("profiles count different metrics")

// Func identifies a function the way go tool pprof names it.
type Func struct {
	Name string // e.g. "net/http.(*Server).Serve.func2"
	File string // declaring file
	Line int    // line of the declaration
}

// OverflowName is the function name of an agent's overflow contexts
// (agent.Settings.MaxContexts): a stack that would have needed a calling
// context beyond its goroutine's budget is counted in the deepest context
// of the goroutine's own it shares, then one of this name, then the
// stack's innermost function. Flat self counts and calls stay those of
// the functions; what is below an overflow context lost the frames in
// between.
const OverflowName = "(contexts beyond the goroutine's budget)"

// Overflowed returns the instructions counted below p's overflow contexts.
func (p *Profile) Overflowed() int64 {
	var sum int64
	// Nodes still to visit, and whether an overflow context is above them.
	type item struct {
		n     *Node
		below bool
	}
	todo := []item{{p.Root, false}}
	for len(todo) > 0 {
		it := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if it.below {
			sum += it.n.Instructions
		}
		below := it.below || it.n.Func.Name == OverflowName && it.n.Func.File == ""
		for _, c := range it.n.Children {
			todo = append(todo, item{c, below})
		}
	}
	return sum
}

// Node is one calling context: the path from the root to the node is the
// reified stack.
type Node struct {
	Func         Func
	Samples      int64 // samples whose stack ends here
	Instructions int64 // instructions attributed to this context (estimated in sample mode, exact in exact mode)
	Calls        int64 // exact mode: calls that entered this context (0 when not counted)
	Children     []*Node
}

// Profile is a calling-context tree with its totals and metadata. Root is a
// synthetic node (empty Func) whose children are the goroutines' outermost
// instrumented functions. The root carries no counts of its own:
// instructions that no calling context can take show only in
// TotalInstructions. Root must be a tree: no node may appear twice in it.
type Profile struct {
	Meta Meta
	Root *Node
	// TotalInstructions is the exact number of counted instructions the
	// program executed (the agent keeps it exactly in every mode), the b of
	// paper §7.2.
	TotalInstructions int64
	// TotalSamples is the number of samples taken.
	TotalSamples int64
}

// ErrInvalid is wrapped by the errors of [Profile.CheckValid].
var ErrInvalid = errors.New("invalid profile")

// CheckValid reports whether p is a valid profile: the one definition used
// by [Profile.Write] before encoding and by [Parse] after decoding. A valid
// profile
//   - has a non-nil Root with the zero Func and zero counts;
//   - names a function (non-empty Name, Line ≥ 0) at every other node, and
//     has no negative count;
//   - has no nil child, and every node's children are in canonical order
//     without duplicates (see [Profile.Canonicalize]);
//   - has non-negative Meta integers and totals, no MetricTable without a
//     Metric, and Labels sorted by Key with distinct non-empty keys;
//   - has sums of Samples, of Instructions and of Calls over all nodes that
//     fit in an int64, so every aggregate of a valid profile ([Profile.Flat],
//     the measures) fits too.
//
// The error wraps [ErrInvalid] and names the offending node.
func (p *Profile) CheckValid() error {
	if err := checkHeader(&p.Meta, p.TotalInstructions, p.TotalSamples); err != nil {
		return err
	}
	if p.Root == nil {
		return invalidf("no root node")
	}
	var sums [3]uint64 // Samples, Instructions, Calls; each ≤ MaxInt64 between steps
	return traverse(p.Root, func(path []*Node) error {
		n := path[len(path)-1]
		if err := checkNode(n.Func, [3]int64{n.Samples, n.Instructions, n.Calls}, len(path)-1, &sums); err != nil {
			return err
		}
		for i, c := range n.Children {
			if c == nil {
				return invalidf("child %d of %s is nil", i, where(path))
			}
			if i > 0 && compareFuncs(n.Children[i-1].Func, c.Func) >= 0 {
				return invalidf("children %q and %q of %s are duplicate or out of canonical order (see Canonicalize)",
					n.Children[i-1].Func.Name, c.Func.Name, where(path))
			}
		}
		return nil
	}, nil)
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// where names the node at the end of path for an error message: its function
// and depth, not the whole stack, which can be arbitrarily long.
func where(path []*Node) string {
	if len(path) == 1 {
		return "the root node"
	}
	return fmt.Sprintf("node %q at depth %d", path[len(path)-1].Func.Name, len(path)-1)
}

// Copy returns a deep copy of p that shares no node with p. Nil children are
// not copied.
func (p *Profile) Copy() *Profile {
	q := *p
	var copies []*Node // copies[d] is the copy of path[d]
	traverse(p.Root, func(path []*Node) error {
		n := path[len(path)-1]
		c := &Node{Func: n.Func, Samples: n.Samples, Instructions: n.Instructions, Calls: n.Calls}
		if len(n.Children) > 0 {
			c.Children = make([]*Node, 0, len(n.Children))
		}
		if d := len(path) - 1; d > 0 {
			copies[d-1].Children = append(copies[d-1].Children, c)
		}
		copies = append(copies[:len(path)-1], c)
		return nil
	}, nil)
	if p.Root != nil {
		q.Root = copies[0]
	}
	return &q
}

// SumInstructions returns the sum of Instructions over all calling contexts:
// b_approx of paper §7.2 for a sampled profile, which [DeltaB] compares with
// the exact TotalInstructions.
func (p *Profile) SumInstructions() int64 {
	var sum int64
	traverse(p.Root, func(path []*Node) error {
		sum += path[len(path)-1].Instructions
		return nil
	}, nil)
	return sum
}

// traverse visits the tree under root in preorder, children in stored order,
// skipping nil children. enter is called on entering each node (root
// included) with the path from root to it; leave, if not nil, after the
// node's subtree. The first error from enter stops the walk and is returned.
// path is reused: callbacks must copy what they keep. traverse keeps its own
// stack, so trees of any depth are safe.
func traverse(root *Node, enter func(path []*Node) error, leave func(path []*Node)) error {
	if root == nil {
		return nil
	}
	path := []*Node{root}
	next := []int{0} // next[d]: index of the next child of path[d] to visit
	if err := enter(path); err != nil {
		return err
	}
	for len(path) > 0 {
		d := len(path) - 1
		n := path[d]
		if next[d] < len(n.Children) {
			c := n.Children[next[d]]
			next[d]++
			if c == nil {
				continue
			}
			path = append(path, c)
			next = append(next, 0)
			if err := enter(path); err != nil {
				return err
			}
			continue
		}
		if leave != nil {
			leave(path)
		}
		path, next = path[:d], next[:d]
	}
	return nil
}

// checkHeader is CheckValid for the metadata and totals.
func checkHeader(m *Meta, totalInstructions, totalSamples int64) error {
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"granularity", m.Granularity},
		{"jitter", m.Jitter},
		{"metric version", int64(m.MetricVersion)},
		{"total instructions", totalInstructions},
		{"total samples", totalSamples},
	} {
		if c.v < 0 {
			return invalidf("negative %s %d", c.name, c.v)
		}
	}
	if m.Metric == "" && m.MetricTable != "" {
		return invalidf("metric table %q without a metric", m.MetricTable)
	}
	for i, l := range m.Labels {
		switch {
		case l.Key == "":
			return invalidf("label %d has an empty key", i)
		case i > 0 && m.Labels[i-1].Key >= l.Key:
			return invalidf("labels not sorted by key, or key %q twice", l.Key)
		}
	}
	return nil
}

// checkNode is CheckValid for one node at depth d (0 for the root) with
// function f and counts samples, instructions, calls; sums holds the
// counts' sums over the nodes checked before.
func checkNode(f Func, counts [3]int64, d int, sums *[3]uint64) error {
	if d == 0 {
		if f != (Func{}) {
			return invalidf("root node has function %q; the root must have the zero Func", f.Name)
		}
		if counts != [3]int64{} {
			return invalidf("root node has counts (samples %d, instructions %d, calls %d); counts belong to a function's context",
				counts[0], counts[1], counts[2])
		}
		return nil
	}
	where := func() string { return fmt.Sprintf("node %q at depth %d", f.Name, d) }
	if f.Name == "" {
		return invalidf("%s has an empty function name", where())
	}
	if f.Line < 0 {
		return invalidf("%s has negative line %d", where(), f.Line)
	}
	for i, c := range counts {
		name := [3]string{"samples", "instructions", "calls"}[i]
		if c < 0 {
			return invalidf("%s has negative %s %d", where(), name, c)
		}
		sums[i] += uint64(c)
		if sums[i] > math.MaxInt64 {
			return invalidf("the sum of %s over all nodes overflows int64 (at %s)", name, where())
		}
	}
	return nil
}
