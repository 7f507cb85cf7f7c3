package profile

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
)

// A Tree is a calling-context tree kept outside a Profile, in its owner's
// layout (an agent's off-heap tree): [WriteTree] encodes it without
// building a Node per context, so that writing a profile of millions of
// contexts needs memory for its functions and its depth, not a second copy
// of the tree.
//
// N is a node (its zero value stands for no node) and K a key of a node's
// function, cheap to compare: nodes of one function have equal keys.
// Children may come in any order; they become canonical in the file.
type Tree[N, K comparable] interface {
	Root() N
	First(n N) N // the first child of n
	Next(n N) N  // the sibling after n
	Key(n N) K
	Func(n N) Func // not called for the root
	Counts(n N) (samples, instructions, calls int64)
}

// ErrDuplicate is returned by WriteTree for a tree in which two children of
// a node have equal functions (Canonicalize would merge them): write such
// a tree as a Profile.
var ErrDuplicate = errors.New("two children of a node have the same function")

// WriteTree writes the profile with metadata meta, the totals and the tree
// t to w: the bytes that [Profile.Write] writes for the same profile. A
// tree that would not make a valid profile (see [Profile.CheckValid]) is
// refused before anything is written; one with duplicate children
// (ErrDuplicate) may be refused after part of it is.
func WriteTree[N, K comparable](w io.Writer, meta Meta, totalInstructions, totalSamples int64, t Tree[N, K]) error {
	if err := writeTree(w, meta, totalInstructions, totalSamples, t); err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	return nil
}

// WriteTreeFile is WriteTree to the named file, written atomically as
// [Profile.WriteFile] writes.
func WriteTreeFile[N, K comparable](path string, meta Meta, totalInstructions, totalSamples int64, t Tree[N, K]) error {
	return writeFile(path, func(w io.Writer) error {
		return writeTree(w, meta, totalInstructions, totalSamples, t)
	})
}

func writeTree[N, K comparable](w io.Writer, meta Meta, totalInstructions, totalSamples int64, t Tree[N, K]) error {
	if err := checkHeader(&meta, totalInstructions, totalSamples); err != nil {
		return err
	}
	// First pass: the functions, the number of nodes, and CheckValid's
	// checks of each node.
	index := map[K]int{}
	var funcs []Func
	var sums [3]uint64
	nodes, depth := 0, 0
	err := walkTree(t, func(n N, d int) error {
		nodes++
		depth = max(depth, d)
		var f Func
		if d > 0 {
			k := t.Key(n)
			i, ok := index[k]
			if !ok {
				i = len(funcs)
				index[k] = i
				funcs = append(funcs, t.Func(n))
			}
			f = funcs[i]
		}
		s, in, c := t.Counts(n)
		return checkNode(f, [3]int64{s, in, c}, d, &sums)
	})
	if err != nil {
		return err
	}
	// The function table: distinct and sorted; keys of equal functions
	// share an entry. order[i] is 1 + the table index of funcs[i].
	sorted := slices.Clone(funcs)
	slices.SortFunc(sorted, compareFuncs)
	sorted = slices.Compact(sorted)
	order := make([]uint64, len(funcs))
	for i, f := range funcs {
		j, _ := slices.BinarySearchFunc(sorted, f, compareFuncs)
		order[i] = uint64(j) + 1
	}
	funcs = nil

	out := &checksumWriter{w: w, h: checksumInit}
	out.b = appendHeader(out.b, &meta, totalInstructions, totalSamples)
	out.b = appendTables(out.b, sorted)
	out.b = appendUvarint(out.b, uint64(nodes))
	// Second pass: the nodes in preorder, children in canonical order —
	// the order of their function's index. kids holds the children of
	// every node on the current path, each node's sorted, and the stack
	// where the next child to visit at each depth is.
	type kid struct {
		n  N
		fn uint64
	}
	// (Sized for the deepest path: a deep recursion's profile is a long
	// chain, which growing them step by step would copy over and over.)
	kids := make([]kid, 0, depth+1)
	type level struct{ start, next, end int }
	stack := make([]level, 0, depth+1)
	var zero N
	visit := func(n N, fn uint64) error {
		start := len(kids)
		for c := t.First(n); c != zero; c = t.Next(c) {
			kids = append(kids, kid{c, order[index[t.Key(c)]]})
		}
		mine := kids[start:]
		slices.SortFunc(mine, func(a, b kid) int { return cmp.Compare(a.fn, b.fn) })
		for i := 1; i < len(mine); i++ {
			if mine[i-1].fn == mine[i].fn {
				return fmt.Errorf("%w (%q at depth %d)", ErrDuplicate, sorted[mine[i].fn-1].Name, len(stack)+1)
			}
		}
		s, in, c := t.Counts(n)
		out.b = appendUvarint(out.b, fn)
		out.b = appendUvarint(out.b, uint64(s))
		out.b = appendUvarint(out.b, uint64(in))
		out.b = appendUvarint(out.b, uint64(c))
		out.b = appendUvarint(out.b, uint64(len(mine)))
		stack = append(stack, level{start, start, len(kids)})
		return out.flushFull()
	}
	if err := visit(t.Root(), 0); err != nil {
		return err
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == top.end {
			kids = kids[:top.start]
			stack = stack[:len(stack)-1]
			continue
		}
		k := kids[top.next]
		top.next++
		if err := visit(k.n, k.fn); err != nil {
			return err
		}
	}
	return out.finish()
}

// walkTree calls f for every node of t in preorder with its depth (0 for
// the root), on a stack of its own.
func walkTree[N, K comparable](t Tree[N, K], f func(n N, d int) error) error {
	var zero N
	stack := []N{t.Root()}
	if err := f(stack[0], 0); err != nil {
		return err
	}
	for n := t.First(stack[0]); ; {
		if n == zero {
			// Back up to the nearest ancestor with a next sibling.
			for {
				if len(stack) == 1 {
					return nil
				}
				last := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if n = t.Next(last); n != zero {
					break
				}
			}
		}
		if err := f(n, len(stack)); err != nil {
			return err
		}
		stack = append(stack, n)
		n = t.First(n)
	}
}

// checksumWriter writes the bytes appended to b to w, a buffer at a time,
// keeping the file checksum of everything written.
type checksumWriter struct {
	w io.Writer
	b []byte
	h uint32
}

// flushFull writes the buffer out once it holds 64 KiB.
func (c *checksumWriter) flushFull() error {
	if len(c.b) < 64<<10 {
		return nil
	}
	return c.flush()
}

func (c *checksumWriter) flush() error {
	c.h = checksumUpdate(c.h, c.b)
	if _, err := c.w.Write(c.b); err != nil {
		return err
	}
	c.b = c.b[:0]
	return nil
}

// finish writes the rest of the buffer and the checksum.
func (c *checksumWriter) finish() error {
	c.h = checksumUpdate(c.h, c.b)
	c.b = appendUint32(c.b, c.h)
	_, err := c.w.Write(c.b)
	return err
}
