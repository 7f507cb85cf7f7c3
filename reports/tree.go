package reports

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/kprof/kprof/profile"
)

// prepare checks that p is a valid profile and returns it in canonical form:
// p itself when it already is canonical, else a canonical copy. The
// renderings rely on canonical order for their determinism.
func prepare(p *profile.Profile) (*profile.Profile, error) {
	if p == nil {
		return nil, errors.New("nil profile")
	}
	if !isCanonical(p) {
		p = p.Copy()
		p.Canonicalize()
	}
	if err := p.CheckValid(); err != nil {
		return nil, err
	}
	return p, nil
}

// isCanonical reports whether every node's children are non-nil and in
// strictly increasing canonical order (see package profile).
func isCanonical(p *profile.Profile) bool {
	if p.Root == nil {
		return false
	}
	stack := []*profile.Node{p.Root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for i, c := range n.Children {
			if c == nil || i > 0 && compareFuncs(n.Children[i-1].Func, c.Func) >= 0 {
				return false
			}
			stack = append(stack, c)
		}
	}
	return true
}

// compareFuncs is the canonical order of package profile: Name, File, Line.
func compareFuncs(a, b profile.Func) int {
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := cmp.Compare(a.File, b.File); c != 0 {
		return c
	}
	return cmp.Compare(a.Line, b.Line)
}

// cct is a calling-context tree laid out in arrays, in preorder of a
// canonical profile: index 0 is the synthetic root. The renderings walk it
// with loops, never recursion, so a CCT as deep as the profiled program's
// recursion is safe.
type cct struct {
	node     []*profile.Node
	parent   []int   // -1 for the root
	depth    []int   // 0 for the root
	cum      []int64 // Instructions of the node's subtree
	children [][]int // in canonical order
}

// flatten lays out the tree of a canonical profile.
func flatten(p *profile.Profile) *cct {
	t := &cct{}
	type frame struct {
		n     *profile.Node
		index int // of the node's parent in t
	}
	stack := []frame{{p.Root, -1}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i := len(t.node)
		t.node = append(t.node, f.n)
		t.parent = append(t.parent, f.index)
		t.cum = append(t.cum, f.n.Instructions)
		t.children = append(t.children, nil)
		if f.index < 0 {
			t.depth = append(t.depth, 0)
		} else {
			t.depth = append(t.depth, t.depth[f.index]+1)
			t.children[f.index] = append(t.children[f.index], i)
		}
		for k := len(f.n.Children) - 1; k >= 0; k-- { // pushed in reverse: popped in order
			stack = append(stack, frame{f.n.Children[k], i})
		}
	}
	// In preorder every node comes after its parent, so one backward pass
	// sums the subtrees.
	for i := len(t.node) - 1; i > 0; i-- {
		t.cum[t.parent[i]] += t.cum[i]
	}
	return t
}

// size returns the number of nodes in the subtree of i, i included.
func (t *cct) size(i int) int {
	n := 0
	stack := []int{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		stack = append(stack, t.children[j]...)
	}
	return n
}

// namer gives each function of a profile a display name: its Name, or, when
// another function of the profile has the same Name, its Name and file:line.
type namer map[string]int // Name → number of distinct Funcs with it

func newNamer(p *profile.Profile) namer {
	n := namer{}
	for _, s := range p.Flat() {
		n[s.Func.Name]++
	}
	return n
}

func (n namer) name(f profile.Func) string {
	if n[f.Name] > 1 {
		return fmt.Sprintf("%s (%s)", f.Name, location(f))
	}
	return f.Name
}

// location returns "file:line" of f's declaration, or what is known of it.
func location(f profile.Func) string {
	switch {
	case f.File == "" && f.Line == 0:
		return "unknown location"
	case f.File == "":
		return fmt.Sprintf("?:%d", f.Line)
	case f.Line == 0:
		return f.File
	}
	return fmt.Sprintf("%s:%d", f.File, f.Line)
}
