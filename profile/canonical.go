package profile

import (
	"cmp"
	"slices"
)

// compareFuncs orders functions canonically: by Name, then File, then Line.
func compareFuncs(a, b Func) int {
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := cmp.Compare(a.File, b.File); c != 0 {
		return c
	}
	return cmp.Compare(a.Line, b.Line)
}

// CompareIdentity orders functions by what makes them the same function
// when two profiles are compared: the name alone, which names the function
// fully (package path, receiver, closure index). File and line are for
// display: a function may be declared in another file on each GOARCH
// (syscall.write is in a generated per-architecture file), and the
// measures must not tell such builds apart. The canonical order sorts by
// name first, so children in canonical order are in identity order too.
func CompareIdentity(a, b Func) int { return cmp.Compare(a.Name, b.Name) }

// Canonicalize puts p's tree in canonical form, in place: it drops nil
// children, sorts every node's children in canonical order (by Func Name,
// File, Line) and merges children with the same Func, summing their counts
// and merging their children in turn. A nil Root becomes an empty root.
// Counts that overflow in the sums are left for CheckValid to report.
func (p *Profile) Canonicalize() {
	if p.Root == nil {
		p.Root = &Node{}
		return
	}
	// The children of a node are merged before traverse descends into them,
	// so children gathered from duplicates are canonicalized in turn.
	traverse(p.Root, func(path []*Node) error {
		n := path[len(path)-1]
		kids := slices.DeleteFunc(n.Children, func(c *Node) bool { return c == nil })
		slices.SortStableFunc(kids, func(a, b *Node) int { return compareFuncs(a.Func, b.Func) })
		out := kids[:0]
		for _, c := range kids {
			if k := len(out); k > 0 && out[k-1].Func == c.Func {
				d := out[k-1]
				d.Samples += c.Samples
				d.Instructions += c.Instructions
				d.Calls += c.Calls
				d.Children = append(d.Children, c.Children...)
				continue
			}
			out = append(out, c)
		}
		clear(kids[len(out):])
		n.Children = out
		return nil
	}, nil)
}

// isCanonical reports whether p has a root and a canonical tree.
func isCanonical(p *Profile) bool {
	if p.Root == nil {
		return false
	}
	return traverse(p.Root, func(path []*Node) error {
		kids := path[len(path)-1].Children
		for i, c := range kids {
			if c == nil || i > 0 && compareFuncs(kids[i-1].Func, c.Func) >= 0 {
				return errNotCanonical
			}
		}
		return nil
	}, nil) == nil
}

var errNotCanonical = invalidf("not canonical")

// Canonical returns p if it is canonical, else a canonical copy; p is never
// modified. Code that walks two trees side by side (the measures of package
// overlap) reads canonical views.
func (p *Profile) Canonical() *Profile {
	if isCanonical(p) {
		return p
	}
	q := p.Copy()
	q.Canonicalize()
	return q
}
