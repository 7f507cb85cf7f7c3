// Package overlap holds the measures that compare two kprof profiles
// (paper §7): the overlap percentage on calling contexts ([Contexts]) and on
// flat functions ([Functions]), the relative error δb between totals
// ([DeltaB]), the number of calling contexts ([Size]), the contexts whose
// share differs most ([Diff]) and [Identical].
//
// The measures weigh contexts by Instructions (estimated instructions in
// sample mode; the metric's units under a cost metric) and compute with
// exact integer arithmetic, so they are symmetric and give exactly 100 for a
// profile compared with itself. They read canonical views of their
// arguments (see [profile.Profile.Canonical]) and never modify them. Two
// functions are the same function when their names are equal
// ([profile.CompareIdentity]): the file that declared a function may differ
// between GOARCHes.
package overlap

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/kprof/kprof/profile"
)

// Contexts returns the overlap percentage of paper §7.1 between a and b on
// calling contexts, from 0 (nothing in common) to 100 (identical
// distributions):
//
//	overlap(A, B) = 100 · Σ min(rce_A(s), rce_B(s))
//
// summed over the stacks s present in both profiles, where rce_X(s) is the
// Instructions of s in X divided by the sum of Instructions over all contexts
// of X (estimated instructions for a sampled profile). A profile whose
// contexts hold no instructions is empty: the overlap of two empty profiles
// is 100, of an empty and a non-empty one 0. The computation is exact, so
// Contexts(a, b) == Contexts(b, a) and Contexts(a, a) == 100. The profiles
// should be valid; they need not be canonical and are not modified.
func Contexts(a, b *profile.Profile) float64 {
	a, b = a.Canonical(), b.Canonical()
	ta, tb := a.SumInstructions(), b.SumInstructions()
	if ta == 0 || tb == 0 {
		return emptyOverlap(ta, tb)
	}
	var sum u128
	zip(a.Root, b.Root, func(_ int, x, y *profile.Node) {
		if x != nil && y != nil {
			sum = sum.add(minShare(x.Instructions, ta, y.Instructions, tb))
		}
	})
	return percent(sum, mul(ta, tb))
}

// Functions returns the overlap percentage between a and b on flat
// functions: as Contexts, with each function's Self instructions (see
// [Profile.Flat]) in place of a context's, so it ignores who called whom.
// The edge cases and guarantees are those of Contexts.
func Functions(a, b *profile.Profile) float64 {
	fa, fb := a.Flat(), b.Flat()
	var ta, tb int64
	for _, s := range fa {
		ta += s.Self
	}
	for _, s := range fb {
		tb += s.Self
	}
	if ta == 0 || tb == 0 {
		return emptyOverlap(ta, tb)
	}
	var sum u128
	for i, j := 0, 0; i < len(fa) && j < len(fb); {
		switch c := profile.CompareIdentity(fa[i].Func, fb[j].Func); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			sum = sum.add(minShare(fa[i].Self, ta, fb[j].Self, tb))
			i++
			j++
		}
	}
	return percent(sum, mul(ta, tb))
}

// Identical reports whether a and b have the same calling contexts, by
// function identity (see compareIdentity), with the same samples,
// instructions and calls, and the same totals: whatever their metadata and
// the files that declared their functions.
func Identical(a, b *profile.Profile) bool {
	a, b = a.Canonical(), b.Canonical()
	if a.TotalInstructions != b.TotalInstructions || a.TotalSamples != b.TotalSamples {
		return false
	}
	same := true
	zip(a.Root, b.Root, func(_ int, x, y *profile.Node) {
		if x == nil || y == nil || x.Samples != y.Samples || x.Instructions != y.Instructions || x.Calls != y.Calls {
			same = false
		}
	})
	return same
}

func emptyOverlap(ta, tb int64) float64 {
	if ta == 0 && tb == 0 {
		return 100
	}
	return 0
}

// minShare returns min(x/tx, y/ty) scaled by tx·ty, which is exact: the
// overlap is Σ min(x·ty, y·tx) / (tx·ty).
func minShare(x, tx, y, ty int64) u128 {
	return minU128(mul(x, ty), mul(y, tx))
}

