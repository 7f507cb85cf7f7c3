package calibrate

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// NNLS solves min ‖Ax − b‖ subject to x ≥ 0 by Lawson and Hanson's
// active-set method (Solving Least Squares Problems, 1974, ch. 23).
func NNLS(a *mat.Dense, b *mat.VecDense) (*mat.VecDense, error) {
	m, n := a.Dims()
	if b.Len() != m {
		return nil, errors.New("nnls: dimensions differ")
	}
	x := mat.NewVecDense(n, nil)
	passive := make([]bool, n)
	const tol = 1e-12
	grad := func() *mat.VecDense { // w = Aᵀ(b − Ax)
		r := mat.NewVecDense(m, nil)
		r.MulVec(a, x)
		r.SubVec(b, r)
		w := mat.NewVecDense(n, nil)
		w.MulVec(a.T(), r)
		return w
	}
	// solve returns the unconstrained least-squares solution on the
	// passive set (zero elsewhere).
	solve := func() (*mat.VecDense, error) {
		var idx []int
		for j, p := range passive {
			if p {
				idx = append(idx, j)
			}
		}
		z := mat.NewVecDense(n, nil)
		if len(idx) == 0 {
			return z, nil
		}
		sub := mat.NewDense(m, len(idx), nil)
		for i := 0; i < m; i++ {
			for k, j := range idx {
				sub.Set(i, k, a.At(i, j))
			}
		}
		var qr mat.QR
		qr.Factorize(sub)
		var s mat.VecDense
		if err := qr.SolveVecTo(&s, false, b); err != nil {
			return nil, err
		}
		for k, j := range idx {
			z.SetVec(j, s.AtVec(k))
		}
		return z, nil
	}
	for iter := 0; iter < 30*n; iter++ {
		w := grad()
		best, bj := tol, -1
		for j := 0; j < n; j++ {
			if !passive[j] && w.AtVec(j) > best {
				best, bj = w.AtVec(j), j
			}
		}
		if bj < 0 {
			return x, nil
		}
		passive[bj] = true
		for inner := 0; inner < 3*n; inner++ {
			z, err := solve()
			if err != nil {
				return nil, err
			}
			ok := true
			for j := 0; j < n; j++ {
				if passive[j] && z.AtVec(j) <= 0 {
					ok = false
				}
			}
			if ok {
				x = z
				break
			}
			alpha := math.Inf(1)
			for j := 0; j < n; j++ {
				if passive[j] && z.AtVec(j) <= 0 {
					xj := x.AtVec(j)
					if d := xj - z.AtVec(j); d > 0 {
						alpha = math.Min(alpha, xj/d)
					} else {
						alpha = 0
					}
				}
			}
			for j := 0; j < n; j++ {
				x.SetVec(j, x.AtVec(j)+alpha*(z.AtVec(j)-x.AtVec(j)))
				if passive[j] && math.Abs(x.AtVec(j)) < tol {
					passive[j] = false
					x.SetVec(j, 0)
				}
			}
		}
	}
	return nil, errors.New("nnls: no convergence")
}
