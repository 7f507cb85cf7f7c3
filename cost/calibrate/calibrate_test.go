package calibrate

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kprof/kprof/cost"
)

// TestNNLS checks NNLS on problems with known solutions: an exact
// non-negative solution, and one whose unconstrained solution has a
// negative component (clamped to 0, the rest refitted).
func TestNNLS(t *testing.T) {
	tests := []struct {
		name string
		a    []float64 // rows of 2 columns
		b    []float64
		want []float64
	}{
		{"exact", []float64{1, 0, 0, 1, 1, 1}, []float64{2, 3, 5}, []float64{2, 3}},
		// Unconstrained: x = (-1, 3). With x ≥ 0: x1 = 0, and x2 fits
		// b alone: (1, 1, 1)·(2, 3, 2)/3 = 7/3.
		{"clamped", []float64{1, 1, 0, 1, 1, 1}, []float64{2, 3, 2}, []float64{0, 7.0 / 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mat.NewDense(len(tt.b), 2, tt.a)
			x, err := NNLS(a, mat.NewVecDense(len(tt.b), tt.b))
			if err != nil {
				t.Fatal(err)
			}
			for j, w := range tt.want {
				if math.Abs(x.AtVec(j)-w) > 1e-9 {
					t.Errorf("x[%d] = %v, want %v", j, x.AtVec(j), w)
				}
			}
		})
	}
}

// TestCount checks the per-iteration counts of a few kernels, from their
// go/ssa form: the loop's header, body and post blocks, and callees.
func TestCount(t *testing.T) {
	counts, err := Count()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]float64{
		// i < n, if; s += i; i++, jump.
		"kEmpty": {"int.cmp": 1, "if": 1, "int.arith": 2, "jump": 1},
		// add1's body (x + 1, return) runs once per call.
		"kCallStatic": {"int.cmp": 1, "if": 1, "int.arith": 3, "jump": 1, "call.static": 2, "return": 2},
		// inc is inlined: its calls and returns cost next to nothing.
		"kCallInline": {"int.cmp": 1, "if": 1, "int.arith": 4, "jump": 1, "call.inline": 2, "return.inline": 2},
		// &node{v: i}: 24 bytes.
		"kAlloc": {"int.cmp": 1, "if": 1, "int.arith": 1, "jump": 1, "alloc.heap": 1, "alloc.byte": 24, "fieldaddr": 1, "store": 2},
	}
	for name, w := range want {
		got := counts[name]
		if len(got) != len(w) {
			t.Errorf("%s: %v, want %v", name, got, w)
			continue
		}
		for c, n := range w {
			if got[c] != n {
				t.Errorf("%s: %v, want %v", name, got, w)
				break
			}
		}
	}
}

// TestFitTable fits synthetic times made from a known table: the fit
// recovers the weights of the classes the kernels separate and keeps the
// prior's for the others.
func TestFitTable(t *testing.T) {
	counts, err := Count()
	if err != nil {
		t.Fatal(err)
	}
	truth := cost.Default()
	ps := map[string]float64{}
	for k, c := range counts {
		for class, n := range c {
			ps[k] += n * float64(truth.Class(class))
		}
	}
	fit, err := FitTable("synthetic", ps, counts, truth)
	if err != nil {
		t.Fatal(err)
	}
	if fit.MaxError > 0.01 {
		t.Errorf("largest error %.3f on times the prior predicts exactly", fit.MaxError)
	}
	for _, c := range fit.Prior {
		if fit.Table.Class(c) != truth.Class(c) {
			t.Errorf("%s (no kernel): %d, want the prior's %d", c, fit.Table.Class(c), truth.Class(c))
		}
	}
	for _, c := range []string{"int.div", "alloc.heap", "map.update", "string.concat"} {
		if got, w := fit.Table.Class(c), truth.Class(c); math.Abs(float64(got-w)) > 0.01*float64(w) {
			t.Errorf("%s: fitted %d, true %d", c, got, w)
		}
	}
}
