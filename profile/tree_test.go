package profile

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// lnode is a tree in the layout of an agent's: first child, next sibling,
// children in any order.
type lnode struct {
	f           Func
	s, i, c     int64
	first, next *lnode
}

type ltree struct{ root *lnode }

func (t ltree) Root() *lnode                        { return t.root }
func (ltree) First(n *lnode) *lnode                 { return n.first }
func (ltree) Next(n *lnode) *lnode                  { return n.next }
func (ltree) Key(n *lnode) Func                     { return n.f }
func (ltree) Func(n *lnode) Func                    { return n.f }
func (ltree) Counts(n *lnode) (int64, int64, int64) { return n.s, n.i, n.c }

// linked copies a profile tree into lnodes, each node's children in
// reverse order (a tree written as it is would pass by accident).
func linked(n *Node) *lnode {
	l := &lnode{f: n.Func, s: n.Samples, i: n.Instructions, c: n.Calls}
	for _, c := range n.Children {
		k := linked(c)
		k.next, l.first = l.first, k
	}
	return l
}

// TestWriteTree: a tree written by WriteTree is the bytes Profile.Write
// writes, on every test profile.
func TestWriteTree(t *testing.T) {
	ps := testProfiles()
	for _, name := range slices.Sorted(maps.Keys(ps)) {
		p := ps[name]
		t.Run(name, func(t *testing.T) {
			want := encode(t, p)
			q := p.Canonical()
			if q.Root == nil {
				q = &Profile{Meta: q.Meta, Root: &Node{}, TotalInstructions: q.TotalInstructions, TotalSamples: q.TotalSamples}
			}
			var got bytes.Buffer
			if err := WriteTree(&got, q.Meta, q.TotalInstructions, q.TotalSamples, ltree{linked(q.Root)}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("WriteTree wrote\n%q\nProfile.Write\n%q", got.Bytes(), want)
			}
		})
	}
}

func TestWriteTreeRefuses(t *testing.T) {
	dup := &lnode{first: &lnode{f: Func{Name: "f"}, next: &lnode{f: Func{Name: "f"}}}}
	neg := &lnode{first: &lnode{f: Func{Name: "f"}, i: -1}}
	for _, tc := range []struct {
		name  string
		root  *lnode
		meta  Meta
		want  error
		msg   string
		wrote bool
	}{
		{"duplicate", dup, Meta{}, ErrDuplicate, `"f" at depth 1`, true},
		{"negative", neg, Meta{}, ErrInvalid, "negative instructions -1", false},
		{"labels", &lnode{}, Meta{Labels: []Label{{"b", ""}, {"a", ""}}}, ErrInvalid, "labels not sorted", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := WriteTree(&out, tc.meta, 0, 0, ltree{tc.root})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("WriteTree = %v, want %v with %q", err, tc.want, tc.msg)
			}
			if !tc.wrote && out.Len() > 0 {
				t.Errorf("wrote %d bytes before refusing", out.Len())
			}
		})
	}
}
