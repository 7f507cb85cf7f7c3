package profile

import (
	"errors"
	"fmt"
	"slices"
)

// Child returns n's child for function f, adding one with zero counts if n
// has none. It keeps n.Children in canonical order and relies on them being
// in it, as they are in every tree built with Child alone and in every
// profile Parse, Merge or Canonicalize returns; on other trees it may add a
// duplicate child, which Canonicalize would merge.
func (n *Node) Child(f Func) *Node {
	i, found := slices.BinarySearchFunc(n.Children, f, compareChild)
	if found {
		return n.Children[i]
	}
	c := &Node{Func: f}
	n.Children = slices.Insert(n.Children, i, c)
	return c
}

// Find returns n's child for function f, or nil if n has none. Like Child, it
// relies on n.Children being in canonical order.
func (n *Node) Find(f Func) *Node {
	if i, found := slices.BinarySearchFunc(n.Children, f, compareChild); found {
		return n.Children[i]
	}
	return nil
}

func compareChild(c *Node, f Func) int { return compareFuncs(c.Func, f) }

// Merge returns a new canonical profile whose counts are, per calling
// context, the sums of the counts of ps, and whose totals are the sums of
// theirs. The profiles must count the same metric ([SameMetric]): counts of
// different metrics do not add up. The result takes the rest of its Meta from ps[0].
// Merge fails on a nil profile and on counts whose sum overflows an int64;
// it does not modify ps. To merge profiles read one at a time, without
// holding them all, use [Profile.Add].
func Merge(ps ...*Profile) (*Profile, error) {
	if len(ps) == 0 {
		return nil, errors.New("merge: no profiles")
	}
	for i, p := range ps {
		if p == nil {
			return nil, fmt.Errorf("merge: profile %d is nil", i)
		}
		if err := SameMetric(&p.Meta, &ps[0].Meta); err != nil {
			return nil, fmt.Errorf("merge: profile %d and profile 0: %w", i, err)
		}
	}
	out := &Profile{Meta: ps[0].Meta, Root: &Node{}}
	for i, p := range ps {
		if err := out.add(p); err != nil {
			return nil, fmt.Errorf("merge: profile %d: %w", i, err)
		}
	}
	// Each count fits, but their sums over the tree may not (found by
	// FuzzParse, merging a profile with itself).
	if err := out.CheckValid(); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return out, nil
}

// Add adds the counts of q to p's, context by context, and q's totals to
// p's, as Merge(p, q) would, in place: p must be canonical, as every
// profile Parse and Merge return is, and it stays so. The memory it takes
// is that of the merged tree, whatever the number of profiles added to it.
// The profiles must count the same metric ([SameMetric]). Add does not
// modify q; when it fails (counts whose sum overflows an int64), p is left
// with part of q added. It checks each count, not their sums over the tree
// (that takes a walk of p, which adding many profiles one at a time would
// repeat): call [Profile.CheckValid] once the last is added.
func (p *Profile) Add(q *Profile) error {
	if p == nil || p.Root == nil || q == nil || q.Root == nil {
		return errors.New("add: a nil profile or tree")
	}
	if err := SameMetric(&q.Meta, &p.Meta); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	if err := p.add(q); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	return nil
}

// add is Add without the metric's check.
func (p *Profile) add(q *Profile) error {
	var ok1, ok2 bool
	p.TotalInstructions, ok1 = add(p.TotalInstructions, q.TotalInstructions)
	p.TotalSamples, ok2 = add(p.TotalSamples, q.TotalSamples)
	if !ok1 || !ok2 {
		return errors.New("totals overflow int64")
	}
	var dst []*Node // dst[d] is p's node for path[d]
	return traverse(q.Root, func(path []*Node) error {
		n := path[len(path)-1]
		m := p.Root
		if d := len(path) - 1; d > 0 {
			m = dst[d-1].Child(n.Func)
		}
		dst = append(dst[:len(path)-1], m)
		var ok [3]bool
		m.Samples, ok[0] = add(m.Samples, n.Samples)
		m.Instructions, ok[1] = add(m.Instructions, n.Instructions)
		m.Calls, ok[2] = add(m.Calls, n.Calls)
		if ok != [3]bool{true, true, true} {
			return fmt.Errorf("counts overflow int64 at %s", where(path))
		}
		return nil
	}, nil)
}

// add returns a+b and whether the sum did not overflow.
func add(a, b int64) (int64, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

// Walk calls fn for every calling context of p in preorder, children in
// stored order (canonical order for a canonical profile): stack is the path
// from the root's child to n, outermost function first, so n.Func is
// stack[len(stack)-1]. The root itself is not visited. fn must not keep stack,
// which Walk reuses, nor change the tree.
func (p *Profile) Walk(fn func(stack []Func, n *Node)) {
	var stack []Func
	traverse(p.Root, func(path []*Node) error {
		if len(path) > 1 {
			n := path[len(path)-1]
			stack = append(stack[:len(path)-2], n.Func)
			fn(stack, n)
		}
		return nil
	}, nil)
}

// FuncStat is a function's flat profile entry.
type FuncStat struct {
	Func Func
	// Self is the sum of Instructions over the contexts that end in Func.
	Self int64
	// Cum is the sum of Instructions over the contexts whose stack contains
	// Func: a context is counted once however often Func recurs on its stack.
	Cum int64
}

// Flat returns the flat profile of p: one entry per function that appears in
// it, in canonical order of the functions.
func (p *Profile) Flat() []FuncStat {
	index := map[Func]int{}
	var stats []FuncStat
	var onStack []int   // per entry of stats: occurrences on the current path
	var subtree []int64 // subtree[d]: instructions under path[d] so far
	traverse(p.Root, func(path []*Node) error {
		n := path[len(path)-1]
		subtree = append(subtree[:len(path)-1], n.Instructions)
		if len(path) == 1 {
			return nil
		}
		i, ok := index[n.Func]
		if !ok {
			i = len(stats)
			index[n.Func] = i
			stats = append(stats, FuncStat{Func: n.Func})
			onStack = append(onStack, 0)
		}
		stats[i].Self += n.Instructions
		onStack[i]++
		return nil
	}, func(path []*Node) {
		d := len(path) - 1
		if d == 0 {
			return
		}
		sub := subtree[d]
		subtree[d-1] += sub
		i := index[path[d].Func]
		if onStack[i]--; onStack[i] == 0 {
			// The outermost occurrence of the function on this path: its
			// subtree holds every context below that contains it.
			stats[i].Cum += sub
		}
	})
	slices.SortFunc(stats, func(a, b FuncStat) int { return compareFuncs(a.Func, b.Func) })
	return stats
}