// DeltaB returns the relative error δb of paper §7.2 of an approximate
// instruction count against the exact one: (approx − exact) / exact. It is
// negative when approx underestimates. Both counts are ≥ 0; when exact is 0,
// DeltaB is 0 if approx is 0 too and +Inf otherwise.
func DeltaB(approx, exact int64) float64 {
	if exact == 0 {
		if approx == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return float64(approx-exact) / float64(exact)
}

// Size returns the number of calling contexts of p (nodes other than the
// root, with duplicate siblings counted once).
func Size(p *profile.Profile) int {
	n := 0
	p.Canonical().Walk(func([]profile.Func, *profile.Node) { n++ })
	return n
}

// ContextDiff is a calling context whose share of the instructions differs
// between two profiles.
type ContextDiff struct {
	Stack []profile.Func // outermost function first
	// A and B are the context's Instructions as a percentage (0..100) of the
	// sum of Instructions over all contexts of profile a and b; 0 where the
	// context is absent or the profile is empty.
	A, B float64
}

// Diff returns the n calling contexts, present in a or in b, whose shares A
// and B differ most, largest difference first; n ≤ 0 means all of them.
// Contexts with equal shares are left out, so Diff of proportional profiles
// is nil. Ties are broken by stack, in
// canonical order (a stack before its extensions), so the result is
// deterministic. The profiles should be valid; they need not be canonical and
// are not modified.
func Diff(a, b *profile.Profile, n int) []ContextDiff {
	a, b = a.Canonical(), b.Canonical()
	ta, tb := a.SumInstructions(), b.SumInstructions()
	// With both totals non-zero, |x/ta − y/tb| = |x·tb − y·ta| / (ta·tb): the
	// numerator orders contexts exactly. An empty profile's counts are all 0,
	// and a total of 1 in its place makes the numerator a constant multiple
	// of the other profile's share.
	sa, sb := max(ta, 1), max(tb, 1)
	type context struct {
		parent int // index of the caller's context, -1 for none
		f      profile.Func
		x, y   int64 // Instructions in a and b
		key    u128  // |x·tb − y·ta|
	}
	var all []context // in preorder, which is canonical stack order
	var parents []int // parents[d-1]: index of the context at depth d on the current path
	zip(a.Root, b.Root, func(depth int, x, y *profile.Node) {
		c := context{parent: -1}
		if depth > 1 {
			c.parent = parents[depth-2]
		}
		if x != nil {
			c.f, c.x = x.Func, x.Instructions
		}
		if y != nil {
			c.f, c.y = y.Func, y.Instructions
		}
		p, q := mul(c.x, sb), mul(c.y, sa)
		c.key = maxU128(p, q).sub(minU128(p, q))
		parents = append(parents[:depth-1], len(all))
		all = append(all, c)
	})
	var order []int
	for i, c := range all {
		if c.key != (u128{}) {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(i, j int) int {
		if c := all[j].key.cmp(all[i].key); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	if n > 0 && n < len(order) {
		order = order[:n]
	}
	if len(order) == 0 {
		return nil
	}
	diffs := make([]ContextDiff, len(order))
	for k, i := range order {
		d := &diffs[k]
		for j := i; j >= 0; j = all[j].parent {
			d.Stack = append(d.Stack, all[j].f)
		}
		slices.Reverse(d.Stack)
		d.A, d.B = share(all[i].x, ta), share(all[i].y, tb)
	}
	return diffs
}

func share(x, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(x) / float64(total)
}

// zip visits the union of the canonical trees under ra and rb in preorder,
// children in canonical order: visit gets a context's depth (length of its
// stack, ≥ 1) and its node in each tree, nil where the tree lacks it. The
// roots are not visited.
func zip(ra, rb *profile.Node, visit func(depth int, a, b *profile.Node)) {
	type frame struct {
		a, b *profile.Node
		i, j int // next child of a and of b
	}
	stack := []frame{{a: ra, b: rb}}
	for len(stack) > 0 {
		t := &stack[len(stack)-1]
		var ka, kb []*profile.Node
		if t.a != nil {
			ka = t.a.Children
		}
		if t.b != nil {
			kb = t.b.Children
		}
		var ca, cb *profile.Node
		switch {
		case t.i < len(ka) && t.j < len(kb):
			c := profile.CompareIdentity(ka[t.i].Func, kb[t.j].Func)
			if c <= 0 {
				ca = ka[t.i]
				t.i++
			}
			if c >= 0 {
				cb = kb[t.j]
				t.j++
			}
		case t.i < len(ka):
			ca = ka[t.i]
			t.i++
		case t.j < len(kb):
			cb = kb[t.j]
			t.j++
		default:
			stack = stack[:len(stack)-1]
			continue
		}
		visit(len(stack), ca, cb)
		stack = append(stack, frame{a: ca, b: cb})
	}
}

// u128 is an unsigned 128-bit integer: the measures multiply two int64
// counts and sum the products exactly.
type u128 struct{ hi, lo uint64 }

// mul returns x·y for counts x, y ≥ 0 (negative counts, invalid, count as 0).
func mul(x, y int64) u128 {
	hi, lo := bits.Mul64(uint64(max(x, 0)), uint64(max(y, 0)))
	return u128{hi, lo}
}

func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	hi, _ := bits.Add64(x.hi, y.hi, c)
	return u128{hi, lo}
}

// sub returns x−y for x ≥ y.
func (x u128) sub(y u128) u128 {
	lo, b := bits.Sub64(x.lo, y.lo, 0)
	hi, _ := bits.Sub64(x.hi, y.hi, b)
	return u128{hi, lo}
}

func (x u128) cmp(y u128) int {
	if c := cmp.Compare(x.hi, y.hi); c != 0 {
		return c
	}
	return cmp.Compare(x.lo, y.lo)
}

func minU128(x, y u128) u128 {
	if x.cmp(y) <= 0 {
		return x
	}
	return y
}

func maxU128(x, y u128) u128 {
	if x.cmp(y) >= 0 {
		return x
	}
	return y
}

// float converts x to a float64, rounding. The conversion is monotonic and
// equal values convert equally, so num ≤ den gives float(num)/float(den) ≤ 1,
// and num == den exactly 1.
func (x u128) float() float64 {
	return float64(x.hi)*(1<<64) + float64(x.lo)
}

// percent returns 100·num/den for den > 0.
func percent(num, den u128) float64 {
	return 100 * (num.float() / den.float())
}
